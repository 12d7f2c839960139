use goldy::gpu;

/// RMS normalisation of each row of a `[rows, dim]` tensor:
/// `out[r, c] = x[r, c] * weight[c] / sqrt(mean(x[r, :]^2) + eps)`.
/// One workgroup per row (`groups((rows, 1, 1))`); the shape contracts make a
/// mismatched `weight` or `out` an error at record time, not a wrong answer.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn rmsnorm(
    #[tensor(shape = [rows, dim])] x: gpu::Tensor<f32>,
    #[tensor(shape = [dim])] weight: gpu::Tensor<f32>,
    #[tensor(shape = [rows, dim])] out: gpu::TensorWrite<f32>,
    eps: f32,
) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let row = gpu::workgroup_id().x;
    let lid = gpu::local_id().x;
    let dim = x.dim(1);
    let mut acc = 0.0;
    let mut c = lid;
    while c < dim {
        let v = x[row * dim + c];
        acc += v * v;
        c += 256;
    }
    let total = gpu::workgroup_sum::<256>(acc, scratch);
    let inv = 1.0 / (total / (dim as f32) + eps).sqrt();
    c = lid;
    while c < dim {
        out[row * dim + c] = x[row * dim + c] * inv * weight[c];
        c += 256;
    }
}
