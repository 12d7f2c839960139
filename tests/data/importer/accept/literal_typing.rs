use goldy::gpu;

/// Untyped integer literals take their type from use, as in Rust: through later
/// assignments, chains of `let`s, loop bounds, indices and `if` arms.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn typing(data: &[u32], out: &mut [u32], signed: &mut [i32]) {
    let i = gpu::global_id().x;
    let mut acc = 0;
    for j in 0..4 {
        acc += data[j];
    }
    let base = 2;
    let offset = base * 3 + 1;
    let idx = offset;
    out[idx] = acc;
    let mut count = 0;
    while count < 10 {
        count += 1;
    }
    let pick = if i > 2 { 0 } else { i };
    let neg = -5;
    let plain = 7;
    signed[i] = neg + plain;
    out[i] = count + pick + data[1 + 1];
    let shift = 1 << 4;
    out[i + 1] = shift;
}
