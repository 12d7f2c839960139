use goldy::gpu;

#[goldy::compute]
fn unknown_method(xs: &mut [f32]) {
    xs[0] = xs[1].frobnicate();
}

#[goldy::compute]
fn suggestion(xs: &mut [f32]) {
    xs[0] = xs[1].sqr();
}

#[goldy::compute]
fn len_of_scalar(xs: &mut [f32]) {
    let n = xs[0].len();
}

#[goldy::compute]
fn buffer_method(xs: &mut [f32]) {
    let n = xs.first();
}

#[goldy::compute]
fn to_bits_of_int(xs: &mut [u32]) {
    xs[0] = xs[1].to_bits();
}

#[goldy::compute]
fn unknown_ufcs(xs: &mut [f32]) {
    xs[0] = f32::hypot(1.0, 2.0);
}
