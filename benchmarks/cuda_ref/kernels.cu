// CUDA C references for benchmarks/cuda_backend.py: the same algorithms as the Rust
// kernels there, compiled with `nvcc -O3 -arch=sm_90 -cubin` on the benchmark machine.
// Plain IEEE float math (no fast-math), bounds-checked like the dialect requires.

extern "C" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, unsigned n, float a) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}

extern "C" __global__ void chain3(const float* __restrict__ x, const float* __restrict__ y,
                                  float* __restrict__ z, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = __fsub_rn(__fmul_rn(__fadd_rn(x[i], y[i]), x[i]), 1.0f);
}

// per-thread strided accumulation, then a pairwise tree over the block (shuffles, then
// shared memory), one partial sum per block
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* __restrict__ x, unsigned n,
                                                            float* __restrict__ partial, unsigned per_thread) {
    __shared__ float s[8];
    unsigned base = blockIdx.x * 256u * per_thread + threadIdx.x;
    float acc = 0.0f;
    for (unsigned j = 0; j < per_thread; ++j) {
        unsigned i = base + j * 256u;
        acc += i < n ? x[i] : 0.0f;
    }
    for (int o = 1; o < 32; o <<= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 8) {
        acc = s[threadIdx.x];
        for (int o = 1; o < 8; o <<= 1) acc += __shfl_down_sync(0xffu, acc, o);
        if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    }
}

__device__ float block_reduce(float v, bool is_max, float* s) {
    for (int o = 1; o < 32; o <<= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = s[threadIdx.x];
        for (int o = 1; o < 32; o <<= 1) {
            float w = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, w) : v + w;
        }
        if (threadIdx.x == 0) s[0] = v;
    }
    __syncthreads();
    float r = s[0];
    __syncthreads();
    return r;
}

// one 1024-thread block per row of `count` (<= 1024) elements, in place
extern "C" __global__ void __launch_bounds__(1024) row_softmax(float* buf, unsigned n, unsigned count) {
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * count + t;
    bool live = t < count && i < n;
    float x = live ? buf[i] : -1e30f;
    float m = block_reduce(x, true, s);
    float e = live ? expf(x - m) : 0.0f;
    float total = block_reduce(e, false, s);
    if (live) buf[i] = e / total;
}

extern "C" __global__ void tiny(float* y, unsigned n, float a) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * y[i] + 1.0f;
}

// one 32-thread block (one warp) per 1024-wide row, 32 values per thread in registers:
// the same algorithm as the Rust `softmax_32x32` (shuffles stand in for the collectives)
extern "C" __global__ void __launch_bounds__(32) row_softmax_regs(float* buf) {
    float x[32];
    unsigned base = blockIdx.x * 1024u + threadIdx.x;
#pragma unroll
    for (int j = 0; j < 32; ++j) x[j] = buf[base + 32u * j];
    float m = x[0];
#pragma unroll
    for (int j = 1; j < 32; ++j) m = fmaxf(m, x[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        x[j] = expf(x[j] - m);
        s += x[j];
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float inv = 1.0f / s;
#pragma unroll
    for (int j = 0; j < 32; ++j) buf[base + 32u * j] = x[j] * inv;
}

// c = a * b: a 64 x 64 block of c per 16 x 16 threads, 4 x 4 per thread, 16-deep tiles of a
// and b in shared memory; the same algorithm and product order as the Rust `matmul_4x4`
// (no contraction into fma)
extern "C" __global__ void __launch_bounds__(256) matmul_4x4(const float* __restrict__ a, const float* __restrict__ b,
                                                             float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
    __shared__ float ta[64 * 16], tb[16 * 64];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned row0 = blockIdx.y * 64u, col0 = blockIdx.x * 64u;
    float acc[4][4] = {};
    for (unsigned t = 0; t < (k + 15u) / 16u; ++t) {
        unsigned ka = t * 16u + tx, kb = t * 16u + ty;
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            unsigned row = row0 + ty + 16u * r;
            ta[(ty + 16u * r) * 16u + tx] = row < m && ka < k ? a[row * k + ka] : 0.0f;
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            unsigned col = col0 + tx + 16u * q;
            tb[ty * 64u + tx + 16u * q] = kb < k && col < n ? b[kb * n + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; ++kk) {
            float av[4], bv[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) av[r] = ta[(ty + 16u * r) * 16u + kk];
#pragma unroll
            for (int q = 0; q < 4; ++q) bv[q] = tb[kk * 64u + tx + 16u * q];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[r][q] = __fadd_rn(acc[r][q], __fmul_rn(av[r], bv[q]));
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            unsigned row = row0 + ty + 16u * r, col = col0 + tx + 16u * q;
            if (row < m && col < n) c[row * n + col] = acc[r][q];
        }
}
