//! The runner against a scripted executor: re-measures that fail or settle, blessing, memory
//! gating after a re-measure, and the exit code of mixed outcomes — no GPU needed.

use super::*;
use crate::baseline::{self, BaselineFile, Entry, Stored};
use crate::config::Mode;
use crate::device::DeviceInfo;
use crate::failure::{DriverFault, FailKind, TrialFailure};
use crate::gate::{Verdict, REMEASURE_EFFORT};
use crate::measure::{Footprint, Regime, Samples};
use crate::report::results::{Breach, GateNote, RunTotals, Status};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Host-aware baselines: `KERNELGATE_BLESS=add` and the other-GPU note.
mod hosts;

fn device() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "Fake GPU".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        sm_clock_khz: 1_980_000,
        memory_clock_khz: 2_619_000,
        bus_width_bits: 5120,
        l2_bytes: 50 << 20,
        max_threads_per_sm: 2048,
        total_memory: 80 << 30,
        driver_version: 13000,
        driver_release: "580.0".into(),
        uuid: None,
    }
}

/// Times around `t` seconds with a deterministic ±`spread` wobble.
fn times(t: f64, n: usize, spread: f64) -> Vec<f64> {
    (0..n)
        .map(|i| t * (1.0 + spread * ((i * 7 % 11) as f64 / 10.0 - 0.5)))
        .collect()
}

fn footprint(pool_peak: u64) -> Footprint {
    Footprint {
        pool_peak,
        ..Default::default()
    }
}

/// Samples of the kernel at `t` (with `spread`) against a steady 20 µs reference.
fn samples(t: f64, n: usize, spread: f64) -> Samples {
    Samples {
        regime: Regime::Cold,
        batch: [1, 1],
        launch_floor: 4e-6,
        kernel: times(t, n, spread),
        reference: vec![20e-6; n],
        hit_time_cap: false,
        wall_seconds: 0.01,
        clocks: Default::default(),
    }
}

fn measured(t: f64, n: usize, spread: f64, pool_peak: u64) -> Outcome {
    Outcome::Measured(Box::new(Measured {
        ordinal: 0,
        samples: samples(t, n, spread),
        footprint: footprint(pool_peak),
        base_footprint: None,
    }))
}

/// An executor that answers from a script: per trial name and effort, an outcome.
struct Scripted {
    script: HashMap<(String, u32), Outcome>,
    calls: Mutex<Vec<(String, u32)>>,
    names: Vec<String>,
    /// The GPU's UUID, as the worker reports it.
    uuid: Option<String>,
}

impl Scripted {
    fn new(plan: &[Planned], script: Vec<(&str, u32, Outcome)>) -> Scripted {
        Scripted {
            script: script
                .into_iter()
                .map(|(n, e, o)| ((n.to_string(), e), o))
                .collect(),
            calls: Mutex::new(Vec::new()),
            names: plan.iter().map(|p| p.name.clone()).collect(),
            uuid: None,
        }
    }
    fn calls(&self) -> Vec<(String, u32)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Executor for Scripted {
    fn slots(&self) -> usize {
        1
    }
    fn device(&self) -> Option<DeviceInfo> {
        Some(DeviceInfo {
            uuid: self.uuid.clone(),
            ..device()
        })
    }
    fn execute(&self, _slot: usize, spec: &TrialSpec) -> Outcome {
        let name = match spec.kind {
            Kind::Compile => {
                return Outcome::Compiled {
                    sources: 1,
                    fresh: 0,
                    built: 0,
                    arch: "sm_90".into(),
                    fp64: String::new(),
                }
            }
            Kind::Kernel { kernel, .. } => self.names[1 + kernel].clone(),
        };
        self.calls.lock().unwrap().push((name.clone(), spec.effort));
        self.script
            .get(&(name.clone(), spec.effort))
            .cloned()
            .unwrap_or_else(|| panic!("no script for {name} at effort {}", spec.effort))
    }
    fn stop(&self) {}
    fn totals(&self) -> RunTotals {
        RunTotals::default()
    }
}

/// A suite `t` with kernels `naive` (the reference) and `fast`, one case, in a fresh folder.
fn suite(dir: &Path) -> Suite {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "extern \"C\" __global__ void k(const float* x, float* y, int n) {}\n",
    )
    .unwrap();
    let text = r#"
[suite]
name = "t"
source = "k.cu"

[[buffer]]
name = "x"
type = "f32"
len = "1024"
init = { random = "uniform", min = -1.0, max = 1.0 }

[[buffer]]
name = "y"
type = "f32"
len = "1024"
role = "output"

[[kernel]]
name = "naive"
entry = "k"
reference = true
grid = [4]
block = [256]
args = ["x", "y", "1024 as i32"]

[[kernel]]
name = "fast"
entry = "k"
grid = [4]
block = [256]
args = ["x", "y", "1024 as i32"]
"#;
    let path = dir.join("t.toml");
    std::fs::write(&path, text).unwrap();
    crate::suite::load_file(&path).unwrap_or_else(|d| panic!("{d:?}"))
}

