use goldy::gpu;

/// Loops of every kind, break/continue, early returns, if/else chains, and Rust names
/// that WGSL reserves.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn control(input: &[u32], out: &mut [u32], limit: u32) {
    let i = gpu::global_id().x;
    if i >= out.len() {
        return;
    }
    let select = input[i];
    let mut array = 0u32;
    for j in 0..select % 7 {
        if j == 3 { continue; }
        array += j;
    }
    for k in 2..=4u32 {
        array = array * k;
    }
    let mut filter = select;
    while filter > limit {
        filter /= 3;
        if filter % 5 == 0 { break; }
    }
    let mut shared = 0;
    loop {
        shared += 1;
        if shared >= 3 { break; }
    }
    let target = if select % 2 == 0 { array } else { filter };
    if target == 7 {
        out[i] = 1;
        return;
    } else if target < 100 {
        out[i] = target + shared;
    } else {
        out[i] = target ^ u32::MAX;
    }
}

/// An inclusive range ending at u32::MAX must stop without wrapping.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn range_to_max(out: &mut [u32]) {
    let i = gpu::global_id().x;
    let mut count = 0u32;
    for v in u32::MAX - (i % 4)..=u32::MAX {
        count += v - (u32::MAX - 10);
    }
    if i < out.len() {
        out[i] = count;
    }
}
