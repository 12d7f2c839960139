// found by tests/test_differential_fuzz.py: `select(a < b, a >= b, flag)` parsed as the
// WGSL template list `a<b, a>` and naga rejected the module (fixed in codegen/wgsl.py).
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(a: f32, b: f32, flag: bool, out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = (if flag { a >= b } else { a < b }) as u32;
    }
}
