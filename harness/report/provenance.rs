//! `Provenance`: what a results file says about where its run came from — the commit and
//! branch measured, whether tracked files had uncommitted changes, when the run started, and a
//! digest of each suite file — so `history import` and `compare` read them from the file and
//! never from the checkout that imports it.
//!
//! Each is taken from the first source that answers, in this order (docs/reports-and-history.md):
//!
//! | field | sources |
//! | --- | --- |
//! | `commit` | `KERNELGATE_COMMIT`, `GITHUB_SHA`, `CI_COMMIT_SHA`, `BUILDKITE_COMMIT`, `CIRCLE_SHA1`, `GIT_COMMIT`, then `git rev-parse HEAD` |
//! | `branch` | `KERNELGATE_BRANCH`, `GITHUB_HEAD_REF`, `GITHUB_REF_NAME`, `CI_MERGE_REQUEST_SOURCE_BRANCH_NAME`, `CI_COMMIT_REF_NAME`, `BUILDKITE_BRANCH`, `CIRCLE_BRANCH`, `GIT_BRANCH`, then `git rev-parse --abbrev-ref HEAD` (not on a detached HEAD) |
//! | `dirty` | `KERNELGATE_DIRTY` (1 or 0), then `git status --porcelain --untracked-files=no` |
//! | `started` | the clock when the run started (RFC 3339, UTC, to the second) |
//!
//! git runs in the suites folder; where nothing answers the field is absent (`null`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the commit measured comes from, in order: kernelgate's own variable, then CI systems'
/// (GitHub Actions, GitLab CI, Buildkite, CircleCI, Jenkins).
pub const COMMIT_SOURCES: &[&str] = &[
    "KERNELGATE_COMMIT",
    "GITHUB_SHA",
    "CI_COMMIT_SHA",
    "BUILDKITE_COMMIT",
    "CIRCLE_SHA1",
    "GIT_COMMIT",
];

/// Where the branch comes from, in order (a pull request's source branch before the ref CI
/// checked out).
pub const BRANCH_SOURCES: &[&str] = &[
    "KERNELGATE_BRANCH",
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
    "CI_COMMIT_REF_NAME",
    "BUILDKITE_BRANCH",
    "CIRCLE_BRANCH",
    "GIT_BRANCH",
];

/// Where a run came from. Every field is optional: results files written before they were
/// recorded read as all absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The commit measured (the candidate's, in paired mode).
    pub commit: Option<String>,
    /// Its branch.
    pub branch: Option<String>,
    /// Whether tracked files had uncommitted changes (`None`: not known).
    pub dirty: Option<bool>,
    /// When the run started: RFC 3339, UTC, to the second (`2026-11-22T14:03:07Z`).
    pub started: Option<String>,
    /// Each suite's name and the SHA-256 of its suite file: the definition of its trials
    /// (sizes, launches, buffers, tolerances). `compare` warns when they differ.
    #[serde(default)]
    pub suites: BTreeMap<String, String>,
    /// The shard this run was of a sharded run (`KERNELGATE_SHARD=k/n`; results format 4), so
    /// `merge` knows how many shards the run had and names a missing one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Why the run ended before every selected trial ran (`stopped by SIGTERM after 5 of 60
    /// trial(s)`): its file holds the trials that finished, and no verdict on the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// One shard of a run: the `k` and `n` of `KERNELGATE_SHARD=k/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 1.
    pub index: u64,
    /// Of how many.
    pub count: u64,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Provenance {
    /// This run's: from the documented variables, then git in `suites_dir`; `started` as given.
    pub fn here(started: String, suites_dir: &Path, suite_files: &[(&str, &Path)]) -> Provenance {
        let env = |name: &str| std::env::var(name).ok();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(suites_dir)
                .args(args)
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let mut p = Provenance::from_sources(env, git);
        p.started = Some(started);
        p.suites = suite_files
            .iter()
            .filter_map(|(name, path)| {
                let text = std::fs::read(path).ok()?;
                Some((name.to_string(), sha256(&text)))
            })
            .collect();
        p
    }

    /// The commit, branch and dirty state from `env` (a variable's value) and `git` (the
    /// output of a git command, `None` when git fails), in the documented order.
    pub fn from_sources(
        env: impl Fn(&str) -> Option<String>,
        git: impl Fn(&[&str]) -> Option<String>,
    ) -> Provenance {
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| env(n).filter(|v| !v.trim().is_empty()))
                .map(|v| v.trim().to_string())
        };
        let commit = first(COMMIT_SOURCES).or_else(|| git(&["rev-parse", "HEAD"]));
        let branch = first(BRANCH_SOURCES).or_else(|| {
            git(&["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD" && !b.is_empty())
        });
        let dirty = match env("KERNELGATE_DIRTY").as_deref().map(str::trim) {
            Some("1") | Some("true") => Some(true),
            Some("0") | Some("false") => Some(false),
            _ => git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()),
        };
        Provenance {
            commit: commit.filter(|c| !c.is_empty()),
            branch,
            dirty,
            ..Provenance::default()
        }
    }

    /// One line for a person: `commit 1a2b3c4 (main, dirty) started 2026-11-22T14:03:07Z`, with
    /// what is not known left out.
    pub fn describe(&self) -> String {
        let commit = (self.commit.as_deref()).map_or("unknown", |c| c.get(..7).unwrap_or(c));
        let mut out = format!("commit {commit}");
        let dirty = (self.dirty == Some(true)).then_some("dirty");
        let detail: Vec<&str> = self.branch.as_deref().into_iter().chain(dirty).collect();
        if !detail.is_empty() {
            out.push_str(&format!(" ({})", detail.join(", ")));
        }
        out.extend(self.started.as_ref().map(|s| format!(" started {s}")));
        out
    }

    /// [`describe`](Self::describe) where the file records a commit or a start time (`commit
    /// unknown started …` for a run outside git without `KERNELGATE_COMMIT`); `None` where it
    /// records neither (written before results recorded them).
    pub fn recorded(&self) -> Option<String> {
        (self.commit.is_some() || self.started.is_some()).then(|| self.describe())
    }

    /// The suites whose files differ between `self` and `other` (both recorded, digests
    /// unequal), by name.
    pub fn changed_suites<'a>(&'a self, other: &Provenance) -> Vec<&'a str> {
        self.suites
            .iter()
            .filter(|(name, digest)| other.suites.get(*name).is_some_and(|d| d != *digest))
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

