//! `Base`: paired A/B mode (`KERNELGATE_BASE=<git rev>`). The suites as of the base revision are
//! extracted with `git archive` (nothing in the working tree changes), loaded and validated like
//! the candidate's, and each candidate trial is paired with the base trial of the same name; the
//! worker then times base and candidate interleaved in one process on the same inputs, so that
//! whatever the machine does falls on both, and the gate judges per-round ratios.

mod error;
mod git;

pub use error::PairedError;
pub use git::{first_parents, is_ancestor, parent, resolve, subject};

use crate::plan::Planned;
use crate::suite::Suite;
use crate::worker::protocol::BaseKernel;
use std::path::Path;

/// The base side of a paired run.
#[derive(Debug, Clone)]
pub struct Base {
    /// The revision as the user gave it (or the folder).
    pub rev: String,
    /// Its full commit (or `folder` for a folder of suites).
    pub commit: String,
    /// The base's suites, loaded and validated.
    pub suites: Vec<Suite>,
}

impl Base {
    /// The short name trial lines use: `base 1a2b3c4`.
    pub fn short(&self) -> String {
        format!("base {}", self.commit.get(..7).unwrap_or(&self.commit))
    }
}

/// Loads the base side: `rev` is a git revision, or a folder that holds the base's suites (as
/// a CI bundle ships them). `suites` is the candidate's suites folder, `work` a folder for the
/// extraction (under `target/`), `candidates` the candidate's suites (files they reference
/// outside the suites folder are extracted too).
pub fn load(
    rev: &str,
    suites: &Path,
    work: &Path,
    candidates: &[Suite],
) -> Result<Base, PairedError> {
    // The base's suites in `dir`, read with the base's own project file, where it has one.
    let load_dir = |dir: &Path, commit: String, project_file: Option<std::path::PathBuf>| {
        let failed = |diagnostics: String| PairedError::Load {
            rev: rev.to_string(),
            diagnostics,
        };
        let project = project_file
            .map(|f| crate::project::Project::read(&f, None))
            .transpose()
            .map_err(|e| failed(e.to_string()))?;
        crate::suite::load_dir_in(dir, project.as_ref())
            .map(|suites| Base {
                rev: rev.to_string(),
                commit,
                suites,
            })
            .map_err(|e| failed(e.to_string()))
    };
    let as_folder = Path::new(rev);
    if as_folder.is_dir() {
        // A folder of a bundle's base (`ci/bundle.sh`).
        return load_dir(as_folder, "folder".into(), crate::project::find(as_folder));
    }
    let (top, commit, rel) = git::resolve(rev, suites)?;
    if !git::exists(&top, &commit, &rel)? {
        return Err(PairedError::NoSuites {
            rev: rev.to_string(),
            commit,
            path: rel,
        });
    }
    // The suites folder, and what the candidate's suites reference outside it (sources,
    // include folders), where it exists at the base.
    let suites_abs = top.join(&rel);
    let mut paths = vec![rel.clone()];
    for s in candidates {
        let outside = s
            .sources
            .iter()
            .map(|src| src.path.clone())
            .chain(s.include_dirs.iter().cloned());
        for p in outside {
            let Ok(abs) = p.canonicalize() else { continue };
            if abs.starts_with(&suites_abs) {
                continue;
            }
            if let Ok(r) = abs.strip_prefix(&top) {
                if !paths.iter().any(|x| r.starts_with(x)) && git::exists(&top, &commit, r)? {
                    paths.push(r.to_path_buf());
                }
            }
        }
    }
    // The base's own project file, where the candidate has one: it names the base's source
    // folders and settings.
    let project_file = crate::project::find(&suites_abs)
        .and_then(|f| Some(f.strip_prefix(&top).ok()?.to_path_buf()))
        .filter(|r| git::exists(&top, &commit, r).unwrap_or(false));
    paths.extend(project_file.clone());
    let dest = work.join(&commit);
    git::extract(&top, &commit, &paths, &dest)?;
    load_dir(&dest.join(&rel), commit, project_file.map(|f| dest.join(f)))
}

/// How a candidate trial meets the base.
#[derive(Debug, Clone, PartialEq)]
pub enum Pairing {
    /// The same trial at the base: suite (in `Base::suites`), case and kernel indices.
    Paired(BaseKernel),
    /// Only in the candidate.
    New,
    /// In both, but its case's buffers differ: not compared silently.
    Changed(String),
}

/// Pairs a candidate kernel trial with the base trial of the same name; `None` for compile
/// trials.
pub fn pair(candidates: &[Suite], base: &Base, trial: &Planned) -> Option<Pairing> {
    let (case, kernel) = trial.case_kernel()?;
    let suite = &candidates[trial.suite];
    let Some((bs, b)) = base
        .suites
        .iter()
        .enumerate()
        .find(|(_, b)| b.name == suite.name)
    else {
        return Some(Pairing::New);
    };
    let label = &suite.cases[case].label;
    let name = &suite.kernels[kernel].name;
    let (Some(bc), Some(bk)) = (
        b.cases.iter().position(|c| &c.label == label),
        b.kernels.iter().position(|k| &k.name == name),
    ) else {
        return Some(Pairing::New);
    };
    let describe = |s: &Suite, c: usize| -> Vec<String> {
        s.buffers
            .iter()
            .zip(&s.cases[c].lens)
            .map(|(buf, len)| format!("{} {:?} {:?}[{len}]", buf.name, buf.role, buf.dtype))
            .collect()
    };
    let (now, then) = (describe(suite, case), describe(b, bc));
    if now != then {
        return Some(Pairing::Changed(format!(
            "its buffers changed since the base ({} → {})",
            then.join(", "),
            now.join(", ")
        )));
    }
    Some(Pairing::Paired(BaseKernel {
        suite: bs,
        case: bc,
        kernel: bk,
    }))
}

/// Trials of the base that the candidate no longer has.
pub fn gone(candidates: &[Suite], base: &Base) -> Vec<String> {
    let now: std::collections::BTreeSet<String> = crate::plan::plan(candidates)
        .into_iter()
        .map(|p| p.name)
        .collect();
    crate::plan::plan(&base.suites)
        .into_iter()
        .filter(|p| p.case_kernel().is_some() && !now.contains(&p.name))
        .map(|p| p.name)
        .collect()
}
