//! `Identical`: what a paired run did with the trials whose code was identical at the base —
//! how many it skipped and the GPU time that saved (an estimate, and from what), and under
//! `KERNELGATE_TIME_IDENTICAL=1` the largest change timed among them, the run's measured noise.
//! Every report says it in the words of `terminal::identical`.

use crate::gate::Comparison;
use serde::{Deserialize, Serialize};

/// Where the time saved was estimated from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedFrom {
    /// Each skipped trial's time as its stored baseline for this device recorded it.
    Baselines,
    /// The mean time of the trials this run timed against the base.
    ThisRun,
    /// Baselines where they recorded it, this run's mean for the others.
    Both,
}

impl SavedFrom {
    /// The words after "estimated from".
    pub fn words(self) -> &'static str {
        match self {
            SavedFrom::Baselines => "the stored baselines' time per trial",
            SavedFrom::ThisRun => "the time per trial this run took to time the others",
            SavedFrom::Both => {
                "the stored baselines' time per trial, and this run's for trials they lack"
            }
        }
    }
}

/// The largest change among identical pairs timed anyway (`KERNELGATE_TIME_IDENTICAL=1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// The trial with the largest change.
    pub trial: String,
    /// Its change (candidate over base) with its 95% interval.
    pub change: Comparison,
    /// Identical pairs the gate would have called regressed, decided as a family of their own.
    pub regressed: usize,
    /// Those it would have called improved.
    pub improved: usize,
}

/// A paired run's identical-code trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identical {
    /// Trials not timed: identical at the base.
    pub skipped: usize,
    /// Identical trials timed anyway (`KERNELGATE_TIME_IDENTICAL=1`).
    pub timed: usize,
    /// The GPU time the skipped trials would have taken, seconds: an estimate; `None` where
    /// nothing recorded a trial's time.
    pub saved_seconds: Option<f64>,
    /// What the estimate comes from.
    pub saved_from: Option<SavedFrom>,
    /// The largest change among the timed identical pairs.
    pub noise: Option<Noise>,
}
