use goldy::gpu;

#[goldy::compute]
fn usize_param(n: usize) {}

#[goldy::compute]
fn usize_cast(xs: &mut [f32]) {
    let i = gpu::global_id().x as usize;
}

#[goldy::compute]
fn isize_literal(xs: &mut [i32]) {
    let n = 3isize;
}

#[goldy::compute]
fn usize_const(xs: &mut [u32]) {
    xs[0] = usize::MAX;
}
