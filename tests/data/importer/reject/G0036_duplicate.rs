use goldy::gpu;

#[goldy::compute]
fn twice(xs: &mut [f32]) {}

#[goldy::compute]
fn twice(xs: &mut [f32]) {}

#[goldy::compute]
fn repeated_param(xs: &mut [f32], xs: &[f32]) {}