fn entry(kernel: &str, t: f64, pool_peak: u64) -> Entry {
    let s = samples(t, 32, 0.01);
    Entry {
        kernel: kernel.into(),
        case: String::new(),
        regime: Regime::Cold,
        time: Stored::from(s.kernel_summary().unwrap()),
        time_samples: s.kernel.clone(),
        speedup: s.speedup().map(Stored::from),
        speedup_samples: s.ratios(),
        footprint: Some(footprint(pool_peak)),
        reference: "naive".into(),
        kernelgate: "0.1.0".into(),
        date: "2026-11-21".into(),
        runs: Vec::new(),
    }
}

/// Baselines for both kernels at 10 µs and a 1000-byte peak.
fn bless_baselines(dir: &Path) {
    let fingerprint = crate::baseline::Fingerprint::of(&device());
    let file = BaselineFile {
        format: baseline::FORMAT,
        suite: "t".into(),
        device: fingerprint.clone(),
        trials: BTreeMap::from([
            ("t::naive".to_string(), entry("naive", 10e-6, 1000)),
            ("t::fast".to_string(), entry("fast", 10e-6, 1000)),
        ]),
    };
    baseline::save(&baseline::path(dir, &fingerprint, "t"), &file).unwrap();
}

fn config(dir: &Path, mode: Mode) -> Config {
    Config {
        suites: dir.to_path_buf(),
        baselines: dir.join("baselines"),
        devices: vec![0],
        shard: None,
        require_gpu: false,
        require_nvrtc: false,
        timeout: std::time::Duration::from_secs(5),
        arch: "sm_90".into(),
        cache: dir.join("cache"),
        seed: None,
        mode,
        base: None,
        strict: false,
        require_baseline: false,
        blessing: crate::config::Blessing::Replace,
        results: None,
        junit: None,
        markdown: None,
        step_summary: None,
        annotations: false,
        allow_empty: false,
        html: None,
        history: None,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kernelgate-runner-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs every trial of suite `t` against the script; returns the records and the calls made.
fn run_script(
    name: &str,
    mode: Mode,
    script: Vec<(&str, u32, Outcome)>,
) -> (crate::report::results::Results, Vec<(String, u32)>) {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let config = config(&dir, mode);
    bless_baselines(&config.baselines);
    let plan = plan(&suites);
    let executor = Scripted::new(&plan, script);
    let runner = Runner {
        config: &config,
        suites: &suites,
        executor: &executor,
        progress: false,
        base: None,
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    let mut report = runner.run(&plan, &selected);
    crate::report::terminal::fill_messages(&mut report.results);
    let calls = executor.calls();
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, calls)
}

fn record<'a>(
    results: &'a crate::report::results::Results,
    name: &str,
) -> &'a crate::report::results::TrialRecord {
    results.trials.iter().find(|r| r.name == name).unwrap()
}

/// A first measurement of `fast` too noisy to tell: about 4% slower, with ±5% wobble.
fn inconclusive() -> Outcome {
    measured(10.4e-6, 16, 0.10, 1000)
}

