//! A paired run's SASS diffs: the diff of every kernel whose code changed since the base,
//! computed in this process (no GPU) so the reports can show it. `nvdisasm` costs about a third
//! of a second per module however small, so the diffs are not left for the end: the kernels
//! that will need one are known as soon as the trials' code is ([`expected`]), and they are made
//! on a thread of their own, their modules disassembled in parallel, while the trials run
//! ([`alongside`]); the run then keeps the diffs its records call for ([`pick`]), making any
//! that is missing.

use super::trial::Trial;
use super::{Planned, Runner};
use crate::code::{entry_sass, kernel_cubin, CodeChange, Role, SuiteCode};
use crate::device::compile::Compiled;
use crate::paired::Pairing;
use crate::report::results::TrialRecord;
use crate::sass::change::{kernel_diff, KernelDiff, Side};
use crate::sass::disasm::Disassembler;
use crate::sass::listings::Listings;
use crate::sass::KernelCode;
use crate::suite::Suite;
use crate::worker::protocol::SuiteRef;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// A kernel of a suite on both sides: (suite index, kernel index) in the candidate's suites and
/// in the base's.
pub(super) type Both = ((usize, usize), (usize, usize));

/// SASS diffs made for a paired run.
#[derive(Debug, Default)]
pub(super) struct Made {
    /// Per kernel asked for: its diff, or `None` where there is none to make (the same code
    /// on both sides, or a side's code not known).
    diffs: Vec<(Both, Option<KernelDiff>)>,
    /// Why there is no SASS (no `nvdisasm`), when there is none.
    note: Option<String>,
    /// Seconds making them.
    seconds: f64,
}

/// The code change of every trial of `timed` paired with its base, by plan index, as its
/// record will name it (`record::record`): known before anything runs.
pub(super) fn expected(
    timed: &[usize],
    pairing: &[Option<Pairing>],
    trials: &[Trial],
) -> Vec<(usize, CodeChange)> {
    timed
        .iter()
        .filter_map(|&i| {
            let (Some(Pairing::Paired(_)), Some(code), Some(base)) =
                (&pairing[i], &trials[i].code.code, &trials[i].code.base)
            else {
                return None;
            };
            Some((i, CodeChange::between(Some(base), code)))
        })
        .collect()
}

/// The code change each of `trials` names, by plan index, in plan order.
fn recorded(plan: &[Planned], trials: &[TrialRecord]) -> Vec<(usize, CodeChange)> {
    let by_name: HashMap<&str, &TrialRecord> =
        trials.iter().map(|t| (t.name.as_str(), t)).collect();
    plan.iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, by_name.get(p.name.as_str())?.code_change.clone()?)))
        .collect()
}

/// The kernels whose code changed since the base, once each: every kernel the `changes` (by
/// plan index) name, found on both sides by name.
pub(super) fn changed_kernels(
    run: &Runner,
    plan: &[Planned],
    pairing: &[Option<Pairing>],
    changes: &[(usize, CodeChange)],
) -> Vec<Both> {
    let base = run.base.expect("paired");
    let mut out: Vec<Both> = Vec::new();
    for (i, change) in changes {
        let Some(Pairing::Paired(at)) = &pairing[*i] else {
            continue;
        };
        let trial = &plan[*i];
        let (suite, base_suite) = (&run.suites[trial.suite], &base.suites[at.suite]);
        let changed = change.changed_kernels().into_iter();
        out.extend(changed.filter_map(|(role, name)| {
            let head = suite.kernels.iter().position(|k| k.name == name)?;
            let then = match role {
                Role::Kernel => at.kernel,
                Role::Reference => base_suite.reference,
            };
            Some(((trial.suite, head), (at.suite, then)))
        }));
    }
    crate::order::first_seen(out)
}

/// Runs `work` (executing and judging the trials) while the SASS diffs of `kernels` are made
/// on a thread of their own; returns what `work` returned, the diffs, and how long the run
/// then waited for them.
pub(super) fn alongside<R>(
    run: &Runner,
    kernels: &[Both],
    work: impl FnOnce() -> R,
) -> (R, Made, f64) {
    if kernels.is_empty() {
        return (work(), Made::default(), 0.0);
    }
    std::thread::scope(|scope| {
        let making = scope.spawn(|| make(run, kernels));
        let done = work();
        let waiting = Instant::now();
        let made = making
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (done, made, waiting.elapsed().as_secs_f64())
    })
}

/// Both sides' code of a kernel, where both are known.
type Sides = (Both, Arc<SuiteCode>, Arc<SuiteCode>);

