use goldy::gpu;

#[goldy::compute(workgroup_size = [100, 1, 1])]
fn sum_100(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 100>();
    let t = gpu::workgroup_sum::<100>(1.0, s);
}

#[goldy::compute(workgroup_size = [96, 1, 1])]
fn softmax_96(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 96>();
    gpu::workgroup_softmax_in_place::<96>(xs, 0, 96, s);
}
