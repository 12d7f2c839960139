use goldy::gpu;

/// A 32-bit integer hash (xorshift-multiply) of every element: wrapping
/// arithmetic and logical shifts, exactly as Rust computes them.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn hash_u32(input: &[u32], output: &mut [u32], seed: u32) {
    let i = gpu::global_id().x;
    if i >= output.len() {
        return;
    }
    let mut h = input[i] ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352d;
    h ^= h >> 15;
    h *= 0x846ca68b;
    h ^= h >> 16;
    output[i] = h;
}
