//! `Judged`: what `history --check` decides — each trend's latest run against the runs before
//! it, by the stored gate's own rule: the trailing runs' samples pooled as a stored baseline
//! pools its runs, `max_slowdown` widened by the spread between their medians
//! ([`GateInput::stored`]), and every trend's latest run decided in one false-discovery-rate
//! family ([`gate::decide`]), as a run decides its trials.
//!
//! The trailing runs are found by replaying the trend from `--since`: a run the rule finds
//! regressed is left out of the window of the runs after it, as a regressed run is never
//! blessed — so a step is flagged from its first slow run, and still the run after. Runs
//! whose times were unreliable are neither judged nor trailing runs.

use super::drift::{Trend, TrendPoint};
use crate::baseline::{pool, spread, MAX_RUNS};
use crate::gate::{self, GateInput, TrialVerdict, Verdict};

/// Fewest trailing runs a latest run is judged against (a stored baseline needs one run; a
/// trend's spread needs a few).
pub const MIN_TRAILING_RUNS: usize = 3;

/// One trend's latest run, judged.
#[derive(Debug, Clone)]
pub struct Judged<'a> {
    /// The trend.
    pub trend: &'a Trend,
    /// Its latest run (index into the history's runs).
    pub latest: usize,
    /// The trailing runs it was judged against (indices into the history's runs).
    pub window: Vec<usize>,
    /// The level of the trailing runs: the median of their medians, seconds.
    pub level: f64,
    /// The gate's verdict, decided in one family with every other trend's latest run.
    pub verdict: TrialVerdict,
    /// The threshold it was gated with: `max_slowdown` widened by the window's spread.
    pub threshold: f64,
    /// The first run of the slow stretch that ends at the latest run (the latest run itself
    /// where the run before it was not slow).
    pub first_bad: usize,
}

/// What a check found: the judged trends (one family of `judged.len()`), and the trends with
/// too few runs since `--since` to judge.
#[derive(Debug, Clone, Default)]
pub struct Check<'a> {
    /// The trends whose latest run was judged.
    pub judged: Vec<Judged<'a>>,
    /// The trends with fewer than [`MIN_TRAILING_RUNS`] usable runs before their latest.
    pub too_few: Vec<&'a Trend>,
}

/// The gate's input for `new` against the trailing runs `window`.
fn input(window: &[&TrendPoint], new: &TrendPoint, max_slowdown: f64) -> GateInput {
    let times: Vec<&[f64]> = window.iter().map(|p| &p.stored.samples[..]).collect();
    // A speedup is compared only where every trailing run has one.
    let speedups: Vec<&[f64]> = match window.iter().all(|p| !p.stored.speedups.is_empty()) {
        true => window.iter().map(|p| &p.stored.speedups[..]).collect(),
        false => Vec::new(),
    };
    GateInput::stored(
        (pool(&times), pool(&speedups)),
        spread(window.iter().map(|p| p.median)),
        (new.stored.samples.clone(), new.stored.speedups.clone()),
        max_slowdown,
    )
}

/// The last [`MAX_RUNS`] of `accepted`, as a baseline keeps its last runs.
fn trailing<'p>(accepted: &[&'p TrendPoint]) -> Vec<&'p TrendPoint> {
    accepted[accepted.len().saturating_sub(MAX_RUNS)..].to_vec()
}

/// One trend replayed from run `since`: its latest run's gate input, the trailing runs it is
/// judged against and their level, and where the slow stretch ending at it began.
struct Replayed {
    input: GateInput,
    latest: usize,
    window: Vec<usize>,
    level: f64,
    slow_since: Option<usize>,
}

/// Replays trend `t` from run `since` ([`Replayed`]); `None` where it has too few usable runs.
fn replay(t: &Trend, since: usize, max_slowdown: f64) -> Option<Replayed> {
    let points: Vec<&TrendPoint> = t
        .points
        .iter()
        .filter(|p| p.run >= since && !p.stored.unreliable && !p.stored.samples.is_empty())
        .collect();
    let (latest, before) = points.split_last()?;
    let mut accepted: Vec<&TrendPoint> = Vec::new();
    let mut slow_since: Option<usize> = None;
    for p in before {
        if accepted.len() >= MIN_TRAILING_RUNS {
            let one = gate::decide(&[input(&trailing(&accepted), p, max_slowdown)]);
            match one[0].verdict {
                Verdict::Regressed => {
                    slow_since.get_or_insert(p.run);
                    continue;
                }
                // A faster level starts the trailing runs afresh, as a re-bless would: two
                // levels in one window would widen its spread by the step.
                Verdict::Improved => accepted.clear(),
                _ => {}
            }
        }
        slow_since = None;
        accepted.push(p);
    }
    if accepted.len() < MIN_TRAILING_RUNS {
        return None;
    }
    let window = trailing(&accepted);
    Some(Replayed {
        input: input(&window, latest, max_slowdown),
        latest: latest.run,
        window: window.iter().map(|p| p.run).collect(),
        level: super::drift::level(window.iter().copied()),
        slow_since,
    })
}

