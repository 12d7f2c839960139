use goldy::gpu;

trait Shape {}

#[goldy::compute]
fn dyn_param(s: &dyn Shape) {}

#[goldy::compute]
fn impl_param(s: impl Shape) {}

#[goldy::compute]
fn impl_in_kernel(xs: &mut [f32]) {
    impl Shape for u32 {}
}

#[goldy::compute]
fn trait_type(xs: &[Shape]) {}
