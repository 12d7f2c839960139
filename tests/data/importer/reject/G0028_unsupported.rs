use goldy::gpu;

#[goldy::gpu]
struct P {
    x: f32,
}

#[goldy::compute]
fn struct_literal(xs: &mut [f32]) {
    let p = P { x: 1.0 };
}

#[goldy::compute]
fn loop_label(xs: &mut [f32]) {
    'outer: loop {
        break 'outer;
    }
}

#[goldy::compute]
fn break_value(xs: &mut [f32]) {
    loop {
        break 1;
    }
}

#[goldy::compute]
fn open_range(xs: &mut [f32]) {
    for j in 0u32.. {}
}

#[goldy::compute]
fn effects_in_operand(xs: &mut [f32]) {
    xs[1] = xs[0] + { xs[0] = 2.0; 1.0 };
}

#[goldy::compute]
fn multi_lane_assign(xs: &mut [f32]) {
    let mut v = gpu::float3(0.0);
    v.xy = gpu::float2(1.0);
}

#[goldy::compute]
fn function_as_value(xs: &mut [f32]) {
    let f = gpu::global_id;
}

#[goldy::compute]
fn buffer_as_value(xs: &mut [f32]) {
    let ys = xs;
}

#[goldy::compute]
fn const_kernel_item(xs: &mut [f32]) {
    struct Local {}
}

#[goldy::compute]
const fn const_kernel(xs: &mut [f32]) {}
