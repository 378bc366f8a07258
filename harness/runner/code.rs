//! `trial_codes`: each selected kernel trial's code — this run's and, in paired mode, the base's —
//! computed in this process before anything runs (the executor compiles and identifies each
//! suite once, through the cache: no GPU). Paired mode skips the trials whose code is identical
//! at the base; stored mode compares the code with the baseline's.

use super::trial::Trial;
use super::{Planned, Runner};
use crate::code::trial_code;
use crate::paired::Pairing;
use crate::worker::protocol::SuiteRef;

/// Every trial of `plan`, planned, with the code of each at `selected` (none elsewhere) and in
/// paired mode (`pairing`, per plan index) its base's.
pub(super) fn trial_codes(
    run: &Runner,
    plan: &[Planned],
    selected: &[usize],
    pairing: Option<&[Option<Pairing>]>,
) -> Vec<Trial> {
    let mut out = vec![Trial::default(); plan.len()];
    let seed = run.config.seed;
    for &i in selected {
        let trial = &plan[i];
        let Some((case, kernel)) = trial.case_kernel() else {
            continue;
        };
        let suite = &run.suites[trial.suite];
        out[i].code.code = run
            .executor
            .code(SuiteRef::Head(trial.suite))
            .map(|c| trial_code(suite, case, kernel, seed, &c));
        let (Some(base), Some(pairing)) = (run.base, pairing) else {
            continue;
        };
        if let Some(Pairing::Paired(at)) = &pairing[i] {
            out[i].code.base = run
                .executor
                .code(at.at())
                .map(|c| trial_code(&base.suites[at.suite], at.case, at.kernel, seed, &c));
        }
    }
    out
}
