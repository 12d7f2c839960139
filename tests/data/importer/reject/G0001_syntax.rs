use goldy::gpu;

#[goldy::compute]
fn missing_value(out: &mut [f32]) {
    let x = ;
}

#[goldy::compute]
fn unclosed_call(out: &mut [f32]) {
    out[0] = gpu::sqrt(2.0;
}
