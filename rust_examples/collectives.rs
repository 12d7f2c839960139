use goldy::gpu;

/// Per-workgroup sum and maximum with the dialect's collectives: the same
/// pairwise tree on every backend, so float sums agree bit for bit.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn group_sum_max(input: &[f32], sums: &mut [f32], maxes: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    let mut v = 0.0;
    let mut m = f32::NEG_INFINITY;
    if i < input.len() {
        v = input[i];
        m = input[i];
    }
    let total = gpu::workgroup_sum::<256>(v, scratch);
    let biggest = gpu::workgroup_max::<256>(m, scratch);
    if gpu::local_id().x == 0 {
        let g = gpu::workgroup_id().x;
        sums[g] = total;
        maxes[g] = biggest;
    }
}
