//! `bisect`: `kernelgate bisect GOOD BAD TRIAL` — the first commit after GOOD, up to BAD along
//! first parents, at which TRIAL regressed against GOOD (`crate::bisect`): each probed commit is
//! timed in paired mode against GOOD in one worker process; commits whose trial identity is
//! known already are decided without timing; broken or inconclusive ones are skipped. Prints
//! the commit, its change with its interval, and its SASS diff against its parent.

use crate::bisect::{bisect, GpuProbe, Repo, Report, Stopped};
use crate::config::{Config, Mode};
use crate::exit;
use crate::runner::Executor;
use crate::worker::pool::WorkerPool;
use std::io::IsTerminal;
use std::process::ExitCode;

const USAGE: &str = "usage: kernelgate bisect GOOD BAD TRIAL";

/// A command line `kernelgate bisect` cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum UsageError {
    /// An option it does not take (it takes none).
    #[error("unknown option `{0}`")]
    Option(String),
    /// Not three arguments.
    #[error("bisect takes three arguments, a good revision, a bad one and a trial name (as `--list` prints it); {0} given")]
    Count(usize),
}

/// What `kernelgate bisect` was asked: good, bad, the trial.
fn parse(args: &[String]) -> Result<[&str; 3], UsageError> {
    if let Some(flag) = args.iter().find(|a| a.starts_with('-')) {
        return Err(UsageError::Option(flag.clone()));
    }
    match args {
        [good, bad, trial] => Ok([good, bad, trial]),
        _ => Err(UsageError::Count(args.len())),
    }
}

/// The architecture code is identified for: the GPU's (starting a worker to ask it), or
/// `KERNELGATE_ARCH` without one.
fn arch(config: &Config) -> String {
    if crate::device::driver_missing().is_some() {
        return config.arch.clone();
    }
    let pool = WorkerPool::new(config, &[], &[]);
    let arch = pool
        .first_device()
        .map(|d| d.arch())
        .unwrap_or_else(|_| config.arch.clone());
    pool.stop();
    arch
}

/// The `kernelgate bisect` command: 0 when the first regressed commit is found, 1 when it
/// cannot be pinned down (bad did not regress, or skipped commits hide it), 2 for bad input or
/// no GPU to time on.
pub fn bisect_command(args: &[String]) -> ExitCode {
    let bad_input = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        exit::code(exit::BAD_INPUT)
    };
    let [good, bad, trial] = match parse(args) {
        Ok(a) => a,
        Err(e) => return bad_input(&format!("{e}\n{USAGE}")),
    };
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => return bad_input(&e),
    };
    if config.mode == Mode::Bless || config.base.is_some() {
        return bad_input(
            &"bisect times each commit against GOOD: unset KERNELGATE_BLESS and KERNELGATE_BASE",
        );
    }
    // The working tree's suites, for the files they reference outside the suites folder.
    let candidates = crate::suite::load_dir(&config.suites).unwrap_or_default();
    let arch = arch(&config);
    let mut repo = Repo::new(&config, &candidates, trial, &arch);
    let (good, commits, good_suites) = match repo.prepare(good, bad) {
        Ok(p) => p,
        Err(e) => return bad_input(&e),
    };
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
    match (&found.first, &found.stopped) {
        (Some(_), _) => exit::code(exit::SUCCESS),
        (None, Some(Stopped::Unavailable(_))) => exit::code(exit::BAD_INPUT),
        (None, _) => exit::code(exit::NOT_FOUND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let given = args(&["v1", "HEAD", "saxpy::vec4::n=4096"]);
        assert_eq!(parse(&given), Ok(["v1", "HEAD", "saxpy::vec4::n=4096"]));
        assert_eq!(
            parse(&args(&["v1", "HEAD"])).unwrap_err().to_string(),
            "bisect takes three arguments, a good revision, a bad one and a trial name (as `--list` prints it); 2 given"
        );
        assert_eq!(
            parse(&args(&["--good", "v1", "HEAD", "t"])).unwrap_err(),
            UsageError::Option("--good".into())
        );
    }
}
