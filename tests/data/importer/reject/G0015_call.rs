use goldy::gpu;

fn helper(x: f32) -> f32 {
    x * 2.0
}

#[goldy::compute]
fn calls_helper(xs: &mut [f32]) {
    xs[0] = helper(1.0);
}

#[goldy::compute]
fn recursive(xs: &mut [f32]) {
    recursive(xs);
}

#[goldy::compute]
fn std_call(xs: &mut [f32]) {
    xs[0] = std::cmp::max(1.0, 2.0);
}

#[goldy::compute]
fn unknown_function(xs: &mut [f32]) {
    xs[0] = frobnicate(1.0);
}

#[goldy::compute]
fn nested_fn(xs: &mut [f32]) {
    fn inner() {}
}

#[goldy::compute]
fn path_call(xs: &mut [f32]) {
    xs[0] = other::thing(1.0);
}
