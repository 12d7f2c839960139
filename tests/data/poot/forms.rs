// poot's `#[kernel]` dialect: one kernel per intrinsic and loop form (tests/test_poot_dialect.py).
use poot_kernel_intrinsics::*;

#[kernel]
pub fn ids(gx: usize, t: &mut [u32], l: &mut [u32], g: &mut [u32], gy: &mut [u32]) {
    let slot = (group_index_y() * gx + group_index()) * 64 + local_index();
    t[slot] = thread_index() as u32;
    l[slot] = local_index() as u32;
    g[slot] = group_index() as u32;
    gy[slot] = group_index_y() as u32;
}

#[kernel]
pub fn lds_arrays(a: &[f32], out: &mut [f32]) {
    const WORKGROUP_SIZE: usize = 64;
    let lane = local_index();
    let i = thread_index();
    wg_write(0, lane, a[i]);
    wg_write(3, lane, a[i] * 2.0);
    workgroup_barrier();
    out[i] = wg_read(0, WORKGROUP_SIZE - 1 - lane) + wg_read(3, lane);
}

#[kernel]
pub fn atomics(xs: &[u32], counts: &mut [u32], olds: &mut [u32]) {
    let i = thread_index();
    if i < xs.len() {
        let bucket = (xs[i] % 8) as usize;
        let old = atomic_add(counts, bucket, 1);
        olds[i] = old;
    }
}

#[kernel]
pub fn no_contract(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) {
    let i = thread_index();
    if i < out.len() {
        out[i] = no_contract_add(a[i] * b[i], c[i]);
    }
}

#[kernel]
pub fn loops(a: &[f32], out: &mut [f32]) {
    let i = thread_index();
    if i < out.len() {
        let mut s = 0.0f32;
        for x in a {
            s = s + *x * 0.5;
        }
        let mut t = 0;
        for k in 0..i % 7 {
            t += k;
        }
        for k in 2..=i % 5 {
            t += k * 3;
        }
        let mut w = i;
        let mut steps = 0usize;
        while w > 0 {
            w = w / 2;
            steps += 1;
        }
        out[i] = s + t as f32 + steps as f32 * 100.0;
    }
}

#[kernel]
pub fn methods(x: &[f32], y: &[f32], bits: &[u32], u: &[u32], s: &[i32], out: &mut [f32], ints: &mut [u32]) {
    let i = thread_index();
    if i < x.len() {
        let v = x[i];
        let o = i * 12;
        out[o] = v.abs().sqrt();
        out[o + 1] = v.floor();
        out[o + 2] = v.ceil();
        out[o + 3] = v.trunc();
        out[o + 4] = v.round();
        out[o + 5] = (v * 0.25).exp();
        out[o + 6] = (v.abs() + 1.0).ln();
        out[o + 7] = v.sin();
        out[o + 8] = f32::cos(v);
        out[o + 9] = v.max(y[i]);
        out[o + 10] = f32::min(v, y[i]);
        out[o + 11] = f32::from_bits(bits[i]);
        ints[i * 4] = u[i].max(u[(i + 1) % u.len()]);
        ints[i * 4 + 1] = u32::min(u[i], 1000);
        ints[i * 4 + 2] = s[i].max(-5) as u32;
        ints[i * 4 + 3] = i32::min(s[i], 7) as u32;
    }
}

#[kernel]
pub fn casts(xs: &[i32], fs: &[f32], out: &mut [u32]) {
    let i = thread_index();
    if i < xs.len() {
        let n: usize = xs[i] as usize;
        let m = fs[i] as usize;
        out[2 * i] = n as u32;
        out[2 * i + 1] = m as u32;
    }
}

#[kernel]
pub fn out_of_range(a: &[f32], out: &mut [f32]) {
    let i = thread_index();
    if i < a.len() {
        out[i + 1] = a[i];
    }
}
