//! What a paired run says beyond its verdicts: [`summary`], the trials skipped as identical
//! code with the GPU time that saved (estimated) and the noise of those timed anyway. (The SASS
//! diffs of the kernels that changed: `sass.rs`.)

use super::Runner;
use crate::report::results::{GateNote, Identical, Noise, SavedFrom, TrialRecord};

/// The identical-code trials of a paired run: how many were skipped and timed, the time the
/// skipped ones saved — each estimated from its stored baseline's recorded time where there is
/// one for this device, else from the mean time of the trials this run timed against the base —
/// and `noise`, the largest change among those timed anyway (with its trial's name).
pub(super) fn summary(
    run: &Runner,
    trials: &[TrialRecord],
    noise: Option<(String, Noise)>,
) -> Identical {
    let skipped: Vec<&TrialRecord> = trials
        .iter()
        .filter(|t| matches!(t.gate, Some(GateNote::IdenticalCode { timed: false, .. })))
        .collect();
    let timed = trials
        .iter()
        .filter(|t| matches!(t.gate, Some(GateNote::IdenticalCode { timed: true, .. })))
        .count();
    let this_run: Vec<f64> = trials
        .iter()
        .filter(|t| matches!(t.gate, Some(GateNote::Paired { .. })))
        .filter_map(|t| t.measurement.as_ref()?.trial_seconds)
        .collect();
    let mean = (!this_run.is_empty()).then(|| this_run.iter().sum::<f64>() / this_run.len() as f64);
    let store = (!skipped.is_empty()).then(|| run.store()).flatten();
    let (mut saved, mut stored, mut estimated) = (0.0, 0, 0);
    for t in &skipped {
        let recorded = store
            .as_ref()
            .and_then(|s| s.entry(&t.suite, &t.name))
            .and_then(|e| e.trial_seconds);
        if let Some(s) = recorded {
            saved += s;
            stored += 1;
        } else if let Some(m) = mean {
            saved += m;
            estimated += 1;
        }
    }
    let saved_from = match (stored, estimated) {
        _ if stored + estimated < skipped.len() || skipped.is_empty() => None,
        (_, 0) => Some(SavedFrom::Baselines),
        (0, _) => Some(SavedFrom::ThisRun),
        _ => Some(SavedFrom::Both),
    };
    Identical {
        skipped: skipped.len(),
        timed,
        saved_seconds: saved_from.map(|_| saved),
        saved_from,
        noise: noise.map(|(trial, n)| Noise { trial, ..n }),
    }
}
