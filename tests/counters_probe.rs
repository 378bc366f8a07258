//! A GPU check of `device::counters`: compiles three small kernels with NVRTC, profiles each
//! through CUPTI's range profiler with user replay, and prints every metric with the time one
//! profile took. The test is `#[ignore]`d with that reason and its name starts `needs_gpu_`
//! (ci/test.sh skips those); run it from the repository root on a GPU machine:
//! `cargo test --release --test counters_probe -- --ignored --nocapture`.

#[path = "common/gpu.rs"]
mod gpu;
use kernelgate::device::compile::{compile, CompileRequest};
use kernelgate::device::counters::{cupti_missing, Closures, Profiler};
use kernelgate::device::{DeviceBuffer, DeviceError, Function, Gpu, KernelArg, LaunchDims};
use std::cell::Cell;
use std::time::Instant;

const SOURCE: &str = r#"
extern "C" __global__ void copy_scale(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void fma_loop(const float* x, float* y, float a, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; for (int k = 0; k < iters; ++k) v = fmaf(v, a, 1.0f); y[i] = v; }
}
extern "C" __global__ void gather(const float* x, const int* idx, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]];
}
extern "C" __global__ void read_all(const uint4* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
"#;

const METRICS: &[&str] = &[
    "smsp__inst_executed.sum",
    "sm__sass_thread_inst_executed.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "gpu__time_duration.sum",
];

/// On a GPU: which metrics this CUPTI accepts, then three sets of them read from single
/// launches and from three operations in one configuration, each read timed, with a kernel's
/// median time before and after profiling. It prints what it finds and asserts nothing else.
#[test]
#[ignore = "needs a GPU and NVRTC: cargo test --release --test counters_probe -- --ignored --nocapture on a GPU machine"]
fn needs_gpu_counters_probe() {
    gpu::require_gpu();
    println!("cupti: {:?}", cupti_missing());
    let gpu = Gpu::open(0).expect("open");
    println!(
        "device: {} sm_{}{}",
        gpu.info.name, gpu.info.compute_capability.0, gpu.info.compute_capability.1
    );
    let entries: Vec<String> = ["copy_scale", "fma_loop", "gather", "read_all"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let req = CompileRequest {
        path: std::path::Path::new("probe.cu"),
        text: SOURCE,
        include_dirs: &[],
        options: &[],
        entries: &entries,
        arch: &gpu.info.arch(),
    };
    let c = compile(&req, None).expect("compile");
    let module = gpu.load(&c.cubin).expect("load");
    let f: Vec<_> = c
        .lowered
        .iter()
        .map(|l| module.function(l).expect("function"))
        .collect();
    // Metrics one by one first: which names this CUPTI accepts.
    let mut good = Vec::new();
    for m in METRICS {
        match Profiler::new(0, &[m]) {
            Ok(p) => {
                println!("metric ok: {m} ({} pass)", p.passes());
                good.push(*m);
            }
            Err(e) => println!("metric refused: {m}: {e}"),
        }
    }
    let t = Instant::now();
    let prof = Profiler::new(0, &good).unwrap_or_else(|e| panic!("profiler: {e}"));
    println!(
        "profiler for {} metrics: {} passes, set up in {:.1} ms",
        good.len(),
        prof.passes(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let probe = Probe::new(&gpu, &f);
    let sets: [&[&str]; 3] = [
        &good,
        &[
            "smsp__inst_executed.sum",
            "sm__sass_thread_inst_executed.sum",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "lts__t_sectors.sum",
        ],
        &[
            "smsp__inst_executed.sum",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ],
    ];
    probe.time_kernel("copy_scale before profiling");
    for (si, set) in sets.iter().enumerate() {
        probe.read_set(si, set);
    }
    probe.time_kernel("copy_scale after profiling");
    drop(probe);
    drop(f);
    drop(module);
    drop(prof);
}

/// The probe's kernels with their buffers: `f` holds copy_scale, fma_loop, gather and read_all.
struct Probe<'a> {
    gpu: &'a Gpu,
    f: &'a [Function],
    flush: DeviceBuffer,
    sink: DeviceBuffer,
    x: DeviceBuffer,
    y: DeviceBuffer,
    idx: DeviceBuffer,
    dims: LaunchDims,
    a: [u8; 4],
    nn: [u8; 4],
    iters: [u8; 4],
    fw: [u8; 8],
    fill_byte: Cell<u8>,
}

impl<'a> Probe<'a> {
    fn new(gpu: &'a Gpu, f: &'a [Function]) -> Self {
        let l2 = gpu.info.l2_bytes.max(0) as usize;
        let flush = gpu.alloc_plain(2 * l2).expect("flush");
        let sink = gpu.alloc_plain(16).expect("sink");
        let n = 1usize << 20;
        let x = gpu.alloc_plain(4 * n).unwrap();
        let y = gpu.alloc_plain(4 * n).unwrap();
        let idx = gpu.alloc_plain(4 * n).unwrap();
        let host: Vec<u8> = (0..n)
            .flat_map(|i| (((i as u64 * 7919) % n as u64) as i32).to_le_bytes())
            .collect();
        gpu.upload(&idx, &host).unwrap();
        gpu.fill(&x, 0x3f).unwrap();
        let dims = LaunchDims {
            grid: [n.div_ceil(256) as u32, 1, 1],
            block: [256, 1, 1],
            shared: 0,
        };
        let fw = ((flush.bytes / 16) as u64).to_le_bytes();
        Probe {
            gpu,
            f,
            flush,
            sink,
            x,
            y,
            idx,
            dims,
            a: 1.0001f32.to_le_bytes(),
            nn: (n as i32).to_le_bytes(),
            iters: 100i32.to_le_bytes(),
            fw,
            fill_byte: Cell::new(0u8),
        }
    }

    /// Outputs poisoned, L2 flushed with new bytes, then read clean (read_all).
    fn prepare(&self) -> Result<(), DeviceError> {
        let gpu = self.gpu;
        gpu.fill(&self.y, 0xff)?;
        self.fill_byte.set(self.fill_byte.get().wrapping_add(1));
        gpu.fill(&self.flush, self.fill_byte.get())?;
        let rd = LaunchDims {
            grid: [4 * gpu.info.sm_count as u32, 1, 1],
            block: [512, 1, 1],
            shared: 0,
        };
        gpu.launch(
            &self.f[3],
            rd,
            &[
                KernelArg::Buffer(&self.flush),
                KernelArg::Scalar(&self.fw),
                KernelArg::Buffer(&self.sink),
            ],
        )?;
        gpu.synchronize()
    }

    fn args(&self, which: usize) -> Vec<KernelArg<'_>> {
        match which {
            0 => vec![
                KernelArg::Buffer(&self.x),
                KernelArg::Buffer(&self.y),
                KernelArg::Scalar(&self.a),
                KernelArg::Scalar(&self.nn),
            ],
            1 => vec![
                KernelArg::Buffer(&self.x),
                KernelArg::Buffer(&self.y),
                KernelArg::Scalar(&self.a),
                KernelArg::Scalar(&self.nn),
                KernelArg::Scalar(&self.iters),
            ],
            _ => vec![
                KernelArg::Buffer(&self.x),
                KernelArg::Buffer(&self.idx),
                KernelArg::Buffer(&self.y),
                KernelArg::Scalar(&self.nn),
            ],
        }
    }

    fn launch(&self, which: usize) -> Result<(), DeviceError> {
        self.gpu
            .launch(&self.f[which], self.dims, &self.args(which))?;
        self.gpu.synchronize()
    }

    /// copy_scale's median over 200 launches timed with events.
    fn time_kernel(&self, what: &str) {
        let gpu = self.gpu;
        let (s, e) = (gpu.event().unwrap(), gpu.event().unwrap());
        let copy_scale = self.args(0);
        let mut t = Vec::new();
        for _ in 0..200 {
            gpu.record(&s).unwrap();
            gpu.launch(&self.f[0], self.dims, &copy_scale).unwrap();
            gpu.record(&e).unwrap();
            gpu.synchronize().unwrap();
            t.push(kernelgate::device::elapsed_ms(&s, &e).unwrap() as f64 * 1e3);
        }
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("timing {what}: median {:.3} µs", t[t.len() / 2]);
    }

    /// One set of metrics: a profiler for it, three single reads, three reads of three
    /// operations in one configuration, each timed.
    fn read_set(&self, si: usize, set: &[&str]) {
        let t = Instant::now();
        let p = match Profiler::new(0, set) {
            Ok(p) => p,
            Err(e) => {
                println!("set {si}: {e}");
                return;
            }
        };
        println!(
            "set {si}: {} metrics, {} passes, new {:.1} ms",
            set.len(),
            p.passes(),
            t.elapsed().as_secs_f64() * 1e3
        );
        let prepare = || self.prepare();
        let mut session = p.enable().expect("enable");
        for rep in 0..3 {
            let t = Instant::now();
            let r = session.profile(prepare, || self.launch(0));
            println!(
                "set {si} single rep={rep} {:.2} ms: {:?}",
                t.elapsed().as_secs_f64() * 1e3,
                r.map(|v| v.iter().map(|x| *x as i64).collect::<Vec<_>>())
            );
        }
        for rep in 0..3 {
            let t = Instant::now();
            let mut o0 = Closures(prepare, || self.launch(0));
            let mut o1 = Closures(prepare, || self.launch(1));
            let mut o2 = Closures(prepare, || self.launch(2));
            let r = session.profile_ops(&mut [&mut o0, &mut o1, &mut o2]);
            println!(
                "set {si} three-ops rep={rep} {:.2} ms: {:?}",
                t.elapsed().as_secs_f64() * 1e3,
                r.map(|v| v
                    .iter()
                    .map(|r| r.iter().map(|x| *x as i64).collect::<Vec<_>>())
                    .collect::<Vec<_>>())
            );
        }
        let t = Instant::now();
        drop(session);
        println!("set {si} disable {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    }
}
