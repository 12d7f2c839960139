// Everything here is outside poot's accepted subset: each line is one diagnostic,
// snapshot in tests/snapshots/poot/rejects.txt (tests/test_poot_dialect.py).
use poot_kernel_intrinsics::*;

#[kernel]
pub fn types(a: &[f64], b: &[usize], t: gpu::Tensor<f32>, h: f16, out: &mut [f32]) {
    let v: [f32; 4];
    let w = 1.0f64;
    let big = 5000000000usize;
    let m = usize::MAX;
}

#[kernel]
pub fn loop_forms(a: &[f32], out: &mut [f32]) {
    for k in (0..4).rev() {}
    for k in (0..8).step_by(2) {}
    for x in a.iter() {}
}

#[kernel]
pub fn calls(a: &[f32], counts: &mut [i32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    let s = sqrt(a[0]);
    let t = a[0].tan();
    let u = (3i32).abs();
    let p = a[0].powf(2.0);
    helper(1);
    let j = wg_read(thread_index(), 0);
    atomic_add(counts, 0, 1);
    let q = a[0].clamp(0.0, 1.0);
}

#[kernel(workgroup_size = [64, 1, 1])]
pub fn attribute(out: &mut [f32]) {}

#[kernel]
pub fn workgroup_size(out: &mut [f32]) {
    const WORKGROUP_SIZE: usize = 2048;
}

#[kernel]
pub fn rust_features(out: &mut [f32]) {
    let c = |x: f32| x + 1.0;
    let m = match out.len() { 0 => 1.0, _ => 2.0 };
    let v = out.len().unwrap();
    println!("no I/O");
}

fn helper(x: i32) {}

#[kernel]
pub fn half_floats(a: &[f16], out: &mut [f32]) {
    let x: f16 = 1.0;
}
