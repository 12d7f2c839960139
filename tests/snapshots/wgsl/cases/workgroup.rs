use goldy::gpu;

/// An early return before a barrier and collectives: returned threads must not write,
/// and every barrier must stay in uniform control flow. (The returns' conditions do not
/// depend on the thread: the importer rejects a barrier after such a return, G0042.)
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn neighbours(x: &[f32], out: &mut [f32], sums: &mut [f32], n: u32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    scratch[lid] = v;
    if n == 0 {
        return;
    }
    gpu::workgroup_barrier();
    out[i] = scratch[lid ^ 1] * 2.0 + v;
}

/// Float and integer collectives; a loop that can return inside, before them.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn partial_sums(x: &[f32], k: &[i32], sums: &mut [f32], ksum: &mut [i32], kmax: &mut [u32]) {
    let fs = gpu::workgroup_array::<f32, 64>();
    let is = gpu::workgroup_array::<i32, 64>();
    let us = gpu::workgroup_array::<u32, 64>();
    let i = gpu::global_id().x;
    let g = gpu::workgroup_id().x;
    let lid = gpu::local_id().x;
    let mut v = 0.0;
    let mut kv = 0;
    if i < x.len() {
        v = x[i];
        kv = k[i];
    }
    for j in 0..4u32 {
        if k[0] == 1000 + (j as i32) {
            return;
        }
    }
    let total = gpu::workgroup_sum::<64>(v, fs);
    let ktotal = gpu::workgroup_sum::<64>(kv, is);
    let kbig = gpu::workgroup_max::<64>(kv as u32, us);
    if lid == 0 {
        sums[g] = total;
        ksum[g] = ktotal;
        kmax[g] = kbig;
    }
}

/// Histogram with atomics; reads of an atomic buffer use atomicLoad.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn histogram(values: &[u32], bins: &mut [u32], total: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= values.len() {
        return;
    }
    let b = values[i] % bins.len();
    gpu::atomic_add(bins, b, 1u32);
    gpu::atomic_add(total, 0, values[i] & 0xff);
}

/// Softmax of each row, one workgroup per row.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn softmax_rows(buf: &mut [f32], cols: u32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let row = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<64>(buf, row * cols, cols, scratch);
}
