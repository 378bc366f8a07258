//! `reading`: what a trial's verdict means beside its numbers — how its label reads against its
//! interval, threshold and precision target ([`reading`]: `within threshold`, `on the
//! threshold`), the threshold it was gated with, where its baseline came from, and the cause of
//! a change (what changed in the trial's identity first, then its counters, largest first).

use super::results::{BaselineRef, GateNote, TrialRecord};
use crate::code::CodeChange;
use crate::gate::{percent, with_spread, Reading};

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
    let remeasured = matches!(
        r.gate,
        Some(
            GateNote::Compared {
                remeasured: true,
                ..
            } | GateNote::Paired {
                remeasured: true,
                ..
            }
        )
    );
    let effort = if remeasured {
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
    if let Some(gpus) = other_gpu(baseline) {
        out.push_str(&format!(" vs baseline from {gpus}"));
    }
    out
}
