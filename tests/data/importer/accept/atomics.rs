use goldy::gpu;

/// `atomic_add` on u32 and i32 buffers: as a statement, bound by `let`, assigned.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn atomics(keys: &[u32], bins: &mut [u32], signed: &mut [i32], slots: &mut [u32]) {
    let i = gpu::global_id().x;
    gpu::atomic_add(bins, keys[i] % bins.len(), 1);
    let before = gpu::atomic_add(signed, 0, -2);
    let mut prev = 0u32;
    prev = gpu::atomic_add(bins, 0, keys[i]);
    let _ = gpu::atomic_add(bins, 1, 1u32);
    slots[i] = prev + (before as u32);
}
