// Row softmax of a rows x cols float matrix: out[r][c] = exp(x[r][c] - max_r) / sum_r.

// NVRTC has no <math.h>: negative infinity by its bits.
#define NEG_INF __int_as_float(0xff800000)

// Reference: one thread per row, three passes (max, sum of exponentials, normalize).
extern "C" __global__ void softmax_three_pass(const float* __restrict__ x, float* __restrict__ out,
                                              int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float m = NEG_INF;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
    for (int c = 0; c < cols; ++c) out[(size_t)r * cols + c] = expf(row[c] - m) / s;
}

// One warp per row; the online softmax keeps a running max and a rescaled running sum, so
// one pass finds both, then one pass writes.
extern "C" __global__ void softmax_online(const float* __restrict__ x, float* __restrict__ out,
                                          int rows, int cols) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const float* row = x + (size_t)warp * cols;
    float m = NEG_INF, s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float v = row[c];
        float m2 = fmaxf(m, v);
        s = s * expf(m - m2) + expf(v - m2);
        m = m2;
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        float mo = __shfl_xor_sync(0xffffffffu, m, offset);
        float so = __shfl_xor_sync(0xffffffffu, s, offset);
        float m2 = fmaxf(m, mo);
        s = (m == NEG_INF ? 0.0f : s * expf(m - m2)) + (mo == NEG_INF ? 0.0f : so * expf(mo - m2));
        m = m2;
    }
    float inv = 1.0f / s;
    for (int c = lane; c < cols; c += 32) out[(size_t)warp * cols + c] = expf(row[c] - m) * inv;
}
