//! `Verdict`: the whole set of verdicts, defined once — for each, its label, whether it fails
//! the run, and which comparison (interval) it is about, which every report prints beside the
//! label — how a trial's time and speedup comparisons become one verdict ([`combine`]), and
//! when a confirmed change is the machine's ([`Verdict::machine`]).
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
//! **The verdicts no comparison decides alone:**
//!
//! | verdict          | from                                                     | about | fails |
//! | ---------------- | -------------------------------------------------------- | ----- | ----- |
//! | `identical code` | paired mode: the whole trial identical at the base (issue 17) | nothing: untimed, or an A/A pair whose interval is evidence, never a change | never |
//! | `machine-slower` | a `regressed` about the time, confirmed in a fresh worker, the same trial as the baseline's with every exact counter equal (issue 18) | the time, as `regressed` | under `KERNELGATE_STRICT_TIME=1` |
//! | `machine-faster` | the same from an `improved` about the time | the time, as `improved` | never |
//!
//! A change about the speedup is never the machine's: its time moved with the reference's, so
//! there is nothing the machine alone would explain ([`Verdict::machine`] says `None`).
//!
//! **Adding a verdict**: a variant in [`Verdict`], its row in [`Verdict::ALL`], its label,
//! whether it fails ([`Verdict::fails`]), which interval it is about ([`Verdict::about`]) and what
//! agreeing with it means ([`Verdict::agrees`]); then `tests/verdicts.rs` checks every report
//! against it.

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
    /// Paired mode: the whole resolved trial is identical at the base — every kernel's code,
    /// the launches, inputs, check and bench settings — so no change of the code's is possible:
    /// it passes, untimed (or, under `KERNELGATE_TIME_IDENTICAL=1`, timed as an A/A pair whose
    /// change is kept as evidence, never as a regression). Never the result of `decide`.
    #[serde(rename = "identical_code")]
    IdenticalCode,
    /// Significantly and meaningfully slower than the stored baseline, with the same code,
    /// launches, inputs, kernelgate and driver and every exact counter equal, after a
    /// re-measure in a fresh worker: the machine's change, not the code's. Passes (a warning),
    /// fails under `KERNELGATE_STRICT_TIME=1`.
    #[serde(rename = "machine-slower")]
    MachineSlower,
    /// Faster than the stored baseline with nothing of the trial changed (see
    /// `MachineSlower`): the machine's.
    #[serde(rename = "machine-faster")]
    MachineFaster,
}

/// What a run fails besides a regression: `KERNELGATE_STRICT=1` (`inconclusive`) and
/// `KERNELGATE_STRICT_TIME=1` (`machine-slower`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strictness {
    /// `KERNELGATE_STRICT=1`: a trial still inconclusive after re-measuring fails.
    pub inconclusive: bool,
    /// `KERNELGATE_STRICT_TIME=1`: a slowdown attributed to the machine fails too.
    pub machine_time: bool,
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
    /// interval still reaches above `t`; unchanged otherwise — the first of them that agrees
    /// with it ([`Verdict::agrees`] is the one statement of each rule).
    pub fn verdict(&self, max_slowdown: f64) -> Verdict {
        [Verdict::Regressed, Verdict::Improved, Verdict::Inconclusive]
            .into_iter()
            .find(|v| v.agrees(self, max_slowdown))
            .unwrap_or(Verdict::Unchanged)
    }
}

impl Verdict {
    /// Every verdict there is.
    pub const ALL: [Verdict; 7] = [
        Verdict::Unchanged,
        Verdict::Improved,
        Verdict::Regressed,
        Verdict::Inconclusive,
        Verdict::IdenticalCode,
        Verdict::MachineSlower,
        Verdict::MachineFaster,
    ];

