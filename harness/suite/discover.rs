//! `discover_all`: every suite file under a folder. Links are followed, but each real folder is
//! searched once: a link back to a folder already on the path is a loop, reported at the link
//! and not followed; a second link to a folder searched elsewhere is skipped. Seen before this:
//! a folder linking to itself twice walked 2^depth paths (no output after 20 s, memory growing).

use crate::error::{Diagnostic, LoadError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Suite files found, and the link loops skipped on the way (as diagnostics at each link).
#[derive(Debug, Default)]
pub struct Found {
    /// `.toml` files, sorted, each real file once.
    pub files: Vec<PathBuf>,
    /// One per link that leads back to a folder on its own path.
    pub loops: Vec<Diagnostic>,
}

/// A diagnostic at the start of `file` (line 1, column 1).
fn at_path(file: &Path, message: String) -> Diagnostic {
    Diagnostic::at(file, "", 0, message)
}

/// Every suite file under `dir`, recursively; each real folder and file is visited once, so
/// time and memory are bounded by the real tree whatever links it holds.
pub fn discover_all(dir: &Path) -> Result<Found, LoadError> {
    let fail = |d: &Path, message: String| LoadError {
        diagnostics: vec![at_path(d, message)],
    };
    if !dir.is_dir() {
        return Err(fail(dir, format!(
            "the suites folder `{}` does not exist (run from the project root, or set KERNELGATE_SUITES)",
            dir.display()
        )));
    }
    let root = dir
        .canonicalize()
        .map_err(|e| fail(dir, format!("cannot resolve `{}`: {e}", dir.display())))?;
    let mut found = Found::default();
    let mut seen_dirs = BTreeSet::from([root.clone()]);
    let mut seen_files = BTreeSet::new();
    // (path as the user sees it, real paths of the folders from the root down to it)
    let mut stack = vec![(dir.to_path_buf(), vec![root])];
    while let Some((shown, ancestors)) = stack.pop() {
        let entries = std::fs::read_dir(&shown)
            .map_err(|e| fail(&shown, format!("cannot list `{}`: {e}", shown.display())))?;
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let target = match p.canonicalize() {
                Ok(t) => t,
                // A suite file's name that leads to no file: a loop of links, or a link to
                // nothing. Seen before: silently skipped, and its suite never ran.
                Err(e) if p.extension().is_some_and(|x| x == "toml") => {
                    let to = std::fs::read_link(&p)
                        .map(|t| format!(" to `{}`", t.display()))
                        .unwrap_or_default();
                    let why = if e.kind() == std::io::ErrorKind::NotFound {
                        format!("links{to}, which does not exist")
                    } else {
                        format!("links{to} in a loop of links that never reaches a file ({e})")
                    };
                    found.loops.push(at_path(&p, format!(
                        "suite file `{}` {why}: its suite cannot run (point the link at a suite file, or remove it)",
                        p.display()
                    )));
                    continue;
                }
                Err(_) => continue, // another dangling link: nothing to load
            };
            if target.is_dir() {
                if hidden_or_build(&p) {
                    continue;
                } else if ancestors.contains(&target) {
                    found.loops.push(at_path(&p, format!(
                        "`{}` links back to `{}`, a folder above it: a link loop, not followed (remove the link, or point it outside the suites folder)",
                        p.display(),
                        target.display()
                    )));
                } else if seen_dirs.insert(target.clone()) {
                    let mut above = ancestors.clone();
                    above.push(target);
                    stack.push((p, above));
                }
            } else if p.extension().is_some_and(|e| e == "toml")
                && is_suite_file(&p)
                && seen_files.insert(target)
            {
                found.files.push(p);
            }
        }
    }
    found.files.sort();
    Ok(found)
}

/// A folder no suite lives in: hidden (`.git`, `.config`) or a build's (`target`,
/// `node_modules`).
pub fn hidden_or_build(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with('.') || name == "target" || name == "node_modules"
}

/// Whether a `.toml` file is a suite: it has a table of the suite schema (`[suite]`,
/// `[[kernel]]`, `[[buffer]]`, `[check]`, `[bench]`), or cannot be read (then loading says why).
/// Another tool's file (`Cargo.toml`, `pyproject.toml`, the project file) is not read as one, so
/// a suites folder may be a repository's root.
fn is_suite_file(p: &Path) -> bool {
    if p.file_name().is_some_and(|n| n == crate::project::FILE) {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(p) else {
        return true;
    };
    text.lines().map(str::trim_start).any(|l| {
        let name = l.trim_start_matches('[').trim_start();
        l.starts_with('[')
            && ["suite", "kernel", "buffer", "check", "bench"]
                .iter()
                .any(|t| {
                    name.starts_with(t) && name[t.len()..].trim_start().starts_with([']', '.'])
                })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn link_loops_are_reported_once_and_not_followed() {
        use std::os::unix::fs::symlink;
        let tmp = std::env::temp_dir().join(format!("kg-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("a/b")).unwrap();
        std::fs::write(tmp.join("a/b/s.toml"), "[suite]\n").unwrap();
        std::fs::write(tmp.join("a/Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        std::fs::write(tmp.join("a/kernelgate.toml"), "[defaults]\n").unwrap();
        std::fs::create_dir_all(tmp.join("a/.config")).unwrap();
        std::fs::write(tmp.join("a/.config/n.toml"), "[[kernel]]\n").unwrap();
        symlink(&tmp, tmp.join("a/b/again")).unwrap();
        symlink(tmp.join("a"), tmp.join("a/b/up")).unwrap();
        let found = discover_all(&tmp).unwrap();
        assert_eq!(found.files.len(), 1, "{:?}", found.files);
        assert_eq!(found.loops.len(), 2, "{:?}", found.loops);
        assert!(found.loops[0].message.contains("link loop"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn suite_files_that_lead_nowhere_are_named() {
        use std::os::unix::fs::symlink;
        let tmp = std::env::temp_dir().join(format!("kg-file-loop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        symlink(tmp.join("b.toml"), tmp.join("a.toml")).unwrap();
        symlink(tmp.join("a.toml"), tmp.join("b.toml")).unwrap();
        symlink(tmp.join("gone.toml"), tmp.join("c.toml")).unwrap();
        let found = discover_all(&tmp).unwrap();
        let messages: Vec<&str> = found.loops.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages[0].contains("a.toml` links to") && messages[0].contains("loop of links"),
            "{messages:?}"
        );
        assert!(
            messages[2].contains("c.toml` links to") && messages[2].contains("does not exist"),
            "{messages:?}"
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
