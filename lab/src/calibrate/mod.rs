//! `kernelgate-lab calibrate`: the benchmark that shows kernelgate's numbers can be trusted,
//! run on a GPU (`kernelgate-lab calibrate [--reps N] [--out FILE.md] [--durations LIST]`). It
//! prints one Markdown document (see docs/calibration.md):
//!
//! - the device and date;
//! - **accuracy** ([`accuracy`]): kernelgate's median beside CuPy events and Nsight Compute;
//! - **sensitivity** in stored and in paired mode ([`sensitivity`]): `spin` kernels of several
//!   durations made 0 (A/A), 1, 2, 3 and 5% slower, each repetition in a fresh worker with the
//!   regime pinned, judged at `max_slowdown` 0.5, 1 and 2% from the same samples, through the
//!   gate's own policy (re-measure and fresh-worker confirmation, as a run);
//! - the **cost** of a verdict in each mode.
//!
//! Progress goes to stderr; every failure is a message, never a panic. A user's own suites are
//! calibrated by the product, `kernelgate calibrate`.

mod accuracy;
mod args;
mod render;
mod sensitivity;
mod spin;

pub use args::Args;
use kernelgate::cli::calibrate::error::CalibrateError;
use kernelgate::cli::calibrate::measure::{ask, measure};
use kernelgate::cli::calibrate::{device_info, header, report};
use kernelgate::config::Config;
use kernelgate::report::duration;
use kernelgate::runner::Executor;
use kernelgate::worker::pool::WorkerPool;
use sensitivity::{Mode, Subject, LEVELS, THRESHOLDS};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `kernelgate-lab calibrate` command.
pub fn calibrate(args: &Args) -> ExitCode {
    report(run(args), args.out.as_deref())
}

