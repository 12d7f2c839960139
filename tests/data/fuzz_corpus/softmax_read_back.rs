// issue 13, cases 1 and 2: a softmax read back right after the call, in the same kernel,
// by other lanes than the ones that wrote it (stale values on lavapipe from 9 positions on
// without the trailing barrier), with count below, at and above the workgroup size (past
// N it used only the first N entries).
use goldy::gpu;

#[goldy::compute(workgroup_size = [16, 1, 1])]
fn k(buf: &mut [f32], out: &mut [f32], stride: u32, count: u32) {
    let s = gpu::workgroup_array::<f32, 16>();
    let lid = gpu::local_id().x;
    let base = gpu::workgroup_id().x * stride;
    gpu::workgroup_softmax_in_place::<16>(buf, base, count, s);
    let mut total = 0.0f32;
    for t in 0u32..count {
        total += buf[base + t];
    }
    out[gpu::global_id().x * 2u32] = buf[base + (lid * 7u32 + 5u32) % stride];
    out[gpu::global_id().x * 2u32 + 1u32] = total;
}
