
extern "C" __global__ void kernelgate_empty() {}

extern "C" __global__ void kernelgate_clock(unsigned long long* out, int spins) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    float x = threadIdx.x;
    for (int i = 0; i < spins; ++i) x = x * 0.9999999f + 1e-7f;
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0) {
        out[0] = (unsigned long long)(c1 - c0);
        out[1] = t1 - t0;
        out[2] = (x == -1.0f);
    }
}

extern "C" __global__ void kernelgate_read(const uint4* p, unsigned long long n, unsigned* sink) {
    unsigned acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