    /// The word every report prints.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::IdenticalCode => "identical code",
            Verdict::MachineSlower => "machine-slower",
            Verdict::MachineFaster => "machine-faster",
        }
    }

    /// Whether a trial with this verdict fails the run, `strict` as the run is.
    pub fn fails(self, strict: Strictness) -> bool {
        match self {
            Verdict::Regressed => true,
            Verdict::Inconclusive => strict.inconclusive,
            Verdict::MachineSlower => strict.machine_time,
            Verdict::Unchanged
            | Verdict::Improved
            | Verdict::IdenticalCode
            | Verdict::MachineFaster => false,
        }
    }

    /// Whether it is a change the gate decided, significant and beyond `max_slowdown`:
    /// `regressed` or `improved` (what a fresh worker confirms, and what may be the machine's:
    /// [`Verdict::machine`]).
    pub fn changed(self) -> bool {
        matches!(self, Verdict::Regressed | Verdict::Improved)
    }

    /// Whether reports list it under "needs attention": it fails under some strictness
    /// (`regressed`, `inconclusive`, `machine-slower`), or the code's own change (`improved`).
    pub fn needs_attention(self) -> bool {
        let strictest = Strictness {
            inconclusive: true,
            machine_time: true,
        };
        self.fails(strictest) || self == Verdict::Improved
    }

    /// Which comparison this verdict is about by default; [`combine`] says when a trial's
    /// verdict is about its speedup instead. `None`: a verdict no interval decided
    /// (`identical code`: untimed, or an A/A pair's interval kept as evidence).
    pub fn about(self) -> Option<Basis> {
        match self {
            Verdict::IdenticalCode => None,
            _ => Some(Basis::Time),
        }
    }

    /// The machine's verdict for a confirmed change `self`, about `basis`, of a trial nothing
    /// of which changed (code, launches, kernelgate, driver, exact counters): `machine-slower`
    /// for a regression in time, `machine-faster` for an improvement in time; `None` for any
    /// other verdict, and for a change about the speedup (the reference moved with it).
    pub fn machine(self, basis: Basis) -> Option<Verdict> {
        match (self, basis) {
            (Verdict::Regressed, Basis::Time) => Some(Verdict::MachineSlower),
            (Verdict::Improved, Basis::Time) => Some(Verdict::MachineFaster),
            _ => None,
        }
    }

    /// Whether comparison `c` (the one printed beside the label), gated with `max_slowdown`,
    /// agrees with this label: regressed and machine-slower — significant and the whole
    /// interval above `t`; improved and machine-faster — significant and the whole interval
    /// below `1 / t`; inconclusive — the interval reaches above `t`; unchanged — it does not,
    /// and is not a significant improvement; identical code — any interval (it claims none).
    pub fn agrees(self, c: &Comparison, max_slowdown: f64) -> bool {
        let t = 1.0 + max_slowdown;
        let significant = c.p_adjusted < FDR;
        match self {
            Verdict::Regressed | Verdict::MachineSlower => significant && c.low > t,
            Verdict::Improved | Verdict::MachineFaster => significant && c.high < 1.0 / t,
            Verdict::IdenticalCode => true,
            Verdict::Inconclusive => c.high > t,
            Verdict::Unchanged => c.high <= t && !(significant && c.high < 1.0 / t),
        }
    }

    /// How this verdict reads beside comparison `c` (the one printed beside it), gated at
    /// `max_slowdown`, sampled to the relative `precision` target (see [`Reading`]).
    pub fn reading(self, c: &Comparison, max_slowdown: f64, precision: f64) -> Reading {
        let t = 1.0 + max_slowdown;
        let significant = c.p_adjusted < FDR;
        let excludes_one = c.low > 1.0 || c.high < 1.0;
        let half_width = (c.high - c.low) / 2.0 / c.slowdown;
        match self {
            Verdict::Unchanged
                if significant && excludes_one && c.low >= 1.0 / t && c.high <= t =>
            {
                Reading::WithinThreshold
            }
            Verdict::Inconclusive
                if c.low <= t
                    && t <= c.high
                    && half_width <= precision * std::f64::consts::SQRT_2 =>
            {
                Reading::OnThreshold
            }
            _ => Reading::Plain,
        }
    }
}

/// How a verdict reads beside its interval where its plain word would contradict the numbers
/// (criterion's "change within noise threshold"): the gate's decision is unchanged, only the
/// words that describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The verdict's own word.
    Plain,
    /// `unchanged`, but a significant change whose whole interval lies inside the threshold
    /// (`+2.5% [+2.3%, +2.7%] p=1.8e-20` at a 3% threshold): `within threshold`.
    WithinThreshold,
    /// `inconclusive` with an interval that holds the threshold itself and is no wider than
    /// the precision target allows a ratio of two medians each sampled to it (√2 times the
    /// target: `+3.0% [+2.8%, +3.1%]` at 3%): no re-measure can resolve it, it is not too noisy:
    /// `on the threshold`.
    OnThreshold,
}

impl Reading {
    /// The words every report prints for a verdict read this way: `within threshold`, `on the
    /// threshold`, else the verdict's label.
    pub fn phrase(self, v: Verdict) -> &'static str {
        match self {
            Reading::Plain => v.label(),
            Reading::WithinThreshold => "within threshold",
            Reading::OnThreshold => "on the threshold",
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
    /// comparison it is about, and so does the machine's verdict where a confirmed change is
    /// attributed to the machine; only `regressed` (and `inconclusive` under strict,
    /// `machine-slower` under strict time) fails.
    #[test]
    fn every_combined_label_agrees_with_its_interval() {
        let mut seen = std::collections::BTreeSet::new();
        seen.insert(Verdict::IdenticalCode.label());
        let grid = [0.80, 0.95, 0.99, 1.0, 1.01, 1.03, 1.05, 1.2];
        for max_slowdown in [0.0, 0.03, 0.1] {
            for (i, &lo) in grid.iter().enumerate() {
                for &hi in &grid[i..] {
                    for p in [0.001, 0.2] {
                        let time = c(lo, hi, p);
                        assert!(Verdict::IdenticalCode.agrees(&time, max_slowdown));
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
                            if let Some(m) = v.machine(basis) {
                                assert_eq!(m.about(), Some(Basis::Time));
                                assert!(m.agrees(&time, max_slowdown), "{m} about {time:?}");
                                seen.insert(m.label());
                            }
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
        let lax = Strictness::default();
        assert_eq!(
            Verdict::ALL.map(|v| v.fails(lax)),
            [false, false, true, false, false, false, false]
        );
        let strict = Strictness {
            inconclusive: true,
            machine_time: true,
        };
        assert_eq!(
            Verdict::ALL.map(|v| v.fails(strict)),
            [false, false, true, true, false, true, false]
        );
        assert_eq!(
            Verdict::ALL.map(Verdict::needs_attention),
            [false, true, true, true, false, true, false]
        );
        assert_eq!(
            Verdict::ALL.map(Verdict::changed),
            [false, true, true, false, false, false, false]
        );
        assert_eq!(
            Verdict::Improved.machine(Basis::Speedup),
            None,
            "an improvement about the speedup (time slower) is never machine-faster"
        );
    }

    #[test]
    fn labels_and_serde_names_are_unique_and_stable() {
        let names: Vec<String> = Verdict::ALL
            .iter()
            .map(|v| serde_json::to_string(v).unwrap())
            .collect();
        assert_eq!(
            names.join(" "),
            r#""unchanged" "improved" "regressed" "inconclusive" "identical_code" "machine-slower" "machine-faster""#
        );
        for v in Verdict::ALL {
            assert_eq!(v.to_string(), v.label());
            let back: Verdict = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
            assert_eq!(back, v);
        }
    }
}
