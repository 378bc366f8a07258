// Row sums of a rows x cols row-major matrix. NVRTC finds CUB through kernelgate's CUDA
// include search (the nvidia-cuda-cccl wheel, or a toolkit's include/cccl).
#include <cub/block/block_reduce.cuh>

// One thread per row, summing in order: simple, uncoalesced, the reference.
extern "C" __global__ void rowsum_thread(const float* x, float* sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += x[(size_t)r * cols + c];
    sums[r] = s;
}

// One block of 256 threads per row: coalesced strided partial sums, then a block reduction.
template <cub::BlockReduceAlgorithm ALGORITHM>
__device__ void rowsum_block(const float* x, float* sums, int cols) {
    using Reduce = cub::BlockReduce<float, 256, ALGORITHM>;
    __shared__ typename Reduce::TempStorage storage;
    const float* row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 256) s += row[c];
    float total = Reduce(storage).Sum(s);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void
rowsum_cub_warp(const float* x, float* sums, int rows, int cols) {
    rowsum_block<cub::BLOCK_REDUCE_WARP_REDUCTIONS>(x, sums, cols);
}

extern "C" __global__ void
rowsum_cub_raking(const float* x, float* sums, int rows, int cols) {
    rowsum_block<cub::BLOCK_REDUCE_RAKING>(x, sums, cols);
}
