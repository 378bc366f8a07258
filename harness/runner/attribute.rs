//! `attribute`: a stored-mode time change the gate confirmed in a fresh worker process
//! (`gate::settle`), once its hardware counters are read (the counters pass, after all
//! timing), is attributed
//! ([`attribute_all`]): to the machine (`machine-slower` / `machine-faster`) only when the
//! change persists and nothing of the trial changed — the same code and launches, kernelgate
//! and driver (the baseline's device fingerprint includes the driver), and every counter that
//! was exact across the baseline's units equal; otherwise it stays a regression (or an
//! improvement), and the record names the counters that moved.

use super::trial::Trial;
use crate::baseline::{Entry, StoredCounters};
use crate::code::{CodeChange, TrialCode};
use crate::gate::TrialVerdict;
use crate::measure::counters::changes;

/// What attribution concluded for one trial, from its confirming measurement.
pub(super) fn conclude(
    confirmed: TrialVerdict,
    same_trial: bool,
    old: Option<&StoredCounters>,
    now: Option<&crate::measure::counters::TrialCounters>,
) -> TrialVerdict {
    if !confirmed.verdict.changed() || !same_trial {
        return confirmed;
    }
    let (Some(old), Some(now)) = (old, now) else {
        return confirmed;
    };
    // Nothing exact to compare: the code's innocence cannot be shown.
    if old.stable.is_empty() {
        return confirmed;
    }
    let moved = changes(old, &now.kernel);
    if moved.iter().any(|c| c.stable) {
        return confirmed;
    }
    // A change about the speedup moved with the reference: never the machine's alone.
    match confirmed.verdict.machine(confirmed.basis) {
        Some(verdict) => TrialVerdict {
            verdict,
            ..confirmed
        },
        None => confirmed,
    }
}

/// Whether the measured trial, of `code`, is the baseline's trial: the baseline entry's trial
/// identity equal to this run's (the check that makes a verdict say "same code as the
/// baseline": every kernel's code, the launches, inputs, check and bench settings, the
/// toolchain's identity), the same kernelgate, and the same launches and resources (registers,
/// shared and local memory, block shape, occupancy). A baseline without code (formats 1 and 2)
/// or a run without it is never the same trial: no machine attribution.
pub(super) fn same_trial(old: &Entry, m: &super::Measured, code: Option<&TrialCode>) -> bool {
    let same_code = code.is_some_and(|c| CodeChange::between(old.code.as_ref(), c).is_same());
    same_code
        && old.kernelgate == env!("CARGO_PKG_VERSION")
        && old
            .footprint
            .as_ref()
            .is_some_and(|f| f.launches == m.footprint.launches)
}

