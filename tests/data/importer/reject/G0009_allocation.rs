use goldy::gpu;

#[goldy::compute]
fn vec_macro(xs: &mut [f32]) {
    let v = vec![0.0; 4];
}

#[goldy::compute]
fn vec_new(xs: &mut [f32]) {
    let v = Vec::new();
}

#[goldy::compute]
fn vec_param(xs: Vec<f32>) {}

#[goldy::compute]
fn box_type(xs: &mut [f32]) {
    let b: Box<f32>;
}

#[goldy::compute]
fn string_new(xs: &mut [f32]) {
    let s = String::from("x");
}
