// issue 13: `min` / `max` with subnormal operands (3e-45) must keep them (no flush to
// zero on any backend: they are ordinary values in Rust).
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(a: &[f32], b: &[f32], lo: &mut [f32], hi: &mut [f32], bits: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        lo[i] = a[i].min(b[i]);
        hi[i] = a[i].max(b[i]);
        bits[i] = a[i].min(b[i]).to_bits();
    }
}
