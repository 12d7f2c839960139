use goldy::gpu;

#[goldy::compute]
fn store_to_shared_slice(xs: &[f32]) {
    xs[0] = 1.0;
}

#[goldy::compute]
fn store_to_bufro(xs: gpu::BufRO<f32>) {
    xs[0] = 1.0;
}

#[goldy::compute]
fn store_to_tensor(t: gpu::Tensor<f32>) {
    t[0] = 1.0;
}

#[goldy::compute]
fn read_scattered(out: gpu::Scattered<f32>) {
    let v = out[0];
}

#[goldy::compute]
fn compound_on_write_only(out: gpu::TensorWrite<f32>) {
    out[0] += 1.0;
}

#[goldy::compute]
fn atomic_on_read_only(counts: &[u32]) {
    gpu::atomic_add(counts, 0, 1);
}

#[goldy::compute]
fn assign_whole_buffer(xs: &mut [f32], ys: &mut [f32]) {
    xs = ys;
}

#[goldy::gpu]
struct P {
    x: f32,
}

#[goldy::compute]
fn store_struct_field(ps: &[P]) {
    ps[0].x = 1.0;
}
