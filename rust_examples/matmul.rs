use goldy::gpu;

/// c = a * b for row-major f32 matrices a (m x k), b (k x n), c (m x n), with 16 x 16
/// tiles of a and b staged in workgroup memory. Launched with
/// `groups((ceil(n / 16), ceil(m / 16), 1))`; thread (tx, ty) of workgroup (gx, gy)
/// computes c[16 gy + ty][16 gx + tx].
///
/// Product order (the same on every backend, so results agree bit for bit):
/// acc starts at 0.0 and, for p = 0, 1, ..., k - 1 in order, becomes
/// `acc + a[row][p] * b[p][col]`, the product and the sum each rounded to f32 (no fused
/// multiply-add). Tiles past the matrix edge hold zeros, and adding the product 0 leaves
/// `acc` unchanged, so the padding does not change the result.
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn matmul(a: &[f32], b: &[f32], c: gpu::Scattered<f32>, m: u32, n: u32, k: u32) {
    let ta = gpu::workgroup_array::<f32, 256>();
    let tb = gpu::workgroup_array::<f32, 256>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    let row = gpu::workgroup_id().y * 16 + ty;
    let col = gpu::workgroup_id().x * 16 + tx;
    let mut acc = 0.0;
    // the same trip count on every thread: the barriers inside are reached by all
    let tiles = (k + 15) / 16;
    for t in 0..tiles {
        let ka = t * 16 + tx; // column of a this thread stages
        let kb = t * 16 + ty; // row of b this thread stages
        let mut va = 0.0;
        if row < m && ka < k {
            va = a[row * k + ka];
        }
        let mut vb = 0.0;
        if kb < k && col < n {
            vb = b[kb * n + col];
        }
        ta[ty * 16 + tx] = va;
        tb[ty * 16 + tx] = vb;
        gpu::workgroup_barrier();
        for j in 0..16 {
            acc = acc + ta[ty * 16 + j] * tb[j * 16 + tx];
        }
        gpu::workgroup_barrier();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}
