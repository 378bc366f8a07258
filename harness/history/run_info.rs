//! `RunInfo`: what identifies a run besides its results — date, commit, branch, dirty, mode.

/// What identifies a run besides its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// When it ran (the results file's date).
    pub date: String,
    /// The commit measured (`unknown` outside git).
    pub commit: String,
    /// Its branch.
    pub branch: String,
    /// Whether the work tree had uncommitted changes to tracked files.
    pub dirty: bool,
    /// `stored` (against stored baselines) or `paired` (against a base revision in the run).
    pub mode: String,
}

fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl RunInfo {
    /// The run at `date` in this checkout: commit and branch from `KERNELGATE_COMMIT` /
    /// `KERNELGATE_BRANCH`, else GitHub's variables, else git; `unknown` when none answers.
    pub fn here(date: &str) -> RunInfo {
        let commit = env("KERNELGATE_COMMIT")
            .or_else(|| env("GITHUB_SHA"))
            .or_else(|| git(&["rev-parse", "HEAD"]))
            .unwrap_or_else(|| "unknown".into());
        let branch = env("KERNELGATE_BRANCH")
            .or_else(|| env("GITHUB_HEAD_REF"))
            .or_else(|| env("GITHUB_REF_NAME"))
            .or_else(|| git(&["rev-parse", "--abbrev-ref", "HEAD"]))
            .unwrap_or_else(|| "unknown".into());
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        RunInfo {
            date: date.to_string(),
            commit,
            branch,
            dirty,
            mode: "stored".into(),
        }
    }
}

/// `paired` for a run judged against a base revision (`KERNELGATE_BASE`), `stored` otherwise.
pub fn mode_of(results: &crate::report::results::Results) -> &'static str {
    if results.base.is_some() {
        "paired"
    } else {
        "stored"
    }
}
