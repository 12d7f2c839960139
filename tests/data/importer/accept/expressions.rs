use goldy::gpu;

/// Operators with Rust precedence and associativity, unary operators and casts.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn precedence(out: &mut [f32], bits: &mut [u32], ints: &mut [i32], flags: &mut [u32]) {
    let i = gpu::global_id().x;
    let a = 2.0;
    let b = 3.0;
    let c = 4.0;
    // * binds tighter than +, and - is left associative
    out[i] = a + b * c - a / b % c - (a - b - c);
    // shifts bind looser than +, & tighter than ^, ^ tighter than |
    bits[i] = 1u32 << 2 + 1 | 0xF0 & 0x3C ^ 0x0F >> 1u32;
    // unary minus and `as` bind tighter than `*`: (-x) as f32 * 2.0
    let x = 7;
    ints[i] = -x * 2 % 5 + !0 - (-x as u32 as i32);
    let f = -x as f32 * 2.0;
    out[i + 1] = f + (i as f32) + (1.5 as i32) as f32 + (true as u32) as f32;
    // comparisons bind looser than arithmetic, && tighter than ||
    let p = i + 1 < 4 && a * 2.0 >= b || !(c != 4.0) && i % 2 == 0;
    let q = p == (i > 3) || (p && !p);
    if q {
        flags[i] = (p as u32) + (q as u32);
    }
    let t = -(-a);
    let u = !!true;
    let w = ((((a))));
    out[i + 2] = t + w + (u as u32) as f32;
}
