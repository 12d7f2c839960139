use goldy::gpu;

#[goldy::compute]
unsafe fn unsafe_kernel(xs: &mut [f32]) {}

#[goldy::compute]
fn unsafe_block(xs: &mut [f32]) {
    unsafe {
        xs[0] = 1.0;
    }
}
