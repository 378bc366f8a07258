// C = A B for n x n row-major float matrices.
#define T 16

// Reference: one output element per thread, straight from global memory.
extern "C" __global__ void matmul_naive(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

// 16 x 16 tiles of A and B staged in shared memory: each element is loaded n / 16 times
// instead of n times. Same summation order as the reference.
extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n) {
    __shared__ float sa[T][T];
    __shared__ float sb[T][T];
    int row = blockIdx.y * T + threadIdx.y;
    int col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
        sa[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[row * n + k0 + threadIdx.x] : 0.0f;
        sb[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < n) ? b[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += sa[threadIdx.y][k] * sb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

// The same tiles with their size a template argument and the inner loop's unrolling a define:
// the `tile` kernel's axes (`axes = { TILE = [16, 32, 64], FULL_UNROLL = [0, 1] }`, 64 skipped)
// make a variant of each pair, compiled and timed as its own trial.
#ifndef FULL_UNROLL
#define FULL_UNROLL 0
#endif
template <int TILE>
__global__ void matmul_tile(const float* __restrict__ a, const float* __restrict__ b,
                            float* __restrict__ c, int n) {
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        sa[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[row * n + k0 + threadIdx.x] : 0.0f;
        sb[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < n) ? b[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#if FULL_UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
        for (int k = 0; k < TILE; ++k) acc += sa[threadIdx.y][k] * sb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}
