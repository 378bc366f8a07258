//! The runner against a scripted executor: re-measures that fail or settle, blessing, memory
//! gating after a re-measure, and the exit code of mixed outcomes — no GPU needed.

use super::*;
use crate::baseline::{self, BaselineFile, Entry, Stored};
use crate::config::{Config, Mode};
use crate::device::DeviceInfo;
use crate::failure::{DriverFault, FailKind, TrialFailure};
use crate::gate::{Verdict, REMEASURE_EFFORT};
use crate::measure::{Footprint, Regime, Samples};
use crate::report::results::{Breach, Compiled, GateNote, Status, TrialRecord};
use crate::suite::Suite;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod code;
mod counters;
mod hosts;
mod paired;
mod resources;
mod stop;

fn device() -> DeviceInfo {
    DeviceInfo::for_tests("Fake GPU", "580.0")
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
        launch_floor: 4e-6,
        kernel: times(t, n, spread),
        reference: vec![20e-6; n],
        wall_seconds: 0.01,
        ..Samples::none()
    }
}

fn measured(t: f64, n: usize, spread: f64, pool_peak: u64) -> Outcome {
    Outcome::Measured(Box::new(Measured {
        ordinal: 0,
        samples: samples(t, n, spread),
        footprint: footprint(pool_peak),
        base_footprint: None,
        seconds: 0.5,
        counters: None,
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
                return Outcome::Compiled(Compiled {
                    sources: 1,
                    fresh: 0,
                    built: 0,
                    arch: "sm_90".into(),
                    fp64: String::new(),
                })
            }
            Kind::Kernel { kernel, .. } => self.names[1 + kernel].clone(),
        };
        if spec.counters {
            // A counters-only request (`runner::count`): scripted as `<trial> (counters)`;
            // unscripted, the counters were not read.
            let counters = format!("{name} (counters)");
            self.calls
                .lock()
                .unwrap()
                .push((counters.clone(), spec.effort));
            return self
                .script
                .get(&(counters, spec.effort))
                .cloned()
                .unwrap_or_else(|| Outcome::Ignored("no counters scripted".into()));
        }
        if spec.fresh_worker {
            // A confirmation (`runner::attribute`): scripted under the name `<trial> (fresh)`;
            // unscripted, it cannot run and the first verdict stands.
            let fresh = format!("{name} (fresh)");
            self.calls
                .lock()
                .unwrap()
                .push((fresh.clone(), spec.effort));
            return self
                .script
                .get(&(fresh, spec.effort))
                .cloned()
                .unwrap_or_else(|| Outcome::Ignored("no confirmation scripted".into()));
        }
        self.calls.lock().unwrap().push((name.clone(), spec.effort));
        self.script
            .get(&(name.clone(), spec.effort))
            .cloned()
            .unwrap_or_else(|| panic!("no script for {name} at effort {}", spec.effort))
    }
}

/// The scripted executor that records every spec it is asked to execute and gives suite `i`
/// the code `codes[i]` (none where `codes` is empty).
struct Spying {
    inner: Scripted,
    codes: Vec<std::sync::Arc<crate::code::SuiteCode>>,
    specs: Mutex<Vec<TrialSpec>>,
}

impl Spying {
    fn new(inner: Scripted, codes: Vec<std::sync::Arc<crate::code::SuiteCode>>) -> Spying {
        Spying {
            inner,
            codes,
            specs: Mutex::new(Vec::new()),
        }
    }
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
    fn code(
        &self,
        suite: crate::worker::protocol::SuiteRef,
    ) -> Option<std::sync::Arc<crate::code::SuiteCode>> {
        // `codes` holds one suite's code, then its base's.
        let base = matches!(suite, crate::worker::protocol::SuiteRef::Base(_));
        self.codes.get(usize::from(base)).cloned()
    }
}

/// A suite `t` with kernels `naive` (the reference) and `fast`, one case, in a fresh folder.
fn suite(dir: &Path) -> Suite {
    suite_with(dir, "")
}

/// [`suite`] with `extra` TOML appended (a `[bench]` table, say).
fn suite_with(dir: &Path, extra: &str) -> Suite {
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
    std::fs::write(&path, format!("{text}{extra}")).unwrap();
    crate::suite::load_file(&path).unwrap_or_else(|d| panic!("{d:?}"))
}

/// A format-1 entry (no code, no runs) of `kernel` at time `t` with a `pool_peak`-byte peak.
pub(super) fn entry(kernel: &str, t: f64, pool_peak: u64) -> Entry {
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
        code: None,
        trial_seconds: None,
        counters: Vec::new(),
        counter_set: crate::measure::counters::COUNTER_SET,
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
        time_identical: false,
        require_baseline: false,
        strict_time: false,
        counters: crate::config::CounterPolicy::Auto,
        launcher: crate::shell::DEFAULT_LAUNCHER.into(),
        require_counters: false,
        blessing: crate::config::Blessing::Replace,
        results: None,
        junit: None,
        markdown: None,
        step_summary: None,
        annotations: false,
        allow_empty: false,
        html: None,
        history: None,
        profile: false,
        lock_dir: dir.join("locks"),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kernelgate-runner-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs every trial of `plan` in stored mode (no base) through `executor`.
fn run_all(
    config: &Config,
    suites: &[Suite],
    plan: &[Planned],
    executor: &dyn Executor,
) -> RunReport {
    let runner = Runner {
        config,
        suites,
        executor,
        progress: crate::runner::Progress::Off,
        base: None,
        stop: &crate::stop::Stop::new(),
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    runner.run(plan, &selected)
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
    let report = run_all(&config, &suites, &plan, &executor);
    let calls = executor.calls();
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, calls)
}

/// What the terminal says of a trial: a failed one's reasons and commands, another's headline.
fn said(r: &TrialRecord) -> String {
    match r.status {
        Status::Failed => crate::report::terminal::failure(r),
        _ => crate::report::terminal::headline(r),
    }
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
        let message = said(fast);
        assert!(
            message.starts_with("inconclusive, and measuring it again (4x the samples) failed: "),
            "{message}"
        );
        assert!(message.contains(text), "{message}");
        // The rerun repeats this run's experiment: its folders, then the launcher.
        assert!(message.contains("rerun:   KERNELGATE_SUITES="), "{message}");
        assert!(message.contains(" cargo test --test perf -- --exact 't::fast'"));
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
            ("t::fast".to_string(), REMEASURE_EFFORT),
            ("t::fast (fresh)".to_string(), REMEASURE_EFFORT),
            ("t::fast (counters)".to_string(), 1)
        ],
        "only the inconclusive trial is measured again (then its regression confirmed)"
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
    let message = said(fast);
    assert!(message.starts_with("regressed: 10.00 µs → "), "{message}");
    assert!(
        message.contains("measured again with 4x the samples"),
        "{message}"
    );
    assert!(
        message.contains("rebless: KERNELGATE_BLESS=1 KERNELGATE_SUITES=")
            && message.contains(" cargo test --test perf -- --exact 't::fast'")
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
    assert!(said(fast).contains("peak memory grew"));
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
    let message = said(record(&results, "t::fast"));
    assert!(message.contains("kernel declared at"), "{message}");
    assert!(message.contains("t.toml:"), "{message}");
}
