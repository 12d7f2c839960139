use goldy::gpu;

/// Tensor views with shape contracts of every extent kind, rank 1 to 4.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn tensors(
    #[tensor(shape = [n])] x: gpu::Tensor<f32>,
    #[tensor(shape = [n, 4])] m: gpu::TensorMut<f32>,
    #[tensor(shape = [_, _, 3])] w: gpu::TensorWrite<u32>,
    #[tensor(shape = [2, rows, cols, _])] r4: gpu::Tensor<i32>,
    plain: gpu::Tensor<f32>,
) {
    let i = gpu::global_id().x;
    if i >= x.len() {
        return;
    }
    let rank = r4.rank() + plain.rank();
    let d = x.dim(0) + m.dim(1) + r4.dim(rank - 1);
    m[i] = m[i] + x[i] * plain[i % plain.len()];
    w[i] = d + (r4[i] as u32);
}
