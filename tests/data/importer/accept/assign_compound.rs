use goldy::gpu;

/// Plain and compound assignment (all ten operators) to locals, lanes, buffer elements
/// and workgroup array elements.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn assigns(out: &mut [f32], bits: &mut [u32], ints: &mut [i32]) {
    let tile = gpu::workgroup_array::<u32, 64>();
    let i = gpu::global_id().x;
    let lid = gpu::local_id().x;
    let mut f = 1.0;
    f += 1.0;
    f -= 0.5;
    f *= 3.0;
    f /= 2.0;
    f %= 5.0;
    let mut u = 0xF0u32;
    u &= 0x3C;
    u |= 1;
    u ^= 0xFF;
    u <<= 2;
    u >>= 1u32;
    let mut s = -8;
    s >>= 1;
    s %= 3;
    let mut v = gpu::float3(0.0);
    v.y = f;
    v.z += 1.0;
    v *= 2.0;
    out[i] = v.y;
    out[i] += f;
    out[i] *= 0.5;
    bits[i] = u;
    bits[i] |= 1;
    bits[i] <<= 1;
    ints[i] = s;
    ints[i] -= 1;
    tile[lid] = u;
    tile[lid] += 1;
    tile[lid] ^= 3;
}
