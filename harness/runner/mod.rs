//! `main`: turns suites into libtest-mimic trials and runs them. Suites are all loaded and
//! validated before anything runs; GPU work goes to one worker process at a time, so GPU
//! trials never overlap.

use crate::config::Config;
use crate::device::{self, compile};
use crate::report::TrialLine;
use crate::suite::{self, Suite};
use crate::worker::client::{NoDevice, Worker, WORKER_ENV};
use crate::worker::protocol::TrialRequest;
use libtest_mimic::{Arguments, Completion, Failed, FormatSetting, Trial};
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Exit code for an unusable setup: bad suite files or bad `KERNELGATE_*` variables.
pub const EXIT_BAD_INPUT: u8 = 2;

/// What the trials of one run share.
struct Run {
    config: Config,
    worker: Mutex<Worker>,
    totals: Mutex<Totals>,
    /// Print measurements on the trial's own line (pretty output, one thread).
    inline: bool,
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
    // GPU trials must not overlap, and one thread keeps each trial's figures on its own line.
    args.test_threads.get_or_insert(1);
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
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
    let run = Arc::new(Run {
        worker: Mutex::new(Worker::new(config.device)),
        config,
        totals: Mutex::new(Totals::default()),
        inline: pretty && args.test_threads == Some(1),
    });
    let trials = trials(&run, suites);
    let start = Instant::now();
    let conclusion = libtest_mimic::run(&args, trials);
    if pretty && !args.list {
        summary(&run, start.elapsed().as_secs_f64());
    }
    conclusion.exit_code()
}

fn summary(run: &Run, wall: f64) {
    let t = run.totals.lock().unwrap_or_else(|e| e.into_inner());
    let (compiled, cached) = (
        compile::counts().0 + t.compiled,
        compile::counts().1 + t.cached,
    );
    let starts = run.worker.lock().map(|w| w.starts).unwrap_or(0);
    println!(
        "kernelgate: {} trial(s) measured in {wall:.1} s of wall time: setup {:.1} s, correctness {:.1} s, sampling {:.1} s (kernel time in samples {:.3} s)",
        t.trials_measured, t.setup_seconds, t.check_seconds, t.sampled_seconds, t.kernel_seconds
    );
    println!("kernelgate: NVRTC {compiled} compiled, {cached} from cache; GPU worker started {starts} time(s)");
}

fn trials(run: &Arc<Run>, suites: Vec<Suite>) -> Vec<Trial> {
    let mut out = Vec::new();
    for suite in suites {
        let suite = Arc::new(suite);
        {
            let (run, suite) = (run.clone(), suite.clone());
            out.push(Trial::ignorable_test(
                format!("{}::compile", suite.name),
                move || compile_trial(&run, &suite),
            ));
        }
        for case in 0..suite.cases.len() {
            for kernel in 0..suite.kernels.len() {
                let (run, suite2) = (run.clone(), suite.clone());
                out.push(Trial::ignorable_test(
                    suite.trial_name(case, kernel),
                    move || gpu_trial(&run, &suite2, case, kernel),
                ));
            }
        }
    }
    out
}

fn say(run: &Run, text: &str) {
    if run.inline {
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{text}  ");
        let _ = out.flush();
    }
}

/// Compiles every kernel of a suite: with a GPU for its architecture, without one for
/// `KERNELGATE_ARCH`, so compile errors fail CI machines that have NVRTC but no GPU.
fn compile_trial(run: &Run, suite: &Suite) -> Result<Completion, Failed> {
    if let Some(reason) = device::nvrtc_missing() {
        if run.config.require_nvrtc {
            return Err(format!("{reason} (KERNELGATE_REQUIRE_NVRTC is set)").into());
        }
        return Ok(Completion::ignored_with(reason));
    }
    let arch = match device::driver_missing() {
        None => run
            .worker
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .device()
            .map(|d| d.arch())
            .unwrap_or_else(|_| run.config.arch.clone()),
        Some(_) => run.config.arch.clone(),
    };
    let compiled = crate::worker::compile_suite(suite, &arch, Some(&run.config.cache))?;
    let fresh = compiled.iter().filter(|(_, c)| !c.cached).count();
    let warnings: Vec<String> = compiled
        .iter()
        .filter(|(_, c)| !c.log.is_empty())
        .map(|(si, c)| format!("{}: {}", suite.sources[*si].path.display(), c.log))
        .collect();
    say(
        run,
        &format!(
            "{} source(s) for {arch}, {} compiled, {} from cache",
            compiled.len(),
            fresh,
            compiled.len() - fresh
        ),
    );
    for w in warnings {
        eprintln!("warning: NVRTC said, for suite `{}`: {w}", suite.name);
    }
    Ok(Completion::Completed)
}

fn gpu_trial(run: &Run, suite: &Suite, case: usize, kernel: usize) -> Result<Completion, Failed> {
    let no_gpu = |reason: String| {
        if run.config.require_gpu {
            Err(Failed::from(format!(
                "{reason} (KERNELGATE_REQUIRE_GPU is set)"
            )))
        } else {
            Ok(Completion::ignored_with(reason))
        }
    };
    if let Some(reason) = device::driver_missing() {
        return no_gpu(reason);
    }
    let mut worker = run.worker.lock().unwrap_or_else(|e| e.into_inner());
    let info = match worker.device() {
        Ok(info) => info,
        Err(NoDevice::Absent(reason)) => return no_gpu(format!("no usable GPU: {reason}")),
        Err(NoDevice::Broken(reason)) => return Err(reason.into()),
    };
    let request = TrialRequest {
        suite: suite.clone(),
        case,
        kernel,
        seed: run.config.seed.unwrap_or(suite.check.seed),
    };
    let result = worker.trial(request, run.config.timeout)?;
    drop(worker);
    {
        let mut t = run.totals.lock().unwrap_or_else(|e| e.into_inner());
        t.compiled += result.compiled;
        t.cached += result.cached;
        t.setup_seconds += result.setup_seconds;
        t.check_seconds += result.check_seconds;
    }
    let samples = result.outcome.map_err(|m| {
        let line = suite.kernel_lines.get(kernel).copied().unwrap_or(1);
        Failed::from(format!(
            "{m}\n  kernel declared at {}:{line}",
            suite.path.display()
        ))
    })?;
    {
        let mut t = run.totals.lock().unwrap_or_else(|e| e.into_inner());
        t.trials_measured += 1;
        t.sampled_seconds += samples.wall_seconds;
        t.kernel_seconds +=
            samples.kernel.iter().sum::<f64>() + samples.reference.iter().sum::<f64>();
    }
    let reference =
        (kernel != suite.reference).then(|| suite.kernels[suite.reference].name.as_str());
    let line = TrialLine {
        samples: &samples,
        case: &suite.cases[case],
        reference,
        device: &info,
    };
    say(run, &line.to_string());
    Ok(Completion::Completed)
}