/// Judges every trend's latest run at or after run `since` (an index into the history's runs)
/// against its trailing runs, all in one family; `max_slowdown` overrides each trend's own.
pub fn check(trends: &[Trend], since: usize, max_slowdown: Option<f64>) -> Check<'_> {
    let mut out = Check::default();
    let mut pending: Vec<(&Trend, Replayed)> = Vec::new();
    for t in trends {
        let threshold = max_slowdown.unwrap_or(t.max_slowdown);
        match replay(t, since, threshold) {
            Some(found) => pending.push((t, found)),
            None if t.points.iter().any(|p| p.run >= since) => out.too_few.push(t),
            None => {}
        }
    }
    let inputs: Vec<GateInput> = pending.iter().map(|(_, r)| r.input.clone()).collect();
    for ((t, r), verdict) in pending.into_iter().zip(gate::decide(&inputs)) {
        let regressed = verdict.verdict == Verdict::Regressed;
        out.judged.push(Judged {
            trend: t,
            latest: r.latest,
            window: r.window,
            level: r.level,
            verdict,
            threshold: r.input.max_slowdown,
            first_bad: r.slow_since.filter(|_| regressed).unwrap_or(r.latest),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Point;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, LogNormal, Normal};

    /// A trend of `levels.len()` runs: run `i` at `levels[i]` times 10 µs, moved by a run
    /// offset of relative spread `offset`, each run 24 samples with 0.3% noise.
    fn trend(name: &str, levels: &[f64], offset: f64, rng: &mut ChaCha8Rng) -> Trend {
        let noise = LogNormal::new(0.0, 0.003).unwrap();
        let shift = Normal::new(0.0, offset).unwrap();
        let points = levels
            .iter()
            .enumerate()
            .map(|(run, level)| {
                let at = 10e-6 * level * shift.sample(rng).exp();
                let samples: Vec<f64> = (0..24).map(|_| at * noise.sample(rng)).collect();
                TrendPoint {
                    run,
                    median: crate::stats::Summary::of(&samples).unwrap().median,
                    stored: Point {
                        samples,
                        ..Default::default()
                    },
                }
            })
            .collect();
        Trend {
            name: name.into(),
            suite: "s".into(),
            device: "GPU".into(),
            regime: Some("cold".into()),
            points,
            failures: Vec::new(),
            max_slowdown: 0.03,
            change_points: Vec::new(),
        }
    }

    /// A +30% step is flagged at its first slow run after 5, 10, 30 and 60 flat runs (0.3%
    /// noise, the others flat), and at its second still, named from the first.
    #[test]
    fn a_step_is_flagged_from_its_first_slow_run() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for flat in [5, 10, 30, 60] {
            for slow in [1, 2] {
                let mut levels = vec![1.0; flat];
                levels.extend(std::iter::repeat_n(1.3, slow));
                let mut trends = vec![trend("s::stepped", &levels, 0.003, &mut rng)];
                for k in 0..8 {
                    trends.push(trend(
                        &format!("s::flat{k}"),
                        &vec![1.0; flat + slow],
                        0.003,
                        &mut rng,
                    ));
                }
                let found = check(&trends, 0, None);
                assert_eq!(found.judged.len(), 9, "one family of every trend");
                let flagged: Vec<&Judged> = found
                    .judged
                    .iter()
                    .filter(|j| j.verdict.verdict == Verdict::Regressed)
                    .collect();
                assert_eq!(flagged.len(), 1, "{flat} flat, {slow} slow");
                let j = flagged[0];
                assert_eq!(j.trend.name, "s::stepped");
                assert_eq!(j.latest, flat + slow - 1);
                assert_eq!(
                    j.first_bad, flat,
                    "{flat} flat, {slow} slow: the first slow run"
                );
                assert!(
                    j.window.iter().all(|&r| r < flat),
                    "no slow run is a trailing run"
                );
            }
        }
    }

    /// After a faster level (an improvement), the trailing runs start afresh: a +10% step from
    /// the new level is flagged, not hidden by a window spanning both levels.
    #[test]
    fn an_improvement_starts_the_trailing_runs_afresh() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut levels = vec![1.0; 10];
        levels.extend(std::iter::repeat_n(0.8, 6));
        levels.push(0.88);
        let trends = vec![trend("s::k", &levels, 0.003, &mut rng)];
        let found = check(&trends, 0, None);
        let j = &found.judged[0];
        assert_eq!(j.verdict.verdict, Verdict::Regressed, "{:?}", j.verdict);
        assert!(j.window.iter().all(|&r| r >= 10), "{:?}", j.window);
    }

    /// Flat series whose runs move by σ = 1% between runs: 100 trends of 6 to 30 runs checked
    /// as one family raise no more alarms than the gate's A/A rate (1%: `gate::settle`'s own
    /// test allows 10 in 1000); too short a series is not judged.
    #[test]
    fn flat_series_with_run_offsets_raise_no_more_alarms_than_the_gate() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let trends: Vec<Trend> = (0..100)
            .map(|k| trend(&format!("s::k{k}"), &vec![1.0; 6 + k % 25], 0.01, &mut rng))
            .collect();
        let found = check(&trends, 0, None);
        assert_eq!(found.judged.len(), 100);
        let alarms = found
            .judged
            .iter()
            .filter(|j| j.verdict.verdict == Verdict::Regressed)
            .count();
        assert!(alarms <= 1, "{alarms} of 100 flat trends flagged");
        let short = vec![trend("s::short", &[1.0, 1.0, 1.3], 0.0, &mut rng)];
        let found = check(&short, 0, None);
        assert!(found.judged.is_empty());
        assert_eq!(found.too_few.len(), 1);
    }
}
