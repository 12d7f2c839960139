use goldy::gpu;

#[goldy::compute]
fn nested(xs: &mut [f32]) {
    if xs.len() > 0 {
        let s = gpu::workgroup_array::<f32, 64>();
    }
}

#[goldy::compute]
fn in_expression(xs: &mut [f32]) {
    let n = gpu::workgroup_array::<f32, 64>().len();
}

#[goldy::compute]
fn in_loop(xs: &mut [f32]) {
    loop {
        let s = gpu::workgroup_array::<f32, 64>();
        break;
    }
}
