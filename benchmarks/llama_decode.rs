use goldy::gpu;

// One decode step of a Llama-style FP32 transformer (llama2.c's `forward`), written the way
// a user porting it would: one small kernel per step, naive per-row matrix-vector loops,
// collectives for the norms and the softmax. benchmarks/decode.py records the whole step
// once as a Scheme and replays it per token, changing `token`, `pos` and the cache offsets
// with `set_node_param`. Its greedy form reads the token from a one-element buffer
// (`embed_token`) that the step's `argmax` writes, so the device feeds itself and the
// host never waits within a run of tokens.

/// The token's row of the embedding table.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn embed(table: &[f32], x: &mut [f32], token: u32, dim: u32) {
    let i = gpu::global_id().x;
    if i < dim {
        x[i] = table[token * dim + i];
    }
}

/// The same gather with the token read from `tok[0]` (written by the last step's `argmax`).
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn embed_token(table: &[f32], x: &mut [f32], tok: &[u32], dim: u32) {
    let i = gpu::global_id().x;
    if i < dim {
        x[i] = table[tok[0] * dim + i];
    }
}

/// Greedy sampling in one workgroup: the first index of the largest of `logits[0..n]`
/// (a NaN is never the largest; 0 when nothing is above -inf), into `tok[0]` for the next
/// step and `hist[pos]`.
#[goldy::compute(workgroup_size = [1024, 1, 1])]
fn argmax(logits: &[f32], tok: &mut [u32], hist: &mut [u32], n: u32, pos: u32) {
    let best_of = gpu::workgroup_array::<f32, 1024>();
    let first_of = gpu::workgroup_array::<u32, 1024>();
    let lid = gpu::local_id().x;
    let mut best = f32::NEG_INFINITY;
    let mut at = n;
    for k in 0..(n + 1023) / 1024 {
        let j = k * 1024 + lid;
        if j < n {
            let v = logits[j];
            if v > best {
                best = v;
                at = j;
            }
        }
    }
    let top = gpu::workgroup_max::<1024>(best, best_of);
    // the lowest index holding `top`: the largest of `n - at` over the lanes that hold it
    let mut key = 0;
    if best == top && at < n {
        key = n - at;
    }
    let far = gpu::workgroup_max::<1024>(key, first_of);
    let mut first = 0;
    if far > 0 {
        first = n - far;
    }
    if lid == 0 {
        tok[0] = first;
        hist[pos] = first;
    }
}

/// RMSNorm of the whole vector in one workgroup: `out = x * w / sqrt(mean(x^2) + eps)`.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn rmsnorm(x: &[f32], w: &[f32], out: &mut [f32], dim: u32, eps: f32) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let lid = gpu::local_id().x;
    let mut acc = 0.0;
    let mut c = lid;
    while c < dim {
        acc += x[c] * x[c];
        c += 256;
    }
    let total = gpu::workgroup_sum::<256>(acc, scratch);
    let inv = 1.0 / (total / (dim as f32) + eps).sqrt();
    c = lid;
    while c < dim {
        out[c] = x[c] * inv * w[c];
        c += 256;
    }
}

/// `out[off + i] = sum_j w[i * n + j] * x[j]`, one row per thread.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn matvec(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32, off: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n {
            acc = acc + w[i * n + j] * x[j];
        }
        out[off + i] = acc;
    }
}

/// The residual form: `out[i] = out[i] + sum_j w[i * n + j] * x[j]`.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn matvec_add(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n {
            acc = acc + w[i * n + j] * x[j];
        }
        out[i] = out[i] + acc;
    }
}

/// Rotary embedding of q and of this position's k (in the cache at `koff`), one pair per
/// thread; `cos_t`/`sin_t` hold the angles of every position, `head_size / 2` per row.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rope(q: &mut [f32], kc: &mut [f32], cos_t: &[f32], sin_t: &[f32], pos: u32, dim: u32, head_size: u32,
        koff: u32) {
    let p = gpu::global_id().x;
    if p < dim / 2 {
        let i = p * 2;
        let f = pos * (head_size / 2) + (i % head_size) / 2;
        let c = cos_t[f];
        let s = sin_t[f];
        let q0 = q[i];
        let q1 = q[i + 1];
        q[i] = q0 * c - q1 * s;
        q[i + 1] = q0 * s + q1 * c;
        let k0 = kc[koff + i];
        let k1 = kc[koff + i + 1];
        kc[koff + i] = k0 * c - k1 * s;
        kc[koff + i + 1] = k0 * s + k1 * c;
    }
}

/// Attention scores: thread `h * seq + t` computes `q_h . k_t / sqrt(head_size)` for t <= pos.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scores(q: &[f32], kc: &[f32], att: &mut [f32], pos: u32, heads: u32, head_size: u32, seq: u32,
          lbase: u32, scale: f32) {
    let g = gpu::global_id().x;
    let h = g / seq;
    let t = g % seq;
    if h < heads && t <= pos {
        let dim = heads * head_size;
        let mut s = 0.0;
        for d in 0..head_size {
            s = s + q[h * head_size + d] * kc[lbase + t * dim + h * head_size + d];
        }
        att[g] = s * scale;
    }
}

/// Softmax of each head's scores `att[h * seq .. h * seq + pos + 1]`, one workgroup per head.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn softmax_rows(att: &mut [f32], pos: u32, seq: u32) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let h = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<256>(att, h * seq, pos + 1, scratch);
}

/// The weighted values: `out[i] = sum_{t <= pos} att[h * seq + t] * v_t[i]`, h = i / head_size.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix(att: &[f32], vc: &[f32], out: &mut [f32], pos: u32, dim: u32, head_size: u32, seq: u32, lbase: u32) {
    let i = gpu::global_id().x;
    if i < dim {
        let h = i / head_size;
        let mut acc = 0.0;
        for t in 0..=pos {
            acc = acc + att[h * seq + t] * vc[lbase + t * dim + i];
        }
        out[i] = acc;
    }
}

/// SwiGLU: `a[i] = silu(a[i]) * b[i]`.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn swiglu(a: &mut [f32], b: &[f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n {
        let v = a[i];
        a[i] = v / (1.0 + (-v).exp()) * b[i];
    }
}

fn main() {
    println!("host code is ignored");
}
