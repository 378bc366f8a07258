//! `GateNote` and `BaselineRef`: what the gate made of a measured trial, and the stored
//! baseline it was compared with, as a trial's record carries them.

use crate::baseline::{Fingerprint, Origin};
use crate::measure::Regime;
use serde::{Deserialize, Serialize};

/// What the gate made of a measured trial (the verdict itself is [`TrialRecord::verdict`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GateNote {
    /// No baseline for this trial on this device; `elsewhere` lists devices that have one for
    /// the suite.
    NoBaseline {
        /// Devices with a baseline file for this suite.
        elsewhere: Vec<Fingerprint>,
        /// The commit that added the trial's kernel to its suite file (git's short hash), where
        /// git knows it: a new trial is not gated, and every summary says since when.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        added: Option<String>,
    },
    /// The baseline was measured in another regime: not comparable.
    OtherRegime {
        /// The baseline's regime.
        regime: Regime,
    },
    /// The baseline file cannot be used.
    BaselineError {
        /// Why.
        message: String,
    },
    /// The SM clock was throttled, or another process used the GPU, in too many rounds: not
    /// compared (never a regression).
    Unreliable {
        /// Rounds dropped as throttled.
        discarded: usize,
        /// All rounds.
        rounds: usize,
        /// Rounds dropped because another context held the GPU.
        #[serde(default)]
        contended: usize,
        /// Other processes NVML saw using the GPU while it was timed.
        #[serde(default)]
        others: Vec<String>,
    },
    /// Compared with its baseline.
    Compared {
        /// The baseline it was compared with.
        baseline: BaselineRef,
        /// Whether the verdict comes from a second measurement.
        remeasured: bool,
        /// Comparisons in the Benjamini–Hochberg family it was decided in.
        family: usize,
    },
    /// Paired mode: compared with the same trial at the base revision, timed interleaved.
    Paired {
        /// The base revision, as given.
        rev: String,
        /// Its commit (or `folder`).
        commit: String,
        /// Whether the verdict comes from a second measurement.
        remeasured: bool,
        /// Comparisons in the Benjamini–Hochberg family it was decided in.
        family: usize,
    },
    /// Paired mode: the whole resolved trial is identical at the base — every kernel's code,
    /// launches, inputs, check and bench settings (`TrialRecord::code` equals
    /// `TrialRecord::base_code`) — so it was not compared: its verdict is identical code.
    IdenticalCode {
        /// The base revision, as given.
        rev: String,
        /// Its commit (or `folder`).
        commit: String,
        /// Whether it was timed and checked anyway (`KERNELGATE_TIME_IDENTICAL=1`: an A/A pair);
        /// otherwise neither ran (the base passed correctness with the same trial).
        timed: bool,
    },
    /// Paired mode: the trial does not exist at the base revision.
    New,
    /// Paired mode: the trial's case changed since the base; not compared.
    Changed {
        /// What changed.
        why: String,
    },
    /// A re-measure of an inconclusive trial failed; the trial left the family.
    RemeasureFailed,
    /// `KERNELGATE_BLESS`: recorded as the new baseline, not judged.
    Blessed,
}

impl GateNote {
    /// Whether the verdict comes from a second measurement (a compared or paired trial's).
    pub fn remeasured(&self) -> bool {
        match self {
            GateNote::Compared { remeasured, .. } | GateNote::Paired { remeasured, .. } => {
                *remeasured
            }
            _ => false,
        }
    }
}

/// The stored baseline a trial was compared with, as much as its report needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRef {
    /// The baseline file.
    pub path: String,
    /// Its median time, seconds.
    pub median: f64,
    /// Its median speedup over the reference, for other kernels.
    pub speedup: Option<f64>,
    /// Its reference kernel.
    pub reference: String,
    /// When it was recorded.
    pub date: String,
    /// By which kernelgate.
    pub kernelgate: String,
    /// Runs pooled into it (`KERNELGATE_BLESS=add`); 1 for a baseline blessed once.
    #[serde(default = "one_run")]
    pub runs: usize,
    /// Their between-run spread factor (largest run median over the smallest; 1 for one run):
    /// the gate's threshold was `(1 + max_slowdown) × spread`.
    #[serde(default = "no_spread")]
    pub spread: f64,
    /// The physical GPUs (and hosts) it was recorded on, when none of them is the GPU this
    /// trial ran on; empty when it is, or when either is unknown.
    #[serde(default)]
    pub other_gpus: Vec<Origin>,
}

impl BaselineRef {
    /// A baseline of one run at `path` with median `median` seconds, recorded on 2026-11-20 by
    /// kernelgate 0.1.0 with the reference `naive`: for tests of reporters.
    pub fn for_tests(path: &str, median: f64) -> BaselineRef {
        BaselineRef {
            path: path.into(),
            median,
            speedup: None,
            reference: "naive".into(),
            date: "2026-11-20".into(),
            kernelgate: "0.1.0".into(),
            runs: 1,
            spread: 1.0,
            other_gpus: Vec::new(),
        }
    }
}

fn one_run() -> usize {
    1
}

fn no_spread() -> f64 {
    1.0
}
