use goldy::gpu;

#[goldy::compute]
fn nested_sum(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    xs[0] = 1.0 + gpu::workgroup_sum::<64>(1.0, s);
}

#[goldy::compute]
fn unbound_sum(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    gpu::workgroup_max::<64>(1.0, s);
}

#[goldy::compute]
fn barrier_in_expression(xs: &mut [f32]) {
    let b = 1 + gpu::workgroup_barrier();
}

#[goldy::compute]
fn barrier_bound(xs: &mut [f32]) {
    let b = gpu::workgroup_barrier();
}

#[goldy::compute]
fn softmax_bound(xs: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let r = gpu::workgroup_softmax_in_place::<64>(xs, 0, 64, s);
}

#[goldy::compute]
fn atomic_in_expression(xs: &mut [u32]) {
    xs[1] = gpu::atomic_add(xs, 0, 1) + 1;
}
