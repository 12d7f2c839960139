use goldy::gpu;

#[goldy::gpu]
struct Vertex {
    position: [f32; 3],
    uv: [f32; 2],
}

#[goldy::gpu]
struct Params { scale: f32, count: u32, m: [[f32; 4]; 4] }

/// Everything at once.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn everything(
    verts: &[Vertex],
    data: gpu::BufRO<u32>,
    out: &mut [f32],
    hist: &mut [u32],
    sc: gpu::Scattered<i32>,
    #[tensor(shape = [n, _])] t: gpu::Tensor<f32>,
    tw: gpu::TensorWrite<f32>,
    p: gpu::Uniform<Params>,
    img: gpu::DirectSpatial<gpu::float4>,
    n: u32,
    k: i32,
    flag: bool,
) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    let lid = gpu::local_id().x;
    let mut acc = 0;
    for j in 0..4 { acc += data[j]; }
    let mut f = 0.0;
    let mut w = 10;
    while w > 0 { w -= 1; if w == 3 { continue; } if w == 1 { break; } }
    loop { break; }
    for q in 0..=3u32 { f += q as f32; }
    let v = verts[i % verts.len()];
    let pos = v.position;
    let s = pos.x + pos.y * 2.0 - v.uv.y / 3.0;
    let sel = if flag { 1.0f32 } else { -1.0 };
    let sel2 = if i < n { out[i] } else { 0.0 };
    let c = (s * sel + sel2).max(0.5).min(2.0).sqrt().mul_add(2.0, 1.0) + f32::from_bits(0x3f800000) + 1e-3;
    let bits = c.to_bits() >> 3u32 ^ 0xFF & (acc << 2);
    let kk = -k * 3 % 7 + (k.abs() as u32 as i32);
    let vv = gpu::float4(1.0, 2.0, pos.z, c);
    let ww = gpu::float4(0.5);
    let m = p.m;
    let tv = m * vv;
    scratch[lid] = t[i % t.len()] + (t.dim(0) + t.rank()) as f32 + p.scale + tv.w + dot(vv, ww) + length(vv.xyz);
    gpu::workgroup_barrier();
    let total = gpu::workgroup_sum::<256>(scratch[lid], scratch);
    let mx = gpu::workgroup_max(total, scratch);
    // every thread reached the collectives above; only now may some leave
    if i >= out.len() { return; }
    out[i] = mx + clamp(f, 0.0, 1.0) + std::f32::consts::PI + (bits as f32) + (kk as f32) + pow(2.0, 3.0);
    let old = gpu::atomic_add(hist, bits % hist.len(), 1u32);
    gpu::atomic_add(hist, 0, old);
    sc[i] = kk;
    tw[i] = 1.0;
    img[gpu::uint2(i % img.width(), 0)] = gpu::float4(1.0, 0.0, 0.0, 1.0);
    let mut x = 1u32;
    x <<= 2;
    x |= 1;
    let mut vec3 = gpu::uint3(1, 2, 3);
    vec3.y = 7;
    let x = x as f32 * 2.5;
    out[i] += x + (vec3.y as f32) + (i32::MAX as f32) + (u32::MAX as f32);
    if !flag && (i == 0 || k != 2) { out[0] = 0.0; } else if flag { out[1] = 1.0; } else { out[2] = -0.0; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn softmax(buf: &mut [f32], count: u32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let row = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<64>(buf, row * count, count, scratch);
}

#[test]
fn host_test() { assert!(true); }
