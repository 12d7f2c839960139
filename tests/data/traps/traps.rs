// Kernels of tests/test_traps.py: each has one offending lane for the inputs the tests give
// it (so the index in a fault message does not depend on the order lanes run in). Kept out
// of tests/data/*.rs on purpose: the tests that run every kernel there on random data would
// fault here. The tests find their accesses by text: keep each needle's first occurrence.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn read_past(x: &[f32], y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = x[i + off] * 2.0;
    }
}

// every access proven by its guard: no check site, so no error word
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn proven(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() && i < y.len() { y[i] = x[i]; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn write_past(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        y[i + 1] = x[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn count_bins(data: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < data.len() {
        let b = data[i];
        gpu::atomic_add(bins, b, 1u32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn quotients(a: &[u32], b: &[u32], q: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < q.len() && i < a.len() && i < b.len() {
        q[i] = a[i] / b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn remainders(a: &[i32], b: &[i32], r: &mut [i32], q: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < r.len() && i < q.len() && i < a.len() && i < b.len() {
        r[i] = a[i] % b[i];
        q[i] = a[i] / b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shift_left(y: &mut [u32], k: u32) {
    let s = gpu::workgroup_array::<u32, 64>();
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = l * 10;
    gpu::workgroup_barrier();
    if i < y.len() {
        y[i] = s[l + k];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tensor_copy(t: gpu::Tensor<f32>, y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = t[i + off];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tensor_fill(t: gpu::TensorMut<f32>, off: u32) {
    let i = gpu::global_id().x;
    if i < t.len() {
        t[i + off] = 5.0;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn guarded_by_and(x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        if i < n && x[i] > 0.0 {
            y[i] = 1.0;
        }
        if i >= n || x[i] < 0.0 {
            y[i] = y[i] + 10.0;
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn both_fault(x: &[f32], k: &[u32], y: &mut [f32], which: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    if i == 0 {
        if which == 0 {
            y[k[i + 4]] = x[i + 8];
        } else {
            s[i + 64] = x[i + 9];
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn late_return(x: &[f32], y: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = 0.5;
    gpu::workgroup_barrier();
    if i >= n {
        return;
    }
    let v = x[i] / s[l];
    let d = 8 / (n - i);
    y[i] = v + (d as f32);
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn sum_rows(x: &[f32], out: &mut [f32], width: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let l = gpu::local_id().x;
    let row = gpu::workgroup_id().x;
    let t = gpu::workgroup_sum::<64>(x[row * width + l], s);
    if l == 0 { out[row] = t; }
}

#[goldy::compute(workgroup_size = [8, 8, 1])]
fn shift_image(src: gpu::DirectSpatial<f32>, img: gpu::DirectSpatial<f32>, dx: u32) {
    let p = gpu::global_id();
    if p.x < img.width() && p.y < img.height() {
        img[gpu::uint2(p.x + dx, p.y)] = src[gpu::uint2(p.x, p.y)] + 1.0;
    }
}
