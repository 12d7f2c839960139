use goldy::gpu;

#[goldy::compute]
fn tuple_struct_pattern(xs: &mut [f32]) {
    let Some(x) = xs[0];
}

#[goldy::compute]
fn if_let(xs: &mut [f32]) {
    if let Some(x) = xs[0] {}
}

#[goldy::compute]
fn while_let(xs: &mut [f32]) {
    while let Some(x) = xs[0] {}
}

#[goldy::compute]
fn let_else(xs: &mut [f32]) {
    let Some(x) = xs[0] else { return; };
}

#[goldy::compute]
fn param_pattern((a, b): (u32, u32)) {}
