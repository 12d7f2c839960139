use goldy::gpu;

/// Histogram of byte values: each thread adds one to its bin with `atomic_add`.
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn histogram(values: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() {
        let bin = values[i] % bins.len();
        gpu::atomic_add(bins, bin, 1);
    }
}
