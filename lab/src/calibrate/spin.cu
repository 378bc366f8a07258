
extern "C" __global__ void spin(float* out, int iters, int extra_pct) {
    int n = iters + (int)((long long)iters * extra_pct / 100);
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
    for (int i = 0; i < n; ++i) { x = fmaf(x, 0.999999f, y); y = fmaf(y, 0.999999f, x); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
