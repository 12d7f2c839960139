use goldy::gpu;

/// Sum of each block of 256 elements, written out by hand: a workgroup array,
/// barriers, and a halving tree (lane l adds lane l + stride).
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn block_sum(input: &[f32], sums: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let mut v = 0.0;
    if i < input.len() {
        v = input[i];
    }
    scratch[lid] = v;
    gpu::workgroup_barrier();
    let mut stride = 128u32;
    while stride > 0 {
        if lid < stride {
            scratch[lid] += scratch[lid + stride];
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    if lid == 0 {
        sums[gpu::workgroup_id().x] = scratch[0];
    }
}
