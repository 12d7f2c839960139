//! Workgroup-local memory in poot's `#[kernel]` dialect: `wg_write`/`wg_read` on literal
//! array ids, `workgroup_barrier()`, and `atomic_add` on a `u32` slice.
use poot_kernel_intrinsics::*;

/// out[g] = the sum of workgroup g's 64 inputs, added left to right by lane 0 (poot's
/// `wg_reduce`, over a whole array: inputs past the end count as 0).
#[kernel]
pub fn wg_reduce(a: &[f32], out: &mut [f32]) {
    const WORKGROUP_SIZE: usize = 64;
    let lane = local_index();
    let i = thread_index();
    let mut v = 0.0f32;
    if i < a.len() {
        v = a[i];
    }
    wg_write(0, lane, v); // array 0, slot `lane`
    workgroup_barrier();
    if lane == 0 {
        let mut acc = 0.0f32;
        for j in 0..WORKGROUP_SIZE {
            acc = acc + wg_read(0, j);
        }
        out[group_index()] = acc;
    }
}

/// counts[b] = how many inputs fall in bucket b of `counts.len()` equal buckets over [0, 1)
/// (values outside land in the first or last bucket).
#[kernel]
pub fn bucket_count(xs: &[f32], counts: &mut [u32]) {
    let i = thread_index();
    if i < xs.len() {
        let last = (counts.len() - 1) as f32;
        let bucket = (xs[i] * counts.len() as f32).floor().max(0.0).min(last) as usize;
        atomic_add(counts, bucket, 1);
    }
}
