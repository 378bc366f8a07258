//! `reading`: what a trial's verdict means beside its numbers — how its label reads against its
//! interval, threshold and precision target ([`reading`]: `within threshold`, `on the
//! threshold`), the threshold it was gated with, where its baseline came from, and the cause of
//! a change (what changed in the trial's identity first, then its counters, largest first).

use super::results::{BaselineRef, GateNote, Status, TrialRecord};
use crate::code::CodeChange;
use crate::gate::{percent, with_spread, Reading, Verdict};

/// A commit's first seven characters.
pub(super) fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// What the record says of its code against what it was compared with: `same code as the
/// baseline`, `changed since base 1a2b3c4: kernel `vec4` (code)`; `None` where it has no code
/// change (no code, or not compared).
pub fn code_note(r: &TrialRecord) -> Option<String> {
    let other = match &r.gate {
        Some(GateNote::Compared { .. }) => "the baseline".to_string(),
        Some(GateNote::Paired { commit, .. } | GateNote::IdenticalCode { commit, .. }) => {
            format!("base {}", short(commit))
        }
        _ => return None,
    };
    r.code_change.as_ref().map(|c| c.describe(&other))
}

/// What changed in the trial's identity against what it was compared with (launches, code,
/// inputs, toolchain), in words; `None` where nothing did or nothing is known.
pub fn identity_change(r: &TrialRecord) -> Option<String> {
    let changed = match &r.code_change {
        Some(CodeChange::Changed { .. }) => true,
        Some(CodeChange::Same { toolchain }) => !toolchain.is_empty(),
        _ => false,
    };
    changed.then(|| code_note(r)).flatten()
}

/// The cause beside a change: ` — ` then what changed in the trial's identity first (a launch
/// or code change explains a time change before any counter), then what moved in the hardware
/// counters, largest first (` — changed since base 91a3253: launches; achieved occupancy 0.59 →
/// 0.26; instructions -0.0%`). Empty when nothing is known.
pub fn cause(r: &TrialRecord) -> String {
    let counters = r
        .measurement
        .as_ref()
        .map(super::counters::explanation)
        .unwrap_or_default();
    match (identity_change(r), counters.strip_prefix(" — ")) {
        (Some(i), Some(c)) => format!(" — {i}; {c}"),
        (Some(i), None) => format!(" — {i}"),
        (None, _) => counters,
    }
}

/// How the record's verdict reads beside its interval ([`Reading`]): against the threshold it
/// was gated with (a stored baseline's spread included) and the precision target it was sampled
/// to (finer after a re-measure; in files that did not record it, the default share of
/// `max_slowdown`). `Plain` where it has no verdict or measurement.
pub fn reading(r: &TrialRecord) -> Reading {
    let (Some(v), Some(p)) = (&r.verdict, precision(r)) else {
        return Reading::Plain;
    };
    let (max_slowdown, _) = stored_threshold(r);
    v.verdict.reading(v.shown(), max_slowdown, p)
}

/// The precision target a measured trial's samples were taken to: the recorded one (or, in
/// files that did not record it, the default share of `max_slowdown`), [`REMEASURE_EFFORT`]
/// times finer after a re-measure; `None` without a measurement.
///
/// [`REMEASURE_EFFORT`]: crate::gate::REMEASURE_EFFORT
pub fn precision(r: &TrialRecord) -> Option<f64> {
    let m = r.measurement.as_ref()?;
    let effort = if r.gate.as_ref().is_some_and(GateNote::remeasured) {
        crate::gate::REMEASURE_EFFORT as f64
    } else {
        1.0
    };
    let target = m
        .precision
        .unwrap_or(m.max_slowdown * crate::suite::PRECISION_OF_MAX_SLOWDOWN);
    Some(target / effort)
}

/// The words a report prints for the record's verdict: its label, or how it reads beside its
/// interval (`within threshold`, `on the threshold`); `None` without a verdict.
pub fn verdict_words(r: &TrialRecord) -> Option<&'static str> {
    r.verdict.map(|v| reading(r).phrase(v.verdict))
}

/// The threshold a trial was gated with (its `max_slowdown`, widened by the spread between a
/// stored baseline's runs), and where that baseline came from when it matters for reading the
/// verdict (empty otherwise).
pub(super) fn stored_threshold(r: &TrialRecord) -> (f64, String) {
    let suite_max = r.measurement.as_ref().map_or(0.0, |m| m.max_slowdown);
    match &r.gate {
        Some(GateNote::Compared { baseline, .. }) => (
            with_spread(suite_max, baseline.spread),
            origin(baseline, suite_max),
        ),
        _ => (suite_max, String::new()),
    }
}

/// The other physical GPUs a stored baseline came from, described (`None`: this one's).
pub fn other_gpu(baseline: &BaselineRef) -> Option<String> {
    let gpus: Vec<String> = baseline.other_gpus.iter().map(|o| o.describe()).collect();
    (!gpus.is_empty()).then(|| gpus.join(", "))
}

/// The other physical GPUs the trial's stored baseline came from, described; `None` where it
/// was not compared with a stored baseline, or with this GPU's.
pub fn other_gpu_of(r: &TrialRecord) -> Option<String> {
    match &r.gate {
        Some(GateNote::Compared { baseline, .. }) => other_gpu(baseline),
        _ => None,
    }
}

/// Where the baseline came from, when that matters for reading the verdict: pooled runs with
/// the threshold their spread gave, and another physical GPU. Empty for one run on this GPU.
pub(super) fn origin(baseline: &BaselineRef, max_slowdown: f64) -> String {
    let mut out = String::new();
    if baseline.runs > 1 {
        out.push_str(&format!(
            " (baseline of {} runs, spread {}: threshold {})",
            baseline.runs,
            percent(baseline.spread),
            percent(1.0 + with_spread(max_slowdown, baseline.spread))
        ));
    }
    out.extend(other_gpu(baseline).map(|gpus| format!(" vs baseline from {gpus}")));
    out
}

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
            (_, None) if matches!(t.gate, Some(GateNote::New)) => State::New,
            (_, None) if matches!(t.gate, Some(GateNote::Changed { .. })) => State::Changed,
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
