//! `kernelgate calibrate [--reps N] [--out FILE.md] [--suites DIR]`: how far your own suites'
//! verdicts can be trusted, on a GPU ([`user`]): each kernel trial timed against itself as its
//! base (paired A/A) `--reps` times, each repetition in a fresh worker and decided as a paired
//! run decides (`gate::settle`): the false-alarm count, and the estimated smallest slowdown
//! detected ≥ 95% ([`bootstrap`]). The suites are the project's (`--suites` for others).
//!
//! The benchmark of kernelgate itself (accuracy beside CuPy and Nsight Compute, sensitivity to
//! planted slowdowns) is a lab tool, not the product: `kernelgate-lab calibrate` (`lab/`),
//! built on the [`decide`], [`measure`] and [`render`] parts here. Progress goes to stderr;
//! every failure is a message, never a panic.

mod args;
mod bootstrap;
pub mod decide;
pub mod error;
pub mod measure;
pub mod render;
mod user;

use crate::config::Config;
pub use args::Args;
use error::CalibrateError;
use std::process::ExitCode;

/// The `kernelgate calibrate` command.
pub fn calibrate(args: &Args) -> ExitCode {
    report(run(args), args.out.as_deref())
}

/// A calibration's end: the report printed (and written to `out`), exit 0; or why it failed,
/// exit 2. `kernelgate-lab calibrate` ends the same way.
pub fn report(made: Result<String, CalibrateError>, out: Option<&std::path::Path>) -> ExitCode {
    let written = made.and_then(|report| {
        print!("{report}");
        let Some(path) = out else { return Ok(()) };
        crate::baseline::write_atomically(path, report.as_bytes()).map_err(|reason| {
            CalibrateError::File {
                path: path.to_path_buf(),
                reason: reason.to_string(),
            }
        })?;
        eprintln!("calibrate: wrote {}", path.display());
        Ok(())
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::exit::bad_input(format!("calibration failed: {e}")),
    }
}

/// The report's header: the device, kernelgate and the date.
pub fn header(info: &crate::device::DeviceInfo) -> String {
    format!(
        "# kernelgate calibration\n\n{} (sm_{}{}, {} SMs, driver {}), kernelgate {}, {}\n\n",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.driver_release,
        env!("CARGO_PKG_VERSION"),
        crate::baseline::today()
    )
}

/// The first GPU of `KERNELGATE_DEVICE`, as its worker opens it.
pub fn device_info(config: &Config) -> Result<crate::device::DeviceInfo, CalibrateError> {
    use crate::runner::Executor;
    use crate::worker::client::NoDevice;
    if let Some(reason) = crate::device::driver_missing() {
        return Err(CalibrateError::NoGpu(reason));
    }
    let ordinal = *config.devices.first().unwrap_or(&0);
    let pool = crate::worker::pool::WorkerPool::new(config, &[], &[]);
    let info = pool.first_device().map_err(|e| CalibrateError::Device {
        ordinal,
        reason: match e {
            NoDevice::Absent(r) | NoDevice::Broken(r) => r,
        },
    });
    pool.stop();
    info
}

fn run(args: &Args) -> Result<String, CalibrateError> {
    crate::project::enter();
    let config = Config::from_env().map_err(CalibrateError::Config)?;
    let dir = args.suites.clone().unwrap_or_else(|| config.suites.clone());
    let suites = crate::suite::load_dir(&dir).map_err(|e| CalibrateError::Suite(e.to_string()))?;
    let info = device_info(&config)?;
    eprintln!(
        "calibrate: {} suites from {}, {} repetitions",
        suites.len(),
        dir.display(),
        args.reps
    );
    let rows = user::calibrate(&suites, &config, args.reps)?;
    Ok(header(&info) + &render::trials(&rows, args.reps))
}
