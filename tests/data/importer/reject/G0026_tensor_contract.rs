use goldy::gpu;

#[goldy::compute]
fn on_slice(#[tensor(shape = [4])] xs: &mut [f32]) {}

#[goldy::compute]
fn on_scalar(#[tensor(shape = [_])] n: u32) {}
