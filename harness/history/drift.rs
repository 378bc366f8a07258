//! `Trend`: one trial's medians over the runs of a history, split into levels by change-point
//! detection on log-times, and `Drift`: how far its level moved since a chosen run.

use super::store::{Point, Run};
use crate::stats::changepoint::{e_divisive, ChangePoint, Options};
use crate::stats::Summary;

/// One trial on one device over the history, oldest run first.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// The trial.
    pub name: String,
    /// Its suite.
    pub suite: String,
    /// The device it ran on.
    pub device: String,
    /// Index into the history's runs, median seconds, verdict.
    pub points: Vec<(usize, f64, Option<String>)>,
    /// The suite's `max_slowdown` in the latest run.
    pub max_slowdown: f64,
    /// Level shifts; `index` is into `points`.
    pub change_points: Vec<ChangePoint>,
}

/// A level that moved beyond the threshold since the chosen run.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The level (median of medians) of the segment holding the chosen run, seconds.
    pub before: f64,
    /// The latest segment's level, seconds.
    pub now: f64,
    /// Each level shift after the chosen run: (last run of the old level, first of the new),
    /// as indices into the history's runs.
    pub moved: Vec<(usize, usize)>,
}

impl Drift {
    /// `now / before`.
    pub fn factor(&self) -> f64 {
        self.now / self.before
    }
}

/// Groups `points` into trends (one per trial and device) over `runs`, and finds their change
/// points.
pub fn trends(runs: &[Run], points: &[Point], options: &Options) -> Vec<Trend> {
    let index = |id: i64| runs.iter().position(|r| r.id == id);
    let mut out: Vec<Trend> = Vec::new();
    for p in points {
        let Some(i) = index(p.run) else { continue };
        let device = &runs[i].device;
        match out
            .iter_mut()
            .find(|t| t.name == p.name && &t.device == device)
        {
            Some(t) => {
                t.points.push((i, p.median, p.verdict.clone()));
            }
            None => out.push(Trend {
                name: p.name.clone(),
                suite: p.suite.clone(),
                device: device.clone(),
                points: vec![(i, p.median, p.verdict.clone())],
                max_slowdown: p.max_slowdown,
                change_points: Vec::new(),
            }),
        }
    }
    for t in &mut out {
        t.points.sort_by_key(|p| p.0);
        if let Some(last) = points
            .iter()
            .filter(|p| p.name == t.name)
            .max_by_key(|p| index(p.run))
        {
            t.max_slowdown = last.max_slowdown;
        }
        let logs: Vec<f64> = t.points.iter().map(|p| p.1.ln()).collect();
        t.change_points = e_divisive(&logs, options);
    }
    out
}

impl Trend {
    /// The level of points `[start, end)`: the median of their medians.
    fn level(&self, start: usize, end: usize) -> f64 {
        let v: Vec<f64> = self.points[start..end].iter().map(|p| p.1).collect();
        Summary::of(&v).map(|s| s.median).unwrap_or(f64::NAN)
    }

    /// The segment `[start, end)` of points holding point `i`.
    fn segment(&self, i: usize) -> (usize, usize) {
        let start = self
            .change_points
            .iter()
            .map(|c| c.index)
            .filter(|&c| c <= i)
            .max()
            .unwrap_or(0);
        let end = self
            .change_points
            .iter()
            .map(|c| c.index)
            .filter(|&c| c > i)
            .min()
            .unwrap_or(self.points.len());
        (start, end)
    }

    /// The factor by which the level changed at change point `c`: the new segment's level over
    /// the one before.
    pub fn shift(&self, c: &ChangePoint) -> f64 {
        let (a, b) = self.segment(c.index - 1);
        let (x, y) = self.segment(c.index);
        self.level(x, y) / self.level(a, b)
    }

    /// How the level moved from the segment holding the first point at or after run `since`
    /// to the latest segment; `None` when no level shift lies between them.
    pub fn drift(&self, since: usize) -> Option<Drift> {
        let from = self.points.iter().position(|p| p.0 >= since)?;
        let moved: Vec<(usize, usize)> = self
            .change_points
            .iter()
            .filter(|c| c.index > from)
            .map(|c| (self.points[c.index - 1].0, self.points[c.index].0))
            .collect();
        if moved.is_empty() {
            return None;
        }
        let (a, b) = self.segment(from);
        let (c, d) = self.segment(self.points.len() - 1);
        Some(Drift {
            before: self.level(a, b),
            now: self.level(c, d),
            moved,
        })
    }
}
