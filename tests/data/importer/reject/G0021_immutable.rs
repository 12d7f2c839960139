use goldy::gpu;

#[goldy::compute]
fn assign_immutable(xs: &mut [f32]) {
    let x = 1.0;
    x = 2.0;
}

#[goldy::compute]
fn compound_immutable(xs: &mut [f32]) {
    let x = 1.0;
    x += 2.0;
}

#[goldy::compute]
fn assign_param(xs: &mut [f32], n: u32) {
    n = 3;
}

#[goldy::compute]
fn assign_loop_var(xs: &mut [f32]) {
    for j in 0..4u32 {
        j = 2;
    }
}

#[goldy::compute]
fn deferred_twice(xs: &mut [f32]) {
    let x: f32;
    x = 1.0;
    x = 2.0;
}

#[goldy::compute]
fn deferred_in_loop(xs: &mut [f32]) {
    let x: f32;
    loop {
        x = 1.0;
    }
}
