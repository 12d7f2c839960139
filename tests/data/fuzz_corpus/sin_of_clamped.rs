// issue 13: `sin(x.clamp(-100.0, 100.0))` differed between backends (driver `sin` on a
// clamped argument). With one math library every backend gives the oracle's bits, within
// 1 ulp of the correctly rounded sine.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        out[i] = x[i].clamp(-100.0, 100.0).sin();
    }
}
