use goldy::gpu;

#[goldy::compute]
async fn async_kernel(xs: &mut [f32]) {}

#[goldy::compute]
fn async_block(xs: &mut [f32]) {
    let f = async { 1.0 };
}
