use goldy::gpu;

#[goldy::compute]
fn barrier_args(xs: &mut [f32]) {
    gpu::workgroup_barrier(1);
}

#[goldy::compute]
fn math_arity(xs: &mut [f32]) {
    xs[0] = gpu::clamp(1.0, 2.0);
}

#[goldy::compute]
fn method_arity(xs: &mut [f32]) {
    xs[0] = xs[1].max();
}

#[goldy::compute]
fn vector_lanes(xs: &mut [f32]) {
    let v = gpu::float4(1.0, 2.0);
}

#[goldy::compute]
fn builtin_args(xs: &mut [f32]) {
    let i = gpu::global_id(0).x;
}

#[goldy::compute]
fn atomic_arity(xs: &mut [u32]) {
    gpu::atomic_add(xs, 1);
}
