use goldy::gpu;

#[goldy::compute]
fn never_assigned(xs: &mut [f32]) {
    let x: f32;
    xs[0] = x;
}

#[goldy::compute]
fn assigned_on_one_path(xs: &mut [f32]) {
    let x: f32;
    if xs.len() > 2 {
        x = 1.0;
    }
    xs[0] = x;
}

#[goldy::compute]
fn assigned_in_loop(xs: &mut [f32]) {
    let mut x: f32;
    for j in 0..4u32 {
        x = 1.0;
    }
    xs[0] = x;
}
