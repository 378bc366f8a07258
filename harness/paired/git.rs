//! `extract`: the suites folder (and the files outside it that the suites reference) as of a
//! git revision, copied out with `git archive` into the target folder — the user's working tree
//! and index are never touched.

use super::error::PairedError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, PairedError> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PairedError::Git {
            what: format!("cannot run git: {e}"),
        })
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The repository's top folder, the full commit `rev` names, and `suites` relative to the top.
pub fn resolve(rev: &str, suites: &Path) -> Result<(PathBuf, String, PathBuf), PairedError> {
    let abs = suites.canonicalize().map_err(|e| PairedError::Git {
        what: format!("cannot find the suites folder `{}`: {e}", suites.display()),
    })?;
    let top = git(&abs, &["rev-parse", "--show-toplevel"])?;
    if !top.status.success() {
        return Err(PairedError::NotARepository {
            path: suites.to_path_buf(),
        });
    }
    let top = PathBuf::from(stdout(&top))
        .canonicalize()
        .map_err(|e| PairedError::Git {
            what: format!("cannot resolve the repository's folder: {e}"),
        })?;
    let commit = git(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    if !commit.status.success() {
        let shallow = stdout(&git(&top, &["rev-parse", "--is-shallow-repository"])?) == "true";
        return Err(PairedError::BadRevision {
            rev: rev.to_string(),
            shallow,
        });
    }
    let rel = abs
        .strip_prefix(&top)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok((top, stdout(&commit), rel))
}

/// Whether `path` (relative to the top) exists at `commit`.
pub fn exists(top: &Path, commit: &str, path: &Path) -> Result<bool, PairedError> {
    let spec = if path.as_os_str().is_empty() {
        format!("{commit}^{{tree}}")
    } else {
        format!("{commit}:{}", path.display())
    };
    Ok(git(top, &["cat-file", "-e", &spec])?.status.success())
}

/// Writes `paths` (relative to the top) as of `commit` under `dest`, through `git archive` and
/// `tar`; a finished extraction is marked, so a later run reuses it.
pub fn extract(
    top: &Path,
    commit: &str,
    paths: &[PathBuf],
    dest: &Path,
) -> Result<(), PairedError> {
    let done = dest.join(".kernelgate-complete");
    if done.exists() {
        return Ok(());
    }
    let fail = |what: String| PairedError::Git { what };
    let _ = std::fs::remove_dir_all(dest);
    std::fs::create_dir_all(dest)
        .map_err(|e| fail(format!("cannot create `{}`: {e}", dest.display())))?;
    let mut archive = Command::new("git");
    archive
        .arg("-C")
        .arg(top)
        .args(["archive", "--format=tar", commit, "--"])
        .args(paths)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut archive = archive
        .spawn()
        .map_err(|e| fail(format!("cannot run git archive: {e}")))?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(archive.stdout.take().expect("piped"))
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| fail(format!("cannot run tar: {e}")))?;
    let archived = archive
        .wait_with_output()
        .map_err(|e| fail(format!("git archive: {e}")))?;
    if !archived.status.success() || !tar.status.success() {
        return Err(fail(format!(
            "git archive {commit} | tar -x failed: {}{}",
            String::from_utf8_lossy(&archived.stderr).trim(),
            String::from_utf8_lossy(&tar.stderr).trim()
        )));
    }
    std::fs::write(&done, commit)
        .map_err(|e| fail(format!("cannot write `{}`: {e}", done.display())))
}

/// Whether `ancestor` is an ancestor of `commit` (or the same commit).
pub fn is_ancestor(top: &Path, ancestor: &str, commit: &str) -> Result<bool, PairedError> {
    let o = git(top, &["merge-base", "--is-ancestor", ancestor, commit])?;
    Ok(o.status.success())
}

/// The commits after `good` up to `bad` along `bad`'s first parents, oldest first, each with
/// its subject line.
pub fn first_parents(
    top: &Path,
    good: &str,
    bad: &str,
) -> Result<Vec<(String, String)>, PairedError> {
    let range = format!("{good}..{bad}");
    let o = git(
        top,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H%x00%s",
            &range,
        ],
    )?;
    if !o.status.success() {
        return Err(PairedError::Git {
            what: format!(
                "git log {range} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        });
    }
    Ok(String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let (id, subject) = l.split_once('\0')?;
            Some((id.to_string(), subject.to_string()))
        })
        .collect())
}

/// The first parent of `commit`, when it has one.
pub fn parent(top: &Path, commit: &str) -> Result<Option<String>, PairedError> {
    let o = git(
        top,
        &["rev-parse", "--verify", "--quiet", &format!("{commit}^")],
    )?;
    Ok(o.status.success().then(|| stdout(&o)))
}

/// The subject line of `commit`.
pub fn subject(top: &Path, commit: &str) -> Result<String, PairedError> {
    Ok(stdout(&git(top, &["log", "-1", "--format=%s", commit])?))
}
