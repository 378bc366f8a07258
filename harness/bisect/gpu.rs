//! `GpuProbe`: the real probe — a commit's trial identity from the `Repo` (no GPU), its timing
//! as a paired run of that one trial against `good`, in one worker process through the worker
//! pool and the runner (so the gate, the re-measure rule and identical-code skipping are the
//! run's own).

use super::error::Broken;
use super::repo::{Loaded, Repo};
use super::search::{Commit, Probe, Timed};
use crate::gate::Verdict;
use crate::report::results::{GateNote, Status, TrialRecord};
use crate::runner::Runner;
use crate::worker::pool::WorkerPool;
use std::sync::Arc;

/// The probe a `kernelgate bisect` runs: identities from `repo`, timing on the GPU.
pub struct GpuProbe<'r, 'c> {
    /// The repository searched.
    pub repo: &'r mut Repo<'c>,
    /// `good`'s suites, the base every commit is timed against.
    pub good: Arc<Loaded>,
    /// Print progress on stderr.
    pub progress: bool,
}

/// What a paired run's record of the trial says, as a bisect reads it.
pub fn timed(r: &TrialRecord) -> Timed {
    let why = || crate::report::terminal::headline(r);
    match (r.status, r.decided(), &r.verdict) {
        (Status::Ignored, _, _) => Timed::Unavailable(r.ignored.clone().unwrap_or_else(why)),
        (_, Some(Verdict::Regressed), Some(v)) => Timed::Regressed(v.time),
        (Status::Failed, _, _) => Timed::Failed(why()),
        (_, Some(Verdict::Inconclusive), Some(v)) => Timed::Inconclusive(v.time),
        (_, Some(_), Some(v)) => Timed::Unchanged(Some(v.time)),
        (_, Some(Verdict::IdenticalCode), None) => Timed::Unchanged(None),
        _ => match &r.gate {
            Some(GateNote::Changed { why }) => {
                Timed::Failed(format!("not comparable with good: {why}"))
            }
            _ => Timed::Failed(why()),
        },
    }
}

impl Probe for GpuProbe<'_, '_> {
    fn identity(&mut self, commit: &Commit) -> Result<Option<String>, Broken> {
        self.repo.identity(commit)
    }

    fn time(&mut self, commit: &Commit) -> Timed {
        let loaded = match self.repo.load(commit) {
            Ok(l) => l,
            Err(why) => return Timed::Failed(why.to_string()),
        };
        if self.progress {
            let good = &self.good.base.commit;
            eprintln!(
                "kernelgate bisect: timing {} \"{}\" against good {}",
                commit.short(),
                commit.subject,
                good.get(..7).unwrap_or(good)
            );
        }
        let config = self.repo.config;
        let suites = &loaded.base.suites;
        let pool = WorkerPool::new(config, suites, &self.good.base.suites);
        let runner = Runner {
            config,
            suites,
            executor: &pool,
            progress: match self.progress {
                true => crate::runner::Progress::Terminal,
                false => crate::runner::Progress::Off,
            },
            base: Some(&self.good.base),
            stop: crate::stop::process(),
        };
        let plan = crate::plan::plan(suites);
        let Some(i) = plan.iter().position(|p| p.name == self.repo.trial) else {
            return Timed::Failed(format!("no trial `{}` at this commit", self.repo.trial));
        };
        let report = runner.run(&plan, &[i]);
        let record = report
            .results
            .trials
            .iter()
            .find(|t| t.name == self.repo.trial);
        record.map_or_else(|| Timed::Failed("the trial was not run".into()), timed)
    }
}
