//! `run`: turns suites into libtest-mimic trials and runs them, in phases. Suites are all
//! loaded and validated first; then every selected trial runs (GPU work one trial at a time in
//! the worker process); then the gate decides all of them together (its false-discovery-rate
//! correction needs every p-value), re-measuring inconclusive ones; then baselines are blessed
//! and the results file written; last, libtest reports each trial's outcome on its line.

mod bless;
pub mod calibrate;
mod execute;
pub mod lint;
mod settle;
mod verdicts;

use settle::{records, report_trials, settle, summary, write_reports, Settled};

use crate::baseline::{Entry, Fingerprint};
use crate::config::{self, Config};
use crate::gate::TrialVerdict;
use crate::measure::{Footprint, Samples};
use crate::report::results::{self, FailKind, Results};
use crate::suite::{self, Suite};
use crate::worker::client::{Worker, WORKER_ENV};
use libtest_mimic::{Arguments, FormatSetting, Trial};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Exit code for an unusable setup: bad suite files or bad `KERNELGATE_*` variables.
pub const EXIT_BAD_INPUT: u8 = 2;

/// What the phases of one run share.
pub(crate) struct Run {
    config: Config,
    /// One worker per GPU in `KERNELGATE_DEVICE`.
    workers: Vec<Mutex<Worker>>,
    totals: Mutex<Totals>,
    /// Each trial's baseline regime on this device, so it is timed the same way again.
    regimes: std::collections::HashMap<String, String>,
    /// Print progress on stderr (it is a terminal and the output is for people).
    progress: bool,
}

impl Run {
    fn worker(&self, w: usize) -> MutexGuard<'_, Worker> {
        self.workers[w].lock().unwrap_or_else(|e| e.into_inner())
    }
    fn totals(&self) -> MutexGuard<'_, Totals> {
        self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn progress(&self, text: &str) {
        if self.progress {
            eprintln!("kernelgate: {text}");
        }
    }
}

#[derive(Default)]
struct Totals {
    trials_measured: usize,
    setup_seconds: f64,
    check_seconds: f64,
    sampled_seconds: f64,
    kernel_seconds: f64,
    compiled: usize,
    cached: usize,
    launch_floor: Option<f64>,
    batched: usize,
    clock_mhz: Vec<f64>,
    celsius: Vec<f64>,
    dropped_rounds: usize,
    unreliable: usize,
}

/// One trial of the run, in list order.
pub(crate) struct Planned {
    name: String,
    suite: usize,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Compile,
    Kernel { case: usize, kernel: usize },
}

impl Planned {
    fn case_kernel(&self) -> Option<(usize, usize)> {
        match self.kind {
            Kind::Kernel { case, kernel } => Some((case, kernel)),
            Kind::Compile => None,
        }
    }
}

/// What running a trial produced.
pub(crate) enum Outcome {
    /// A compile trial passed; its line.
    Compiled(String),
    /// Not run, and why.
    Ignored(String),
    /// Failed: what kind, and why.
    Failed(FailKind, String),
    /// Checked and timed.
    Measured(Box<Measured>),
}

/// A trial that passed correctness and was timed.
pub(crate) struct Measured {
    /// The GPU it ran on.
    ordinal: i32,
    samples: Samples,
    footprint: Footprint,
    /// This trial's baseline entry on this device, if any (for memory and resources).
    baseline: Option<Box<Entry>>,
    gate: GateNote,
}

/// What the gate made of a measured trial.
pub(crate) enum GateNote {
    /// Not judged (yet).
    Pending,
    /// No baseline for this trial on this device.
    NoBaseline { elsewhere: Vec<Fingerprint> },
    /// The baseline was measured in another regime.
    OtherRegime(String),
    /// The baseline file cannot be used.
    Error(String),
    /// The SM clock was throttled in too many rounds: not compared.
    Unreliable(String),
    /// Compared with its baseline.
    Compared {
        verdict: TrialVerdict,
        old: Box<Entry>,
        path: PathBuf,
        remeasured: bool,
        family: usize,
        /// The suite's `max_slowdown`.
        max_slowdown: f64,
    },
}

