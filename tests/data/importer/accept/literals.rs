use goldy::gpu;

/// Literal forms: suffixes, bases, separators, exponents, and named constants.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn literals(out: &mut [f32], u: &mut [u32], s: &mut [i32]) {
    let i = gpu::global_id().x;
    u[i] = 2u32 + 0xFF + 0o17 + 0b1010 + 1_000_000 + 0x1f32 + 4_294_967_295 - 4294967295u32;
    s[i] = -2147483648 + 2147483647i32 + 1i32 + -0x10 + 0_i32;
    out[i] = 0.5f32 + 1e-3 + 2.5E2 + 1_000.000_1 + 7f32 + 3.0e+1f32 + 5e0 * 0.0;
    out[i + 1] = f32::MAX + f32::MIN + f32::EPSILON + f32::MIN_POSITIVE
        + f32::INFINITY + f32::NEG_INFINITY
        + std::f32::consts::PI + core::f32::consts::E + std::f32::consts::TAU
        + std::f32::consts::SQRT_2 + std::f32::consts::LN_2 + std::f32::consts::FRAC_PI_2;
    u[i + 1] = u32::MAX - u32::MIN;
    s[i + 1] = i32::MAX + i32::MIN;
    let t = true;
    let f = false;
    if t != f {
        out[0] = -0.0;
    }
}
