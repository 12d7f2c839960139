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
