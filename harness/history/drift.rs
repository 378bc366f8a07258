//! `Trend`: one trial's medians in one timing regime over the runs of a history, split into
//! levels by change-point detection on log-times (information for the table and the trend page;
//! `history --check` decides by the gate's rule, `check.rs`), with the runs where it failed;
//! `RegimeSwitch`: where a trial's regime changed
//! (graph and cold times are never one trend, so a switch is shown, never counted as drift).

use super::store::{Point, Run};
use crate::report::duration;
use crate::stats::changepoint::{e_divisive, ChangePoint, Options};
use crate::stats::Summary;

/// One timed run of a trend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrendPoint {
    /// Index into the history's runs.
    pub run: usize,
    /// Median time, seconds.
    pub median: f64,
    /// The trial's row that run, as stored: its verdict, whether it failed, its samples and
    /// speedups, whether its times were unreliable.
    pub stored: Point,
}

/// One trial on one device in one regime over the history, oldest run first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trend {
    /// The trial.
    pub name: String,
    /// Its suite.
    pub suite: String,
    /// The device it ran on.
    pub device: String,
    /// The timing regime of every point (`None`: never timed, only failures).
    pub regime: Option<String>,
    /// Its timed runs.
    pub points: Vec<TrendPoint>,
    /// Runs (indices into the history's runs) where it failed without a time (a wrong output,
    /// a fault), attached to the trend of the regime it last ran in.
    pub failures: Vec<usize>,
    /// The suite's `max_slowdown` in the latest run.
    pub max_slowdown: f64,
    /// Level shifts; `index` is into `points`.
    pub change_points: Vec<ChangePoint>,
}

/// Where a trial's timing regime changed between two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegimeSwitch {
    /// The trial.
    pub name: String,
    /// The device.
    pub device: String,
    /// The regime before, and after.
    pub regimes: (String, String),
    /// The last run in the old regime and the first in the new (indices into the runs).
    pub runs: (usize, usize),
}

/// Groups `points` into trends (one per trial, device and regime) over `runs` (in the order
/// the history is read), attaches failures without a time, and finds change points.
pub fn trends(runs: &[Run], points: &[Point], options: &Options) -> Vec<Trend> {
    let index = |id: i64| runs.iter().position(|r| r.id == id);
    let mut out: Vec<Trend> = Vec::new();
    let mut untimed: Vec<(&Point, usize)> = Vec::new();
    // A new trend of `p`'s trial on `device`, with no points or failures yet (its
    // `max_slowdown` is its latest run's, below).
    let trend = |p: &Point, device: &String, regime: Option<String>| Trend {
        name: p.name.clone(),
        suite: p.suite.clone(),
        device: device.clone(),
        regime,
        ..Trend::default()
    };
    for p in points {
        let Some(i) = index(p.run) else { continue };
        let Some(median) = p.median else {
            untimed.push((p, i));
            continue;
        };
        let device = &runs[i].device;
        let point = TrendPoint {
            run: i,
            median,
            stored: p.clone(),
        };
        match out
            .iter_mut()
            .find(|t| t.name == p.name && &t.device == device && t.regime == p.regime)
        {
            Some(t) => t.points.push(point),
            None => out.push(Trend {
                points: vec![point],
                ..trend(p, device, p.regime.clone())
            }),
        }
    }
    for (p, run) in untimed {
        let device = &runs[run].device;
        let same = |t: &Trend| t.name == p.name && &t.device == device;
        // The regime it last ran in before this run; else the first it ran in; else a trend
        // of failures alone.
        let last_before = (out.iter().enumerate())
            .filter(|(_, t)| same(t))
            .flat_map(|(k, t)| t.points.iter().map(move |x| (x.run, k)))
            .filter(|&(r, _)| r < run)
            .max()
            .map(|(_, k)| k);
        let first = out.iter().position(same);
        match last_before.or(first) {
            Some(k) => out[k].failures.push(run),
            None => out.push(Trend {
                failures: vec![run],
                ..trend(p, device, None)
            }),
        }
    }
    for t in &mut out {
        t.points.sort_by_key(|p| p.run);
        t.failures.sort_unstable();
        if let Some(last) = points
            .iter()
            .filter(|p| p.name == t.name)
            .max_by_key(|p| index(p.run))
        {
            t.max_slowdown = last.max_slowdown;
        }
        let logs: Vec<f64> = t.points.iter().map(|p| p.median.ln()).collect();
        t.change_points = e_divisive(&logs, options);
    }
    out
}

/// Every change of regime of a trial on a device, in run order.
pub fn regime_switches(trends: &[Trend]) -> Vec<RegimeSwitch> {
    let mut out = Vec::new();
    let keys = trends.iter().map(|t| (t.name.as_str(), t.device.as_str()));
    for key in crate::order::first_seen(keys) {
        let mut timed: Vec<(usize, &str)> = trends
            .iter()
            .filter(|u| (u.name.as_str(), u.device.as_str()) == key)
            .flat_map(|u| {
                let regime = u.regime.as_deref().unwrap_or("");
                u.points.iter().map(move |p| (p.run, regime))
            })
            .collect();
        timed.sort();
        for w in timed.windows(2) {
            if w[0].1 != w[1].1 {
                out.push(RegimeSwitch {
                    name: key.0.to_string(),
                    device: key.1.to_string(),
                    regimes: (w[0].1.to_string(), w[1].1.to_string()),
                    runs: (w[0].0, w[1].0),
                });
            }
        }
    }
    out
}

