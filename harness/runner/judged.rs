//! `Judged`: what the gate made of one measured trial — what it was compared with, the
//! verdict, and a confirmed change awaiting attribution — and how a decision is taken into it.

use crate::failure::TrialFailure;
use crate::gate::{self, TrialVerdict};
use crate::report::results::GateNote;

/// What the gate made of one measured trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// What it is compared with, for memory and resources: the stored baseline's footprint
    /// (re-measured or not), or in paired mode the base kernel's.
    pub baseline_footprint: Option<crate::measure::Footprint>,
    /// The time samples it was compared with (for reports).
    pub baseline_samples: Vec<f64>,
    /// The stored baseline's counters (stored mode; paired mode reads the base's from the
    /// measurement).
    pub baseline_counters: Option<crate::baseline::StoredCounters>,
    /// A confirmed time change, to be attributed once counters are read: whether the trial is
    /// the baseline's own (`runner::attribute`); `None` otherwise.
    pub same_trial: Option<bool>,
    /// The gate's note.
    pub gate: GateNote,
    /// The verdict, when compared.
    pub verdict: Option<TrialVerdict>,
    /// Why the re-measure of an inconclusive trial failed; the trial fails with it.
    pub remeasure_failure: Option<TrialFailure>,
    /// The code it is compared with: the baseline entry's (`None`: it recorded none), or the
    /// base's in paired mode.
    pub old_code: Option<crate::code::TrialCode>,
}

impl Judged {
    /// Takes the gate's decision: the verdict with the note `note` makes of it, or the failed
    /// re-measure that took the trial out of the family.
    pub(super) fn decided(
        &mut self,
        decision: Result<gate::Decision, TrialFailure>,
        note: impl FnOnce(&gate::Decision) -> GateNote,
    ) {
        match decision {
            Ok(d) => {
                self.verdict = Some(d.verdict);
                self.gate = note(&d);
            }
            Err(f) => {
                self.gate = GateNote::RemeasureFailed;
                self.remeasure_failure = Some(f);
            }
        }
    }
}