#[test]
fn a_failed_remeasure_fails_its_own_trial_and_the_run_goes_on() {
    let fault = TrialFailure::Fault(DriverFault {
        call: "cuStreamSynchronize".into(),
        code: 700,
        name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        description: "an illegal memory access was encountered".into(),
        sticky: true,
    });
    let failures = [
        (
            Outcome::Failed(TrialFailure::Timeout { seconds: 20 }),
            FailKind::Correctness,
            "timed out after 20 s",
        ),
        (
            Outcome::Failed(TrialFailure::Crashed {
                status: "signal: 9".into(),
            }),
            FailKind::Correctness,
            "the GPU worker crashed (signal: 9)",
        ),
        (
            Outcome::Failed(fault),
            FailKind::Correctness,
            "CUDA_ERROR_ILLEGAL_ADDRESS",
        ),
        (
            Outcome::Ignored("no usable GPU: gone".into()),
            FailKind::Infrastructure,
            "the re-measure could not run: no usable GPU: gone",
        ),
    ];
    for (k, (failure, kind, text)) in failures.into_iter().enumerate() {
        let (results, calls) = run_script(
            &format!("remeasure-fails-{k}"),
            Mode::Gate,
            vec![
                ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
                ("t::fast", 1, inconclusive()),
                ("t::fast", REMEASURE_EFFORT, failure),
            ],
        );
        assert!(
            calls.contains(&("t::fast".into(), REMEASURE_EFFORT)),
            "{calls:?}"
        );
        let fast = record(&results, "t::fast");
        assert_eq!(fast.status, Status::Failed);
        assert_eq!(fast.failure, Some(kind));
        assert_eq!(fast.gate, Some(GateNote::RemeasureFailed));
        let message = fast.message.as_deref().unwrap();
        assert!(
            message.starts_with("inconclusive, and measuring it again (4x the samples) failed: "),
            "{message}"
        );
        assert!(message.contains(text), "{message}");
        assert!(message.contains("rerun:   cargo test --test perf -- --exact 't::fast'"));
        // The other trial is decided without it.
        let naive = record(&results, "t::naive");
        assert_eq!(naive.status, Status::Passed);
        assert_eq!(naive.verdict.unwrap().verdict, Verdict::Unchanged);
        match &naive.gate {
            Some(GateNote::Compared { family, .. }) => assert_eq!(*family, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(results.worst_failure(), Some(kind));
    }
}

#[test]
fn a_remeasure_settles_the_verdict() {
    let (results, calls) = run_script(
        "remeasure-settles",
        Mode::Gate,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, inconclusive()),
            ("t::fast", REMEASURE_EFFORT, measured(11e-6, 64, 0.01, 1000)),
        ],
    );
    assert_eq!(
        calls,
        [
            ("t::naive".to_string(), 1),
            ("t::fast".to_string(), 1),
            ("t::fast".to_string(), REMEASURE_EFFORT)
        ],
        "only the inconclusive trial is measured again"
    );
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert!(matches!(
        fast.gate,
        Some(GateNote::Compared {
            remeasured: true,
            ..
        })
    ));
    assert_eq!(fast.failure, Some(FailKind::Performance));
    assert_eq!(
        fast.measurement.as_ref().unwrap().time_samples.len(),
        64,
        "the new samples are kept"
    );
    let message = fast.message.as_deref().unwrap();
    assert!(message.starts_with("regressed: 10.00 µs → "), "{message}");
    assert!(
        message.contains("measured again with 4x the samples"),
        "{message}"
    );
    assert!(
        message.contains("rebless: KERNELGATE_BLESS=1 cargo test --test perf -- --exact 't::fast'")
    );
    assert_eq!(
        results.worst_failure().unwrap().exit_code(),
        crate::exit::PERFORMANCE
    );
}

#[test]
fn blessing_never_remeasures() {
    let (results, calls) = run_script(
        "bless",
        Mode::Bless,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, inconclusive()),
        ],
    );
    assert!(calls.iter().all(|(_, e)| *e == 1), "{calls:?}");
    let fast = record(&results, "t::fast");
    assert_eq!(fast.status, Status::Passed);
    assert_eq!(fast.gate, Some(GateNote::Blessed));
}

