//! `Verdict`: the whole set of verdicts, defined once — for each, its label, whether it fails
//! the run, and which comparison (interval) it is about, which every report prints beside the
//! label — and how a trial's time and speedup comparisons become one verdict ([`combine`]).
//!
//! **The rule every report keeps: a label agrees with the interval printed beside it.**
//! `improved` and `regressed` are about the trial's *time* unless said otherwise. Seen before
//! this: `reduce::two_pass::n=4194304 │ improved +0.1% [-0.4%, +0.7%]` — the label came from the
//! speedup over the reference while the time interval was printed beside it. Now:
//!
//! | time \ speedup        | regressed    | inconclusive | unchanged / improved          |
//! | --------------------- | ------------ | ------------ | ----------------------------- |
//! | regressed             | regressed    | inconclusive | the speedup's verdict, about the speedup (the reference slowed as much: the GPU, not the kernel) |
//! | inconclusive          | inconclusive | inconclusive | the speedup's verdict, about the speedup |
//! | unchanged / improved  | the time's verdict, about the time, with the note "speedup vs reference +x% [..]" when the speedup moved ||
//!
//! The reference's own trial has no speedup: its verdict is its time's.
//!
//! **Adding a verdict** (issue 17's `IdenticalCode`, issue 18's `MachineSlower` /
//! `MachineFaster`): a variant in [`Verdict`], its row in [`Verdict::ALL`], its label, whether it
//! fails ([`Verdict::fails`]), which interval it is about ([`Verdict::about`]: `None` for a
//! verdict that timed nothing) and what agreeing with it means ([`Verdict::agrees`]); then
//! `tests/verdicts.rs` checks every report against it. Issue 18's machine verdicts take the
//! first row's and column's "reference slowed as much" cells, about the time.

use serde::{Deserialize, Serialize};

/// False discovery rate of the regression test across one run.
pub const FDR: f64 = 0.05;

/// The gate's decision for one quantity or one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No meaningful change.
    Unchanged,
    /// Significantly and meaningfully faster.
    Improved,
    /// Significantly and meaningfully slower: fails.
    Regressed,
    /// Too noisy to tell whether it is meaningfully slower.
    Inconclusive,
}

/// Which comparison a verdict is about: the one whose interval is printed beside its label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The trial's time against its baseline or base.
    #[default]
    Time,
    /// Its speedup over the reference kernel (as a slowdown factor: old speedup / new).
    Speedup,
}

/// One quantity compared between baseline and now.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Slowdown factor estimate (> 1: worse).
    pub slowdown: f64,
    /// Lower end of its 95% interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Mann–Whitney two-sided p-value.
    pub p: f64,
    /// p after Benjamini–Hochberg across the run.
    pub p_adjusted: f64,
}

impl Comparison {
    /// The verdict for this quantity with `max_slowdown` (e.g. 0.03), `t = 1 + max_slowdown`:
    /// regressed when significant (adjusted p < [`FDR`]) and the whole interval above `t`;
    /// improved when significant and the whole interval below `1 / t`; inconclusive when the
    /// interval still reaches above `t`; unchanged otherwise.
    pub fn verdict(&self, max_slowdown: f64) -> Verdict {
        let t = 1.0 + max_slowdown;
        let significant = self.p_adjusted < FDR;
        if significant && self.low > t {
            Verdict::Regressed
        } else if significant && self.high < 1.0 / t {
            Verdict::Improved
        } else if self.high > t {
            Verdict::Inconclusive
        } else {
            Verdict::Unchanged
        }
    }
}

impl Verdict {
    /// Every verdict there is.
    pub const ALL: [Verdict; 4] = [
        Verdict::Unchanged,
        Verdict::Improved,
        Verdict::Regressed,
        Verdict::Inconclusive,
    ];

    /// The word every report prints.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Whether a trial with this verdict fails the run (`strict`: `KERNELGATE_STRICT=1`).
    pub fn fails(self, strict: bool) -> bool {
        match self {
            Verdict::Regressed => true,
            Verdict::Inconclusive => strict,
            Verdict::Unchanged | Verdict::Improved => false,
        }
    }

    /// Which comparison this verdict is about by default; [`combine`] says when a trial's
    /// verdict is about its speedup instead. `None` would be a verdict that timed nothing.
    pub fn about(self) -> Option<Basis> {
        Some(Basis::Time)
    }