/// Makes the SASS diff of each of `kernels` whose code differs between the sides, every module
/// they read disassembled at once ([`kernel_diffs`]).
fn make(run: &Runner, kernels: &[Both]) -> Made {
    let start = Instant::now();
    if kernels.is_empty() {
        return Made::default();
    }
    let base = run.base.expect("paired");
    let (mut listings, note) = sass_listings(&run.config.cache);
    let code = |at: SuiteRef| -> Option<Arc<SuiteCode>> { run.executor.code(at) };
    let sides: Vec<Sides> = kernels
        .iter()
        .filter_map(|&b| {
            let ((s, k), (bs, bk)) = b;
            let (head, then) = (code(SuiteRef::Head(s))?, code(SuiteRef::Base(bs))?);
            let differs = !then.kernels.get(bk)?.same_code(head.kernels.get(k)?);
            differs.then_some((b, head, then))
        })
        .collect();
    let pairs: Vec<[Sided; 2]> = (sides.iter())
        .map(|(((s, k), (bs, bk)), head, then)| {
            [
                Sided::of(&base.suites[*bs], *bk, then),
                Sided::of(&run.suites[*s], *k, head),
            ]
        })
        .collect();
    let made = kernel_diffs(&pairs, note.as_deref(), &mut listings);
    let mut diffs: Vec<(Both, Option<KernelDiff>)> = kernels.iter().map(|&b| (b, None)).collect();
    for ((both, ..), d) in sides.iter().zip(made) {
        if let Some(slot) = diffs.iter_mut().find(|(b, _)| b == both) {
            slot.1 = Some(d);
        }
    }
    Made {
        diffs,
        note,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Listings kept in the compile cache folder `cache`, with `nvdisasm` where it is found; why
/// there is no SASS where it is not.
pub fn sass_listings(cache: &Path) -> (Listings, Option<String>) {
    let (disassembler, note) = match Disassembler::find() {
        Ok(d) => (Some(d), None),
        Err(e) => (None, Some(e.to_string())),
    };
    (Listings::new(disassembler).kept_in(cache), note)
}

/// One side of a kernel's SASS diff: its suite and its index there, its code, and the suite's
/// modules as compiled for `arch`.
pub struct Sided<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// The kernel's index in the suite.
    pub kernel: usize,
    /// The kernel's code.
    pub code: &'a KernelCode,
    /// The suite's compiled modules, by source index.
    pub compiled: &'a [(usize, Compiled)],
    /// Their architecture.
    pub arch: &'a str,
}

impl<'a> Sided<'a> {
    /// Kernel `kernel` of `suite`, whose code (and modules) `code` holds.
    pub fn of(suite: &'a Suite, kernel: usize, code: &'a SuiteCode) -> Sided<'a> {
        Sided {
            suite,
            kernel,
            code: &code.kernels[kernel],
            compiled: &code.compiled,
            arch: &code.arch,
        }
    }
}

/// The SASS diff of each `[base, head]` pair, named by its head side, every module they read
/// disassembled at once ([`Listings::prefetch`]); `note` says why there is no SASS, where there
/// is none.
pub fn kernel_diffs(
    pairs: &[[Sided; 2]],
    note: Option<&str>,
    listings: &mut Listings,
) -> Vec<KernelDiff> {
    let cubins = pairs.iter().flatten();
    listings.prefetch(cubins.filter_map(|s| kernel_cubin((s.suite, s.kernel), s.compiled, s.arch)));
    (pairs.iter())
        .map(|[was, is]| {
            let name = (
                &is.suite.name[..],
                &is.suite.kernels[is.kernel].name[..],
                is.arch,
            );
            kernel_diff(name, was.code, is.code, note, |side, id| {
                let s = match side {
                    Side::Base => was,
                    Side::Head => is,
                };
                entry_sass((s.suite, s.kernel), s.compiled, s.arch, id, listings)
            })
        })
        .collect()
}

/// The SASS diff of every kernel whose code changed since the base, as the records name them
/// (in plan order), taken from `made` and any missing made now; why some have no SASS (no
/// `nvdisasm`: then each diff says so, and the run goes on); and the seconds all that took and,
/// of them, those made now.
pub(super) fn pick(
    run: &Runner,
    (plan, pairing): (&[Planned], &[Option<Pairing>]),
    trials: &[TrialRecord],
    made: Made,
) -> (Vec<KernelDiff>, Option<String>, (f64, f64)) {
    let kernels = changed_kernels(run, plan, pairing, &recorded(plan, trials));
    let before = made.seconds;
    if kernels.is_empty() {
        return (Vec::new(), None, (before, 0.0));
    }
    let missing: Vec<Both> = kernels
        .iter()
        .filter(|k| !made.diffs.iter().any(|(b, _)| b == *k))
        .copied()
        .collect();
    let more = make(run, &missing);
    let now = more.seconds;
    let note = made.note.or(more.note);
    let mut all: Vec<(Both, Option<KernelDiff>)> =
        made.diffs.into_iter().chain(more.diffs).collect();
    let diffs = kernels
        .iter()
        .filter_map(|k| all.iter_mut().find(|(b, _)| b == k)?.1.take())
        .collect();
    (diffs, note, (before + now, now))
}
