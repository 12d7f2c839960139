//! Element-wise kernels in poot's `#[kernel]` dialect: slices in, slices out, `usize`
//! indices, poot's intrinsics. They import beside `#[goldy::compute]` kernels and run on
//! every backend; see docs/dialect.md, "poot kernels".
use poot_kernel_intrinsics::*;

/// out[i] = a[i] + b[i]
#[kernel]
pub fn elementwise_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = thread_index();
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

/// out[i] = x[i] * scale + bias, with the scale and bias packed as bits in a metadata
/// buffer and an addition no backend may fuse into an FMA.
#[kernel]
pub fn scale_bias(x: &[f32], meta: &[u32], out: &mut [f32]) {
    const WORKGROUP_SIZE: usize = 256;
    let i = thread_index();
    if i < x.len() {
        let scale = f32::from_bits(meta[0]);
        let bias = f32::from_bits(meta[1]);
        out[i] = no_contract_add(x[i] * scale, bias);
    }
}

/// A polynomial per element of a row-major `rows x n` matrix: the rows along the grid's
/// Y workgroups, the columns along X. out = c[0] + c[1] x + c[2] x^2 + ...
#[kernel]
pub fn poly_rows(x: &[f32], coeffs: &[f32], out: &mut [f32], n: usize) {
    let row = group_index_y();
    let col = thread_index();
    if col < n {
        let v = x[row * n + col];
        let mut acc = 0.0f32;
        let mut power = 1.0f32;
        for c in coeffs {
            acc = no_contract_add(acc, *c * power);
            power = power * v;
        }
        out[row * n + col] = acc;
    }
}
