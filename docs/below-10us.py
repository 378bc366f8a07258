# Experiment: per-kernel times by (a) graph replay per launch, (b) blocking-kernel cold events,
# (c) plain events, against ncu. Prints a table.
import sys, json
import numpy as np
import cupy as cp
src = r'''
extern "C" __global__ void spin(float* out, int iters) {
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i) { x = fmaf(x, 0.999999f, y); y = fmaf(y, 0.999999f, x); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
extern "C" __global__ void block_on(volatile int* flag, long long max_cycles) {
    long long start = clock64();
    while (*flag == 0 && clock64() - start < max_cycles) { }
}
'''
mod = cp.RawModule(code=src)
spin = mod.get_function("spin"); block = mod.get_function("block_on")
out = cp.empty(528 * 256, dtype=cp.float32)
flag_host = cp.cuda.alloc_pinned_memory(4)
flag_np = np.frombuffer(flag_host, dtype=np.int32, count=1)
flag_dev = flag_host.ptr  # UVA: a pinned host pointer is valid on the device
flag_ptr = cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(flag_dev, 4, None), 0)
iters_list = [int(v) for v in sys.argv[1].split(",")]
mode = sys.argv[2] if len(sys.argv) > 2 else "all"
stream = cp.cuda.Stream(non_blocking=True)
res = {}
for n in iters_list:
    with stream:
        for _ in range(10): spin((528,), (256,), (out, cp.int32(n)))
    stream.synchronize()
    if mode == "ncu":
        with stream:
            for _ in range(25): spin((528,), (256,), (out, cp.int32(n)))
        stream.synchronize(); continue
    plain, blocked, graph = [], [], []
    for _ in range(100):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(stream); spin((528,), (256,), (out, cp.int32(n)), stream=stream); b.record(stream); b.synchronize()
        plain.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    for _ in range(100):
        flag_np[0] = 0
        a, b = cp.cuda.Event(), cp.cuda.Event()
        block((1,), (1,), (flag_ptr, cp.int64(2_000_000_000)), stream=stream)
        a.record(stream); spin((528,), (256,), (out, cp.int32(n)), stream=stream); b.record(stream)
        flag_np[0] = 1
        b.synchronize()
        blocked.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    B = 32
    stream.begin_capture()
    for _ in range(B): spin((528,), (256,), (out, cp.int32(n)), stream=stream)
    g = stream.end_capture()
    g.upload(stream)
    for _ in range(5): g.launch(stream)
    for _ in range(50):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(stream); g.launch(stream); b.record(stream); b.synchronize()
        graph.append(cp.cuda.get_elapsed_time(a, b) * 1e3 / B)
    res[n] = (np.median(plain), np.median(blocked), np.median(graph))
if mode != "ncu":
    print(json.dumps({str(k): v for k, v in res.items()}))
