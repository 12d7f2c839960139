"""What a one-thread-per-row GEMV can reach on this GPU at all (issue 18's decode step).

    python3 benchmarks/gemv_ceiling.py

The decode step's GEMVs are written as users write them: one thread per output row, the
row's products added in j order (`acc = acc + w[i * n + j] * x[j]`), which Rust's f32
semantics make the only right answer. This script times nvcc-quality CUDA C++ of exactly
that algorithm (CuPy RawModule, so NVRTC compiles it), at the decode step's shapes, to
bound what any code generator can reach with it:

- `scalar`: float loads, `#pragma unroll 16`;
- `float4`: 16-byte loads of w and x (rows 16-byte aligned: n % 4 == 0), 4 loads in flight;
- `staged`: each warp loads a 32x32 tile of its 32 rows coalesced into shared memory, then
  each thread adds its own row's products from there, in order;
- `warprow`: not one thread per row but one warp per row, the same sum: the 32 lanes load
  and multiply consecutive elements (coalesced, 8 per lane in flight), then every lane adds
  the row's products in j order, lane by lane through `__shfl_sync` (what a code generator
  could make of the user's loop without changing a bit).

Every variant is checked bit for bit against numpy's sequential sum first. Times are GPU
time per kernel inside a captured CUDA graph of 40 launches (no host launch cost), rotating
over up to 8 weight copies (so a 288-row matrix is read from L2, as in the decode step).
"""

from __future__ import annotations

import cupy as cp
import numpy as np

SRC = r"""
__device__ __forceinline__ float dot4(float acc, float4 a, float4 b) {
    acc = __fadd_rn(acc, __fmul_rn(a.x, b.x)); acc = __fadd_rn(acc, __fmul_rn(a.y, b.y));
    acc = __fadd_rn(acc, __fmul_rn(a.z, b.z)); return __fadd_rn(acc, __fmul_rn(a.w, b.w));
}
extern "C" __global__ void scalar(const float* __restrict__ w, const float* __restrict__ x, float* y, int rows, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float* r = w + (size_t)i * n;
    float acc = 0.f;
    #pragma unroll 16
    for (int j = 0; j < n; j++) acc = __fadd_rn(acc, __fmul_rn(__ldg(r + j), __ldg(x + j)));
    y[i] = acc;
}
extern "C" __global__ void float4s(const float* __restrict__ w, const float* __restrict__ x, float* y, int rows, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const float4* r = (const float4*)(w + (size_t)i * n);
    const float4* xv = (const float4*)x;
    float acc = 0.f;
    int j = 0, m = n / 4;
    for (; j + 4 <= m; j += 4) {
        float4 a[4], b[4];
        #pragma unroll
        for (int u = 0; u < 4; u++) { a[u] = __ldg(r + j + u); b[u] = __ldg(xv + j + u); }
        #pragma unroll
        for (int u = 0; u < 4; u++) acc = dot4(acc, a[u], b[u]);
    }
    for (; j < m; j++) acc = dot4(acc, __ldg(r + j), __ldg(xv + j));
    y[i] = acc;
}
extern "C" __global__ void staged(const float* __restrict__ w, const float* __restrict__ x, float* y, int rows, int n) {
    __shared__ float tile[4][32][33];  // per warp: 32 rows x 32 columns, padded
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = blockIdx.x * blockDim.x + warp * 32;
    float acc = 0.f;
    for (int j0 = 0; j0 < n; j0 += 32) {
        int j = j0 + lane;
        float xv = j < n ? __ldg(x + j) : 0.f;
        #pragma unroll
        for (int r = 0; r < 32; r++)
            tile[warp][r][lane] = (row0 + r < rows && j < n) ? __ldg(w + (size_t)(row0 + r) * n + j) : 0.f;
        __syncwarp();
        int m = min(32, n - j0);
        for (int c = 0; c < m; c++) acc = __fadd_rn(acc, __fmul_rn(tile[warp][lane][c], __shfl_sync(0xffffffff, xv, c)));
        __syncwarp();
    }
    if (row0 + lane < rows) y[row0 + lane] = acc;
}
extern "C" __global__ void warprow(const float* __restrict__ w, const float* __restrict__ x, float* y, int rows, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (i >= rows) return;  // the whole warp together
    const float* r = w + (size_t)i * n;
    float acc = 0.f;
    for (int c0 = 0; c0 < n; c0 += 32 * 8) {
        float p[8];
        #pragma unroll
        for (int u = 0; u < 8; u++) {
            int j = c0 + u * 32 + lane;
            p[u] = j < n ? __fmul_rn(__ldg(r + j), __ldg(x + j)) : 0.f;
        }
        #pragma unroll
        for (int u = 0; u < 8; u++) {
            int m = min(32, n - (c0 + u * 32));
            for (int l = 0; l < m; l++) acc = __fadd_rn(acc, __shfl_sync(0xffffffff, p[u], l));
        }
    }
    if (lane == 0) y[i] = acc;
}
"""
# the decode step's GEMVs (stories15M): q/k/v and wo 288x288, w1/w3 768x288, w2 288x768,
# the classifier 32000x288; and one large square for scale
SHAPES = ((288, 288), (768, 288), (288, 768), (32000, 288), (4096, 4096))


def graph_time_us(launch, reps: int = 40) -> float:
    st = cp.cuda.Stream(non_blocking=True)
    with st:
        for _ in range(3):
            launch(st)
        st.synchronize()
        st.begin_capture()
        for _ in range(reps):
            launch(st)
        g = st.end_capture()
        g.launch(st)
        st.synchronize()
        t0, t1 = cp.cuda.Event(), cp.cuda.Event()
        t0.record(st)
        for _ in range(5):
            g.launch(st)
        t1.record(st)
        t1.synchronize()
    return cp.cuda.get_elapsed_time(t0, t1) / reps / 5 * 1e3


def main() -> None:
    mod = cp.RawModule(code=SRC)
    print(f"# one-thread-per-row GEMV, GPU us per kernel: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| rows x n | scalar, 64/block | float4, 32/block | float4, 64/block | staged, 64/block "
          "| warprow, 64/block | warprow, 256/block |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for rows, n in SHAPES:
        copies = min(8, max(1, int(200e6 // (rows * n * 4))))
        rng = np.random.default_rng(rows * 7 + n)
        hosts = [rng.standard_normal((rows, n)).astype(np.float32) for _ in range(copies)]
        ws = [cp.asarray(h) for h in hosts]
        xh = rng.standard_normal(n).astype(np.float32)
        x, y = cp.asarray(xh), cp.empty(rows, cp.float32)
        want = np.zeros(rows, np.float32)
        for j in range(n):  # Rust's order: row i's products added one by one in j
            want = want + hosts[0][:, j] * xh[j]
        cells = []
        for name, block in (("scalar", 64), ("float4s", 32), ("float4s", 64), ("staged", 64), ("warprow", 64),
                            ("warprow", 256)):
            k = mod.get_function(name)
            threads = rows * 32 if name == "warprow" else rows
            grid = ((threads + block - 1) // block,)
            y.fill(np.nan)
            k(grid, (block,), (ws[0], x, y, np.int32(rows), np.int32(n)))
            assert np.array_equal(cp.asnumpy(y), want), f"{name} differs from the sequential sum at {rows}x{n}"
            turn = [0]

            def launch(st, k=k, grid=grid, block=block):
                w = ws[turn[0] % len(ws)]
                turn[0] += 1
                k(grid, (block,), (w, x, y, np.int32(rows), np.int32(n)), stream=st)
            cells.append(f"{graph_time_us(launch):.1f}")
        print(f"| {rows} x {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