/// Attributes every confirmed change marked for it (`Judged::same_trial`), now that its counters have
/// been read ([`conclude`]).
pub(super) fn attribute_all(trials: &mut [Trial]) {
    for (m, j) in trials.iter_mut().filter_map(Trial::judged_mut) {
        let (Some(same), Some(v)) = (j.same_trial, j.verdict) else {
            continue;
        };
        let now = m.counters.as_ref().and_then(|c| c.collected());
        j.verdict = Some(conclude(v, same, j.baseline_counters.as_ref(), now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Comparison, Verdict};
    use crate::measure::counters::{Counter, TrialCounters};

    fn verdict(v: Verdict) -> TrialVerdict {
        let c = Comparison {
            slowdown: 1.05,
            low: 1.04,
            high: 1.06,
            p: 1e-9,
            p_adjusted: 1e-9,
        };
        TrialVerdict {
            verdict: v,
            time: c,
            speedup: None,
            basis: crate::gate::Basis::Time,
        }
    }

    fn stored(instructions: f64) -> StoredCounters {
        let read = |written: f64| {
            [
                (Counter::Instructions, instructions),
                (Counter::DramWriteBytes, written),
            ]
            .into_iter()
            .collect()
        };
        StoredCounters::of(&[read(10.0), read(12.0)]).unwrap()
    }

    fn now(instructions: f64) -> TrialCounters {
        TrialCounters {
            kernel: [
                (Counter::Instructions, instructions),
                (Counter::DramWriteBytes, 99.0),
            ]
            .into_iter()
            .collect(),
            against: None,
        }
    }

    #[test]
    fn the_same_trial_with_equal_exact_counters_is_the_machine() {
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(
            v.verdict,
            Verdict::MachineSlower,
            "DRAM writes are not exact: ignored"
        );
        let v = conclude(
            verdict(Verdict::Improved),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::MachineFaster);
    }

    #[test]
    fn a_moved_exact_counter_or_changed_code_keeps_the_regression() {
        let old = stored(5e5);
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&old),
            Some(&now(5.1e5)),
        );
        assert_eq!(v.verdict, Verdict::Regressed);
        let v = conclude(
            verdict(Verdict::Regressed),
            false,
            Some(&old),
            Some(&now(5e5)),
        );
        assert_eq!(
            v.verdict,
            Verdict::Regressed,
            "changed code is never the machine"
        );
        let v = conclude(verdict(Verdict::Regressed), true, Some(&old), None);
        assert_eq!(v.verdict, Verdict::Regressed, "no counters, no attribution");
        let mut none_exact = old.clone();
        none_exact.stable.clear();
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&none_exact),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::Regressed, "nothing exact to compare");
    }

    #[test]
    fn a_change_that_did_not_persist_takes_the_new_verdict() {
        let v = conclude(
            verdict(Verdict::Unchanged),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::Unchanged);
    }

    /// A trial's code with trial identity `identity`.
    fn code(identity: &str) -> TrialCode {
        let part = "0123456789abcdef".to_string();
        TrialCode {
            version: crate::code::IDENTITY_VERSION,
            identity: identity.into(),
            arch: "sm_90".into(),
            toolchain: crate::sass::Toolchain {
                nvrtc: Some("13.0".into()),
                driver: None,
                kernelgate: env!("CARGO_PKG_VERSION").into(),
            },
            kernels: Vec::new(),
            parts: crate::code::TrialParts {
                launches: part.clone(),
                inputs: part.clone(),
                check: part.clone(),
                bench: part,
            },
        }
    }

    /// A footprint of one launch with `registers` per thread.
    fn footprint(registers: i32) -> crate::measure::Footprint {
        crate::measure::Footprint {
            launches: vec![crate::measure::Resources {
                entry: "fast".into(),
                registers,
                static_shared: 0,
                dynamic_shared: 0,
                local_bytes: 0,
                max_threads: 1024,
                block_threads: 256,
                blocks_per_sm: 8,
            }],
            ..Default::default()
        }
    }

    /// A baseline entry of this kernelgate with code `identity` (none: `None`), 32 registers.
    fn entry(identity: Option<&str>) -> Entry {
        let mut e = crate::runner::tests::entry("fast", 10e-6, 0);
        e.kernelgate = env!("CARGO_PKG_VERSION").into();
        e.code = identity.map(code);
        e.footprint = Some(footprint(32));
        e
    }

    /// A measurement with `registers` per thread.
    fn measured(registers: i32) -> super::super::Measured {
        super::super::Measured {
            ordinal: 0,
            samples: crate::measure::Samples::none(),
            footprint: footprint(registers),
            base_footprint: None,
            seconds: 0.5,
            counters: None,
        }
    }

    #[test]
    fn the_same_trial_is_the_same_identity_kernelgate_and_launches() {
        let now = code("a".repeat(64).as_str());
        let same = entry(Some(&"a".repeat(64)));
        assert!(same_trial(&same, &measured(32), Some(&now)));
        let other = entry(Some(&"b".repeat(64)));
        assert!(
            !same_trial(&other, &measured(32), Some(&now)),
            "another trial identity: the code's change"
        );
        assert!(
            !same_trial(&entry(None), &measured(32), Some(&now)),
            "a baseline without code (format 1 or 2) is never the same trial"
        );
        assert!(
            !same_trial(&same, &measured(32), None),
            "a run without code is never the same trial"
        );
        assert!(
            !same_trial(&same, &measured(40), Some(&now)),
            "other resources"
        );
        let mut older = same.clone();
        older.kernelgate = "0.0.1".into();
        assert!(
            !same_trial(&older, &measured(32), Some(&now)),
            "another kernelgate"
        );
    }
}
