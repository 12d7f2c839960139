use goldy::gpu;

#[goldy::compute]
fn match_statement(xs: &mut [u32]) {
    let i = gpu::global_id().x;
    match i {
        0 => xs[0] = 1,
        _ => {}
    }
}

#[goldy::compute]
fn match_value(xs: &mut [u32]) {
    let i = gpu::global_id().x;
    xs[i] = match i % 2 { 0 => 1, _ => 2 };
}
