use goldy::gpu;

#[goldy::compute]
fn u64_let(out: &mut [u32]) {
    let big: u64 = 1;
}

#[goldy::compute]
fn f64_param(x: f64) {}

#[goldy::compute]
fn f64_literal(out: &mut [f32]) {
    out[0] = 1.0f64;
}

#[goldy::compute]
fn u8_literal(out: &mut [u32]) {
    out[0] = 1u8;
}

#[goldy::compute]
fn tuple_let(out: &mut [f32]) {
    let t: (u32, f32) = (1, 2.0);
}

#[goldy::compute]
fn tuple_value(out: &mut [f32]) {
    out[0] = (1.0, 2.0).0;
}

enum Mode {
    Fast,
    Slow,
}

#[goldy::compute]
fn enum_param(m: Mode) {}

struct Host {
    x: f32,
}

#[goldy::compute]
fn host_struct(hs: &[Host]) {}

#[goldy::compute]
fn unknown_type(xs: &[Widget]) {}

#[goldy::compute]
fn char_literal(out: &mut [u32]) {
    let c = 'a';
}

#[goldy::compute]
fn string_literal(out: &mut [u32]) {
    let s = "text";
}

#[goldy::compute]
fn array_value(out: &mut [f32]) {
    let a = [1.0, 2.0];
}

#[goldy::compute]
fn big_array_type(out: &mut [f32]) {
    let a: [f32; 8];
}
