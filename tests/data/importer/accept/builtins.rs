use goldy::gpu;

/// Thread and grid builtins, each a `uint3`.
#[goldy::compute(workgroup_size = [8, 4, 2])]
fn ids(out: &mut [u32]) {
    let g = gpu::global_id();
    let l = gpu::local_id();
    let w = gpu::workgroup_id();
    let n = gpu::num_workgroups();
    let s = gpu::workgroup_size();
    let flat = g.x + g.y * n.x * s.x + g.z * n.x * s.x * n.y * s.y;
    out[flat] = l.x + l.y + l.z + w.x + w.y + w.z + s.x * s.y * s.z;
}
