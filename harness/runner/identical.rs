//! What a paired run says beyond its verdicts: [`summary`], the trials skipped as identical
//! code with the GPU time that saved (estimated) and the noise of those timed anyway; and
//! [`sass_diffs`], the SASS diff of every kernel whose code changed since the base, computed
//! here (no GPU) so the reports can show it.

use super::{Planned, Runner};
use crate::code::{entry_sass, Role, SuiteCode};
use crate::paired::Pairing;
use crate::report::results::{GateNote, Identical, Noise, SavedFrom, TrialRecord};
use crate::sass::change::KernelDiff;
use crate::sass::change::{kernel_diff, Side};
use crate::sass::disasm::Disassembler;
use crate::sass::listings::Listings;
use std::collections::HashMap;
use std::sync::Arc;

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

/// A kernel of a suite on both sides: (suite index, kernel index) in the candidate's suites and
/// in the base's.
type Both = ((usize, usize), (usize, usize));

/// The kernels whose code changed since the base, once each: every kernel a compared trial's
/// `code_change` names, found on both sides by name.
fn changed_kernels(
    run: &Runner,
    plan: &[Planned],
    pairing: &[Option<Pairing>],
    trials: &[TrialRecord],
) -> Vec<Both> {
    let base = run.base.expect("paired");
    let by_name: HashMap<&str, &TrialRecord> =
        trials.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut out: Vec<Both> = Vec::new();
    for (i, trial) in plan.iter().enumerate() {
        let (
            Some(t),
            Some(Pairing::Paired {
                suite: bs,
                kernel: bk,
                ..
            }),
        ) = (by_name.get(trial.name.as_str()), &pairing[i])
        else {
            continue;
        };
        let Some(change) = &t.code_change else {
            continue;
        };
        let (suite, base_suite) = (&run.suites[trial.suite], &base.suites[*bs]);
        for (role, name) in change.changed_kernels() {
            let head = suite.kernels.iter().position(|k| k.name == name);
            let then = match role {
                Role::Kernel => Some(*bk),
                Role::Reference => Some(base_suite.reference),
            };
            if let (Some(h), Some(b)) = (head, then) {
                let both = ((trial.suite, h), (*bs, b));
                if !out.contains(&both) {
                    out.push(both);
                }
            }
        }
    }
    out
}

/// The SASS diff of every kernel whose code changed since the base, and why some have no SASS
/// (no `nvdisasm`: then each diff says so, and the run goes on).
pub(super) fn sass_diffs(
    run: &Runner,
    plan: &[Planned],
    pairing: &[Option<Pairing>],
    trials: &[TrialRecord],
) -> (Vec<KernelDiff>, Option<String>) {
    let kernels = changed_kernels(run, plan, pairing, trials);
    if kernels.is_empty() {
        return (Vec::new(), None);
    }
    let base = run.base.expect("paired");
    let (disassembler, note) = match Disassembler::find() {
        Ok(d) => (Some(d), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut listings = Listings::new(disassembler);
    let mut out = Vec::new();
    for ((s, k), (bs, bk)) in kernels {
        let code = |i: usize| -> Option<Arc<SuiteCode>> { run.executor.code(i) };
        let (Some(head), Some(then)) = (code(s), code(run.suites.len() + bs)) else {
            continue;
        };
        let (suite, base_suite) = (&run.suites[s], &base.suites[bs]);
        let (Some(new), Some(old)) = (head.kernels.get(k), then.kernels.get(bk)) else {
            continue;
        };
        if old.same_code(new) {
            continue;
        }
        let d = kernel_diff(
            (&suite.name, &suite.kernels[k].name, &head.arch),
            old,
            new,
            note.as_deref(),
            |side, id| match side {
                Side::Base => entry_sass(
                    (base_suite, bk),
                    &then.compiled,
                    &then.arch,
                    id,
                    &mut listings,
                ),
                Side::Head => entry_sass((suite, k), &head.compiled, &head.arch, id, &mut listings),
            },
        );
        out.push(d);
    }
    (out, note)
}
