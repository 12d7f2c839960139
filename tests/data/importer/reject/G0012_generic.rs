use goldy::gpu;

#[goldy::compute]
fn generic<T>(xs: &mut [f32]) {}

#[goldy::compute]
fn with_where(xs: &mut [f32]) where f32: Copy {}

#[goldy::compute]
fn generic_type(xs: &mut [f32]) {
    let o: Option<f32>;
}

#[goldy::compute]
fn turbofish_on_builtin(xs: &mut [f32]) {
    xs[0] = gpu::max::<f32>(1.0, 2.0);
}