#[test]
fn memory_growth_is_gated_on_a_remeasured_trial() {
    // The re-measure is unchanged in time, but its peak memory doubled.
    let (results, _) = run_script(
        "remeasure-memory",
        Mode::Gate,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, measured(10.4e-6, 16, 0.10, 2000)),
            ("t::fast", REMEASURE_EFFORT, measured(10e-6, 64, 0.01, 2000)),
        ],
    );
    let fast = record(&results, "t::fast");
    assert!(matches!(
        fast.gate,
        Some(GateNote::Compared {
            remeasured: true,
            ..
        })
    ));
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Unchanged);
    assert!(
        fast.breaches.iter().any(|b| matches!(
            b,
            Breach::MemoryGrowth {
                old: 1000,
                new: 2000,
                ..
            }
        )),
        "{:?}",
        fast.breaches
    );
    assert_eq!(fast.failure, Some(FailKind::Performance));
    assert!(fast
        .message
        .as_deref()
        .unwrap()
        .contains("peak memory grew"));
}

#[test]
fn mixed_outcomes_exit_with_the_worst() {
    let oom = Outcome::Failed(TrialFailure::OutOfMemory("out of memory: 447 GiB".into()));
    let wrong = Outcome::Failed(TrialFailure::WrongOutput("output `y` differs".into()));
    let harness = Outcome::Failed(TrialFailure::Harness("the harness's probe kernels".into()));
    let cases = [
        (
            oom.clone(),
            measured(10e-6, 32, 0.01, 1000),
            crate::exit::PERFORMANCE,
        ),
        (oom.clone(), wrong.clone(), crate::exit::CORRECTNESS),
        (wrong, harness, crate::exit::BAD_INPUT),
        (
            measured(10e-6, 32, 0.01, 1000),
            measured(10e-6, 32, 0.01, 1000),
            crate::exit::SUCCESS,
        ),
    ];
    for (k, (naive, fast, code)) in cases.into_iter().enumerate() {
        let (results, _) = run_script(
            &format!("mixed-{k}"),
            Mode::Gate,
            vec![("t::naive", 1, naive), ("t::fast", 1, fast)],
        );
        let got = results
            .worst_failure()
            .map_or(crate::exit::SUCCESS, FailKind::exit_code);
        assert_eq!(got, code, "case {k}");
    }
    // A failure the worker found in the kernel points at its declaration.
    let (results, _) = run_script(
        "declared-at",
        Mode::Gate,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, oom),
        ],
    );
    let message = record(&results, "t::fast").message.clone().unwrap();
    assert!(message.contains("kernel declared at"), "{message}");
    assert!(message.contains("t.toml:"), "{message}");
}

/// Paired mode: the executor's "reference" samples are the base kernel's.
fn paired_measured(cand: f64, base: f64, n: usize, spread: f64) -> Outcome {
    let mut s = samples(cand, n, spread);
    s.reference = times(base, n, spread / 4.0);
    Outcome::Measured(Box::new(Measured {
        ordinal: 0,
        samples: s,
        footprint: footprint(1000),
        base_footprint: Some(footprint(1000)),
    }))
}

/// Runs suite `t` in paired mode against a base that has the same suite (or `base_suites`).
fn run_paired(
    name: &str,
    script: Vec<(&str, u32, Outcome)>,
    edit_base: impl FnOnce(&mut Suite),
) -> (crate::report::results::Results, Vec<TrialSpec>) {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let mut base_suite = suites[0].clone();
    edit_base(&mut base_suite);
    let base = crate::paired::Base {
        rev: "HEAD~1".into(),
        commit: "0123456789abcdef".into(),
        suites: vec![base_suite],
    };
    let config = config(&dir, Mode::Gate);
    let plan = plan(&suites);
    let executor = Spying {
        inner: Scripted::new(&plan, script),
        specs: Mutex::new(Vec::new()),
    };
    let runner = Runner {
        config: &config,
        suites: &suites,
        executor: &executor,
        progress: false,
        base: Some(&base),
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    let mut report = runner.run(&plan, &selected);
    crate::report::terminal::fill_messages(&mut report.results);
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, executor.specs.into_inner().unwrap())
}

/// Records every spec it is asked to execute.
struct Spying {
    inner: Scripted,
    specs: Mutex<Vec<TrialSpec>>,
}

