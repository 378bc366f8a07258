//! `Repo`: the commits a bisect searches, and what each holds — its suites out of git (`git
//! archive`, as paired mode takes a base: the working tree is never touched), the trial, and
//! the trial's code for the GPU's architecture (compiled through the cache: no GPU) — and
//! `changes`, what changed in the trial between two commits, with the SASS diffs.

use super::error::{BisectError, Broken};
use super::search::Commit;
use crate::code::{trial_code, CodeChange, CodeError, SuiteCode, TrialCode};
use crate::config::Config;
use crate::paired::{self, Base};
use crate::runner::{kernel_diffs, Sided};
use crate::sass::change::KernelDiff;
use crate::sass::Toolchain;
use crate::suite::Suite;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What changed in a trial between two commits.
#[derive(Debug, Clone)]
pub struct Changes {
    /// Its code change (`None`: no code identity here, without NVRTC).
    pub code: Option<CodeChange>,
    /// The SASS diff of each of its kernels whose code changed.
    pub diffs: Vec<KernelDiff>,
    /// Why the diffs have no SASS listings, where they have none (no `nvdisasm`).
    pub note: Option<String>,
}

/// One commit's suites, and where the trial is in them.
#[derive(Debug)]
pub struct Loaded {
    /// The commit's suites, as a paired run's base holds them.
    pub base: Base,
    /// The trial's suite index, case and kernel.
    pub at: (usize, usize, usize),
    /// The suite's code (`None`: no NVRTC here to compile it).
    pub code: Option<SuiteCode>,
}

impl Loaded {
    /// The trial's code at this commit, when it could be computed.
    pub fn trial_code(&self, seed: Option<u64>) -> Option<TrialCode> {
        let (s, case, kernel) = self.at;
        let code = self.code.as_ref()?;
        Some(trial_code(&self.base.suites[s], case, kernel, seed, code))
    }
}

/// The repository a bisect searches.
pub struct Repo<'c> {
    /// The run's options (suites folder, cache, seed).
    pub config: &'c Config,
    /// The working tree's suites: files they reference outside the suites folder are
    /// extracted with each commit's.
    candidates: &'c [Suite],
    /// The trial searched for.
    pub trial: String,
    /// The architecture code is identified for (the GPU's, or `KERNELGATE_ARCH`).
    pub arch: String,
    toolchain: Toolchain,
    loaded: HashMap<String, Result<Arc<Loaded>, Broken>>,
}

