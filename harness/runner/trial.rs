//! `Trial`: one trial of a run from planned to decided — its code (and its base's), what
//! running it gave, and what the gate made of it — one value per plan index that every stage
//! of `Runner::run` reads and advances, instead of a vector per stage.

use super::{Measured, Outcome};
use crate::failure::TrialFailure;
use crate::gate::{self, TrialVerdict};
use crate::report::results::GateNote;

/// One trial of a run: its code, known before anything runs, and where it got to.
#[derive(Debug, Clone, Default)]
pub(super) struct Trial {
    /// The code it runs, and in paired mode its base's.
    pub code: Codes,
    /// Where it got to.
    pub state: State,
}

/// Where a trial got to: planned, skipped as identical code, ended without a measurement, or
/// measured — a re-measure or a confirmation replaces the measurement — and then judged.
#[derive(Debug, Clone, Default)]
pub(super) enum State {
    /// Not run: not selected, or the run was asked to stop first.
    #[default]
    Planned,
    /// Not timed: its code is identical at the base (paired mode).
    Identical,
    /// Ran and ended without a measurement: compiled, ignored or failed (never
    /// `Outcome::Measured`).
    Ended(Outcome),
    /// Measured (its latest measurement), and what the gate made of it once judged.
    Measured(Box<Measured>, Option<Box<Judged>>),
}

impl Trial {
    /// The trial that ran to `outcome`.
    pub fn ran(code: Codes, outcome: Outcome) -> Trial {
        let state = match outcome {
            Outcome::Measured(m) => State::Measured(m, None),
            other => State::Ended(other),
        };
        Trial { code, state }
    }

    /// Its measurement, when it was measured.
    pub fn measured(&self) -> Option<&Measured> {
        match &self.state {
            State::Measured(m, _) => Some(m),
            _ => None,
        }
    }

    /// Its measurement and judgement, when it was measured and judged.
    pub fn judged(&self) -> Option<(&Measured, &Judged)> {
        match &self.state {
            State::Measured(m, Some(j)) => Some((m, j)),
            _ => None,
        }
    }

    /// Its measurement and judgement, to change, when it was measured and judged.
    pub fn judged_mut(&mut self) -> Option<(&mut Measured, &mut Judged)> {
        match &mut self.state {
            State::Measured(m, Some(j)) => Some((m, j)),
            _ => None,
        }
    }

    /// Replaces its measurement with a newer one (a re-measure, a confirmation), keeping what
    /// the gate made of it so far.
    pub fn remeasured(&mut self, new: Box<Measured>) {
        if let State::Measured(m, _) = &mut self.state {
            *m = new;
        }
    }
}

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
    /// In a shard, what the gate saw of it, for `merge` to decide the whole run again.
    pub evidence: Option<Box<gate::Evidence>>,
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

/// One trial's code, and its base's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Codes {
    /// The code this trial runs.
    pub code: Option<crate::code::TrialCode>,
    /// Paired mode: the same trial's code at the base.
    pub base: Option<crate::code::TrialCode>,
}

impl Codes {
    /// Whether the whole resolved trial is identical at the base: both known, equal identity.
    pub fn identical(&self) -> bool {
        matches!((&self.code, &self.base), (Some(a), Some(b)) if a.identity == b.identity)
    }
}
