//! `calibrate`: the benchmark that shows kernelgate's numbers can be trusted, run on a GPU
//! (`kernelgate calibrate [--reps N] [--out FILE.md] [--suites DIR] [--durations LIST]`). It
//! prints one Markdown document (see docs/calibration.md):
//!
//! - the device and date;
//! - **accuracy** ([`accuracy`]): kernelgate's median beside CuPy events and Nsight Compute;
//! - **sensitivity** in stored and in paired mode ([`sensitivity`]): `spin` kernels of several
//!   durations made 0 (A/A), 1, 2, 3 and 5% slower, each repetition in a fresh worker with the
//!   regime pinned, judged at `max_slowdown` 0.5, 1 and 2% from the same samples;
//! - the **cost** of a verdict in each mode.
//!
//! With `--suites DIR` it calibrates the user's suites instead ([`user`]): per kernel trial,
//! the paired A/A false-alarm rate and the estimated smallest slowdown detected ≥ 95%.
//! Progress goes to stderr; every failure is a message, never a panic.

mod accuracy;
mod bootstrap;
mod decide;
mod error;
mod render;
mod sensitivity;
mod spin;
mod user;

use crate::config::Config;
use crate::report::duration;
use crate::runner::Executor;
use crate::worker::client::NoDevice;
use crate::worker::pool::WorkerPool;
use error::CalibrateError;
use sensitivity::{Repeat, Subject, LEVELS};
use spin::{ask, measure};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Sensitivity kernel durations by default: graph regime, near the regime boundary, cold.
const DURATIONS: [f64; 4] = [5e-6, 20e-6, 100e-6, 1e-3];

/// The command line, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Repetitions per level (and per A/A trial with `--suites`).
    pub reps: usize,
    /// Where to write the report too.
    pub out: Option<PathBuf>,
    /// The user's suites folder.
    pub suites: Option<PathBuf>,
    /// Sensitivity kernel durations, seconds.
    pub durations: Vec<f64>,
}

/// Parses `5us`, `20µs`, `1ms`, `500ns`, `0.001s` as seconds.
fn parse_duration(text: &str) -> Option<f64> {
    let t = text.trim();
    // Divided, not multiplied: `20.0 / 1e6` is exactly the literal `20e-6`.
    let (number, per_second) = [
        ("ns", 1e9),
        ("us", 1e6),
        ("µs", 1e6),
        ("ms", 1e3),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(unit, per)| t.strip_suffix(unit).map(|n| (n, *per)))?;
    let seconds = number.trim().parse::<f64>().ok()? / per_second;
    (seconds.is_finite() && seconds > 0.0 && seconds <= 1.0).then_some(seconds)
}

