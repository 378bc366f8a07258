// Sum of n floats into out[0] (which starts at 0).

// Reference: every element is one atomic add on the same address.
extern "C" __global__ void sum_atomic(const float* __restrict__ x, float* out, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(out, x[i]);
    }
}

// Each thread sums a grid-stride slice, warps reduce with shuffles, warps' sums meet in shared
// memory, and each block adds one atomic.
extern "C" __global__ void sum_shuffle(const float* __restrict__ x, float* out, int n) {
    __shared__ float warp_sums[32];
    float acc = 0.0f;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        int warps = blockDim.x / 32;
        acc = lane < warps ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
        if (lane == 0) atomicAdd(out, acc);
    }
}

// Sums a block's values: warps reduce with shuffles, warp sums meet in shared memory.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / 32) ? warp_sums[lane] : 0.0f;
    if (warp == 0) {
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

// Two-pass sum, pass 1: each block writes its partial sum; no atomics.
extern "C" __global__ void sum_partials(const float* __restrict__ x, float* __restrict__ partials, int n) {
    float acc = 0.0f;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Two-pass sum, pass 2: one block adds the partial sums to out[0].
extern "C" __global__ void sum_final(const float* __restrict__ partials, float* out, int count) {
    float acc = 0.0f;
    for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[0] += acc;
}
