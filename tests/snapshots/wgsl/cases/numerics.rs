use goldy::gpu;

/// Float arithmetic whose Rust meaning WGSL leaves open: division, sqrt, remainder,
/// NaN-ignoring min/max, round half away from zero, fused mul_add, saturating casts.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn float_ops(a: &[f32], b: &[f32], out: &mut [f32], ints: &mut [i32], n: u32) {
    let i = gpu::global_id().x;
    if i >= n {
        return;
    }
    let x = a[i];
    let y = b[i];
    let o = i * 10;
    out[o] = x / y;
    out[o + 1] = x.sqrt();
    out[o + 2] = x % y;
    out[o + 3] = x.min(y);
    out[o + 4] = x.max(y);
    out[o + 5] = x.round();
    out[o + 6] = x * y + y;
    out[o + 7] = x.mul_add(y, y);
    out[o + 8] = clamp(x, -1.0, y.abs());
    out[o + 9] = f32::from_bits(x.to_bits() ^ 0x80000000);
    ints[i * 2] = x as i32;
    ints[i * 2 + 1] = (y as u32) as i32;
}

/// Integer arithmetic: wrapping, division by zero, i32::MIN / -1, masked shifts, casts.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn int_ops(a: &[i32], b: &[i32], u: &[u32], v: &[u32], out: &mut [i32], uout: &mut [u32], n: u32) {
    let i = gpu::global_id().x;
    if i >= n {
        return;
    }
    let x = a[i];
    let y = b[i];
    let p = u[i];
    let q = v[i];
    let o = i * 8;
    out[o] = x / y;
    out[o + 1] = x % y;
    out[o + 2] = x << y;
    out[o + 3] = x >> q;
    out[o + 4] = x.abs();
    out[o + 5] = -x * 3 + y;
    out[o + 6] = x.min(y).max(-5);
    out[o + 7] = !x;
    uout[o] = p / q;
    uout[o + 1] = p % q;
    uout[o + 2] = p << y;
    uout[o + 3] = p >> q;
    uout[o + 4] = (x as f32).to_bits();
    uout[o + 5] = (p as f32).to_bits();
    uout[o + 6] = p.clamp(10, 1000000);
    uout[o + 7] = (x as u32) + (p as i32 as u32);
}

/// Transcendentals (compared with a tolerance), vectors, dot and length.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn vector_ops(a: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i >= n {
        return;
    }
    let x = a[i];
    let v = gpu::float4(x, x * 0.5, 1.0 - x, 2.0);
    let w = gpu::float4(0.25, x, -x, 3.0);
    let o = i * 12;
    out[o] = x.sin() + x.cos();
    out[o + 1] = (x * 0.1).exp() + x.abs().ln() - (x.abs() + 1.0).log2();
    out[o + 2] = pow(x.abs(), 1.5) + pow(-2.0, 3.0);
    out[o + 3] = dot(v, w);
    out[o + 4] = length(v.xyz);
    let mut z = v.zyx;
    z.y = 7.0;
    out[o + 5] = z.x + z.y;
    out[o + 6] = (v * w - v).w;
    let s = (v + w * 2.0) / gpu::float4(3.0);
    out[o + 7] = s.y + s.z;
    out[o + 8] = v.max(w).x + v.min(w).y;
    out[o + 9] = (x * 0.01).tan();
    out[o + 10] = (x * 0.5).exp2();
    out[o + 11] = x.floor() + x.ceil() * 2.0 + x.trunc() * 4.0;
}

/// Constant expressions that overflow: naga would reject them, Rust wraps (or gives inf).
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn constants(out: &mut [i32], uo: &mut [u32], fo: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < 1 {
        out[0] = i32::MAX + 1;
        out[1] = -(i32::MIN);
        out[2] = i32::MIN / -1 + 7 % 0;
        out[3] = (-7 >> 33) * (1 << 31);
        uo[0] = u32::MAX + 1;
        uo[1] = 1u32 << 40;
        uo[2] = (3.9e9f32) as u32 + (-1.0e10f32) as u32 - 5;
        fo[0] = f32::MAX * 2.0;
        fo[1] = -1.0 / 0.0 + (16777217u32 as f32);
        fo[2] = 7.5 % -2.0;
        // calls and vectors of constants: folded here, or kept from naga's evaluator
        uo[3] = 32u32.max(3).min(100) << 31;
        uo[4] = (if 3 > 2 { 5u32 } else { 7u32 }) * 0xffffffff;
        fo[3] = (1000.0f32).exp();
        fo[4] = (2.5f32).round() + (-0.0f32).min(0.0) + (4.0f32).sqrt() + (-2.0f32).abs().floor();
        let v = gpu::uint3(1, 2, 3) * 0xffffffff;
        let w = -gpu::int2(i32::MIN, 5);
        uo[5] = v.x + v.y + (w.x as u32) + (w.y as u32);
    }
}