/// Parses the arguments after `calibrate`.
pub fn parse_args(args: &[String]) -> Result<Args, CalibrateError> {
    let mut parsed = Args {
        reps: 20,
        out: None,
        suites: None,
        durations: DURATIONS.to_vec(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| CalibrateError::Usage(format!("`{a}` needs a value")))
        };
        match a.as_str() {
            "--reps" => {
                let v = value()?;
                parsed.reps = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    CalibrateError::Usage(format!("--reps `{v}` is not a positive count"))
                })?;
            }
            "--out" => parsed.out = Some(value()?.into()),
            "--suites" => parsed.suites = Some(value()?.into()),
            "--durations" => {
                let v = value()?;
                parsed.durations = v
                    .split(',')
                    .map(|d| {
                        parse_duration(d).ok_or_else(|| {
                            CalibrateError::Usage(format!(
                                "--durations: `{d}` is not a duration up to 1 s such as 5us or 1ms"
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(CalibrateError::Usage(format!("unknown argument `{a}`"))),
        }
    }
    Ok(parsed)
}

/// The `kernelgate calibrate` command.
pub fn calibrate(args: &[String]) -> ExitCode {
    let result = parse_args(args).and_then(|args| {
        let report = run(&args)?;
        print!("{report}");
        if let Some(path) = &args.out {
            crate::baseline::write_atomically(path, report.as_bytes()).map_err(|reason| {
                CalibrateError::File {
                    path: path.clone(),
                    reason: reason.to_string(),
                }
            })?;
            eprintln!("calibrate: wrote {}", path.display());
        }
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: calibration failed: {e}");
            ExitCode::from(crate::exit::BAD_INPUT)
        }
    }
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
    if let Some(reason) = crate::device::driver_missing() {
        return Err(CalibrateError::NoGpu(reason));
    }
    let config = Config::from_env().map_err(CalibrateError::Config)?;
    let info = device_info(&config)?;
    let repeat = Repeat {
        config: &config,
        reps: args.reps,
    };
    let mut t = format!(
        "# kernelgate calibration\n\n{} (sm_{}{}, {} SMs, driver {}), kernelgate {}, {}\n\n",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.driver_release,
        env!("CARGO_PKG_VERSION"),
        crate::baseline::today()
    );
    if let Some(dir) = &args.suites {
        let suites =
            crate::suite::load_dir(dir).map_err(|e| CalibrateError::Suite(e.to_string()))?;
        eprintln!(
            "calibrate: {} suites from {}, {} repetitions",
            suites.len(),
            dir.display(),
            args.reps
        );
        let rows = user::calibrate(&suites, config.seed, &repeat)?;
        t.push_str(&render::trials(&rows, args.reps));
        return Ok(t);
    }
    let scratch = Scratch::new()?;
    let dir = &scratch.0;
    eprintln!("calibrate: pilot on {}", info.name);
    let per_iteration = pilot(&config, dir)?;
    t.push_str(&accuracy(&config, dir, per_iteration)?);
    let subjects = subjects(&config, dir, &args.durations, per_iteration)?;
    let kernels: Vec<render::Kernel> = subjects.iter().map(|s| s.kernel.clone()).collect();
    let stored = sensitivity::stored(&subjects, &repeat);
    let paired = sensitivity::paired(&subjects, &repeat);
    for mode in [&stored, &paired] {
        t.push('\n');
        t.push_str(&render::sensitivity(
            mode,
            &kernels,
            &LEVELS,
            &decide::THRESHOLDS,
        ));
    }
    t.push('\n');
    t.push_str(&render::cost(&stored.cost, &paired.cost));
    Ok(t)
}

/// The first GPU of `KERNELGATE_DEVICE`, as its worker opens it.
fn device_info(config: &Config) -> Result<crate::device::DeviceInfo, CalibrateError> {
    let ordinal = *config.devices.first().unwrap_or(&0);
    let pool = WorkerPool::new(config, &[], &[]);
    let info = pool.first_device().map_err(|e| CalibrateError::Device {
        ordinal,
        reason: match e {
            NoDevice::Absent(r) | NoDevice::Broken(r) => r,
        },
    });
    pool.stop();
    info
}

/// The samples of kernel 0, case `case` of `pool`'s suite 0 (`suite`), timed alone.
fn samples_alone(
    pool: &WorkerPool,
    suite: &crate::suite::Suite,
    case: usize,
    what: &str,
) -> Result<crate::measure::Samples, CalibrateError> {
    let spec = ask(0, (case, 0), suite.check.seed, None, None, 1);
    Ok(measure(pool, &spec, what)?.0.samples)
}

/// The pilot: time per iteration of `spin` on this device, to size every other kernel.
fn pilot(config: &Config, dir: &Path) -> Result<f64, CalibrateError> {
    const PILOT_ITERS: i64 = 100_000;
    let text = spin::suite_text("pilot", &[PILOT_ITERS], &[0], "2%");
    let pilot = [spin::load(dir, "pilot", &text)?];
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
    let text = spin::suite_text("accuracy", &iters, &[0], "2%");
    let acc = [spin::load(dir, "accuracy", &text)?];
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
        suites.push((
            n,
            spin::load(dir, &name, &spin::suite_text(&name, &[n], &LEVELS, "2%"))?,
        ));
    }
    let loaded: Vec<crate::suite::Suite> = suites.iter().map(|(_, s)| s.clone()).collect();
    let pool = WorkerPool::new(config, &loaded, &[]);
    let mut subjects = Vec::new();
    for (d, ((n, suite), target)) in suites.into_iter().zip(durations).enumerate() {
        eprintln!(
            "calibrate: stored baseline of the ~{} kernel ({n} iterations)",
            duration(*target)
        );
        let spec = ask(d, (0, 0), suite.check.seed, None, None, 1);
        let what = format!("baseline of ~{}", duration(*target));
        let samples = measure(&pool, &spec, &what)?.0.samples;
        subjects.push(Subject {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, CalibrateError> {
        parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = args(&[]).unwrap();
        assert_eq!((a.reps, a.out, a.suites), (20, None, None));
        assert_eq!(a.durations, DURATIONS);
        let a = args(&[
            "--reps",
            "5",
            "--out",
            "c.md",
            "--suites",
            "suites",
            "--durations",
            "5us,1ms",
        ])
        .unwrap();
        assert_eq!(a.reps, 5);
        assert_eq!(a.out, Some(PathBuf::from("c.md")));
        assert_eq!(a.suites, Some(PathBuf::from("suites")));
        assert_eq!(a.durations, [5e-6, 1e-3]);
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let msg = |v: &[&str]| args(v).unwrap_err().to_string();
        assert_eq!(msg(&["--reps", "0"]), "--reps `0` is not a positive count (usage: kernelgate calibrate [--reps N] [--out FILE.md] [--suites DIR] [--durations 5us,20us,100us,1ms])");
        assert!(msg(&["--reps"]).starts_with("`--reps` needs a value"));
        assert!(msg(&["--frob"]).starts_with("unknown argument `--frob`"));
        assert!(
            msg(&["--durations", "5us,fast"]).starts_with("--durations: `fast` is not a duration")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5us"), Some(5e-6));
        assert_eq!(parse_duration("20µs"), Some(20e-6));
        assert_eq!(parse_duration(" 1ms "), Some(1e-3));
        assert_eq!(parse_duration("500ns"), Some(500e-9));
        assert_eq!(parse_duration("0.5s"), Some(0.5));
        assert_eq!(
            parse_duration("2s"),
            None,
            "longer than a second is not a kernel to spin"
        );
        assert_eq!(parse_duration("-1us"), None);
        assert_eq!(parse_duration("5"), None, "a unit is required");
    }
}
