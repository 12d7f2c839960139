use goldy::gpu;

/// Every buffer and scalar parameter category.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn buffers(
    a: &[f32],
    b: &[u32],
    c: &[i32],
    flags: &[bool],
    ro: gpu::BufRO<f32>,
    rw: &mut [f32],
    counts: &mut [u32],
    out: gpu::Scattered<i32>,
    n: u32,
    k: i32,
    s: f32,
    on: bool,
    mut step: u32,
) {
    let i = gpu::global_id().x;
    if i >= rw.len() || !on {
        return;
    }
    step += 1;
    rw[i] = a[i] + ro[i % ro.len()] * s;
    counts[i] = b[i] + n + step;
    out[i] = c[i] * k;
    if flags[i] {
        rw[i] = 0.0;
    }
}
