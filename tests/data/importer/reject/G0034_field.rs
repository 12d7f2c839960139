use goldy::gpu;

#[goldy::gpu]
struct P {
    pos: [f32; 2],
}

#[goldy::compute]
fn unknown_field(ps: &[P], xs: &mut [f32]) {
    xs[0] = ps[0].poss.x;
}

#[goldy::compute]
fn lane_out_of_range(xs: &mut [f32]) {
    let v = gpu::float2(1.0, 2.0);
    xs[0] = v.z;
}

#[goldy::compute]
fn bad_swizzle(xs: &mut [f32]) {
    let v = gpu::float4(1.0);
    xs[0] = v.rgb.x;
}

#[goldy::compute]
fn field_of_scalar(xs: &mut [f32]) {
    xs[0] = xs[1].x;
}
