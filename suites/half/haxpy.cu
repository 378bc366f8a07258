// y = a*x + y in half precision. NVRTC finds <cuda_fp16.h> through kernelgate's CUDA include
// search (the nvidia-cuda-runtime wheel, or a toolkit).
#include <cuda_fp16.h>

// One element per thread, computed in float and rounded once to half.
extern "C" __global__ void haxpy(__half a, const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __float2half(__half2float(a) * __half2float(x[i]) + __half2float(y[i]));
    }
}

// Two elements per thread as __half2, one fused multiply-add in half; the odd tail element of
// an odd n goes through the scalar path.
extern "C" __global__ void haxpy_half2(__half a, const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pairs = n / 2;
    if (i < pairs) {
        const __half2* x2 = reinterpret_cast<const __half2*>(x);
        __half2* y2 = reinterpret_cast<__half2*>(y);
        y2[i] = __hfma2(__half2half2(a), x2[i], y2[i]);
    } else if (i == pairs && (n & 1)) {
        y[n - 1] = __float2half(__half2float(a) * __half2float(x[n - 1]) + __half2float(y[n - 1]));
    }
}
