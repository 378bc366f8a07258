//! A synthetic run with realistic samples (log-normal noise, σ = 1.5%), judged by the real
//! gate: two swept suites, one regression, one unreliable trial, a wrong result, compile
//! trials. `BLESS=1 cargo test --test html_report` writes it to
//! `tests/fixtures/results/example.json` (the file CI renders; a GPU run's may replace it).

use kernelgate::baseline::{Fingerprint, Stored};
use kernelgate::device::DeviceInfo;
use kernelgate::gate::{decide, GateInput};
use kernelgate::measure::{Clocks, Footprint, Resources};
use kernelgate::report::provenance::Provenance;
use kernelgate::report::results::{
    BaselineRef, FailKind, GateNote, Measurement, Results, Status, TrialFailure, TrialRecord,
    FORMAT,
};
use kernelgate::stats::Summary;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

/// `n` samples around `median`.
pub fn samples(rng: &mut ChaCha8Rng, n: usize, median: f64) -> Vec<f64> {
    let noise: LogNormal<f64> = LogNormal::new(0.0, 0.015).unwrap();
    (0..n).map(|_| median * noise.sample(rng)).collect()
}

fn record(name: &str, status: Status, failure: Option<TrialFailure>) -> TrialRecord {
    let suite = name.split("::").next().unwrap();
    TrialRecord {
        name: name.into(),
        suite: suite.into(),
        file: format!("suites/{suite}.toml"),
        line: 14,
        status,
        failure: failure.as_ref().map(TrialFailure::kind),
        device_ordinal: Some(0),
        ignored: None,
        measurement: None,
        verdict: None,
        gate: None,
        breaches: Vec::new(),
        resource_changes: Vec::new(),
        failure_detail: failure,
        commands: Some(kernelgate::report::results::Commands {
            rerun: format!("cargo test --test perf -- --exact '{name}'"),
            profile: None,
            rebless: Some(format!(
                "KERNELGATE_BLESS=1 cargo test --test perf -- --exact '{name}'"
            )),
            invocation: None,
        }),
        compiled: None,
        code: None,
        base_code: None,
        code_change: None,
        evidence: None,
    }
}

/// A suite: its name, sizes, kernels, seconds for kernel k at size n, bytes and flops of n.
type Model = (
    &'static str,
    Vec<f64>,
    [Kernel; 2],
    fn(usize, f64) -> f64,
    Rate,
    Rate,
);
type Rate = fn(f64) -> f64;

struct Kernel {
    name: &'static str,
    entry: &'static str,
    reference: bool,
}

