use goldy::gpu;

#[goldy::compute]
fn borrow(xs: &mut [f32]) {
    let x = 1.0;
    let r = &x;
}

#[goldy::compute]
fn scalar_ref(x: &f32) {}

#[goldy::compute]
fn fixed_array_ref(x: &[f32; 4]) {}

#[goldy::compute]
fn deref(xs: &mut [f32]) {
    let x = 1.0;
    xs[0] = *x;
}

#[goldy::compute]
fn raw_pointer(p: *const f32) {}

#[goldy::compute]
fn ref_type(xs: &mut [f32]) {
    let r: &f32;
}