/// The perf binary's entry point: `tests/perf.rs` calls this and nothing else.
pub fn main() -> ExitCode {
    run(std::env::args())
}

/// Runs the suites with libtest arguments `args` (the first is the program name), or serves
/// as the GPU worker when started as one.
pub fn run(args: impl Iterator<Item = String>) -> ExitCode {
    if std::env::var_os(WORKER_ENV).is_some() {
        let cache = Config::from_env().map(|c| c.cache).ok();
        return ExitCode::from(crate::worker::serve(cache) as u8);
    }
    let mut args = Arguments::from_iter(args);
    // One thread keeps each trial's figures on its own line, in order.
    args.test_threads.get_or_insert(1);
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if config.bless && config::in_ci() {
        eprintln!("error: KERNELGATE_BLESS is refused when `CI` is set: baselines are recorded on purpose, by a person, and reviewed (unset CI to bless locally)");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let suites = match suite::load_dir(&config.suites) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            eprintln!(
                "kernelgate: {} problem(s) in the suite files; nothing was run",
                e.diagnostics.len()
            );
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if let Err(e) = config.check_found(suites.len()) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let pretty = matches!(args.format, None | Some(FormatSetting::Pretty)) && !args.quiet;
    let mut plan = plan(&suites);
    if let Some(shard) = config.shard {
        plan.retain(|p| config::in_shard(&p.name, shard));
    }
    if args.list {
        let trials = plan
            .iter()
            .map(|p| Trial::test(p.name.clone(), || Ok(())))
            .collect();
        return libtest_mimic::run(&args, trials).exit_code();
    }
    let mut run = Run {
        regimes: Default::default(),
        workers: config
            .devices
            .iter()
            .map(|d| Mutex::new(Worker::new(*d)))
            .collect(),
        config,
        totals: Mutex::new(Totals::default()),
        progress: pretty && std::io::stderr().is_terminal(),
    };
    let start = Instant::now();
    let selected: Vec<usize> = (0..plan.len())
        .filter(|&i| !args.is_filtered_out(&Trial::test(plan[i].name.clone(), || Ok(()))))
        .collect();

    // Phase 1: run every selected trial, spread over the workers (one per GPU).
    if let Err(e) = same_kind_of_gpu(&run) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    run.regimes = baseline_regimes(&run, &suites);
    let mut outcomes = execute_all(&run, &suites, &plan, &selected);

    // Phase 2: judge against baselines; phase 3: bless.
    let any_measured = outcomes
        .iter()
        .any(|o| matches!(o, Some(Outcome::Measured(_))));
    let device = if any_measured {
        run.worker(0).device().ok()
    } else {
        None
    };
    let mut blessed = Vec::new();
    if let Some(info) = &device {
        verdicts::judge(&run, &suites, &plan, &mut outcomes, info);
        if run.config.bless {
            blessed = bless::bless(&run, &suites, &plan, &outcomes, info);
        }
    }
    for w in 0..run.workers.len() {
        run.worker(w).stop();
    }

    // Phase 4: settle every trial, write the reports; phase 5: show them through libtest.
    let settled: Vec<Option<Settled>> = plan
        .iter()
        .zip(&outcomes)
        .map(|(trial, o)| {
            o.as_ref()
                .map(|o| settle(&run, &suites, trial, o, device.as_ref()))
        })
        .collect();
    let records = records(&suites, &plan, &outcomes, &settled);
    let results = Results {
        format: results::FORMAT,
        kernelgate: env!("CARGO_PKG_VERSION").to_string(),
        date: crate::baseline::today(),
        device: device.as_ref().map(Fingerprint::of),
        device_info: device.clone(),
        trials: records,
    };
    let report_failed = !write_reports(&run.config, &results);
    let inline = pretty && args.test_threads == Some(1);
    let conclusion = libtest_mimic::run(&args, report_trials(&plan, &settled, inline));
    if pretty {
        for line in &blessed {
            println!("kernelgate: {line}");
        }
        let inconclusive: Vec<&str> = results
            .trials
            .iter()
            .filter(|r| {
                r.verdict
                    .is_some_and(|v| v.verdict == crate::gate::Verdict::Inconclusive)
            })
            .map(|r| r.name.as_str())
            .collect();
        if !inconclusive.is_empty() && !run.config.bless {
            println!(
                "kernelgate: WARNING: {} trial(s) INCONCLUSIVE even after re-measuring (they passed; KERNELGATE_STRICT=1 fails them): {}",
                inconclusive.len(),
                inconclusive.join(", ")
            );
        }
        summary(&run, start.elapsed().as_secs_f64());
    }
    let worst = settled
        .iter()
        .flatten()
        .filter_map(|s| s.result.as_ref().err().map(|(k, _)| *k))
        .max();
    match (worst, report_failed) {
        (Some(kind), _) => ExitCode::from(kind.exit_code()),
        (None, true) => ExitCode::from(EXIT_BAD_INPUT),
        (None, false) => conclusion.exit_code(),
    }
}

/// Runs the selected trials: in order with one GPU; with several, each worker takes the next
/// trial when its GPU is free, so no GPU ever runs two at once.
fn execute_all(
    run: &Run,
    suites: &[Suite],
    plan: &[Planned],
    selected: &[usize],
) -> Vec<Option<Outcome>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let slots: Vec<Mutex<Option<Outcome>>> = plan.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = |w: usize| loop {
        let n = next.fetch_add(1, Ordering::SeqCst);
        let Some(&i) = selected.get(n) else { break };
        let on = if run.workers.len() > 1 {
            format!(" on GPU {}", run.config.devices[w])
        } else {
            String::new()
        };
        run.progress(&format!(
            "[{}/{}] {}{on}",
            n + 1,
            selected.len(),
            plan[i].name
        ));
        let outcome = execute::execute(run, suites, &plan[i], 1, w);
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    };
    if run.workers.len() == 1 {
        work(0);
    } else {
        std::thread::scope(|scope| {
            for w in 0..run.workers.len() {
                let work = &work;
                scope.spawn(move || work(w));
            }
        });
    }
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// The regime of every stored baseline entry for this device (none without a GPU). Files that
/// cannot be read are skipped here; the gate reports them.
fn baseline_regimes(run: &Run, suites: &[Suite]) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    if crate::device::driver_missing().is_some() {
        return out;
    }
    let Ok(info) = run.worker(0).device() else {
        return out;
    };
    let fingerprint = Fingerprint::of(&info);
    for s in suites {
        if let Ok(Some(file)) = crate::baseline::load(&crate::baseline::path(
            &run.config.baselines,
            &fingerprint,
            &s.name,
        )) {
            out.extend(file.trials.into_iter().map(|(name, e)| (name, e.regime)));
        }
    }
    out
}

