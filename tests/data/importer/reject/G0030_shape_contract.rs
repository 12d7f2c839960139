use goldy::gpu;

#[goldy::compute]
fn rank_five(#[tensor(shape = [1, 2, 3, 4, 5])] t: gpu::Tensor<f32>) {}

#[goldy::compute]
fn empty_shape(#[tensor(shape = [])] t: gpu::Tensor<f32>) {}

#[goldy::compute]
fn not_shape(#[tensor(dims = [4])] t: gpu::Tensor<f32>) {}

#[goldy::compute]
fn bad_extent(#[tensor(shape = [4.5])] t: gpu::Tensor<f32>) {}
