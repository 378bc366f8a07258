//! `Judged`: one calibration trial's outcome at one `max_slowdown`, decided through the gate's
//! own policy ([`gate::settle`], the confirmation of a change in a fresh worker included) — and
//! `Cell`, the counts the report's tables show.
//!
//! `max_slowdown` is only a number in [`GateInput`]: every threshold is decided from the same
//! samples. When `settle` asks to re-measure an inconclusive trial (at any threshold), the
//! trial is measured once per repetition and that re-measure is reused for every threshold,
//! so the thresholds differ only in the rule, never in the data.

use super::error::CalibrateError;
use crate::gate::{self, GateInput, Verdict};

/// Why a trial entered no family.
#[derive(Debug, Clone, PartialEq)]
pub enum Skip {
    /// The SM clock moved while sampling: a run reports such a trial as unreliable and does
    /// not judge it, so neither does calibration.
    Unreliable,
    /// The measurement failed.
    Failed(CalibrateError),
}

/// One trial at one threshold.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    /// The gate's verdict.
    Verdict(Verdict),
    /// Not judged (see [`Skip`]); a failed re-measure lands here too.
    Skipped(Skip),
}

impl Judged {
    /// Says on stderr why `what` was not judged, when its measurement failed.
    pub fn report_failure(&self, what: &str) {
        if let Judged::Skipped(Skip::Failed(e)) = self {
            eprintln!("calibrate: {what}: not judged: {e}");
        }
    }
}

/// Decides one family of trials (one repetition) at each threshold, through the gate's own
/// policy ([`gate::settle`]) as a run in `confirm`'s mode decides it: `None` keeps each input's
/// own `max_slowdown` (the user's suites), `Some(t)` sets it. `measure` re-measures an
/// inconclusive trial and confirms a change in a fresh worker; each is asked at most once per
/// trial, however many thresholds want it, so the thresholds differ only in the rule. Returns
/// `[threshold][trial]`.
pub fn judge_family(
    first: &[Result<GateInput, Skip>],
    thresholds: &[Option<f64>],
    measure: &mut dyn gate::Measure<CalibrateError>,
    confirm: gate::Confirm,
) -> Vec<Vec<Judged>> {
    let judged: Vec<usize> = (0..first.len()).filter(|&k| first[k].is_ok()).collect();
    let mut once = Once {
        measure,
        judged: &judged,
        again: vec![None; first.len()],
        confirmed: vec![None; first.len()],
        threshold: None,
    };
    thresholds
        .iter()
        .map(|&t| {
            once.threshold = t;
            let family: Vec<GateInput> = first.iter().flatten().map(|g| at(g, t)).collect();
            // One decision per judged trial, in their order.
            let mut decisions = gate::settle(family, Some(&mut once), confirm).into_iter();
            first
                .iter()
                .map(|f| match f {
                    Err(skip) => Judged::Skipped(skip.clone()),
                    Ok(_) => match decisions.next().expect("settle decides every input") {
                        Ok(d) => Judged::Verdict(d.verdict.verdict),
                        Err(e) => Judged::Skipped(Skip::Failed(e)),
                    },
                })
                .collect()
        })
        .collect()
}

/// `g` at threshold `t` (`None`: its own).
fn at(g: &GateInput, t: Option<f64>) -> GateInput {
    GateInput {
        max_slowdown: t.unwrap_or(g.max_slowdown),
        ..g.clone()
    }
}

/// A family's measurements, each made once and reused at every threshold.
struct Once<'m> {
    measure: &'m mut dyn gate::Measure<CalibrateError>,
    /// The family's trials (indices into the repetition's).
    judged: &'m [usize],
    again: Vec<Option<Result<GateInput, CalibrateError>>>,
    confirmed: Vec<Option<Option<GateInput>>>,
    threshold: Option<f64>,
}

impl gate::Measure<CalibrateError> for Once<'_> {
    fn remeasure(&mut self, j: usize) -> Result<GateInput, CalibrateError> {
        let k = self.judged[j];
        let measure = &mut self.measure;
        self.again[k]
            .get_or_insert_with(|| measure.remeasure(k))
            .as_ref()
            .map(|g| at(g, self.threshold))
            .map_err(Clone::clone)
    }

    fn confirm(&mut self, j: usize, first: Verdict) -> Option<GateInput> {
        let k = self.judged[j];
        let measure = &mut self.measure;
        self.confirmed[k]
            .get_or_insert_with(|| measure.confirm(k, first))
            .as_ref()
            .map(|g| at(g, self.threshold))
    }
}

/// Counts over repetitions for one row and one threshold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    /// Repetitions counted.
    pub reps: usize,
    /// Judged `regressed`.
    pub flagged: usize,
    /// Still `inconclusive` after the re-measure.
    pub inconclusive: usize,
    /// Not judged: clocks moved while sampling.
    pub unreliable: usize,
    /// Not judged: a measurement failed.
    pub failed: usize,
}

