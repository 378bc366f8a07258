// Row-major GEMM, C (m x n, f32) = A (m x k) * B (k x n), in three steps of craft, each for
// f32 and bf16 inputs: one thread per output; 32 x 32 shared-memory tiles with 4 outputs per
// thread; tensor cores through WMMA (TF32 for f32 inputs, bf16 for bf16), a warp per 32 x 32
// block of C. The suites time them against cuBLAS (gemm.toml, gemm_bf16.toml).
#include <cuda_bf16.h>
#include <mma.h>

using namespace nvcuda;

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__global__ void gemm_naive(const T* a, const T* b, float* c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += to_float(a[row * k + i]) * to_float(b[i * n + col]);
    c[row * n + col] = acc;
}

// A block of 32 x 8 threads computes a 32 x 32 tile of C, each thread 4 rows of one column.
template <typename T>
__global__ void gemm_tiled(const T* a, const T* b, float* c, int m, int n, int k) {
    __shared__ float as[32][33];
    __shared__ float bs[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int t = 0; t < k; t += 32) {
        for (int r = ty; r < 32; r += 8) {
            int ar = row0 + r, ac = t + tx, br = t + r;
            as[r][tx] = (ar < m && ac < k) ? to_float(a[ar * k + ac]) : 0.0f;
            bs[r][tx] = (br < k && col < n) ? to_float(b[br * n + col]) : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int i = 0; i < 32; ++i) {
            float bv = bs[i][tx];
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[j] += as[ty + 8 * j][i] * bv;
        }
        __syncthreads();
    }
    for (int j = 0; j < 4; ++j) {
        int row = row0 + ty + 8 * j;
        if (row < m && col < n) c[row * n + col] = acc[j];
    }
}

// Tensor cores: a warp computes a 32 x 32 block of C as 2 x 2 WMMA tiles of 16 x 16, reading A
// and B from global memory (L1 and L2 serve the reuse). m, n and k must be multiples of 32.
template <typename T, typename P, int K>
__device__ inline void wmma_block(const T* a, const T* b, float* c, int m, int n, int k) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tiles_n = n / 32;
    int row0 = (warp / tiles_n) * 32, col0 = (warp % tiles_n) * 32;
    if (row0 >= m) return;
    wmma::fragment<wmma::accumulator, 16, 16, K, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    wmma::fragment<wmma::matrix_a, 16, 16, K, P, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, K, P, wmma::row_major> fb[2];
    for (int t = 0; t < k; t += K) {
        for (int i = 0; i < 2; ++i) {
            wmma::load_matrix_sync(fa[i], a + (row0 + 16 * i) * k + t, k);
            wmma::load_matrix_sync(fb[i], b + t * n + col0 + 16 * i, n);
        }
        if constexpr (K == 8) {
            for (int i = 0; i < 2; ++i) {
                for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
                for (int e = 0; e < fb[i].num_elements; ++e) fb[i].x[e] = wmma::__float_to_tf32(fb[i].x[e]);
            }
        }
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(c + (row0 + 16 * i) * n + col0 + 16 * j, acc[i][j], n, wmma::mem_row_major);
}

extern "C" __global__ void gemm_wmma_tf32(const float* a, const float* b, float* c, int m, int n, int k) {
    wmma_block<float, wmma::precision::tf32, 8>(a, b, c, m, n, k);
}

extern "C" __global__ void gemm_wmma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m, int n, int k) {
    wmma_block<__nv_bfloat16, __nv_bfloat16, 16>(a, b, c, m, n, k);
}