/// A scratch folder holding `spin.cu`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    /// A fresh folder under the system's temporary one, with the calibration kernel in it.
    fn new() -> Result<Scratch, CalibrateError> {
        let scratch = Scratch(
            std::env::temp_dir().join(format!("kernelgate-calibrate-{}", std::process::id())),
        );
        let io = |path: &Path, e: std::io::Error| CalibrateError::File {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(&scratch.0).map_err(|e| io(&scratch.0, e))?;
        let cu = scratch.0.join("spin.cu");
        std::fs::write(&cu, spin::SOURCE).map_err(|e| io(&cu, e))?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &Args) -> Result<String, CalibrateError> {
    let config = Config::from_env().map_err(CalibrateError::Config)?;
    let info = device_info(&config)?;
    let mut t = header(&info);
    let scratch = Scratch::new()?;
    let dir = &scratch.0;
    eprintln!("calibrate: pilot on {}", info.name);
    let per_iteration = pilot(&config, dir)?;
    t.push_str(&accuracy(&config, dir, per_iteration)?);
    let subjects = subjects(&config, dir, &args.durations.0, per_iteration)?;
    let kernels: Vec<render::Kernel> = subjects.iter().map(|s| s.kernel.clone()).collect();
    let stored = sensitivity::sweep(&subjects, &config, args.reps, Mode::Stored);
    let paired = sensitivity::sweep(&subjects, &config, args.reps, Mode::Paired);
    for mode in [&stored, &paired] {
        t.push('\n');
        t.push_str(&render::sensitivity(mode, &kernels, &LEVELS, &THRESHOLDS));
    }
    t.push('\n');
    t.push_str(&render::cost(&stored.cost, &paired.cost));
    Ok(t)
}

/// The samples of kernel 0, case `case` of `pool`'s suite 0 (`suite`), timed alone.
fn samples_alone(
    pool: &WorkerPool,
    suite: &kernelgate::suite::Suite,
    case: usize,
    what: &str,
) -> Result<kernelgate::measure::Samples, CalibrateError> {
    let spec = ask(0, case, 0, suite.check.seed, None, None, 1);
    Ok(measure(pool, &spec, what)?.0.samples)
}

/// The pilot: time per iteration of `spin` on this device, to size every other kernel.
fn pilot(config: &Config, dir: &Path) -> Result<f64, CalibrateError> {
    const PILOT_ITERS: i64 = 100_000;
    let pilot = [spin::load(dir, "pilot", &[PILOT_ITERS], &[0])?];
    let pool = WorkerPool::new(config, &pilot, &[]);
    let samples = samples_alone(&pool, &pilot[0], 0, "pilot")?;
    Ok(samples.kernel_summary().map_or(f64::NAN, |s| s.median) / PILOT_ITERS as f64)
}

/// Accuracy: kernelgate's median of `spin` kernels sized for each of `accuracy::TARGETS`,
/// beside CuPy's and Nsight Compute's, as a Markdown table.
fn accuracy(config: &Config, dir: &Path, per_iteration: f64) -> Result<String, CalibrateError> {
    let iters: Vec<i64> = accuracy::TARGETS
        .iter()
        .map(|t| spin::iterations_for(*t, per_iteration))
        .collect();
    let acc = [spin::load(dir, "accuracy", &iters, &[0])?];
    let pool = WorkerPool::new(config, &acc, &[]);
    let mut rows = Vec::new();
    for (case, n) in iters.iter().enumerate() {
        eprintln!("calibrate: accuracy, {n} iterations");
        // On an error the pool is dropped, which stops its worker.
        let samples = samples_alone(&pool, &acc[0], case, "accuracy")?;
        rows.push(accuracy::Row {
            iters: *n,
            ours: samples.kernel_summary().map_or(f64::NAN, |s| s.median),
            regime: samples.regime,
            cupy: None,
            ncu: None,
        });
    }
    pool.stop();
    eprintln!("calibrate: independent timers (CuPy, ncu)");
    let (cupy, ncu) = accuracy::reference_times(dir, &iters);
    for (k, row) in rows.iter_mut().enumerate() {
        row.cupy = cupy.as_ref().and_then(|v| v.get(k).copied());
        row.ncu = ncu.as_ref().and_then(|v| v.get(k).copied());
    }
    Ok(accuracy::table(&rows))
}

/// Sensitivity's subjects: a `spin` suite per duration (cases: the levels), each one's
/// baseline measured in one worker; its regime is pinned from then on.
fn subjects(
    config: &Config,
    dir: &Path,
    durations: &[f64],
    per_iteration: f64,
) -> Result<Vec<Subject>, CalibrateError> {
    let mut suites = Vec::new();
    for (d, target) in durations.iter().enumerate() {
        let n = spin::iterations_for(*target, per_iteration);
        let name = format!("sensitivity{d}");
        suites.push((n, spin::load(dir, &name, &[n], &LEVELS)?));
    }
    let loaded: Vec<kernelgate::suite::Suite> = suites.iter().map(|(_, s)| s.clone()).collect();
    let pool = WorkerPool::new(config, &loaded, &[]);
    let mut subjects = Vec::new();
    for (d, ((n, suite), target)) in suites.into_iter().zip(durations).enumerate() {
        eprintln!(
            "calibrate: stored baseline of the ~{} kernel ({n} iterations)",
            duration(*target)
        );
        // Blessed as a run blesses: on its allocations, each one of the baseline's runs.
        let spec = kernelgate::runner::TrialSpec {
            units: kernelgate::runner::units(kernelgate::config::Mode::Bless, 1),
            ..ask(d, 0, 0, suite.check.seed, None, None, 1)
        };
        let what = format!("baseline of ~{}", duration(*target));
        let samples = measure(&pool, &spec, &what)?.0.samples;
        subjects.push(Subject {
            spread: kernelgate::baseline::spread(samples.units.iter().map(|u| u.kernel_median)),
            kernel: render::Kernel {
                target: *target,
                median: samples.kernel_summary().map_or(f64::NAN, |s| s.median),
                regime: samples.regime,
            },
            baseline: samples,
            suite,
        });
    }
    pool.stop();
    Ok(subjects)
}
