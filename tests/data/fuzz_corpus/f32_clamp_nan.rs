// issue 13, case 4: `f32::clamp(NaN, lo, hi)` returned `lo`; Rust returns NaN, so
// `NaN.clamp(-128.0, 127.0) as i32` is 0 (a NaN casts to 0), not -128.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], c: &mut [f32], q: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        c[i] = x[i].clamp(-1.0, 1.0);
        q[i] = x[i].clamp(-128.0, 127.0) as i32;
    }
}
