use goldy::gpu;

/// `let` in every form: typed, untyped, mutable, shadowed, discarded, deferred, const.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn lets(out: &mut [f32], idx: &mut [u32]) {
    let i = gpu::global_id().x;
    let a = 1.5;
    let b: f32 = 2.0;
    let mut c = a * b;
    c += 1.0;
    let c = c * 2.0;
    let c = c as u32;
    let _ = c;
    let d: u32;
    d = 7;
    let mut e: i32;
    e = -3;
    e -= 1;
    const SCALE: f32 = 0.25;
    let r#type = 3u32;
    let v: [f32; 3] = gpu::float3(1.0, 2.0, 3.0);
    let w: gpu::uint2 = gpu::uint2(1, 2);
    out[i] = (c as f32) * SCALE + (d as f32) + (e as f32) + v.z + (w.y as f32);
    idx[i] = r#type;
}
