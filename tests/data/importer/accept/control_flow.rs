use goldy::gpu;

/// if / else if / else, while, loop, for over `a..b` and `a..=b`, break, continue, return.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn control(out: &mut [u32], xs: &[i32], n: u32) {
    let i = gpu::global_id().x;
    if i >= out.len() {
        return;
    }
    let mut total = 0u32;
    if xs[i] < 0 {
        total = 1;
    } else if xs[i] == 0 {
        total = 2;
    } else {
        total = 3;
    }
    let mut k = 0u32;
    while k < n {
        k += 1;
        if k % 2 == 0 {
            continue;
        }
        if k > 10 {
            break;
        }
        total += k;
    }
    loop {
        total += 1;
        if total > 100 {
            break;
        }
    }
    for j in 0..out.len() {
        total ^= j;
    }
    for j in 1..=4u32 {
        total += j;
    }
    for j in -3..3 {
        if j == 0 { continue; }
        total += (j * j) as u32;
    }
    for j in -5..=-1 {
        total += (-j) as u32;
    }
    for _ in 0..2u32 {
        for _ in 0..2u32 {
            total += 1;
        }
    }
    {
        let scoped = 5u32;
        total += scoped;
    }
    out[i] = total;
}
