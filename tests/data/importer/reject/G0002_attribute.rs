use goldy::gpu;

#[goldy::compute(workgroup_size = [0, 1, 1])]
fn zero(out: &mut [f32]) {}

#[goldy::compute(workgroup_size = [1024, 2, 1])]
fn too_big(out: &mut [f32]) {}

#[goldy::compute(threads = 64)]
fn unknown_arg(out: &mut [f32]) {}

#[goldy::compute(workgroup_size = [64, 1])]
fn two_dims(out: &mut [f32]) {}

#[goldy::compute]
fn param_attr(#[cfg(test)] out: &mut [f32]) {}

#[goldy::compute]
struct NotAFunction {
    x: f32,
}

struct Host;

impl Host {
    #[goldy::compute]
    fn method(out: &mut [f32]) {}
}
