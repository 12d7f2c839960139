use goldy::gpu;

/// Builtins reached as `gpu::x`, `goldy::gpu::x` and bare `x`.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn paths(out: &mut [f32], counts: goldy::gpu::Scattered<u32>) {
    let a = gpu::global_id().x;
    let b = goldy::gpu::local_id().x;
    let c = global_id().y;
    let v = goldy::gpu::float2(1.0, 2.0) + float2(0.5);
    out[a] = gpu::sqrt(v.x) + goldy::gpu::max(v.y, 1.0) + min(1.0, 2.0);
    counts[b] = c;
    goldy::gpu::workgroup_barrier();
    workgroup_barrier();
}
