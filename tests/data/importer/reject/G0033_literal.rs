use goldy::gpu;

#[goldy::compute]
fn u32_overflow(xs: &mut [u32]) {
    xs[0] = 4294967296;
}

#[goldy::compute]
fn i32_overflow(xs: &mut [i32]) {
    xs[0] = 2147483648;
}

#[goldy::compute]
fn negative_overflow(xs: &mut [i32]) {
    xs[0] = -2147483649;
}

#[goldy::compute]
fn f32_overflow(xs: &mut [f32]) {
    xs[0] = 1e39;
}