    /// Whether comparison `c` (the one printed beside the label), gated with `max_slowdown`,
    /// agrees with this label: regressed — significant and the whole interval above `t`;
    /// improved — significant and the whole interval below `1 / t`; inconclusive — the interval
    /// reaches above `t`; unchanged — it does not, and is not a significant improvement.
    pub fn agrees(self, c: &Comparison, max_slowdown: f64) -> bool {
        let t = 1.0 + max_slowdown;
        let significant = c.p_adjusted < FDR;
        match self {
            Verdict::Regressed => significant && c.low > t,
            Verdict::Improved => significant && c.high < 1.0 / t,
            Verdict::Inconclusive => c.high > t,
            Verdict::Unchanged => c.high <= t && !(significant && c.high < 1.0 / t),
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// A trial's verdict from its time verdict and its speedup verdict (absent for the reference),
/// with the comparison it is about (see the table above).
pub fn combine(time: Verdict, speedup: Option<Verdict>) -> (Verdict, Basis) {
    use Verdict::*;
    let Some(speedup) = speedup else {
        return (time, Basis::Time);
    };
    let slower = |v| matches!(v, Regressed | Inconclusive);
    match (time, speedup) {
        (Regressed, Regressed) => (Regressed, Basis::Time),
        (t, s) if slower(t) && slower(s) => (Inconclusive, Basis::Time),
        // Slower in time, but not against the reference: the reference slowed as much.
        (t, s) if slower(t) => (s, Basis::Speedup),
        (t, _) => (t, Basis::Time),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(low: f64, high: f64, p: f64) -> Comparison {
        Comparison {
            slowdown: (low + high) / 2.0,
            low,
            high,
            p,
            p_adjusted: p,
        }
    }

    #[test]
    fn verdict_rules() {
        assert_eq!(c(1.05, 1.08, 0.001).verdict(0.03), Verdict::Regressed);
        assert_eq!(
            c(1.05, 1.08, 0.2).verdict(0.03),
            Verdict::Inconclusive,
            "not significant after BH"
        );
        assert_eq!(
            c(1.01, 1.05, 0.001).verdict(0.03),
            Verdict::Inconclusive,
            "interval straddles t"
        );
        assert_eq!(
            c(1.005, 1.02, 0.001).verdict(0.03),
            Verdict::Unchanged,
            "real but below max_slowdown"
        );
        assert_eq!(c(0.90, 0.95, 0.001).verdict(0.03), Verdict::Improved);
        assert_eq!(c(0.99, 1.01, 0.6).verdict(0.03), Verdict::Unchanged);
    }

    #[test]
    fn time_and_speedup_combine() {
        use Verdict::*;
        let time = Basis::Time;
        let speedup = Basis::Speedup;
        assert_eq!(combine(Regressed, None), (Regressed, time), "the reference");
        assert_eq!(combine(Regressed, Some(Regressed)), (Regressed, time));
        assert_eq!(
            combine(Regressed, Some(Unchanged)),
            (Unchanged, speedup),
            "the reference slowed as much: about the speedup"
        );
        assert_eq!(combine(Regressed, Some(Inconclusive)), (Inconclusive, time));
        assert_eq!(
            combine(Inconclusive, Some(Inconclusive)),
            (Inconclusive, time)
        );
        assert_eq!(
            combine(Unchanged, Some(Improved)),
            (Unchanged, time),
            "a speedup-only change is unchanged (seen: `improved +0.1% [-0.4%, +0.7%]`)"
        );
        assert_eq!(combine(Improved, Some(Unchanged)), (Improved, time));
        assert_eq!(
            combine(Unchanged, Some(Regressed)),
            (Unchanged, time),
            "the reference got faster"
        );
    }

    /// Every verdict, for every pair of comparisons: the trial's label agrees with the
    /// comparison it is about, and only `regressed` (and `inconclusive` under strict) fails.
    #[test]
    fn every_combined_label_agrees_with_its_interval() {
        let mut seen = std::collections::BTreeSet::new();
        let grid = [0.80, 0.95, 0.99, 1.0, 1.01, 1.03, 1.05, 1.2];
        for max_slowdown in [0.0, 0.03, 0.1] {
            for (i, &lo) in grid.iter().enumerate() {
                for &hi in &grid[i..] {
                    for p in [0.001, 0.2] {
                        let time = c(lo, hi, p);
                        for s in [
                            None,
                            Some(c(0.9, 0.95, 0.001)),
                            Some(c(0.98, 1.01, 0.5)),
                            Some(c(1.05, 1.1, 0.001)),
                            Some(c(0.99, 1.2, 0.3)),
                        ] {
                            let (v, basis) = combine(
                                time.verdict(max_slowdown),
                                s.map(|s| s.verdict(max_slowdown)),
                            );
                            let about = match basis {
                                Basis::Time => time,
                                Basis::Speedup => s.expect("only with a speedup"),
                            };
                            assert!(
                                v.agrees(&about, max_slowdown),
                                "{v} about {basis:?} {about:?} (time {time:?}, speedup {s:?})"
                            );
                            seen.insert(v.label());
                        }
                    }
                }
            }
        }
        assert_eq!(
            seen.len(),
            Verdict::ALL.len(),
            "every verdict occurs: {seen:?}"
        );
        assert_eq!(
            Verdict::ALL.map(|v| v.fails(false)),
            [false, false, true, false]
        );
        assert!(Verdict::Inconclusive.fails(true));
    }
}
