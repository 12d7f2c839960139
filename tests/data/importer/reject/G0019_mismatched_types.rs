use goldy::gpu;

#[goldy::compute]
fn u32_plus_f32(xs: &mut [f32]) {
    let i = gpu::global_id().x;
    xs[i] = xs[i] + i;
}

#[goldy::compute]
fn f32_into_u32(xs: &mut [u32]) {
    let n: u32 = 1.5;
}

#[goldy::compute]
fn assign_f32_to_u32(xs: &mut [u32]) {
    let mut n = 0u32;
    n = 2.0;
}

#[goldy::compute]
fn i32_index(xs: &mut [f32]) {
    let j = 3i32;
    xs[j] = 1.0;
}

#[goldy::compute]
fn int_condition(xs: &mut [f32]) {
    if xs.len() {
        xs[0] = 1.0;
    }
}

#[goldy::compute]
fn negate_u32(xs: &mut [u32]) {
    let i = gpu::global_id().x;
    xs[0] = -i;
}

#[goldy::compute]
fn int_literal_for_f32(xs: &mut [f32]) {
    xs[0] = 1;
}

#[goldy::compute]
fn if_arms_differ(xs: &mut [f32]) {
    let v = if xs.len() > 2 { 1.0 } else { 2u32 };
}

#[goldy::compute]
fn tail_value(xs: &mut [f32]) {
    if xs.len() > 2 {
        xs[0]
    }
}

#[goldy::compute]
fn cast_to_bool(xs: &mut [u32]) {
    let b = xs[0] as bool;
}

#[goldy::compute]
fn compare_vectors(xs: &mut [f32]) {
    let b = gpu::float2(1.0) < gpu::float2(2.0);
}

#[goldy::compute]
fn float_range(xs: &mut [f32]) {
    for t in 0.0..1.0 {}
}

#[goldy::compute]
fn mixed_range(xs: &mut [f32], n: u32) {
    for j in 0i32..n {}
}

#[goldy::compute]
fn missing_else(xs: &mut [f32]) {
    xs[0] = if xs.len() > 1 { 1.0 };
}

#[goldy::compute]
fn annotation_needed(xs: &mut [f32]) {
    let x;
}