/// The SHA-256 of `bytes`, in hex (a suite file's digest, a stored run's).
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::sass::identity::hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn sources(vars: &[(&str, &str)], git: bool) -> Provenance {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Provenance::from_sources(
            |n| vars.get(n).cloned(),
            |args| {
                git.then(|| match args[0] {
                    "rev-parse" if args[1] == "HEAD" => "feedface".to_string(),
                    "rev-parse" => "topic".to_string(),
                    _ => " M suites/saxpy.toml".to_string(),
                })
            },
        )
    }

    #[test]
    fn each_field_comes_from_its_first_source() {
        let p = sources(
            &[
                ("KERNELGATE_COMMIT", "c0ffee"),
                ("GITHUB_SHA", "abc"),
                ("GITHUB_HEAD_REF", ""),
                ("GITHUB_REF_NAME", "main"),
                ("KERNELGATE_DIRTY", "0"),
            ],
            true,
        );
        assert_eq!(p.commit.as_deref(), Some("c0ffee"));
        assert_eq!(
            p.branch.as_deref(),
            Some("main"),
            "an empty variable is unset"
        );
        assert_eq!(p.dirty, Some(false), "KERNELGATE_DIRTY before git");
        let gitlab = sources(
            &[("CI_COMMIT_SHA", "9f9f"), ("CI_COMMIT_REF_NAME", "feature")],
            false,
        );
        assert_eq!(
            (
                gitlab.commit.as_deref(),
                gitlab.branch.as_deref(),
                gitlab.dirty
            ),
            (Some("9f9f"), Some("feature"), None)
        );
        let git = sources(&[], true);
        assert_eq!(
            (git.commit.as_deref(), git.branch.as_deref(), git.dirty),
            (Some("feedface"), Some("topic"), Some(true))
        );
        assert_eq!(sources(&[], false), Provenance::default());
        assert_eq!(
            git.describe(),
            "commit feedfac (topic, dirty)",
            "what is known, nothing else"
        );
        assert_eq!(Provenance::default().describe(), "commit unknown");
        assert_eq!(Provenance::default().recorded(), None);
        let started = Provenance {
            started: Some("2026-11-24T12:00:49Z".into()),
            ..Provenance::default()
        };
        assert_eq!(
            started.recorded().as_deref(),
            Some("commit unknown started 2026-11-24T12:00:49Z")
        );
    }

    #[test]
    fn changed_suites_are_those_recorded_in_both_with_different_files() {
        let mut a = Provenance::default();
        let mut b = Provenance::default();
        a.suites.insert("saxpy".into(), "1".into());
        a.suites.insert("reduce".into(), "2".into());
        b.suites.insert("saxpy".into(), "1".into());
        b.suites.insert("reduce".into(), "3".into());
        b.suites.insert("matmul".into(), "4".into());
        assert_eq!(a.changed_suites(&b), vec!["reduce"]);
        assert!(Provenance::default().changed_suites(&b).is_empty());
    }
}
