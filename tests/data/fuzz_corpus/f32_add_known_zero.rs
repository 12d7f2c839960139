// CI's differential fuzzer (seed 3731832398, eighth session): `x + 0.0` must give +0.0
// for x == -0.0. Slang's IR simplifier rewrote `x + 0.0` and `x - (-0.0)` to `x` once an
// operand was a known zero: a literal, a propagated `let`, an unrolled loop's first trip,
// so a sum started from 0.0 kept a -0.0 addend's sign on the slang backend.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], lit: &mut [f32], sub: &mut [f32], acc: &mut [f32], vec: &mut [f32]) {
    let i = gpu::global_id().x;
    if i >= x.len() {
        return;
    }
    lit[i] = x[i] + 0.0;
    sub[i] = x[i] - (-0.0);
    let mut s = 0.0f32;
    for _k in 0..1u32 {
        s += x[i];
    }
    acc[i] = s;
    let v = gpu::float2(x[i], x[i]) + gpu::float2(0.0, 0.0);
    vec[i] = v.y;
}
