//! `bisect`: the search for the first commit at which a trial regressed against `good` — a
//! binary search over the commits after `good` up to `bad` (first parents, oldest first),
//! through a [`Probe`] (the real one compiles and times through the worker pool; tests script
//! one). A commit whose trial identity equals `good`'s, or that of a commit already decided, is
//! decided without timing; a commit that cannot be used (its suites do not load or compile) or
//! whose timing stays inconclusive after the re-measure is skipped, and the search goes on
//! around it, as `git bisect skip` does.

use super::error::Broken;
use crate::gate::Comparison;

/// A commit of the searched range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The full commit id.
    pub id: String,
    /// Its subject line.
    pub subject: String,
}

impl Commit {
    /// The first seven characters of the id.
    pub fn short(&self) -> &str {
        self.id.get(..7).unwrap_or(&self.id)
    }
}

/// What timing the trial at a commit against `good` said (after `gate::settle`'s re-measure).
#[derive(Debug, Clone, PartialEq)]
pub enum Timed {
    /// Regressed against `good`: significant and beyond `max_slowdown`.
    Regressed(Comparison),
    /// Unchanged or improved against `good` (`None`: the run found its code identical to
    /// good's and did not time it).
    Unchanged(Option<Comparison>),
    /// Still inconclusive after the re-measure: the commit is skipped.
    Inconclusive(Comparison),
    /// The trial failed at this commit (a wrong result, a fault): the commit is skipped.
    Failed(String),
    /// No GPU to time on, or the worker could not start: the search stops.
    Unavailable(String),
}

/// How the search reaches the commits: their trial identity (no GPU) and their timing.
pub trait Probe {
    /// The trial's identity at `commit`: `Ok(None)` where it cannot be computed here (no
    /// NVRTC), `Err` with the reason where the commit cannot be used (its suites do not load,
    /// the trial is missing, a kernel does not compile).
    fn identity(&mut self, commit: &Commit) -> Result<Option<String>, Broken>;
    /// Times the trial at `commit` against `good` in paired mode (one process, interleaved),
    /// re-measuring an inconclusive result once.
    fn time(&mut self, commit: &Commit) -> Timed;
}

/// How one commit was decided.
#[derive(Debug, Clone)]
pub enum How {
    /// Timed against `good`.
    Timed(Timed),
    /// Its trial identity equals that of `good` or of a commit already decided (named), so it
    /// was decided as that one without timing.
    SameCode {
        /// The commit whose decision it takes (`good`'s id for good).
        as_commit: String,
        /// Whether that one regressed.
        regressed: bool,
    },
    /// It could not be used: its suites do not load, or the trial does not compile.
    Broken(Broken),
}

impl How {
    /// Whether this says the trial regressed (`None`: skipped).
    pub fn regressed(&self) -> Option<bool> {
        match self {
            How::Timed(Timed::Regressed(_)) => Some(true),
            How::Timed(Timed::Unchanged(_)) => Some(false),
            How::SameCode { regressed, .. } => Some(*regressed),
            _ => None,
        }
    }
}

/// One probed commit, in the order they were probed.
#[derive(Debug, Clone)]
pub struct Probed {
    /// The commit.
    pub commit: Commit,
    /// How it was decided.
    pub how: How,
}

/// Why a search ended without a first regressed commit or candidates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stopped {
    /// `bad` did not regress against `good` (or its commit was skipped): nothing to search.
    #[error("{0}")]
    NotRegressed(String),
    /// A commit needed timing and there is no GPU to time on (or its worker cannot start).
    #[error("{0}")]
    Unavailable(String),
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Found {
    /// Every commit probed, in probe order.
    pub probed: Vec<Probed>,
    /// The first commit that regressed, when the search pinned it down.
    pub first: Option<Commit>,
    /// When skipped commits hide which it is: the candidates, oldest first (the last one
    /// regressed; the others were skipped).
    pub candidates: Vec<Commit>,
    /// Why the search stopped early (no GPU), or found nothing (`bad` did not regress).
    pub stopped: Option<Stopped>,
}

impl Found {
    /// How `commit` was decided, when it was probed.
    pub fn how(&self, commit: &str) -> Option<&How> {
        self.probed
            .iter()
            .find(|p| p.commit.id == commit)
            .map(|p| &p.how)
    }

    /// The comparison that says how much `commit` regressed: its own timing, or that of the
    /// commit whose code it shares.
    pub fn change_of(&self, commit: &str) -> Option<&Comparison> {
        match self.how(commit)? {
            How::Timed(Timed::Regressed(c)) => Some(c),
            How::SameCode { as_commit, .. } if as_commit != commit => self.change_of(as_commit),
            _ => None,
        }
    }

    /// How many commits were timed, and how many decided without timing.
    pub fn counts(&self) -> (usize, usize) {
        let count = |of: fn(&How) -> bool| self.probed.iter().filter(|p| of(&p.how)).count();
        (
            count(|h| matches!(h, How::Timed(_))),
            count(|h| matches!(h, How::SameCode { .. })),
        )
    }

