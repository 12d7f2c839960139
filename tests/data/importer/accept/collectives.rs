use goldy::gpu;

/// Workgroup arrays, barriers, sum/max collectives (let and assignment, with and
/// without `::<N>`) and the in-place softmax.
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn collectives(xs: &[f32], counts: &[u32], out: &mut [f32], tally: &mut [u32]) {
    let scratch = gpu::workgroup_array::<f32, 128>();
    let uscratch = gpu::workgroup_array::<u32, 128>();
    let iscratch = gpu::workgroup_array::<i32, 256>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    scratch[lid] = xs[i];
    gpu::workgroup_barrier();
    let total = gpu::workgroup_sum::<128>(scratch[lid], scratch);
    let biggest = gpu::workgroup_max(xs[i], scratch);
    let mut count = 0u32;
    count = gpu::workgroup_sum::<128>(counts[i], uscratch);
    let m: i32 = gpu::workgroup_max::<128>(-1, iscratch);
    let ones = gpu::workgroup_sum(1, uscratch);
    if lid == 0 {
        out[gpu::workgroup_id().x] = total + biggest;
        tally[gpu::workgroup_id().x] = count + ones + (m as u32) + (iscratch.len() - 256);
    }
    gpu::workgroup_softmax_in_place::<128>(out, gpu::workgroup_id().x * 128, 100, scratch);
}
