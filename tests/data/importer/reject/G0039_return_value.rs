use goldy::gpu;

#[goldy::compute]
fn returns_u32(xs: &mut [f32]) -> u32 {
    1
}

#[goldy::compute]
fn return_statement(xs: &mut [f32]) {
    return 1.0;
}

#[goldy::compute]
fn tail_expression(xs: &mut [f32]) {
    xs[0]
}
