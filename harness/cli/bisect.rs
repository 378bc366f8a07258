//! `bisect`: `kernelgate bisect GOOD BAD TRIAL` — the first commit after GOOD, up to BAD along
//! first parents, at which TRIAL regressed against GOOD (`crate::bisect`): each probed commit is
//! timed in paired mode against GOOD in one worker process; commits whose trial identity is
//! known already are decided without timing; broken or inconclusive ones are skipped. Prints
//! the commit, its change with its interval, and its SASS diff against its parent.

use crate::bisect::{bisect, GpuProbe, Repo, Report, Stopped};
use crate::config::{Config, Mode};
use crate::exit;
use std::io::IsTerminal;
use std::process::ExitCode;

/// What `kernelgate bisect` was asked: good, bad, the trial.
#[derive(Debug, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// The revision at which the trial was good
    #[arg(value_name = "GOOD")]
    good: String,
    /// The revision at which it regressed (GOOD must be one of its ancestors)
    #[arg(value_name = "BAD")]
    bad: String,
    /// The trial, as `kernelgate run -- --list` prints it (suite::kernel::case)
    #[arg(value_name = "TRIAL")]
    trial: String,
}

/// The `kernelgate bisect` command: 0 when the first regressed commit is found, 1 when it
/// cannot be pinned down (bad did not regress, or skipped commits hide it), 2 for bad input or
/// no GPU to time on.
pub fn bisect_command(args: &Args) -> ExitCode {
    bisect_or_exit(args).unwrap_or_else(|code| code)
}

/// [`bisect_command`]; `Err` is an exit before the search (bad input, printed).
fn bisect_or_exit(args: &Args) -> Result<ExitCode, ExitCode> {
    let (good, bad, trial) = (args.good.as_str(), args.bad.as_str(), args.trial.as_str());
    let config = Config::from_env().map_err(exit::bad_input)?;
    if config.mode == Mode::Bless || config.base.is_some() {
        return Err(exit::bad_input(
            "bisect times each commit against GOOD: unset KERNELGATE_BLESS and KERNELGATE_BASE",
        ));
    }
    // The working tree's suites, for the files they reference outside the suites folder.
    let candidates = crate::suite::load_dir(&config.suites).unwrap_or_default();
    // The architecture code is identified for: the GPU's (starting a worker to ask it), or
    // `KERNELGATE_ARCH` without one.
    let device = super::calibrate::device_info(&config);
    let arch = device.map_or_else(|_| config.arch.clone(), |d| d.arch());
    let mut repo = Repo::new(&config, &candidates, trial, &arch);
    let (good, commits, good_suites) = repo.prepare(good, bad).map_err(exit::bad_input)?;
    let range = commits.len();
    let mut probe = GpuProbe {
        repo: &mut repo,
        good: good_suites,
        progress: std::io::stderr().is_terminal(),
    };
    let found = bisect(&good, commits, &mut probe);
    let since_parent = found.first.as_ref().and_then(|c| repo.since_parent(c));
    let report = Report {
        trial,
        good: &good,
        range,
        found: &found,
        since_parent,
    };
    for line in report.lines() {
        println!("{line}");
    }
    Ok(match (&found.first, &found.stopped) {
        (Some(_), _) => exit::code(exit::SUCCESS),
        (None, Some(Stopped::Unavailable(_))) => exit::code(exit::BAD_INPUT),
        (None, _) => exit::code(exit::NOT_FOUND),
    })
}
