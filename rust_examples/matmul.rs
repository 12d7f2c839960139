use goldy::gpu;

/// c = a * b for row-major f32 matrices a (m x k), b (k x n), c (m x n), with 16 x 16
/// tiles of a and b staged in workgroup memory. Launched with
/// `groups((ceil(n / 16), ceil(m / 16), 1))`; thread (tx, ty) of workgroup (gx, gy)
/// computes c[16 gy + ty][16 gx + tx].
///
/// Product order (the same on every backend, so results agree bit for bit):
/// acc starts at 0.0 and, for p = 0, 1, ..., k - 1 in order, becomes
/// `acc + a[row][p] * b[p][col]`, the product and the sum each rounded to f32 (no fused
/// multiply-add). Tiles past the matrix edge hold zeros, and adding the product 0 leaves
/// `acc` unchanged, so the padding does not change the result.
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn matmul(a: &[f32], b: &[f32], c: gpu::Scattered<f32>, m: u32, n: u32, k: u32) {
    let ta = gpu::workgroup_array::<f32, 256>();
    let tb = gpu::workgroup_array::<f32, 256>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    let row = gpu::workgroup_id().y * 16 + ty;
    let col = gpu::workgroup_id().x * 16 + tx;
    let mut acc = 0.0;
    // the same trip count on every thread: the barriers inside are reached by all
    let tiles = (k + 15) / 16;
    for t in 0..tiles {
        let ka = t * 16 + tx; // column of a this thread stages
        let kb = t * 16 + ty; // row of b this thread stages
        let mut va = 0.0;
        if row < m && ka < k {
            va = a[row * k + ka];
        }
        let mut vb = 0.0;
        if kb < k && col < n {
            vb = b[kb * n + col];
        }
        ta[ty * 16 + tx] = va;
        tb[ty * 16 + tx] = vb;
        gpu::workgroup_barrier();
        for j in 0..16 {
            acc = acc + ta[ty * 16 + j] * tb[j * 16 + tx];
        }
        gpu::workgroup_barrier();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// c = a * b like `matmul`, written for speed: each workgroup of 256 threads computes a
/// 128 x 128 block of c, each thread an 8 x 8 block of it in 64 scalar accumulators
/// (rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j, i, j < 4, for
/// tx, ty < 16 from the thread l, below). Launched with `groups((ceil(n / 128), ceil(m / 128), 1))`.
/// K advances 8 at a time through two buffers of workgroup memory each (double buffering:
/// the next 128 x 8 and 8 x 128 tiles are read from global memory while the current ones are
/// multiplied, one barrier per step); `at` holds a's tile transposed (at[kk * 128 + r] =
/// a[row0 + r][p0 + kk]) so that both inner-loop reads are four consecutive floats. Each
/// thread stages four consecutive floats of a row of a and four of a row of b per step:
/// inside the matrix they are read as `x[i]`, `x[i + 1]`, `x[i + 2]`, `x[i + 3]`, which the
/// CUDA backend loads as one vector where the row allows (codegen/ptx/tiles.py).
///
/// Product order (the same on every backend, so results agree bit for bit): acc starts at
/// 0.0 and, for p = 0, 1, ..., k - 1 in order, becomes `a[row][p].mul_add(b[p][col], acc)`,
/// rounded once (fused multiply-add). Past the end of k a's tile holds -0.0 and b's 0.0:
/// their product is -0.0 and `-0.0 + acc` is `acc` for every acc, so the padding does not
/// change the result (rows past m and columns past n are computed and not stored).
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn matmul_fast(a: &[f32], b: &[f32], c: gpu::Scattered<f32>, m: u32, n: u32, k: u32) {
    let at = gpu::workgroup_array::<f32, 2048>();
    let bt = gpu::workgroup_array::<f32, 2048>();
    let l = gpu::local_id().x;
    // a warp's 32 threads: 8 x 4 of (tx, ty), so that its reads of a step's row of bt (8
    // distinct float4) and of at (4) are one shared-memory wavefront each
    let tx = (l / 32) % 2 * 8 + l % 8;
    let ty = l / 64 * 4 + (l / 8) % 4;
    let row0 = gpu::workgroup_id().y * 128;
    let col0 = gpu::workgroup_id().x * 128;
    // what this thread stages per step from k = p: a[ar][p + ak + e] and b[p + bk][bc + e],
    // e < 4, at a[ga + e] and b[gb + e]; into at[sa + 128 e] and bt[sb + e] of a buffer
    let ar = row0 + l / 2;
    let ak = (l % 2) * 4;
    let bk = l / 32;
    let bc = col0 + (l % 32) * 4;
    let sa = ak * 128 + l / 2;
    let sb = bk * 128 + (l % 32) * 4;
    let inside = ar < m && bc + 3 < n;
    let mut c00 = 0.0; let mut c01 = 0.0; let mut c02 = 0.0; let mut c03 = 0.0; let mut c04 = 0.0; let mut c05 = 0.0; let mut c06 = 0.0; let mut c07 = 0.0;
    let mut c10 = 0.0; let mut c11 = 0.0; let mut c12 = 0.0; let mut c13 = 0.0; let mut c14 = 0.0; let mut c15 = 0.0; let mut c16 = 0.0; let mut c17 = 0.0;
    let mut c20 = 0.0; let mut c21 = 0.0; let mut c22 = 0.0; let mut c23 = 0.0; let mut c24 = 0.0; let mut c25 = 0.0; let mut c26 = 0.0; let mut c27 = 0.0;
    let mut c30 = 0.0; let mut c31 = 0.0; let mut c32 = 0.0; let mut c33 = 0.0; let mut c34 = 0.0; let mut c35 = 0.0; let mut c36 = 0.0; let mut c37 = 0.0;
    let mut c40 = 0.0; let mut c41 = 0.0; let mut c42 = 0.0; let mut c43 = 0.0; let mut c44 = 0.0; let mut c45 = 0.0; let mut c46 = 0.0; let mut c47 = 0.0;
    let mut c50 = 0.0; let mut c51 = 0.0; let mut c52 = 0.0; let mut c53 = 0.0; let mut c54 = 0.0; let mut c55 = 0.0; let mut c56 = 0.0; let mut c57 = 0.0;
    let mut c60 = 0.0; let mut c61 = 0.0; let mut c62 = 0.0; let mut c63 = 0.0; let mut c64 = 0.0; let mut c65 = 0.0; let mut c66 = 0.0; let mut c67 = 0.0;
    let mut c70 = 0.0; let mut c71 = 0.0; let mut c72 = 0.0; let mut c73 = 0.0; let mut c74 = 0.0; let mut c75 = 0.0; let mut c76 = 0.0; let mut c77 = 0.0;
    // step 0 into buffer 0
    let mut ga = ar * k + ak;
    let mut gb = bk * n + bc;
    let n8 = n * 8;
    let mut va0 = -0.0;
    let mut va1 = -0.0;
    let mut va2 = -0.0;
    let mut va3 = -0.0;
    let mut vb0 = 0.0;
    let mut vb1 = 0.0;
    let mut vb2 = 0.0;
    let mut vb3 = 0.0;
    if inside && 8 <= k {
        // inside on every side (most steps): 4 + 4 consecutive floats, no test per element
        va0 = a[ga];
        va1 = a[ga + 1];
        va2 = a[ga + 2];
        va3 = a[ga + 3];
        vb0 = b[gb];
        vb1 = b[gb + 1];
        vb2 = b[gb + 2];
        vb3 = b[gb + 3];
    } else {
        // an edge: each element on its own; past k a's tile holds -0.0 and b's 0.0
        if ar < m && ak < k { va0 = a[ga]; }
        if ar < m && ak + 1 < k { va1 = a[ga + 1]; }
        if ar < m && ak + 2 < k { va2 = a[ga + 2]; }
        if ar < m && ak + 3 < k { va3 = a[ga + 3]; }
        if bk < k && bc < n { vb0 = b[gb]; }
        if bk < k && bc + 1 < n { vb1 = b[gb + 1]; }
        if bk < k && bc + 2 < n { vb2 = b[gb + 2]; }
        if bk < k && bc + 3 < n { vb3 = b[gb + 3]; }
    }
    at[sa] = va0;
    at[sa + 128] = va1;
    at[sa + 256] = va2;
    at[sa + 384] = va3;
    bt[sb] = vb0;
    bt[sb + 1] = vb1;
    bt[sb + 2] = vb2;
    bt[sb + 3] = vb3;
    gpu::workgroup_barrier();
    for t in 0..(k + 7) / 8 {
        let cur = (t & 1) * 1024; // this step's buffer; the next step's is 1024 - cur
        let nxt = 1024 - cur;
        // the next step's elements (past k: none loaded)
        let p = t * 8 + 8;
        ga = ga + 8;
        gb = gb + n8;
        if inside && p + 8 <= k {
            // inside on every side (most steps): 4 + 4 consecutive floats, no test per element
            va0 = a[ga];
            va1 = a[ga + 1];
            va2 = a[ga + 2];
            va3 = a[ga + 3];
            vb0 = b[gb];
            vb1 = b[gb + 1];
            vb2 = b[gb + 2];
            vb3 = b[gb + 3];
        } else {
            // an edge: each element on its own; past k a's tile holds -0.0 and b's 0.0
            va0 = -0.0;
            va1 = -0.0;
            va2 = -0.0;
            va3 = -0.0;
            vb0 = 0.0;
            vb1 = 0.0;
            vb2 = 0.0;
            vb3 = 0.0;
            if ar < m && p + ak < k { va0 = a[ga]; }
            if ar < m && p + ak + 1 < k { va1 = a[ga + 1]; }
            if ar < m && p + ak + 2 < k { va2 = a[ga + 2]; }
            if ar < m && p + ak + 3 < k { va3 = a[ga + 3]; }
            if p + bk < k && bc < n { vb0 = b[gb]; }
            if p + bk < k && bc + 1 < n { vb1 = b[gb + 1]; }
            if p + bk < k && bc + 2 < n { vb2 = b[gb + 2]; }
            if p + bk < k && bc + 3 < n { vb3 = b[gb + 3]; }
        }
        for kk in 0..8 {
            let ia = cur + kk * 128 + ty * 4;
            let ib = cur + kk * 128 + tx * 4;
            let a0 = at[ia + 0];
            let a1 = at[ia + 1];
            let a2 = at[ia + 2];
            let a3 = at[ia + 3];
            let a4 = at[ia + 64];
            let a5 = at[ia + 65];
            let a6 = at[ia + 66];
            let a7 = at[ia + 67];
            let b0 = bt[ib + 0];
            let b1 = bt[ib + 1];
            let b2 = bt[ib + 2];
            let b3 = bt[ib + 3];
            let b4 = bt[ib + 64];
            let b5 = bt[ib + 65];
            let b6 = bt[ib + 66];
            let b7 = bt[ib + 67];
            c00 = a0.mul_add(b0, c00); c01 = a0.mul_add(b1, c01); c02 = a0.mul_add(b2, c02); c03 = a0.mul_add(b3, c03);
            c04 = a0.mul_add(b4, c04); c05 = a0.mul_add(b5, c05); c06 = a0.mul_add(b6, c06); c07 = a0.mul_add(b7, c07);
            c10 = a1.mul_add(b0, c10); c11 = a1.mul_add(b1, c11); c12 = a1.mul_add(b2, c12); c13 = a1.mul_add(b3, c13);
            c14 = a1.mul_add(b4, c14); c15 = a1.mul_add(b5, c15); c16 = a1.mul_add(b6, c16); c17 = a1.mul_add(b7, c17);
            c20 = a2.mul_add(b0, c20); c21 = a2.mul_add(b1, c21); c22 = a2.mul_add(b2, c22); c23 = a2.mul_add(b3, c23);
            c24 = a2.mul_add(b4, c24); c25 = a2.mul_add(b5, c25); c26 = a2.mul_add(b6, c26); c27 = a2.mul_add(b7, c27);
            c30 = a3.mul_add(b0, c30); c31 = a3.mul_add(b1, c31); c32 = a3.mul_add(b2, c32); c33 = a3.mul_add(b3, c33);
            c34 = a3.mul_add(b4, c34); c35 = a3.mul_add(b5, c35); c36 = a3.mul_add(b6, c36); c37 = a3.mul_add(b7, c37);
            c40 = a4.mul_add(b0, c40); c41 = a4.mul_add(b1, c41); c42 = a4.mul_add(b2, c42); c43 = a4.mul_add(b3, c43);
            c44 = a4.mul_add(b4, c44); c45 = a4.mul_add(b5, c45); c46 = a4.mul_add(b6, c46); c47 = a4.mul_add(b7, c47);
            c50 = a5.mul_add(b0, c50); c51 = a5.mul_add(b1, c51); c52 = a5.mul_add(b2, c52); c53 = a5.mul_add(b3, c53);
            c54 = a5.mul_add(b4, c54); c55 = a5.mul_add(b5, c55); c56 = a5.mul_add(b6, c56); c57 = a5.mul_add(b7, c57);
            c60 = a6.mul_add(b0, c60); c61 = a6.mul_add(b1, c61); c62 = a6.mul_add(b2, c62); c63 = a6.mul_add(b3, c63);
            c64 = a6.mul_add(b4, c64); c65 = a6.mul_add(b5, c65); c66 = a6.mul_add(b6, c66); c67 = a6.mul_add(b7, c67);
            c70 = a7.mul_add(b0, c70); c71 = a7.mul_add(b1, c71); c72 = a7.mul_add(b2, c72); c73 = a7.mul_add(b3, c73);
            c74 = a7.mul_add(b4, c74); c75 = a7.mul_add(b5, c75); c76 = a7.mul_add(b6, c76); c77 = a7.mul_add(b7, c77);
        }
        at[nxt + sa] = va0;
        at[nxt + sa + 128] = va1;
        at[nxt + sa + 256] = va2;
        at[nxt + sa + 384] = va3;
        bt[nxt + sb] = vb0;
        bt[nxt + sb + 1] = vb1;
        bt[nxt + sb + 2] = vb2;
        bt[nxt + sb + 3] = vb3;
        gpu::workgroup_barrier();
    }
    // rows r of c: 4 ty + i for i < 4, 64 + 4 ty + i - 4 for i >= 4; the same for columns
    let r0 = row0 + ty * 4 + 0;
    let r1 = row0 + ty * 4 + 1;
    let r2 = row0 + ty * 4 + 2;
    let r3 = row0 + ty * 4 + 3;
    let r4 = row0 + ty * 4 + 64;
    let r5 = row0 + ty * 4 + 65;
    let r6 = row0 + ty * 4 + 66;
    let r7 = row0 + ty * 4 + 67;
    let q0 = col0 + tx * 4 + 0;
    let q1 = col0 + tx * 4 + 1;
    let q2 = col0 + tx * 4 + 2;
    let q3 = col0 + tx * 4 + 3;
    let q4 = col0 + tx * 4 + 64;
    let q5 = col0 + tx * 4 + 65;
    let q6 = col0 + tx * 4 + 66;
    let q7 = col0 + tx * 4 + 67;
    if r0 < m && q0 < n { c[r0 * n + q0] = c00; }
    if r0 < m && q1 < n { c[r0 * n + q1] = c01; }
    if r0 < m && q2 < n { c[r0 * n + q2] = c02; }
    if r0 < m && q3 < n { c[r0 * n + q3] = c03; }
    if r0 < m && q4 < n { c[r0 * n + q4] = c04; }
    if r0 < m && q5 < n { c[r0 * n + q5] = c05; }
    if r0 < m && q6 < n { c[r0 * n + q6] = c06; }
    if r0 < m && q7 < n { c[r0 * n + q7] = c07; }
    if r1 < m && q0 < n { c[r1 * n + q0] = c10; }
    if r1 < m && q1 < n { c[r1 * n + q1] = c11; }
    if r1 < m && q2 < n { c[r1 * n + q2] = c12; }
    if r1 < m && q3 < n { c[r1 * n + q3] = c13; }
    if r1 < m && q4 < n { c[r1 * n + q4] = c14; }
    if r1 < m && q5 < n { c[r1 * n + q5] = c15; }
    if r1 < m && q6 < n { c[r1 * n + q6] = c16; }
    if r1 < m && q7 < n { c[r1 * n + q7] = c17; }
    if r2 < m && q0 < n { c[r2 * n + q0] = c20; }
    if r2 < m && q1 < n { c[r2 * n + q1] = c21; }
    if r2 < m && q2 < n { c[r2 * n + q2] = c22; }
    if r2 < m && q3 < n { c[r2 * n + q3] = c23; }
    if r2 < m && q4 < n { c[r2 * n + q4] = c24; }
    if r2 < m && q5 < n { c[r2 * n + q5] = c25; }
    if r2 < m && q6 < n { c[r2 * n + q6] = c26; }
    if r2 < m && q7 < n { c[r2 * n + q7] = c27; }
    if r3 < m && q0 < n { c[r3 * n + q0] = c30; }
    if r3 < m && q1 < n { c[r3 * n + q1] = c31; }
    if r3 < m && q2 < n { c[r3 * n + q2] = c32; }
    if r3 < m && q3 < n { c[r3 * n + q3] = c33; }
    if r3 < m && q4 < n { c[r3 * n + q4] = c34; }
    if r3 < m && q5 < n { c[r3 * n + q5] = c35; }
    if r3 < m && q6 < n { c[r3 * n + q6] = c36; }
    if r3 < m && q7 < n { c[r3 * n + q7] = c37; }
    if r4 < m && q0 < n { c[r4 * n + q0] = c40; }
    if r4 < m && q1 < n { c[r4 * n + q1] = c41; }
    if r4 < m && q2 < n { c[r4 * n + q2] = c42; }
    if r4 < m && q3 < n { c[r4 * n + q3] = c43; }
    if r4 < m && q4 < n { c[r4 * n + q4] = c44; }
    if r4 < m && q5 < n { c[r4 * n + q5] = c45; }
    if r4 < m && q6 < n { c[r4 * n + q6] = c46; }
    if r4 < m && q7 < n { c[r4 * n + q7] = c47; }
    if r5 < m && q0 < n { c[r5 * n + q0] = c50; }
    if r5 < m && q1 < n { c[r5 * n + q1] = c51; }
    if r5 < m && q2 < n { c[r5 * n + q2] = c52; }
    if r5 < m && q3 < n { c[r5 * n + q3] = c53; }
    if r5 < m && q4 < n { c[r5 * n + q4] = c54; }
    if r5 < m && q5 < n { c[r5 * n + q5] = c55; }
    if r5 < m && q6 < n { c[r5 * n + q6] = c56; }
    if r5 < m && q7 < n { c[r5 * n + q7] = c57; }
    if r6 < m && q0 < n { c[r6 * n + q0] = c60; }
    if r6 < m && q1 < n { c[r6 * n + q1] = c61; }
    if r6 < m && q2 < n { c[r6 * n + q2] = c62; }
    if r6 < m && q3 < n { c[r6 * n + q3] = c63; }
    if r6 < m && q4 < n { c[r6 * n + q4] = c64; }
    if r6 < m && q5 < n { c[r6 * n + q5] = c65; }
    if r6 < m && q6 < n { c[r6 * n + q6] = c66; }
    if r6 < m && q7 < n { c[r6 * n + q7] = c67; }
    if r7 < m && q0 < n { c[r7 * n + q0] = c70; }
    if r7 < m && q1 < n { c[r7 * n + q1] = c71; }
    if r7 < m && q2 < n { c[r7 * n + q2] = c72; }
    if r7 < m && q3 < n { c[r7 * n + q3] = c73; }
    if r7 < m && q4 < n { c[r7 * n + q4] = c74; }
    if r7 < m && q5 < n { c[r7 * n + q5] = c75; }
    if r7 < m && q6 < n { c[r7 * n + q6] = c76; }
    if r7 < m && q7 < n { c[r7 * n + q7] = c77; }
}
