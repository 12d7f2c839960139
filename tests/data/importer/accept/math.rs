use goldy::gpu;

/// Math functions (free and `gpu::`), float methods, UFCS forms and bit casts.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn math(xs: &[f32], out: &mut [f32], ints: &mut [i32], bits: &mut [u32]) {
    let i = gpu::global_id().x;
    let x = xs[i];
    let v = gpu::float3(x, 1.0, 2.0);
    out[i] = abs(x) + floor(x) + ceil(x) + trunc(x) + round(x) + sqrt(x) + sin(x) + cos(x)
        + tan(x) + exp(x) + exp2(x) + log(x) + log2(x) + pow(x, 2.0) + min(x, 1.0)
        + max(0.0, x) + clamp(x, -1.0, 1.0) + fma(x, 2.0, 1.0) + length(v) + dot(v, v)
        + gpu::sqrt(2.0);
    out[i + 1] = x.abs() + x.floor() + x.ceil() + x.trunc() + x.round() + x.sqrt() + x.sin()
        + x.cos() + x.tan() + x.exp() + x.exp2() + x.ln() + x.log2() + x.powf(3.0)
        + x.max(0.5).min(2.0) + x.clamp(0.0, 1.0) + x.mul_add(2.0, 1.0) + v.length() + v.dot(v);
    out[i + 2] = f32::max(x, 1.0) + f32::sqrt(x) + f32::from_bits(0x3f800000) + f32::from_bits(bits[i]);
    bits[i] = x.to_bits() ^ f32::to_bits(1.0);
    let n = ints[i];
    ints[i] = n.abs() + n.min(3) + n.max(-3) + n.clamp(-1, 1) + abs(n) + min(n, 0) + i32::max(n, 2);
    bits[i + 1] = min(i, 4) + max(5, i) + i.min(1) + clamp(i, 1, 9) + u32::min(i, 2);
    let vmin = min(v, gpu::float3(0.0)).x + v.abs().y + floor(v).z + clamp(v, v, v).x;
    out[i + 3] = vmin;
}
