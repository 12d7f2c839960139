use goldy::gpu;

// Kernels for tests/test_cpu_backend.py: each one pins down part of docs/semantics.md.

#[goldy::gpu]
struct Vertex {
    position: [f32; 3],
    uv: [f32; 2],
    id: u32,
}

#[goldy::gpu]
struct Params {
    scale: f32,
    offset: [f32; 3],
    m: [[f32; 3]; 3],
    count: u32,
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Every integer operator on a pair (a[i], b[i]), as i32 and reinterpreted as u32.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn int_ops(a: &[i32], b: &[i32], out_i: &mut [i32], out_u: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= a.len() {
        return;
    }
    let x = a[i];
    let y = b[i];
    let ux = x as u32;
    let uy = y as u32;
    let o = i * 10;
    out_i[o] = x + y;
    out_i[o + 1] = x - y;
    out_i[o + 2] = x * y;
    out_i[o + 3] = x / y;
    out_i[o + 4] = x % y;
    out_i[o + 5] = x << y;
    out_i[o + 6] = x >> uy;
    out_i[o + 7] = -x;
    out_i[o + 8] = x.abs();
    out_i[o + 9] = x.min(y) + x.max(y) * 3;
    out_u[o] = ux + uy;
    out_u[o + 1] = ux - uy;
    out_u[o + 2] = ux * uy;
    out_u[o + 3] = ux / uy;
    out_u[o + 4] = ux % uy;
    out_u[o + 5] = ux << y;
    out_u[o + 6] = ux >> uy;
    out_u[o + 7] = !ux;
    out_u[o + 8] = (ux & uy) | (ux ^ 0xF0F0u32);
    out_u[o + 9] = ux.clamp(10, 1000);
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn casts(f: &[f32], n: &[i32], to_i: &mut [i32], to_u: &mut [u32], to_f: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < f.len() {
        to_i[i] = f[i] as i32;
        to_u[i] = f[i] as u32;
        to_f[2 * i] = n[i] as f32;
        to_f[2 * i + 1] = (n[i] as u32) as f32;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn float_ops(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let o = i * 12;
        out[o] = x.round();
        out[o + 1] = x.min(y);
        out[o + 2] = x.max(y);
        out[o + 3] = x.clamp(-1.0, 1.0);
        out[o + 4] = x.floor();
        out[o + 5] = x.ceil();
        out[o + 6] = x.trunc();
        out[o + 7] = x.abs();
        out[o + 8] = x % y;
        out[o + 9] = x / y;
        out[o + 10] = -x;
        out[o + 11] = f32::from_bits(x.to_bits() ^ 0x80000000u32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn transcendental(a: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        let x = a[i];
        let o = i * 6;
        out[o] = x.sin();
        out[o + 1] = x.cos();
        out[o + 2] = (x * 0.5).exp();
        out[o + 3] = x.abs().ln();
        out[o + 4] = x.abs().sqrt();
        out[o + 5] = x.abs().powf(0.75);
    }
}

/// Per-lane trip counts: a capped Collatz walk (break, continue), an early return, an
/// inclusive range with a continue, and a `loop` left by break.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn loops(start: &[u32], steps: &mut [u32], odd: &mut [u32], tri: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= start.len() {
        return;
    }
    let mut n = start[i];
    let mut count = 0u32;
    let mut odds = 0u32;
    while n != 1 {
        if count >= 50 {
            break;
        }
        count += 1;
        if n % 2 == 0 {
            n = n / 2;
            continue;
        }
        odds += 1;
        n = 3 * n + 1;
    }
    steps[i] = count;
    odd[i] = odds;
    if start[i] % 3 == 0 {
        return;
    }
    let mut t = 0u32;
    for k in 0..=start[i] % 7 {
        if k == 5 {
            continue;
        }
        t += k;
    }
    let mut j = 0u32;
    loop {
        j += 1;
        if j >= start[i] % 5 {
            break;
        }
    }
    tri[i] = t * 100 + j;
}

/// A return from inside a loop.
#[goldy::compute(workgroup_size = [16, 1, 1])]
fn find_first(data: &[u32], target: u32, out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= out.len() {
        return;
    }
    out[i] = 999;
    for k in 0..16u32 {
        if data[i * 16 + k] == target {
            out[i] = k;
            return;
        }
    }
    out[i] = 1000;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn if_values(x: &[f32], out: &mut [f32], lim: f32) {
    let i = gpu::global_id().x;
    if i < x.len() {
        let v = x[i];
        let a = if v > lim { v * 2.0 } else { -v };
        let b = if v > 0.0 { x[(i + 1) % x.len()] } else { 0.5 };
        let c = if v < -1.0 { 1.0 } else if v < 1.0 { 2.0 } else { 3.0 };
        out[i] = a + b * 10.0 + c * 100.0;
    }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn structs(verts: &[Vertex], p: gpu::Uniform<Params>, out: &mut [f32], ids: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < p.count {
        let v = verts[i];
        let moved = p.m * (v.position * p.scale + p.offset);
        out[i * 4] = moved.x;
        out[i * 4 + 1] = moved.y;
        out[i * 4 + 2] = moved.z;
        out[i * 4 + 3] = v.uv.x - verts[i].uv.y;
        ids[i] = v.id;
    }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn swizzles(x: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        let mut v = gpu::float3(x[i], 2.0, 3.0);
        v = gpu::float3(v.z, v.x, v.y);
        v.y = v.y + 10.0;
        let w = v.zyx * 2.0;
        out[i * 3] = w.x;
        out[i * 3 + 1] = w.y;
        out[i * 3 + 2] = dot(w, v) + length(gpu::float2(3.0, 4.0));
    }
}

/// A hand-written halving tree over a workgroup array, with barriers.
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn manual_tree(input: &[f32], sums: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 128>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let mut v = 0.0;
    if i < input.len() {
        v = input[i];
    }
    scratch[lid] = v;
    gpu::workgroup_barrier();
    let mut stride = 64u32;
    while stride > 0 {
        if lid < stride {
            scratch[lid] += scratch[lid + stride];
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    if lid == 0 {
        sums[gpu::workgroup_id().x] = scratch[0];
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn group_sum_max(input: &[f32], sums: &mut [f32], maxes: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    let mut v = 0.0;
    let mut m = f32::NEG_INFINITY;
    if i < input.len() {
        v = input[i];
        m = input[i];
    }
    let total = gpu::workgroup_sum::<256>(v, scratch);
    let biggest = gpu::workgroup_max::<256>(m, scratch);
    if gpu::local_id().x == 0 {
        let g = gpu::workgroup_id().x;
        sums[g] = total;
        maxes[g] = biggest;
    }
}

/// Integer collective sums wrap; every lane sees the result.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn group_sum_u32(input: &[u32], out: &mut [u32]) {
    let scratch = gpu::workgroup_array::<u32, 64>();
    let i = gpu::global_id().x;
    let total = gpu::workgroup_sum::<64>(input[i], scratch);
    out[i] = total + gpu::local_id().x;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn softmax_rows(buf: &mut [f32], count: u32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let row = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<64>(buf, row * count, count, scratch);
}

#[goldy::compute(workgroup_size = [128, 1, 1])]
fn histogram(values: &[u32], bins: &mut [u32], olds: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() {
        let old = gpu::atomic_add(bins, values[i] % bins.len(), 1u32);
        olds[i] = old;
    }
}

/// Atomics from a 2-D grid of 2-D workgroups: thread order interleaves workgroups.
#[goldy::compute(workgroup_size = [8, 4, 1])]
fn hist2d(values: &[u32], width: u32, bins: &mut [u32], olds: &mut [u32], total: &mut [i32]) {
    let g = gpu::global_id();
    let i = g.y * width + g.x;
    if g.x < width && i < values.len() {
        let old = gpu::atomic_add(bins, values[i] % bins.len(), values[i]);
        olds[i] = old;
        gpu::atomic_add(total, 0, (values[i] as i32) - 1000000000);
    }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn tensor_scale(src: gpu::Tensor<f32>, dst: gpu::TensorMut<f32>, info: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < src.len() {
        dst[i] = src[i] * 2.0 + dst[i];
    }
    if i == 0 {
        info[0] = src.rank();
        info[1] = src.dim(0);
        info[2] = src.dim(1);
        info[3] = src.len();
        info[4] = dst.len();
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn fused(a: &[f32], b: &[f32], c: &[f32], f: &mut [f32], s: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        f[i] = a[i].mul_add(b[i], c[i]);
        s[i] = a[i] * b[i] + c[i];
    }
}

/// No guard at all: reads and writes past the end must be harmless.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn out_of_range(x: &[f32], y: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 4>();
    let i = gpu::global_id().x;
    let lid = gpu::local_id().x;
    scratch[lid] = 7.0;
    y[i * 3] = x[i + 5] + 1.0 + scratch[lid + 1];
}

#[goldy::compute(workgroup_size = [4, 2, 2])]
fn ids(out: &mut [u32], w: u32, h: u32) {
    let g = gpu::global_id();
    let l = gpu::local_id();
    let wg = gpu::workgroup_id();
    let n = gpu::num_workgroups();
    let s = gpu::workgroup_size();
    let i = (g.z * h + g.y) * w + g.x;
    let o = i * 7;
    out[o] = g.x;
    out[o + 1] = g.y;
    out[o + 2] = g.z;
    out[o + 3] = l.x + 10 * l.y + 100 * l.z;
    out[o + 4] = wg.x + 10 * wg.y + 100 * wg.z;
    out[o + 5] = n.x + 10 * n.y + 100 * n.z;
    out[o + 6] = s.x * s.y * s.z;
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn bools(flags: &[bool], out: &mut [bool], invert: bool) {
    let i = gpu::global_id().x;
    if i < flags.len() {
        out[i] = flags[i] != invert;
    }
}

#[goldy::compute(workgroup_size = [8, 8, 1])]
fn paint(img: gpu::DirectSpatial<gpu::float4>, src: gpu::DirectSpatial<f32>) {
    let g = gpu::global_id();
    let p = gpu::uint2(g.x, g.y);
    let v = src[p];
    img[p] = gpu::float4(v, v * 2.0, g.x as f32, 1.0);
}

/// Names that meet once vectors are split into components: `x` (vector: x_y is a lane) and `x_y`.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn name_clash(out: &mut [f32], x_x: f32) {
    let i = gpu::global_id().x;
    let x = gpu::float2(1.0, 2.0);
    let x_y = 5.0;
    if i < out.len() {
        out[i] = x.x + x.y * 10.0 + x_y * 100.0 + x_x;
    }
}

/// 1-D workgroups over a 2-D grid: global_id().x is no longer the lane's position.
#[goldy::compute(workgroup_size = [16, 1, 1])]
fn rows(x: &[f32], out: &mut [f32], first: &mut [f32], w: u32) {
    let i = gpu::global_id().x;
    let j = gpu::global_id().y;
    if i < w {
        out[j * w + i] = x[i] * (j as f32) + 0.5;
        if j == 0 {
            first[i] = x[i] + 1.0;
        }
    }
}

/// Trapping checks: only lanes that really perform an access may fault.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn checked(x: &[u32], out: &mut [u32], lim: u32, d: u32) {
    let i = gpu::global_id().x;
    if x[0] > i {
        out[i] = x[i];
    }
    if i < lim && x[i] > 1000000 {
        out[0] = 1;
    }
    let mut j = i;
    while j < x.len() && x[j] != 7 {
        j += 64;
    }
    if i == 3 {
        out[1] = 100 / d;
    }
}

#[goldy::compute(workgroup_size = [8, 8, 1])]
fn checked_image(img: gpu::DirectSpatial<f32>, out: &mut [f32]) {
    let g = gpu::global_id();
    if g.x < 10 {
        out[g.y * 10 + g.x] = img[gpu::uint2(g.x, g.y)];
    }
}
