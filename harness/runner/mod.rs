//! `run`: turns suites into libtest-mimic trials and runs them, in phases. Suites are all
//! loaded and validated first; then every selected trial runs (GPU work one trial at a time in
//! the worker process); then the gate decides all of them together (its false-discovery-rate
//! correction needs every p-value), re-measuring inconclusive ones; then baselines are blessed
//! and the results file written; last, libtest reports each trial's outcome on its line.

mod bless;
pub mod calibrate;
mod execute;
pub mod lint;
mod verdicts;

use crate::baseline::{Entry, Fingerprint, Stored};
use crate::config::{self, Config};
use crate::device::DeviceInfo;
use crate::gate::TrialVerdict;
use crate::measure::{Footprint, Samples};
use crate::report::results::{self, FailKind, Measurement, Results, Status, TrialRecord};
use crate::report::TrialLine;
use crate::suite::{self, Suite};
use crate::worker::client::{Worker, WORKER_ENV};
use libtest_mimic::{Arguments, Completion, Failed, FormatSetting, Trial};
use std::io::{IsTerminal, Write};
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

/// Writes the results file, JUnit XML and Markdown summary asked for, and prints GitHub
/// annotations; false when a file could not be written (each problem is printed).
fn write_reports(config: &Config, results: &Results) -> bool {
    use crate::report::{annotations, junit, markdown};
    let mut ok = true;
    let mut check = |what: &str, r: Result<(), String>| {
        if let Err(e) = r {
            eprintln!("error: cannot write the {what}: {e}");
            ok = false;
        }
    };
    if let Some(path) = &config.results {
        check("results file", results.save(path));
    }
    if let Some(path) = &config.junit {
        check(
            "JUnit report",
            crate::baseline::write_atomically(path, junit::render(results).as_bytes()),
        );
    }
    let summary = (config.markdown.is_some() || config.step_summary.is_some())
        .then(|| markdown::render(results));
    if let (Some(path), Some(text)) = (&config.markdown, &summary) {
        check(
            "Markdown summary",
            crate::baseline::write_atomically(path, text.as_bytes()),
        );
    }
    if let (Some(path), Some(text)) = (&config.step_summary, &summary) {
        use std::io::Write as _;
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("`{}`: {e}", path.display()));
        check("GitHub step summary", appended);
    }
    if config.annotations {
        for line in annotations::render(results) {
            println!("{line}");
        }
    }
    ok
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

/// What a trial's line says, and how it ended.
struct Settled {
    line: String,
    /// `Ok(None)` passed, `Ok(Some(reason))` ignored, `Err` failed.
    result: Result<Option<String>, (FailKind, String)>,
}

/// The commands that re-run one failing trial, and profile its kernel with Nsight Compute.
fn reproduce(name: &str, suite: &Suite, trial: &Planned) -> String {
    let mut out = format!("\n  rerun:   cargo test --test perf -- --exact '{name}'");
    if let Some((_, kernel)) = trial.case_kernel() {
        let entries = &suite.kernels[kernel].entries;
        let names: Vec<&str> = entries
            .iter()
            .map(|e| e.split('<').next().unwrap_or(e))
            .collect();
        out.push_str(&format!(
            "\n  profile: KERNELGATE_TIMEOUT=600 ncu --target-processes all -k regex:'^({})' -c {} cargo test --test perf -- --exact '{name}'",
            names.join("|"),
            entries.len()
        ));
    }
    out
}

fn settle(
    run: &Run,
    suites: &[Suite],
    trial: &Planned,
    outcome: &Outcome,
    device: Option<&DeviceInfo>,
) -> Settled {
    let suite = &suites[trial.suite];
    let fail = |kind: FailKind, message: &str| {
        let mut message = format!("{message}{}", reproduce(&trial.name, suite, trial));
        if kind == FailKind::Performance {
            message.push_str(&format!(
                "\n  rebless: KERNELGATE_BLESS=1 cargo test --test perf -- --exact '{}'",
                trial.name
            ));
        }
        Err((kind, message))
    };
    match outcome {
        Outcome::Compiled(line) => Settled {
            line: line.clone(),
            result: Ok(None),
        },
        Outcome::Ignored(reason) => Settled {
            line: String::new(),
            result: Ok(Some(reason.clone())),
        },
        Outcome::Failed(kind, m) => Settled {
            line: String::new(),
            result: fail(*kind, m),
        },
        Outcome::Measured(m) => {
            let (case, kernel) = trial.case_kernel().expect("kernel trials are measured");
            let mut line = match device {
                Some(info) => TrialLine {
                    samples: &m.samples,
                    case: &suite.cases[case],
                    reference: (kernel != suite.reference)
                        .then(|| suite.kernels[suite.reference].name.as_str()),
                    device: info,
                }
                .to_string(),
                None => String::new(),
            };
            line.push_str("  │ ");
            line.push_str(&crate::report::footprint(&m.footprint));
            if let Some(changed) = verdicts::resource_changes(&m.footprint, m.baseline.as_deref()) {
                line.push_str(&format!(" (since the baseline: {changed})"));
            }
            let note = if run.config.bless {
                "blessed".to_string()
            } else {
                verdicts::note(&m.gate)
            };
            if !note.is_empty() {
                line.push_str("  │ ");
                line.push_str(&note);
            }
            let result = match failures(run, suite, kernel, m) {
                Some((kind, message)) => fail(kind, &message),
                None => Ok(None),
            };
            Settled { line, result }
        }
    }
}