impl Cell {
    /// Adds one repetition's outcome.
    pub fn add(&mut self, judged: &Judged) {
        self.reps += 1;
        match judged {
            Judged::Verdict(Verdict::Regressed) => self.flagged += 1,
            Judged::Verdict(Verdict::Inconclusive) => self.inconclusive += 1,
            Judged::Verdict(_) => {}
            Judged::Skipped(Skip::Unreliable) => self.unreliable += 1,
            Judged::Skipped(Skip::Failed(_)) => self.failed += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steady(shift: f64, n: usize) -> GateInput {
        let wobble = |i: usize| 1.0 + 0.001 * ((i * 7 % 11) as f64 - 5.0);
        GateInput {
            old_times: (0..n).map(|i| 1e-5 * wobble(i)).collect(),
            new_times: (0..n).map(|i| 1e-5 * shift * wobble(i + 3)).collect(),
            speedups: None,
            max_slowdown: 0.03,
            paired: None,
        }
    }

    /// A 1.5% shift with 6% noise: inconclusive at every threshold from 16 samples.
    fn noisy(n: usize) -> GateInput {
        let wobble = |i: usize| 1.0 + 0.06 * ((i * 7 % 11) as f64 / 10.0 - 0.5);
        GateInput {
            old_times: (0..n).map(|i| 1e-5 * wobble(i)).collect(),
            new_times: (0..n).map(|i| 1e-5 * 1.015 * wobble(i + 3)).collect(),
            speedups: None,
            max_slowdown: 0.03,
            paired: None,
        }
    }

    #[test]
    fn one_remeasure_serves_every_threshold() {
        let first = vec![Ok(steady(1.0, 32)), Ok(noisy(16)), Ok(steady(1.04, 32))];
        let mut asked = Vec::new();
        let mut again = |k: usize| -> Result<GateInput, CalibrateError> {
            asked.push(k);
            Ok(steady(1.015, 64))
        };
        let thresholds = [Some(0.005), Some(0.01), Some(0.02)];
        let mut confirmed = Vec::new();
        let mut fresh = |k: usize, _| {
            confirmed.push(k);
            Some(steady(if k == 1 { 1.015 } else { 1.04 }, 64))
        };
        let mut measure = gate::Measures(&mut again, &mut fresh);
        let out = judge_family(&first, &thresholds, &mut measure, gate::Confirm::Changes);
        assert_eq!(
            confirmed,
            [1, 2],
            "each change confirmed once, however many thresholds see it"
        );
        assert_eq!(
            asked,
            [1],
            "trial 1 measured again once, for three thresholds"
        );
        assert_eq!(out.len(), 3);
        // The re-measured 1.5% slowdown: above 0.5% and 1%, below 2%.
        assert_eq!(out[0][1], Judged::Verdict(Verdict::Regressed));
        assert_eq!(out[1][1], Judged::Verdict(Verdict::Regressed));
        assert_eq!(out[2][1], Judged::Verdict(Verdict::Unchanged));
        for (t, at) in out.iter().enumerate() {
            assert_eq!(at[0], Judged::Verdict(Verdict::Unchanged));
            assert_eq!(at[2], Judged::Verdict(Verdict::Regressed), "4% at {t}");
        }
    }

    #[test]
    fn none_keeps_each_trials_own_max_slowdown() {
        let mut loose = steady(1.04, 32);
        loose.max_slowdown = 0.05;
        let first = vec![Ok(steady(1.04, 32)), Ok(loose)];
        let never = |_: usize| -> Result<GateInput, CalibrateError> {
            panic!("nothing is inconclusive here")
        };
        let mut measure = gate::Measures(never, |_, _| Some(steady(1.04, 64)));
        let out = judge_family(&first, &[None], &mut measure, gate::Confirm::Regressions);
        assert_eq!(out[0][0], Judged::Verdict(Verdict::Regressed));
        assert_eq!(out[0][1], Judged::Verdict(Verdict::Unchanged));
    }

    #[test]
    fn skipped_and_failed_trials_are_counted_not_judged() {
        let failure = CalibrateError::Incomplete {
            what: "x".into(),
            reason: "no samples".into(),
        };
        let first = vec![
            Err(Skip::Unreliable),
            Ok(noisy(16)),
            Err(Skip::Failed(failure.clone())),
        ];
        let again = |_: usize| -> Result<GateInput, CalibrateError> { Err(failure.clone()) };
        let mut measure = gate::Measures(again, |_, _| None);
        let out = judge_family(
            &first,
            &[Some(0.01), Some(0.02)],
            &mut measure,
            gate::Confirm::Changes,
        );
        let mut cells = vec![Cell::default(); 3];
        for (k, cell) in cells.iter_mut().enumerate() {
            cell.add(&out[1][k]);
        }
        assert_eq!(cells[0].unreliable, 1);
        assert_eq!(cells[1].failed, 1, "a failed re-measure is a failure");
        assert_eq!(cells[2].failed, 1);
        assert!(cells.iter().all(|c| c.reps == 1 && c.flagged == 0));
    }
}
