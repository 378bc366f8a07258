//! `Codes`: each selected kernel trial's code — this run's and, in paired mode, the base's —
//! computed in this process before anything runs (the executor compiles and identifies each
//! suite once, through the cache: no GPU). Paired mode skips the trials whose code is identical
//! at the base; stored mode compares the code with the baseline's.

use super::{Planned, Runner};
use crate::code::{trial_code, TrialCode};
use crate::paired::Pairing;

/// One trial's code, and its base's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Codes {
    /// The code this trial runs.
    pub code: Option<TrialCode>,
    /// Paired mode: the same trial's code at the base.
    pub base: Option<TrialCode>,
}

impl Codes {
    /// Whether the whole resolved trial is identical at the base: both known, equal identity.
    pub fn identical(&self) -> bool {
        matches!((&self.code, &self.base), (Some(a), Some(b)) if a.identity == b.identity)
    }
}

/// The code of each trial at `selected` (default elsewhere), and in paired mode (`pairing`, per
/// plan index) its base's.
pub(super) fn trial_codes(
    run: &Runner,
    plan: &[Planned],
    selected: &[usize],
    pairing: Option<&[Option<Pairing>]>,
) -> Vec<Codes> {
    let mut out = vec![Codes::default(); plan.len()];
    let seed = run.config.seed;
    for &i in selected {
        let trial = &plan[i];
        let Some((case, kernel)) = trial.case_kernel() else {
            continue;
        };
        let suite = &run.suites[trial.suite];
        out[i].code = run
            .executor
            .code(trial.suite)
            .map(|c| trial_code(suite, case, kernel, seed, &c));
        let (Some(base), Some(pairing)) = (run.base, pairing) else {
            continue;
        };
        if let Some(Pairing::Paired {
            suite: bs,
            case,
            kernel,
        }) = &pairing[i]
        {
            out[i].base = run
                .executor
                .code(run.suites.len() + bs)
                .map(|c| trial_code(&base.suites[*bs], *case, *kernel, seed, &c));
        }
    }
    out
}