fn report_trials(plan: &[Planned], settled: &[Option<Settled>], inline: bool) -> Vec<Trial> {
    plan.iter()
        .zip(settled)
        .map(|(trial, settled)| {
            let settled = settled.as_ref().map(|s| (s.line.clone(), s.result.clone()));
            Trial::ignorable_test(trial.name.clone(), move || {
                let Some((line, result)) = settled else {
                    return Ok(Completion::Completed);
                };
                if inline && !line.is_empty() {
                    let mut out = std::io::stdout().lock();
                    let _ = write!(out, "{line}  ");
                    let _ = out.flush();
                }
                match result {
                    Ok(None) => Ok(Completion::Completed),
                    Ok(Some(reason)) => Ok(Completion::ignored_with(reason)),
                    Err((_, m)) => Err(Failed::from(m)),
                }
            })
        })
        .collect()
}

/// The results-file record of each selected trial.
fn records(
    suites: &[Suite],
    plan: &[Planned],
    outcomes: &[Option<Outcome>],
    settled: &[Option<Settled>],
) -> Vec<TrialRecord> {
    let mut out = Vec::new();
    for ((trial, outcome), settled) in plan.iter().zip(outcomes).zip(settled) {
        let (Some(outcome), Some(settled)) = (outcome, settled) else {
            continue;
        };
        let suite = &suites[trial.suite];
        let line = trial
            .case_kernel()
            .and_then(|(_, k)| suite.kernel_lines.get(k).copied())
            .unwrap_or(1);
        let (status, failure, message) = match (&settled.result, outcome) {
            (Err((kind, m)), _) => (Status::Failed, Some(*kind), Some(m.clone())),
            (Ok(_), Outcome::Ignored(reason)) => (Status::Ignored, None, Some(reason.clone())),
            (Ok(_), Outcome::Measured(m)) => (
                Status::Passed,
                None,
                Some(verdicts::note(&m.gate)).filter(|n| !n.is_empty()),
            ),
            (Ok(_), _) => (
                Status::Passed,
                None,
                Some(settled.line.clone()).filter(|l| !l.is_empty()),
            ),
        };
        let (measurement, verdict, device_ordinal) = match outcome {
            Outcome::Measured(m) => {
                let measurement = m.samples.kernel_summary().map(|time| Measurement {
                    regime: m.samples.regime.clone(),
                    batch: m.samples.batch,
                    launch_floor: m.samples.launch_floor,
                    time: Stored::from(time),
                    time_samples: m.samples.kernel.clone(),
                    speedup: m.samples.speedup().map(Stored::from),
                    speedup_samples: m.samples.ratios(),
                    max_slowdown: suite.bench.max_slowdown,
                    hit_time_cap: m.samples.hit_time_cap,
                    footprint: m.footprint.clone(),
                    clocks: m.samples.clocks.clone(),
                });
                let verdict = match &m.gate {
                    GateNote::Compared { verdict, .. } => Some(*verdict),
                    _ => None,
                };
                (measurement, verdict, Some(m.ordinal))
            }
            _ => (None, None, None),
        };
        out.push(TrialRecord {
            name: trial.name.clone(),
            suite: suite.name.clone(),
            file: suite.path.display().to_string(),
            line,
            status,
            failure,
            device_ordinal,
            message,
            measurement,
            verdict,
        });
    }
    out
}

/// Everything that fails a measured trial: the gate's verdict, its limits, memory growth. The
/// kind is the worst of them.
fn failures(run: &Run, suite: &Suite, kernel: usize, m: &Measured) -> Option<(FailKind, String)> {
    let mut out: Vec<(FailKind, String)> = Vec::new();
    out.extend(verdicts::failure(run, suite, &m.samples, &m.gate));
    for f in verdicts::limit_failures(suite, kernel, &m.footprint) {
        out.push((FailKind::Performance, f));
    }
    if !run.config.bless {
        for f in verdicts::memory_growth(suite, &m.footprint, m.baseline.as_deref()) {
            out.push((FailKind::Performance, f));
        }
    }
    let kind = out.iter().map(|(k, _)| *k).max()?;
    Some((
        kind,
        out.into_iter()
            .map(|(_, m)| m)
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

fn summary(run: &Run, wall: f64) {
    let t = run.totals();
    let (compiled, cached) = (
        crate::device::compile::counts().0 + t.compiled,
        crate::device::compile::counts().1 + t.cached,
    );
    let starts: usize = (0..run.workers.len()).map(|w| run.worker(w).starts).sum();
    println!(
        "kernelgate: {} trial(s) measured in {wall:.1} s of wall time: setup {:.1} s, correctness {:.1} s, sampling {:.1} s (kernel time in samples {:.3} s)",
        t.trials_measured, t.setup_seconds, t.check_seconds, t.sampled_seconds, t.kernel_seconds
    );
    println!("kernelgate: NVRTC {compiled} compiled, {cached} from cache; GPU worker started {starts} time(s)");
    if let Some(s) = crate::stats::Summary::of(&t.clock_mhz) {
        println!(
            "kernelgate: SM clock while sampling {:.0} / {:.0} / {:.0} MHz (min / median / max); {} round(s) dropped as throttled; {} trial(s) unreliable",
            s.min, s.median, s.max, t.dropped_rounds, t.unreliable
        );
    }
    if let Some(s) = crate::stats::Summary::of(&t.celsius) {
        println!("kernelgate: GPU temperature while sampling {:.0} / {:.0} / {:.0} °C (min / median / max)", s.min, s.median, s.max);
    }
    if let Some(floor) = t.launch_floor {
        println!(
            "kernelgate: launch floor (event-timed empty kernel) {}; {} trial(s) under {}x it timed as CUDA-graph replays",
            crate::report::duration(floor),
            t.batched,
            crate::measure::FLOOR_FACTOR
        );
    }
}
