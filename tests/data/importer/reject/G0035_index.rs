use goldy::gpu;

#[goldy::compute]
fn index_vector(xs: &mut [f32]) {
    let v = gpu::float2(1.0, 2.0);
    xs[0] = v[0];
}

#[goldy::gpu]
struct M {
    m: [[f32; 2]; 2],
}

#[goldy::compute]
fn index_matrix_column(u: gpu::Uniform<M>, xs: &mut [f32]) {
    let m = u.m;
    xs[0] = m[0].x;
}

#[goldy::compute]
fn index_expression(xs: &mut [f32]) {
    xs[0] = (xs)[1];
}

#[goldy::compute]
fn index_scalar_param(xs: &mut [f32], n: f32) {
    xs[0] = n[0];
}