/// The whole run.
pub fn run() -> Results {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let device = DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H200".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        sm_clock_khz: 1_980_000,
        memory_clock_khz: 3_201_000,
        bus_width_bits: 6144,
        l2_bytes: 60 << 20,
        max_threads_per_sm: 2048,
        total_memory: 150_000_000_000,
        driver_version: 13000,
        driver_release: "580.159.04".into(),
        uuid: Some("GPU-5b1f0c3e-9a7d-4c21-8e6f-0d3a2b1c4e5f".into()),
    };
    let mut trials = vec![record("saxpy::compile", Status::Passed, None)];
    let mut gate_inputs = Vec::new();
    let mut gated = Vec::new();
    let suites: [Model; 2] = [
        (
            "saxpy",
            vec![4096.0, 65536.0, 1048576.0, 16777216.0],
            [
                Kernel {
                    name: "naive",
                    entry: "saxpy",
                    reference: true,
                },
                Kernel {
                    name: "vec4",
                    entry: "saxpy_vec4",
                    reference: false,
                },
            ],
            |k, n| 2.6e-6 + 12.0 * n / [3.1e12, 4.0e12][k],
            |n| 12.0 * n,
            |n| 2.0 * n,
        ),
        (
            "matmul",
            vec![256.0, 512.0, 1024.0, 2048.0],
            [
                Kernel {
                    name: "naive",
                    entry: "matmul_naive",
                    reference: true,
                },
                Kernel {
                    name: "tiled",
                    entry: "matmul_tiled",
                    reference: false,
                },
            ],
            |k, n| 3.0e-6 + 2.0 * n * n * n / [4.5e12, 19.0e12][k],
            |n| 12.0 * n * n,
            |n| 2.0 * n * n * n,
        ),
    ];
    for (suite, sizes, kernels, model, bytes, flops) in suites {
        if suite != "saxpy" {
            trials.push(record(&format!("{suite}::compile"), Status::Passed, None));
        }
        for &n in &sizes {
            let reference_median = model(0, n);
            for (k, kernel) in kernels.iter().enumerate() {
                let name = format!("{suite}::{}::n={n}", kernel.name);
                // The injected regression: vec4 at 16M is 6% slower than its baseline.
                let shift = if name == "saxpy::vec4::n=16777216" {
                    1.06
                } else {
                    1.0
                };
                let median = model(k, n);
                let new = samples(&mut rng, 24, median * shift);
                let old = samples(&mut rng, 24, median);
                let reference = samples(&mut rng, 24, reference_median);
                let ratios: Vec<f64> = reference.iter().zip(&new).map(|(r, x)| r / x).collect();
                let old_ratios: Vec<f64> = samples(&mut rng, 24, reference_median / median);
                let unreliable = name == "matmul::tiled::n=2048";
                let mhz: Vec<f64> = (0..8)
                    .map(|i| {
                        if unreliable && i % 2 == 0 {
                            1410.0
                        } else {
                            1980.0 - (i % 3) as f64 * 15.0
                        }
                    })
                    .collect();
                let celsius: Vec<f64> = (0..8)
                    .map(|i| 41.0 + i as f64 * 1.5 + n.log2() * 0.3)
                    .collect();
                let m = Measurement {
                    regime: if n < 10000.0 {
                        kernelgate::measure::Regime::Graph
                    } else {
                        kernelgate::measure::Regime::Cold
                    },
                    batch: if n < 10000.0 { [20, 20] } else { [1, 1] },
                    launch_floor: 2.4e-6,
                    time: Stored::from(Summary::of(&new).unwrap()),
                    time_samples: new.clone(),
                    speedup: (!kernel.reference)
                        .then(|| Stored::from(Summary::of(&ratios).unwrap())),
                    speedup_samples: if kernel.reference {
                        vec![]
                    } else {
                        ratios.clone()
                    },
                    max_slowdown: 0.03,
                    precision: None,
                    hit_time_cap: false,
                    l2_flush: None,
                    footprint: Footprint {
                        pool_peak: bytes(n) as u64,
                        free_drop: if kernel.name == "tiled" { 2 << 20 } else { 0 },
                        local_reservation: 0,
                        launches: vec![Resources {
                            entry: kernel.entry.into(),
                            registers: if kernel.reference { 16 } else { 40 },
                            static_shared: if kernel.name == "tiled" { 8192 } else { 0 },
                            dynamic_shared: 0,
                            local_bytes: 0,
                            max_threads: 1024,
                            block_threads: 256,
                            blocks_per_sm: if kernel.reference { 8 } else { 6 },
                        }],
                        fp64: None,
                        library: None,
                    },
                    clocks: Clocks {
                        discarded_rounds: if unreliable { 10 } else { 0 },
                        kept_rounds: if unreliable { 14 } else { 24 },
                        unreliable,
                        mhz,
                        celsius,
                        ..Clocks::default()
                    },
                    bytes: Some(bytes(n)),
                    flops: Some(flops(n)),
                    baseline_samples: if unreliable { vec![] } else { old.clone() },
                    baseline_footprint: None,
                    trial_seconds: None,
                    units: vec![],
                    counters: None,
                    baseline_counters: None,
                    counter_changes: vec![],
                    counter_gate: None,
                    declared_work: None,
                    flops_type: None,
                    roofline: None,
                    reference: (!kernel.reference).then(|| "naive".to_string()),
                };
                let mut t = record(&name, Status::Passed, None);
                if let Some(c) = &mut t.commands {
                    c.profile = Some(format!(
                        "KERNELGATE_TIMEOUT=600 ncu --target-processes all -k regex:'^({})' -c 1 {}",
                        kernel.entry, c.rerun
                    ));
                }
                t.line = if kernel.reference { 14 } else { 22 };
                if unreliable {
                    t.gate = Some(GateNote::Unreliable {
                        discarded: 10,
                        rounds: 24,
                        contended: 0,
                        others: Vec::new(),
                    });
                } else {
                    t.gate = Some(GateNote::Compared {
                        baseline: BaselineRef::for_tests(
                            &format!("baselines/nvidia-h200/{suite}.json"),
                            Summary::of(&old).unwrap().median,
                        ),
                        remeasured: false,
                        family: 0,
                    });
                    gate_inputs.push(GateInput {
                        old_times: old,
                        new_times: new,
                        speedups: (!kernel.reference).then_some((old_ratios, ratios)),
                        max_slowdown: 0.03,
                        paired: None,
                    });
                    gated.push(trials.len());
                }
                t.measurement = Some(m);
                trials.push(t);
            }
        }
    }
    let family = gated.len();
    for (i, v) in gated.into_iter().zip(decide(&gate_inputs)) {
        let t = &mut trials[i];
        t.verdict = Some(v);
        if let Some(GateNote::Compared { family: f, .. }) = &mut t.gate {
            *f = family;
        }
        if v.verdict == kernelgate::gate::Verdict::Regressed {
            t.status = Status::Failed;
            t.failure = Some(FailKind::Performance);
        }
    }
    trials.push(record("conv2d::compile", Status::Passed, None));
    trials.push(record(
        "conv2d::tiled::h=200,w=200",
        Status::Failed,
        Some(TrialFailure::WrongOutput(
            "wrong output `out`: 1204 of 40000 elements differ; first at [199] = 0.51 (expected 0.49, rtol 1e-5)".into(),
        )),
    ));
    Results {
        format: FORMAT,
        kernelgate: "0.1.0".into(),
        date: "2026-11-21T23:40:00Z".into(),
        device: Some(Fingerprint::of(&device)),
        device_info: Some(device),
        trials,
        totals: None,
        base: None,
        gone: Vec::new(),
        identical: None,
        sass: Vec::new(),
        sass_note: None,
        undecided: Vec::new(),
        pool: Vec::new(),
        provenance: Provenance {
            commit: Some("8a8b2565d0c1e2f3a4b5c6d7e8f90a1b2c3d4e5f".into()),
            branch: Some("main".into()),
            dirty: Some(false),
            started: Some("2026-11-21T23:31:07Z".into()),
            suites: Default::default(),
            shard: None,
            incomplete: None,
        },
    }
}