/// With several GPUs, all must share one fingerprint: baselines are per kind of GPU.
fn same_kind_of_gpu(run: &Run) -> Result<(), String> {
    if run.workers.len() < 2 || crate::device::driver_missing().is_some() {
        return Ok(());
    }
    let mut seen: Vec<(i32, Fingerprint)> = Vec::new();
    for w in 0..run.workers.len() {
        let mut worker = run.worker(w);
        if let Ok(info) = worker.device() {
            seen.push((worker.ordinal(), Fingerprint::of(&info)));
        }
    }
    match seen.iter().find(|(_, f)| *f != seen[0].1) {
        Some((d, f)) => Err(format!(
            "KERNELGATE_DEVICE lists GPUs of different kinds: {} is {}, {d} is {}; baselines are per kind of GPU, so run them separately",
            seen[0].0,
            seen[0].1.describe(),
            f.describe()
        )),
        None => Ok(()),
    }
}

/// Every trial, in list order: per suite, its compile trial, then each case's kernels.
fn plan(suites: &[Suite]) -> Vec<Planned> {
    let mut out = Vec::new();
    for (s, suite) in suites.iter().enumerate() {
        out.push(Planned {
            name: format!("{}::compile", suite.name),
            suite: s,
            kind: Kind::Compile,
        });
        for case in 0..suite.cases.len() {
            for kernel in 0..suite.kernels.len() {
                out.push(Planned {
                    name: suite.trial_name(case, kernel),
                    suite: s,
                    kind: Kind::Kernel { case, kernel },
                });
            }
        }
    }
    out
}
