// The input of make_ptx.py: y = max(x, 0) * alpha, four elements per thread as float4 (n is
// a multiple of 4 in the suite; a tail is handled element by element). The suite runs the PTX
// made from this file, as it would run PTX from nvcc (`nvcc -ptx`) or Triton.
extern "C" __global__ void relu_scale_vec4(const float* x, float* y, float alpha, int n) {
    int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i + 3 < n) {
        float4 v = reinterpret_cast<const float4*>(x)[i / 4];
        v.x = fmaxf(v.x, 0.0f) * alpha;
        v.y = fmaxf(v.y, 0.0f) * alpha;
        v.z = fmaxf(v.z, 0.0f) * alpha;
        v.w = fmaxf(v.w, 0.0f) * alpha;
        reinterpret_cast<float4*>(y)[i / 4] = v;
    } else {
        for (int j = i; j < n; ++j) y[j] = fmaxf(x[j], 0.0f) * alpha;
    }
}