impl Executor for Spying {
    fn slots(&self) -> usize {
        1
    }
    fn device(&self) -> Option<DeviceInfo> {
        self.inner.device()
    }
    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        self.specs.lock().unwrap().push(spec.clone());
        self.inner.execute(slot, spec)
    }
    fn stop(&self) {}
    fn totals(&self) -> RunTotals {
        RunTotals::default()
    }
}

#[test]
fn paired_trials_are_timed_against_their_base_and_judged_on_ratios() {
    let (results, specs) = run_paired(
        "paired",
        vec![
            // The machine is 8% slower in this run: both sides, so nothing changed.
            ("t::naive", 1, paired_measured(10.8e-6, 10.8e-6, 32, 0.01)),
            // A real 10% slowdown of the candidate against its base.
            ("t::fast", 1, paired_measured(11e-6, 10e-6, 32, 0.01)),
        ],
        |_| {},
    );
    let kernel_specs: Vec<&TrialSpec> = specs.iter().filter(|s| s.kind != Kind::Compile).collect();
    assert!(
        kernel_specs
            .iter()
            .all(|s| s.base.is_some() && s.regime.is_none()),
        "{specs:?}"
    );
    assert_eq!(
        kernel_specs[0].base.unwrap().suite,
        1,
        "base suites follow the run's own"
    );
    let naive = record(&results, "t::naive");
    assert_eq!(naive.verdict.unwrap().verdict, Verdict::Unchanged);
    assert!(
        matches!(&naive.gate, Some(GateNote::Paired { commit, family: 2, .. }) if commit == "0123456789abcdef")
    );
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(fast.failure, Some(FailKind::Performance));
    let message = fast.message.as_deref().unwrap();
    assert!(
        message.starts_with("regressed against the base revision"),
        "{message}"
    );
    assert!(
        message.contains("base: KERNELGATE_BASE=HEAD~1 (0123456789abcdef)"),
        "{message}"
    );
    assert_eq!(
        fast.measurement.as_ref().unwrap().reference.as_deref(),
        Some("base 0123456")
    );
    let line = crate::report::terminal::line(fast, None);
    assert!(line.contains("REGRESSED +10.0%"), "{line}");
    assert!(line.contains("vs base 0123456 (paired)"), "{line}");
    assert_eq!(results.base.as_ref().unwrap().rev, "HEAD~1");
}

#[test]
fn paired_new_changed_and_gone_trials_are_listed_not_compared() {
    let (results, specs) = run_paired(
        "paired-changed",
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, measured(10e-6, 32, 0.01, 1000)),
        ],
        |base| {
            // At the base, `fast` did not exist, another kernel did, and `y` was longer.
            base.kernels[1].name = "old_kernel".into();
            base.cases[0].lens[1] = 2048;
        },
    );
    assert!(
        specs.iter().all(|s| s.base.is_none()),
        "nothing is paired: {specs:?}"
    );
    let naive = record(&results, "t::naive");
    assert!(
        matches!(&naive.gate, Some(GateNote::Changed { why }) if why.contains("buffers changed")),
        "{:?}",
        naive.gate
    );
    assert_eq!(naive.status, Status::Passed);
    assert_eq!(record(&results, "t::fast").gate, Some(GateNote::New));
    assert_eq!(results.gone, ["t::old_kernel"]);
}

#[test]
fn a_paired_remeasure_is_timed_against_the_base_again() {
    let (results, specs) = run_paired(
        "paired-remeasure",
        vec![
            ("t::naive", 1, paired_measured(10e-6, 10e-6, 32, 0.01)),
            ("t::fast", 1, paired_measured(10.4e-6, 10e-6, 12, 0.12)),
            (
                "t::fast",
                REMEASURE_EFFORT,
                paired_measured(10.05e-6, 10e-6, 64, 0.01),
            ),
        ],
        |_| {},
    );
    let again: Vec<&TrialSpec> = specs
        .iter()
        .filter(|s| s.effort == REMEASURE_EFFORT)
        .collect();
    assert_eq!(again.len(), 1, "{specs:?}");
    assert!(again[0].base.is_some());
    let fast = record(&results, "t::fast");
    assert!(
        matches!(
            fast.gate,
            Some(GateNote::Paired {
                remeasured: true,
                ..
            })
        ),
        "{:?}",
        fast.gate
    );
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Unchanged);
}