impl<'c> Repo<'c> {
    /// The repository of `config`'s suites folder, searching for `trial` with code for `arch`.
    pub fn new(config: &'c Config, candidates: &'c [Suite], trial: &str, arch: &str) -> Repo<'c> {
        Repo {
            config,
            candidates,
            trial: trial.to_string(),
            arch: arch.to_string(),
            toolchain: Toolchain::here(),
            loaded: HashMap::new(),
        }
    }

    /// `good` and the commits after it up to `bad` (first parents, oldest first), resolved.
    pub fn range(&self, good: &str, bad: &str) -> Result<(Commit, Vec<Commit>), BisectError> {
        let (top, good_id, _) = paired::resolve(good, &self.config.suites)?;
        let (_, bad_id, _) = paired::resolve(bad, &self.config.suites)?;
        if !paired::is_ancestor(&top, &good_id, &bad_id)? || good_id == bad_id {
            return Err(BisectError::NotAncestor {
                good: good.to_string(),
                bad: bad.to_string(),
            });
        }
        let commits = paired::first_parents(&top, &good_id, &bad_id)?
            .into_iter()
            .map(|(id, subject)| Commit { id, subject })
            .collect();
        let good = Commit {
            subject: paired::subject(&top, &good_id)?,
            id: good_id,
        };
        Ok((good, commits))
    }

    /// `good`, the commits after it up to `bad`, and `good`'s suites: or why they cannot be
    /// bisected (a revision git does not know, `good` not an ancestor of `bad`, the trial
    /// missing or broken at either end).
    pub fn prepare(
        &mut self,
        good: &str,
        bad: &str,
    ) -> Result<(Commit, Vec<Commit>, Arc<Loaded>), BisectError> {
        let (good, commits) = self.range(good, bad)?;
        let unusable = |which, commit: &Commit, why| BisectError::Unusable {
            which,
            commit: commit.short().to_string(),
            why,
        };
        let loaded = self
            .load(&good)
            .map_err(|why| unusable("good", &good, why))?;
        if let Some(last) = commits.last() {
            self.load(last).map_err(|why| unusable("bad", last, why))?;
        }
        Ok((good, commits, loaded))
    }

    /// What changed in the trial at `first` since its parent, with the SASS diffs; `None`
    /// where it has no parent or either side cannot be loaded.
    pub fn since_parent(&mut self, first: &Commit) -> Option<(Commit, Changes)> {
        let parent = self.parent(first)?;
        let changes = self.changes(&parent, first).ok()?;
        Some((parent, changes))
    }

    /// The first parent of `commit`.
    pub fn parent(&self, commit: &Commit) -> Option<Commit> {
        let (top, _, _) = paired::resolve(&commit.id, &self.config.suites).ok()?;
        let id = paired::parent(&top, &commit.id).ok()??;
        Some(Commit {
            subject: paired::subject(&top, &id).unwrap_or_default(),
            id,
        })
    }

    /// `commit`'s suites with the trial and its code; why the commit cannot be used, where it
    /// cannot (its suites do not load, the trial is missing, a kernel does not compile).
    pub fn load(&mut self, commit: &Commit) -> Result<Arc<Loaded>, Broken> {
        if let Some(known) = self.loaded.get(&commit.id) {
            return known.clone();
        }
        let loaded = self.load_now(commit).map(Arc::new);
        self.loaded.insert(commit.id.clone(), loaded.clone());
        loaded
    }

    fn load_now(&self, commit: &Commit) -> Result<Loaded, Broken> {
        let work: PathBuf = self.config.base_dir();
        let base = paired::load(&commit.id, &self.config.suites, &work, self.candidates)?;
        let at = crate::plan::plan(&base.suites)
            .into_iter()
            .find(|p| p.name == self.trial)
            .and_then(|p| p.case_kernel().map(|(c, k)| (p.suite, c, k)))
            .ok_or_else(|| Broken::NoTrial(self.trial.clone()))?;
        let suite = &base.suites[at.0];
        let code =
            match SuiteCode::build(suite, &self.arch, Some(&self.config.cache), &self.toolchain) {
                Ok(code) => Some(code),
                Err(CodeError::NoNvrtc { .. }) => None,
                Err(e) => return Err(Broken::Code(Arc::new(e))),
            };
        Ok(Loaded { base, at, code })
    }

    /// The trial's identity at `commit` (`None`: no NVRTC here), or why it cannot be used.
    pub fn identity(&mut self, commit: &Commit) -> Result<Option<String>, Broken> {
        let seed = self.config.seed;
        Ok(self.load(commit)?.trial_code(seed).map(|c| c.identity))
    }

    /// What changed in the trial from `parent` to `commit`: its code change, and the SASS diff
    /// of each of its kernels whose code changed (with why there is no SASS, where there is
    /// none).
    pub fn changes(&mut self, parent: &Commit, commit: &Commit) -> Result<Changes, Broken> {
        let (old, new) = (self.load(parent)?, self.load(commit)?);
        let seed = self.config.seed;
        let change = match (old.trial_code(seed), new.trial_code(seed)) {
            (Some(a), Some(b)) => Some(CodeChange::between(Some(&a), &b)),
            _ => None,
        };
        let (Some(then), Some(now)) = (&old.code, &new.code) else {
            return Ok(Changes {
                code: change,
                diffs: Vec::new(),
                note: None,
            });
        };
        let (os, ns) = (&old.base.suites[old.at.0], &new.base.suites[new.at.0]);
        let (mut listings, note) = crate::runner::sass_listings(&self.config.cache);
        let mut kernels = vec![new.at.2];
        if ns.reference != new.at.2 {
            kernels.push(ns.reference);
        }
        // Each kernel whose code changed: its parent's side, then its own.
        let changed: Vec<[Sided; 2]> = (kernels.into_iter())
            .filter_map(|k| {
                let ok = (os.kernels.iter()).position(|x| x.name == ns.kernels[k].name)?;
                let differs = !then.kernels.get(ok)?.same_code(now.kernels.get(k)?);
                differs.then(|| [Sided::of(os, ok, then), Sided::of(ns, k, now)])
            })
            .collect();
        let diffs = kernel_diffs(&changed, note.as_deref(), &mut listings);
        Ok(Changes {
            code: change,
            diffs,
            note,
        })
    }
}
