//! `load_suites`: the suites of a command (`run`, `lint`), loaded with every problem and warning
//! printed.

use crate::exit;
use std::process::ExitCode;

/// Loads every suite under `config.suites` for command `what` (`kernelgate lint`,
/// `kernelgate`): every problem (followed by `then`) and warning printed, and an empty folder
/// refused unless `KERNELGATE_ALLOW_EMPTY=1`; `Err` is the exit code.
pub(crate) fn load_suites(
    config: &crate::config::Config,
    what: &str,
    then: &str,
) -> Result<Vec<crate::suite::Suite>, ExitCode> {
    // lint knows its target before any GPU: a CUBIN for another architecture is refused at
    // its `source` value, NVRTC or not.
    // Its fatbin sources' problems on that target are problems of the suite files too.
    let loaded = match what {
        "kernelgate lint" => {
            crate::suite::load_dir_for(&config.suites, &config.arch).and_then(|suites| {
                let diagnostics = super::binaries::fatbin_problems(&suites, &config.arch);
                match diagnostics.is_empty() {
                    true => Ok(suites),
                    false => Err(crate::error::LoadError { diagnostics }),
                }
            })
        }
        _ => crate::suite::load_dir(&config.suites),
    };
    let suites = loaded.map_err(|e| {
        eprintln!("{e}");
        let n = e.diagnostics.len();
        eprintln!("{what}: {n} problem(s) in the suite files{then}");
        exit::code(exit::BAD_INPUT)
    })?;
    suites
        .iter()
        .flat_map(|s| &s.warnings)
        .for_each(|w| eprintln!("warning: {w}"));
    config.check_found(suites.len()).map_err(exit::bad_input)?;
    Ok(suites)
}

/// Warnings for the stored entries no trial of `suites` has any more — left by an older
/// revision of a suite (a kernel renamed, a size removed) or by a suite that is gone: named,
/// so they are removed or re-blessed on purpose rather than kept unseen. `files` are the
/// baseline files [`check_baselines`] read.
pub(crate) fn stale_entries(
    files: &[(std::path::PathBuf, crate::baseline::BaselineFile)],
    suites: &[crate::suite::Suite],
) {
    let planned: std::collections::BTreeSet<String> = crate::plan::plan(suites)
        .into_iter()
        .map(|p| p.name)
        .collect();
    for (path, file) in files {
        let gone: Vec<&str> = file
            .trials
            .keys()
            .filter(|t| !planned.contains(*t))
            .map(String::as_str)
            .collect();
        if gone.is_empty() {
            continue;
        }
        let why = if suites.iter().any(|s| s.name == file.suite) {
            "trials the suite no longer has (left by an older revision of it)"
        } else {
            "a suite that is gone"
        };
        eprintln!(
            "warning: `{}`: {} stale entr{} of {why}: {} (remove them, or bless the trials again)",
            path.display(),
            gone.len(),
            if gone.len() == 1 { "y" } else { "ies" },
            gone.join(", ")
        );
    }
}

/// Every stored baseline file under `config.baselines` — of `suites` only, when given (what a
/// run of them reads), else all (`lint`) — read and validated, each problem printed; the files,
/// or `Err` with the exit code. A run checks before anything is measured, so a broken file is exit 2 at once,
/// not after the GPU work (and also without a GPU).
pub(crate) fn check_baselines(
    config: &crate::config::Config,
    suites: Option<&[crate::suite::Suite]>,
    what: &str,
    then: &str,
) -> Result<Vec<(std::path::PathBuf, crate::baseline::BaselineFile)>, ExitCode> {
    let names: Option<Vec<&str>> = suites.map(|s| s.iter().map(|s| s.name.as_str()).collect());
    let checked = crate::baseline::check::check_dir(&config.baselines, names.as_deref());
    for e in &checked.errors {
        eprintln!("error: {e}");
    }
    if checked.errors.is_empty() {
        return Ok(checked.files);
    }
    eprintln!(
        "{what}: {} unusable baseline file(s){then}",
        checked.errors.len()
    );
    Err(exit::code(exit::BAD_INPUT))
}
