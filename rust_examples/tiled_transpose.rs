use goldy::gpu;

/// out[c * rows + r] = input[r * cols + c] for a row-major `rows x cols` matrix, through a
/// 16 x 16 tile in workgroup memory: each workgroup reads a tile along rows of `input`
/// and writes it along rows of `out`, so both sides touch consecutive addresses.
/// The tile has 17 columns so that a column of it spans all memory banks.
/// Launched with `groups((ceil(cols / 16), ceil(rows / 16), 1))`.
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn tiled_transpose(input: &[f32], out: gpu::Scattered<f32>, rows: u32, cols: u32) {
    let tile = gpu::workgroup_array::<f32, 272>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    let col0 = gpu::workgroup_id().x * 16;
    let row0 = gpu::workgroup_id().y * 16;
    // read: thread (tx, ty) loads input[row0 + ty][col0 + tx]
    if row0 + ty < rows && col0 + tx < cols {
        tile[ty * 17 + tx] = input[(row0 + ty) * cols + col0 + tx];
    }
    // every thread reaches the barrier: only the memory accesses are guarded
    gpu::workgroup_barrier();
    // write: thread (tx, ty) stores out[col0 + ty][row0 + tx] = input[row0 + tx][col0 + ty]
    if col0 + ty < cols && row0 + tx < rows {
        out[(col0 + ty) * rows + row0 + tx] = tile[tx * 17 + ty];
    }
}
