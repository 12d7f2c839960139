// found by tests/test_oracle_semantics.py: `x != y` with a NaN operand is true in Rust
// (IEEE: NaN is unordered, so not equal to anything, itself included); WGSL on lavapipe
// gave false. `==`, `<` and `!(x >= y)` with NaN for comparison.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(a: &[f32], b: &[f32], ne: &mut [u32], eq: &mut [u32], lt: &mut [u32], nge: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        ne[i] = (a[i] != b[i]) as u32;
        eq[i] = (a[i] == b[i]) as u32;
        lt[i] = (a[i] < b[i]) as u32;
        nge[i] = (!(a[i] >= b[i])) as u32;
    }
}
