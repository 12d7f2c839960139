use goldy::gpu;

/// Storage images of each element kind, their size, and texel reads and writes.
#[goldy::compute(workgroup_size = [8, 8, 1])]
fn images(
    src: gpu::DirectSpatial<f32>,
    dst: gpu::DirectSpatial<gpu::float4>,
    ids: gpu::DirectSpatial<u32>,
    ints: gpu::DirectSpatial<gpu::int4>,
) {
    let x = gpu::global_id().x;
    let y = gpu::global_id().y;
    if x >= dst.width() || y >= dst.height() {
        return;
    }
    let at = gpu::uint2(x, y);
    let v = src[at];
    dst[at] = gpu::float4(v, v, v, 1.0);
    ids[at] = ids[at] + 1;
    ints[gpu::uint2(0, 0)] = gpu::int4(-1);
}
