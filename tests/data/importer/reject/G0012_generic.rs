use goldy::gpu;

#[goldy::compute]
fn generic<T>(xs: &mut [f32]) {}

#[goldy::compute]
fn with_where(xs: &mut [f32]) where f32: Copy {}

#[goldy::compute]
fn generic_type(xs: &mut [f32]) {
    let o: Option<f32>;
}
