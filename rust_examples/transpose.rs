use goldy::gpu;

/// out[c * rows + r] = input[r * cols + c] for a row-major `rows x cols` matrix.
/// Launched with `over_2d(cols, rows)`.
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn transpose(input: &[f32], out: gpu::Scattered<f32>, rows: u32, cols: u32) {
    let c = gpu::global_id().x;
    let r = gpu::global_id().y;
    if r < rows && c < cols {
        out[c * rows + r] = input[r * cols + c];
    }
}

/// A 5-point Laplacian stencil on a `width x height` grid; border cells copy through.
#[goldy::compute(workgroup_size = [8, 8, 1])]
fn laplacian(grid: &[f32], out: &mut [f32], width: u32, height: u32) {
    let x = gpu::global_id().x;
    let y = gpu::global_id().y;
    if x >= width || y >= height {
        return;
    }
    let i = y * width + x;
    if x == 0 || y == 0 || x == width - 1 || y == height - 1 {
        out[i] = grid[i];
    } else {
        let around = grid[i - 1] + grid[i + 1] + grid[i - width] + grid[i + width];
        out[i] = around - 4.0 * grid[i];
    }
}
