use goldy::gpu;

#[goldy::gpu]
struct Particle {
    position: [f32; 3],
    velocity: [f32; 3],
    mass: f32,
}

#[goldy::gpu]
struct Params {
    scale: f32,
    count: u32,
    offset: [f32; 2],
    m: [[f32; 4]; 4],
}

/// Struct buffers, a uniform struct, bool buffers and scalars, write-only buffers.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn structs(ps: &[Particle], p: gpu::Uniform<Params>, mask: &[bool], flags: &mut [bool], out: gpu::Scattered<f32>, on: bool) {
    let i = gpu::global_id().x;
    if i >= ps.len() {
        return;
    }
    let q = ps[i];
    let v = gpu::float4(q.velocity.x, q.velocity.y, q.velocity.z, q.mass);
    let t = p.m * v;
    let keep = mask[i] && on;
    flags[i] = keep || (i % 3 == 0);
    let e = if keep { q.mass * dot(q.velocity, q.velocity) * p.scale } else { t.y + p.offset.x };
    out[i] = e + (p.count as f32) + q.position.z;
}

/// Tensor views: logical indices delinearised through shape and strides.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tensors(#[tensor(shape = [r, c])] t: gpu::Tensor<f32>, u: gpu::TensorMut<f32>, o: gpu::TensorWrite<f32>) {
    let i = gpu::global_id().x;
    if i < t.len() {
        let x = t[i] + (t.dim(0) * 10 + t.dim(1) + t.rank() * 1000) as f32;
        u[i] = u[i] * 2.0 + x;
        o[i] = x;
    }
}

/// `if` values of struct and matrix type (WGSL's select takes only scalars and vectors).
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn choose(ps: &[Particle], p: gpu::Uniform<Params>, out: &mut [f32], flag: bool) {
    let i = gpu::global_id().x;
    let a = ps[0];
    let b = ps[1];
    let q = if flag { a } else { b };
    let m = if i % 2 == 0 { p.m } else { p.m * 2.0 };
    let w = m * gpu::float4(1.0, 2.0, 3.0, q.mass);
    if i < out.len() {
        out[i] = q.position.y + w.z;
    }
}
