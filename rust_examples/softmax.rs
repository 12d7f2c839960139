use goldy::gpu;

/// Numerically stable softmax of each row of a `rows x cols` matrix, one workgroup per
/// row: `groups((rows, 1, 1))`; rows longer than 256 are covered by each lane striding.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn row_softmax(x: &mut [f32], cols: u32) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let row = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<256>(x, row * cols, cols, scratch);
}
