// 2-D convolution of an h x w image with a 13 x 13 mask, zero outside the image (SciPy's
// ndimage.convolve in "constant" mode): out[i][j] = sum_ab mask[a][b] * img[i + 6 - a][j + 6 - b].
#define M 13
#define R 6

// Reference: bounds checks inside the loop, float accumulator.
extern "C" __global__ void conv_naive(const float* img, const float* mask, float* out, int h, int w) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= h || j >= w) return;
    float acc = 0.0f;
    for (int a = 0; a < M; ++a) {
        for (int b = 0; b < M; ++b) {
            int y = i + R - a, x = j + R - b;
            if (y >= 0 && y < h && x >= 0 && x < w) acc += mask[a * M + b] * img[y * w + x];
        }
    }
    out[i * w + j] = acc;
}

// Double-precision accumulator: 169 products summed without float rounding.
extern "C" __global__ void conv_f64_acc(const float* __restrict__ img, const float* __restrict__ mask,
                                        float* __restrict__ out, int h, int w) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= h || j >= w) return;
    double acc = 0.0;
#pragma unroll
    for (int a = 0; a < M; ++a) {
        int y = i + R - a;
        if (y < 0 || y >= h) continue;
#pragma unroll
        for (int b = 0; b < M; ++b) {
            int x = j + R - b;
            if (x >= 0 && x < w) acc += (double)mask[a * M + b] * (double)img[y * w + x];
        }
    }
    out[i * w + j] = (float)acc;
}

// Float accumulator, loops unrolled, row bounds hoisted.
extern "C" __global__ void conv_f32_acc(const float* __restrict__ img, const float* __restrict__ mask,
                                        float* __restrict__ out, int h, int w) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= h || j >= w) return;
    float acc = 0.0f;
#pragma unroll
    for (int a = 0; a < M; ++a) {
        int y = i + R - a;
        if (y < 0 || y >= h) continue;
#pragma unroll
        for (int b = 0; b < M; ++b) {
            int x = j + R - b;
            if (x >= 0 && x < w) acc = fmaf(mask[a * M + b], img[y * w + x], acc);
        }
    }
    out[i * w + j] = acc;
}

// A 16 x 16 output tile: its (16 + 12)^2 input halo and the mask staged in shared memory.
#define TILE 16
extern "C" __global__ void conv_tiled(const float* __restrict__ img, const float* __restrict__ mask,
                                      float* __restrict__ out, int h, int w) {
    __shared__ float tile[TILE + 2 * R][TILE + 2 * R];
    __shared__ float m[M * M];
    int tx = threadIdx.x, ty = threadIdx.y;
    int t = ty * TILE + tx;
    for (int k = t; k < M * M; k += TILE * TILE) m[k] = mask[k];
    int i0 = blockIdx.y * TILE - R, j0 = blockIdx.x * TILE - R;
    for (int k = t; k < (TILE + 2 * R) * (TILE + 2 * R); k += TILE * TILE) {
        int y = i0 + k / (TILE + 2 * R), x = j0 + k % (TILE + 2 * R);
        tile[k / (TILE + 2 * R)][k % (TILE + 2 * R)] = (y >= 0 && y < h && x >= 0 && x < w) ? img[y * w + x] : 0.0f;
    }
    __syncthreads();
    int i = blockIdx.y * TILE + ty, j = blockIdx.x * TILE + tx;
    if (i >= h || j >= w) return;
    float acc = 0.0f;
#pragma unroll
    for (int a = 0; a < M; ++a)
#pragma unroll
        for (int b = 0; b < M; ++b) acc = fmaf(m[a * M + b], tile[ty + 2 * R - a][tx + 2 * R - b], acc);
    out[i * w + j] = acc;
}
