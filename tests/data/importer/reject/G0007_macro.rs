use goldy::gpu;

#[goldy::compute]
fn print(xs: &mut [f32]) {
    println!("{}", xs[0]);
}

#[goldy::compute]
fn custom(xs: &mut [f32]) {
    my_macro!(xs);
}

#[goldy::compute]
fn in_expression(xs: &mut [f32]) {
    xs[0] = include!("x.rs");
}
