//! `State`: what one trial record says at a glance, the commands that act on it, and its
//! place in a size sweep — read from the typed record only.

use crate::gate::{Reading, Verdict};
use crate::report::results::{Standing, Status, TrialRecord};
use crate::report::terminal::reading;

/// A trial's state, in the order a person should look at them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// Failed: wrong output, fault, time-out, regression, limit.
    Failed,
    /// Regressed (and so failed, or passed only because the run is not gating).
    Regressed,
    /// Too noisy to tell.
    Inconclusive,
    /// Inconclusive with a narrow interval around the threshold itself: no re-measure can tell.
    OnThreshold,
    /// The SM clock throttled in too many rounds: not gated.
    Unreliable,
    /// Slower than its baseline with the same code and counters: the machine's change.
    MachineSlower,
    /// Faster than its baseline with the same code and counters: the machine's change.
    MachineFaster,
    /// Faster than its baseline.
    Improved,
    /// A significant change, all of it inside the threshold.
    WithinThreshold,
    /// No meaningful change.
    Unchanged,
    /// Paired mode: identical code at the base (not timed, or timed as an A/A pair).
    IdenticalCode,
    /// Paired mode: not at the base revision, so not compared.
    New,
    /// Paired mode: its case changed since the base, so not compared.
    Changed,
    /// Measured, with no comparable baseline.
    NoBaseline,
    /// A compile trial: its suite's kernels compiled (counted apart from the verdicts).
    Compiled,
    /// Passed without timing.
    Passed,
    /// Not run.
    Ignored,
}

impl State {
    /// The state of a record.
    pub fn of(t: &TrialRecord) -> State {
        let verdict = t.decided();
        match (t.status, verdict) {
            (_, Some(Verdict::Regressed)) => State::Regressed,
            (Status::Failed, _) => State::Failed,
            (Status::Ignored, _) => State::Ignored,
            _ if t.measurement.as_ref().is_some_and(|m| m.clocks.unreliable) => State::Unreliable,
            (_, Some(Verdict::Inconclusive)) if reading(t) == Reading::OnThreshold => {
                State::OnThreshold
            }
            (_, Some(Verdict::Inconclusive)) => State::Inconclusive,
            (_, Some(Verdict::Improved)) => State::Improved,
            (_, Some(Verdict::MachineSlower)) => State::MachineSlower,
            (_, Some(Verdict::MachineFaster)) => State::MachineFaster,
            (_, Some(Verdict::Unchanged)) if reading(t) == Reading::WithinThreshold => {
                State::WithinThreshold
            }
            (_, Some(Verdict::Unchanged)) => State::Unchanged,
            (_, Some(Verdict::IdenticalCode)) => State::IdenticalCode,
            (_, None) if t.paired_standing() == Some(Standing::New) => State::New,
            (_, None) if t.paired_standing() == Some(Standing::Changed) => State::Changed,
            (_, None) if t.measurement.is_some() => State::NoBaseline,
            (_, None) if t.compiled.is_some() => State::Compiled,
            (_, None) => State::Passed,
        }
    }

    /// The word shown (and the badge's CSS class).
    pub fn word(self) -> &'static str {
        match self {
            State::Failed => "failed",
            State::Regressed => Verdict::Regressed.label(),
            State::Inconclusive => Verdict::Inconclusive.label(),
            State::OnThreshold => Reading::OnThreshold.phrase(Verdict::Inconclusive),
            State::Unreliable => "unreliable",
            State::Improved => Verdict::Improved.label(),
            State::MachineSlower => Verdict::MachineSlower.label(),
            State::MachineFaster => Verdict::MachineFaster.label(),
            State::WithinThreshold => Reading::WithinThreshold.phrase(Verdict::Unchanged),
            State::Unchanged => Verdict::Unchanged.label(),
            State::IdenticalCode => Verdict::IdenticalCode.label(),
            State::New => "new",
            State::Changed => "changed",
            State::NoBaseline => "new (not gated)",
            State::Compiled => "compiled",
            State::Passed => "passed",
            State::Ignored => "ignored",
        }
    }

    /// Whether the summary lists it first: up to `machine-slower` (a warning).
    pub fn needs_attention(self) -> bool {
        self <= State::MachineSlower
    }
}

/// The commands that re-run a trial, profile its kernel with Nsight Compute, and re-bless
/// its baseline (only where it ran correctly and was compared: a wrong result is never
/// blessed), as the runner recorded them. Results files written before the record carried
/// them get the re-run command alone.
pub fn commands(t: &TrialRecord) -> Vec<(&'static str, String)> {
    let c = t.repeat();
    let mut out = vec![("rerun", c.rerun.clone())];
    if let (Some(p), Some(_)) = (&c.profile, &t.measurement) {
        out.push(("profile", p.clone()));
    }
    if let Some(b) = t.rebless() {
        out.push(("rebless", b));
    }
    out
}

/// `suite::kernel::case` split into its kernel and case (`("compile", "")` for a compile
/// trial, `(kernel, "")` for a suite without sizes).
pub fn kernel_and_case(t: &TrialRecord) -> (&str, &str) {
    let rest = t
        .name
        .strip_prefix(t.suite.as_str())
        .and_then(|r| r.strip_prefix("::"))
        .unwrap_or(&t.name);
    rest.split_once("::").unwrap_or((rest, ""))
}

/// The sizes of a case label `m=64,n=128`.
pub fn sizes(case: &str) -> Vec<(&str, f64)> {
    case.split(',')
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.trim().parse().ok().map(|v| (k.trim(), v)))
        .collect()
}

/// The size to draw a suite's sweep against: the first size whose value differs between
/// the cases, or `None` when the suite has one case.
pub fn sweep_axis<'a>(cases: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    let first = cases.clone().find(|c| !c.is_empty())?;
    sizes(first)
        .into_iter()
        .map(|(k, _)| k)
        .find(|key| {
            let mut values: Vec<f64> = cases
                .clone()
                .filter_map(|c| sizes(c).into_iter().find(|(k, _)| k == key).map(|(_, v)| v))
                .collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            values.len() >= 2
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sweeps() {
        assert_eq!(sizes("m=64,n=128"), vec![("m", 64.0), ("n", 128.0)]);
        assert_eq!(sizes(""), vec![]);
        let cases = ["m=64,n=128", "m=64,n=256"];
        assert_eq!(sweep_axis(cases.iter().copied()).as_deref(), Some("n"));
        assert_eq!(sweep_axis(["n=4"].iter().copied()), None);
        let with_compile = ["", "n=4", "n=8"];
        assert_eq!(
            sweep_axis(with_compile.iter().copied()).as_deref(),
            Some("n")
        );
    }
}
