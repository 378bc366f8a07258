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
