use goldy::gpu;

/// `if` and blocks used as values: a select when both arms are plain, a temporary
/// assigned in an `if` statement when an arm can fault or has statements.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn values(xs: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    let plain = if i < n { 1.0 } else { -1.0 };
    let guarded = if i < xs.len() { xs[i] } else { 0.0 };
    let chain = if i == 0 { 1u32 } else if i == 1 { 2 } else { 3 };
    let block = {
        let t = plain * 2.0;
        t + 1.0
    };
    let nested = if plain > 0.0 {
        let m = if guarded > 1.0 { guarded } else { 1.0 };
        m * 2.0
    } else {
        0.0
    };
    let sum = plain + (if n > 4 { 2.0 } else { 3.0 });
    let stored = if n > 2 {
        out[0] = 1.0;
        5.0
    } else {
        6.0
    };
    let safe = i < xs.len() && (if i > 0 { xs[i - 1] > 0.0 } else { false });
    out[i] = plain + guarded + (chain as f32) + block + nested + sum + stored + (safe as u32) as f32;
}
