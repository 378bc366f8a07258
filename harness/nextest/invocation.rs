//! `Invocation`: how the perf binary was started — plainly, or by nextest as one process of a
//! [`NextestRun`] — read from nextest's variables.

use std::path::PathBuf;

/// Nextest's name for running one process per test, the only mode it has.
pub const PROCESS_PER_TEST: &str = "process-per-test";

/// How the perf binary was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// By `cargo test --test perf` or `kernelgate run`: this process is the whole run.
    Plain,
    /// By nextest, one process per trial: the processes of the run share it.
    Nextest(NextestRun),
}

/// One nextest run, shared by its processes through a folder under the target directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextestRun {
    /// `NEXTEST_RUN_ID` (with the stress index of a stress run).
    pub id: String,
    /// `target/kernelgate-nextest/<id>`: the lock and the run's shared state.
    pub dir: PathBuf,
}

/// Why this process cannot take part in a nextest run; the run stops with exit code 2.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InvocationError {
    /// An execution mode kernelgate does not know.
    #[error("`NEXTEST_EXECUTION_MODE={0}` is not a mode kernelgate can share a run in (it knows `process-per-test`; run `cargo test --test perf`, or tell kernelgate's maintainers)")]
    UnknownMode(String),
    /// Nextest did not name the run, so its processes cannot find each other.
    #[error("nextest runs one process per trial but did not set `NEXTEST_RUN_ID`, so the trials' processes cannot share one run (use a newer cargo-nextest, or run `cargo test --test perf`)")]
    NoRunId,
}

/// Reads how this process was started from nextest's variables; `exact` is the name given
/// with `--exact`, and `target` the target directory the run's shared folder goes under.
///
/// A process that a test run by nextest starts inherits nextest's variables; it is not one
/// of the run's processes unless it was started for `NEXTEST_TEST_NAME` with `--exact`, as
/// nextest starts them (seen: `cargo nextest run --test cli` failed before this check).
pub fn invocation(exact: Option<&str>, target: PathBuf) -> Result<Invocation, InvocationError> {
    invocation_from(|name| std::env::var(name).ok(), exact, target)
}

/// [`invocation`], reading variables through `var`.
fn invocation_from(
    var: impl Fn(&str) -> Option<String>,
    exact: Option<&str>,
    target: PathBuf,
) -> Result<Invocation, InvocationError> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty());
    let Some(mode) = var("NEXTEST_EXECUTION_MODE") else {
        return Ok(Invocation::Plain);
    };
    if var("NEXTEST_TEST_NAME").is_some_and(|test| exact != Some(test.as_str())) {
        return Ok(Invocation::Plain);
    }
    if mode != PROCESS_PER_TEST {
        return Err(InvocationError::UnknownMode(mode));
    }
    let run_id = var("NEXTEST_RUN_ID").ok_or(InvocationError::NoRunId)?;
    let mut id: String = run_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    // Each pass of `--stress-count` is a run of its own.
    if let Some(pass) = var("NEXTEST_STRESS_CURRENT").filter(|p| p.parse::<u64>().is_ok()) {
        id.push_str(&format!("-stress-{pass}"));
    }
    Ok(Invocation::Nextest(NextestRun {
        dir: target.join("kernelgate-nextest").join(&id),
        id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            set.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn plain_without_nextest_variables() {
        let got = invocation_from(vars(&[("NEXTEST_RUN_ID", "x")]), None, "target".into());
        assert_eq!(got, Ok(Invocation::Plain));
    }

    #[test]
    fn a_nextest_run_gets_a_folder_per_run_and_per_stress_pass() {
        let mode = ("NEXTEST_EXECUTION_MODE", PROCESS_PER_TEST);
        let id = ("NEXTEST_RUN_ID", "1f0c/ab..");
        let got = invocation_from(
            vars(&[mode, id, ("NEXTEST_STRESS_CURRENT", "none")]),
            None,
            "t".into(),
        );
        assert_eq!(
            got,
            Ok(Invocation::Nextest(NextestRun {
                id: "1f0c-ab--".into(),
                dir: PathBuf::from("t/kernelgate-nextest/1f0c-ab--"),
            }))
        );
        let got = invocation_from(
            vars(&[mode, id, ("NEXTEST_STRESS_CURRENT", "3")]),
            None,
            "t".into(),
        );
        let Ok(Invocation::Nextest(run)) = got else {
            panic!("a nextest run: {got:?}")
        };
        assert_eq!(run.id, "1f0c-ab---stress-3");
    }

    #[test]
    fn a_process_started_by_a_test_is_not_one_of_the_run() {
        let nextest = [
            ("NEXTEST_EXECUTION_MODE", PROCESS_PER_TEST),
            ("NEXTEST_RUN_ID", "r"),
            ("NEXTEST_TEST_NAME", "saxpy::vec4::n=4096"),
        ];
        let got = invocation_from(vars(&nextest), Some("a_cli_test"), "t".into());
        assert_eq!(got, Ok(Invocation::Plain));
        let got = invocation_from(vars(&nextest), None, "t".into());
        assert_eq!(got, Ok(Invocation::Plain));
        let got = invocation_from(vars(&nextest), Some("saxpy::vec4::n=4096"), "t".into());
        assert!(matches!(got, Ok(Invocation::Nextest(_))), "{got:?}");
    }

    #[test]
    fn modes_that_cannot_share_a_run_are_refused() {
        let got = invocation_from(
            vars(&[
                ("NEXTEST_EXECUTION_MODE", "process-per-binary"),
                ("NEXTEST_RUN_ID", "x"),
            ]),
            None,
            "t".into(),
        );
        assert_eq!(
            got,
            Err(InvocationError::UnknownMode("process-per-binary".into()))
        );
        let got = invocation_from(
            vars(&[("NEXTEST_EXECUTION_MODE", PROCESS_PER_TEST)]),
            None,
            "t".into(),
        );
        assert_eq!(got, Err(InvocationError::NoRunId));
        assert!(InvocationError::NoRunId
            .to_string()
            .contains("did not set `NEXTEST_RUN_ID`"));
    }
}
