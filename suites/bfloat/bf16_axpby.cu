// y = a*x + b*y in bfloat16. NVRTC finds <cuda_bf16.h> through kernelgate's CUDA include
// search (the nvidia-cuda-runtime wheel, or a toolkit).
#include <cuda_bf16.h>

__device__ __forceinline__ __nv_bfloat16 axpby(__nv_bfloat16 a, __nv_bfloat16 x,
                                               __nv_bfloat16 b, __nv_bfloat16 y) {
    return __float2bfloat16(__bfloat162float(a) * __bfloat162float(x) +
                            __bfloat162float(b) * __bfloat162float(y));
}

// One element per thread, computed in float and rounded once.
extern "C" __global__ void bf16_axpby(__nv_bfloat16 a, const __nv_bfloat16* x,
                                      __nv_bfloat16 b, __nv_bfloat16* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = axpby(a, x[i], b, y[i]);
}

// Two elements per thread as __nv_bfloat162: b*y rounded to bf16, then a fused multiply-add;
// the odd tail element of an odd n goes through the scalar path.
extern "C" __global__ void bf16_axpby_pairs(__nv_bfloat16 a, const __nv_bfloat16* x,
                                            __nv_bfloat16 b, __nv_bfloat16* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pairs = n / 2;
    if (i < pairs) {
        const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(x);
        __nv_bfloat162* y2 = reinterpret_cast<__nv_bfloat162*>(y);
        __nv_bfloat162 by = __hmul2(__bfloat162bfloat162(b), y2[i]);
        y2[i] = __hfma2(__bfloat162bfloat162(a), x2[i], by);
    } else if (i == pairs && (n & 1)) {
        y[n - 1] = axpby(a, x[n - 1], b, y[n - 1]);
    }
}
