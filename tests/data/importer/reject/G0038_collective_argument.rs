use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scratch_type(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<u32, 64>();
    let t = gpu::workgroup_sum::<64>(xs[0], s);
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scratch_small(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 32>();
    let t = gpu::workgroup_sum::<64>(1.0, s);
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn size_mismatch(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 128>();
    let t = gpu::workgroup_sum::<128>(1.0, s);
}

#[goldy::compute]
fn atomic_min_on_f32(xs: &mut [f32]) {
    gpu::atomic_min(xs, 0, 1.0);
}

#[goldy::compute]
fn softmax_on_u32(xs: &mut [u32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    gpu::workgroup_softmax_in_place::<64>(xs, 0, 64, s);
}

#[goldy::compute]
fn bool_workgroup_array(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<bool, 64>();
}

#[goldy::compute]
fn zero_length(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 0>();
}

#[goldy::compute]
fn not_a_workgroup_array(xs: &mut [f32]) {
    let t = gpu::workgroup_sum::<64>(1.0, xs);
}

#[goldy::compute]
fn atomic_on_scalar(xs: &mut [u32], n: u32) {
    gpu::atomic_add(n, 0, 1);
}
