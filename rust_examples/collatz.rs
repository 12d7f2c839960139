use goldy::gpu;

/// Steps for each start value to reach 1 under the Collatz map, capped at `limit`:
/// per-thread trip counts, `break`, `continue` and an early `return`.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn collatz_steps(starts: &[u32], steps: gpu::Scattered<u32>, limit: u32) {
    let i = gpu::global_id().x;
    if i >= starts.len() {
        return;
    }
    let mut n = starts[i];
    if n == 0 {
        steps[i] = 0;
        return;
    }
    let mut count = 0u32;
    loop {
        if n == 1 || count >= limit {
            break;
        }
        count += 1;
        if n % 2 == 0 {
            n /= 2;
            continue;
        }
        n = 3 * n + 1;
    }
    steps[i] = count;
}