/// The level of `points`: the median of their medians.
pub fn level<'p>(points: impl IntoIterator<Item = &'p TrendPoint>) -> f64 {
    let medians: Vec<f64> = points.into_iter().map(|p| p.median).collect();
    Summary::of(&medians).map_or(f64::NAN, |s| s.median)
}

/// The first and last median of `points` and the change between them, as a table shows them;
/// `none` where there is no median, or no change of one.
pub fn span(points: &[TrendPoint], none: &str) -> [String; 3] {
    let (Some(a), Some(b)) = (points.first(), points.last()) else {
        return [none.into(), none.into(), none.into()];
    };
    let change = match points.len() {
        1 => none.into(),
        _ => crate::gate::percent(b.median / a.median),
    };
    [duration(a.median), duration(b.median), change]
}

impl Trend {
    /// The runs it failed in, timed or not, in run order.
    pub fn failed_runs(&self) -> Vec<usize> {
        let timed = self.points.iter().filter(|p| p.stored.failed);
        let mut failed: Vec<usize> = timed.map(|p| p.run).collect();
        failed.extend(&self.failures);
        failed.sort_unstable();
        failed
    }

    /// The trial's name with its regime where it has one: `saxpy::vec4::n=4096 [graph]`.
    pub fn label(&self) -> String {
        (self.regime.as_ref()).map_or(self.name.clone(), |r| format!("{} [{r}]", self.name))
    }

    /// The segment of points, between change points, holding point `i`.
    fn segment(&self, i: usize) -> &[TrendPoint] {
        let at = || self.change_points.iter().map(|c| c.index);
        let start = at().filter(|&c| c <= i).max().unwrap_or(0);
        let end = at().filter(|&c| c > i).min().unwrap_or(self.points.len());
        &self.points[start..end]
    }

    /// The factor by which the level changed at change point `c`: the new segment's level over
    /// the one before.
    pub fn shift(&self, c: &ChangePoint) -> f64 {
        level(self.segment(c.index)) / level(self.segment(c.index - 1))
    }

    /// The runs on either side of change point `c` (indices into the history's runs).
    pub fn shift_runs(&self, c: &ChangePoint) -> (usize, usize) {
        (self.points[c.index - 1].run, self.points[c.index].run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::RunInfo;

    fn run(id: i64) -> Run {
        Run {
            id,
            info: RunInfo {
                date: "2026-11-01".into(),
                started: None,
                commit: format!("c{id}"),
                branch: "main".into(),
                dirty: false,
                mode: "stored".into(),
            },
            device: "H200".into(),
            gpu_uuid: None,
        }
    }

    fn point(run: i64, median: Option<f64>, regime: Option<&str>, failed: bool) -> Point {
        Point {
            run,
            name: "s::k::n=1".into(),
            suite: "s".into(),
            median,
            failed,
            regime: regime.map(String::from),
            verdict: None,
            max_slowdown: 0.03,
            ..Default::default()
        }
    }

    /// Graph runs at 10 µs, then cold at 11.25 µs (+12.5%): two trends, no drift in either,
    /// one switch; a wrong output in between is kept with the regime it last ran in.
    #[test]
    fn a_regime_switch_is_two_trends_and_no_drift() {
        let runs: Vec<Run> = (1..=12).map(run).collect();
        let mut points: Vec<Point> = (1..=6)
            .map(|i| {
                point(
                    i,
                    Some(10e-6 * (1.0 + 0.001 * (i % 3) as f64)),
                    Some("graph"),
                    false,
                )
            })
            .collect();
        points.push(point(7, None, None, true));
        points.extend((8..=12).map(|i| {
            point(
                i,
                Some(11.25e-6 * (1.0 + 0.001 * (i % 3) as f64)),
                Some("cold"),
                false,
            )
        }));
        let found = trends(&runs, &points, &Options::default());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].label(), "s::k::n=1 [graph]");
        assert_eq!(
            found[0].failures,
            vec![6],
            "run 7 is index 6, after the graph runs"
        );
        assert!(found.iter().all(|t| t.change_points.is_empty()));
        assert_eq!(
            regime_switches(&found),
            vec![RegimeSwitch {
                name: "s::k::n=1".into(),
                device: "H200".into(),
                regimes: ("graph".into(), "cold".into()),
                runs: (5, 7),
            }]
        );
        // Never timed: a trend of failures alone.
        let only = trends(&runs, &[point(3, None, None, true)], &Options::default());
        assert_eq!(
            (only[0].regime.clone(), only[0].failures.clone()),
            (None, vec![2])
        );
    }
}
