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
    xs[0] = f32::cbrt(8.0);
}

#[goldy::compute]
fn rust_method_the_dialect_spells_otherwise(xs: &mut [f32]) {
    xs[0] = xs[1].atan();
}

#[goldy::compute]
fn no_suggestion_from_shared_letters(xs: &mut [f32]) {
    xs[0] = xs[1].sgn();
}

#[goldy::compute]
fn bit_count_of_float(xs: &mut [u32], fs: &[f32]) {
    xs[0] = fs[1].count_ones();
}

#[goldy::compute]
fn is_nan_of_int(xs: &mut [u32]) {
    xs[0] = xs[1].is_nan() as u32;
}