    /// The commits skipped, with why.
    pub fn skipped(&self) -> Vec<(&Commit, String)> {
        self.probed
            .iter()
            .filter_map(|p| match &p.how {
                How::Broken(why) => Some((&p.commit, why.to_string())),
                How::Timed(Timed::Inconclusive(c)) => Some((
                    &p.commit,
                    format!(
                        "inconclusive after re-measuring ({})",
                        crate::report::terminal::change(c)
                    ),
                )),
                How::Timed(Timed::Failed(why)) => Some((&p.commit, why.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The search's state: what is known of each commit (`None`: not probed).
struct Search<'p> {
    probe: &'p mut dyn Probe,
    good: (String, Option<String>),
    commits: Vec<Commit>,
    /// Per commit: its identity (when computed) and how it was decided.
    known: Vec<Option<(Option<String>, How)>>,
    order: Vec<usize>,
}

impl Search<'_> {
    /// Decides commit `i`: by its identity where that is `good`'s or a decided commit's, by
    /// timing otherwise.
    fn decide(&mut self, i: usize) -> Result<Option<bool>, Stopped> {
        let commit = self.commits[i].clone();
        let identity = match self.probe.identity(&commit) {
            Ok(id) => id,
            Err(why) => {
                self.record(i, None, How::Broken(why));
                return Ok(None);
            }
        };
        if let Some(id) = &identity {
            // Good's code (not regressed), else a decided commit's.
            let good = (self.good.1.as_ref() == Some(id)).then(|| (self.good.0.clone(), false));
            let same = good.or_else(|| {
                self.known.iter().enumerate().find_map(|(k, known)| {
                    let (other, how) = known.as_ref()?;
                    let regressed = how.regressed().filter(|_| other.as_ref() == Some(id))?;
                    Some((self.commits[k].id.clone(), regressed))
                })
            });
            if let Some((as_commit, regressed)) = same {
                let how = How::SameCode {
                    as_commit,
                    regressed,
                };
                self.record(i, identity, how);
                return Ok(Some(regressed));
            }
        }
        let timed = self.probe.time(&commit);
        if let Timed::Unavailable(why) = &timed {
            return Err(Stopped::Unavailable(why.clone()));
        }
        let how = How::Timed(timed);
        let regressed = how.regressed();
        self.record(i, identity, how);
        Ok(regressed)
    }

    fn record(&mut self, i: usize, identity: Option<String>, how: How) {
        self.known[i] = Some((identity, how));
        self.order.push(i);
    }

    /// The untested commit strictly between `lo` and `hi` nearest their middle (the later one
    /// first on a tie), when there is one.
    fn next(&self, lo: Option<usize>, hi: usize) -> Option<usize> {
        let start = lo.map_or(0, |l| l + 1);
        let mid = (start + hi) / 2;
        let untested = |k: &usize| self.known[*k].is_none();
        (0..hi - start)
            .flat_map(|d| [mid.checked_add(d), mid.checked_sub(d + 1)])
            .flatten()
            .filter(|k| (start..hi).contains(k))
            .find(untested)
    }
}

/// Searches `commits` (the commits after `good` up to `bad`, oldest first) for the first at
/// which the trial regressed against `good`.
pub fn bisect(good: &Commit, commits: Vec<Commit>, probe: &mut dyn Probe) -> Found {
    let good_identity = probe.identity(good).ok().flatten();
    let n = commits.len();
    let mut s = Search {
        probe,
        good: (good.id.clone(), good_identity),
        known: vec![None; n],
        commits,
        order: Vec::new(),
    };
    let found = |s: &Search, first: Option<Commit>, candidates: Vec<Commit>, stopped| Found {
        probed: s
            .order
            .iter()
            .filter_map(|&i| {
                let (_, how) = s.known[i].as_ref()?;
                Some(Probed {
                    commit: s.commits[i].clone(),
                    how: how.clone(),
                })
            })
            .collect(),
        first,
        candidates,
        stopped,
    };
    let Some(last) = n.checked_sub(1) else {
        let why = Stopped::NotRegressed("no commit between good and bad".into());
        return found(&s, None, Vec::new(), Some(why));
    };
    match s.decide(last) {
        Err(stop) => return found(&s, None, Vec::new(), Some(stop)),
        Ok(Some(true)) => {}
        Ok(_) => {
            let why = format!(
                "the trial did not regress at bad ({}) against good: nothing to search",
                s.commits[last].short()
            );
            return found(&s, None, Vec::new(), Some(Stopped::NotRegressed(why)));
        }
    }
    let (mut lo, mut hi): (Option<usize>, usize) = (None, last);
    while let Some(i) = s.next(lo, hi) {
        match s.decide(i) {
            Err(stop) => return found(&s, None, Vec::new(), Some(stop)),
            Ok(Some(true)) => hi = i,
            Ok(Some(false)) => lo = Some(i),
            Ok(None) => {}
        }
    }
    // Every commit strictly between `lo` and `hi` was skipped.
    let start = lo.map_or(0, |l| l + 1);
    if start == hi {
        let first = s.commits[hi].clone();
        return found(&s, Some(first), Vec::new(), None);
    }
    let candidates = s.commits[start..=hi].to_vec();
    found(&s, None, candidates, None)
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
