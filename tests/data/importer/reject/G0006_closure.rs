use goldy::gpu;

#[goldy::compute]
fn closure(xs: &mut [f32]) {
    let double = |x: f32| x * 2.0;
}

#[goldy::compute]
fn move_closure(xs: &mut [f32]) {
    let k = 2.0;
    let f = move || k;
}
