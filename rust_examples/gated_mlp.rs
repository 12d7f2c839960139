use goldy::gpu;

// The element-wise tail of a gated MLP block, as three kernels a model would publish
// separately: each is one dispatch and one round trip through memory. The demo and
// benchmarks/fusion.py run them unfused, as one FusedKernel, and automatically fused.

/// `h = silu(gate) * up` (SwiGLU), one element per thread.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn swiglu(gate: &[f32], up: &[f32], h: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i >= n {
        return;
    }
    let g = gate[i];
    h[i] = g / (1.0 + (-g).exp()) * up[i];
}

/// `y = residual + alpha * h`.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn residual_add(h: &[f32], residual: &[f32], y: &mut [f32], n: u32, alpha: f32) {
    let i = gpu::global_id().x;
    if i < n {
        y[i] = residual[i] + alpha * h[i];
    }
}

/// `y = clamp(y, -limit, limit)` in place.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn clamp_inplace(y: &mut [f32], n: u32, limit: f32) {
    let i = gpu::global_id().x;
    if i < n {
        y[i] = y[i].clamp(-limit, limit);
    }
}
