//! `mark_added`: a trial without a baseline is new (not gated); its record says since when —
//! the commit that added its kernel to the suite file, asked of git.

use super::results::{GateNote, Results};
use std::collections::BTreeMap;
use std::path::Path;

/// The commit (git's short hash) that first added the kernel `kernel` to the suite file
/// `file`: the earliest commit whose change adds or removes its `name = "…"` line.
pub fn added_in(file: &Path, kernel: &str) -> Option<String> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty())?;
    let name = file.file_name()?;
    let pattern = format!("name *= *\"{kernel}\"");
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["log", "--format=%h", "--reverse", "-G", &pattern, "--"])
        .arg(name)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    out.status
        .success()
        .then(|| text.lines().next().map(str::to_string))?
}

/// Fills in, for every trial of `results` that has no baseline, the commit that added it.
pub fn mark_added(results: &mut Results) {
    let mut known: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
    for t in &mut results.trials {
        let Some(GateNote::NoBaseline { added, .. }) = &mut t.gate else {
            continue;
        };
        let kernel = t.name.split("::").nth(1).unwrap_or_default().to_string();
        *added = known
            .entry((t.file.clone(), kernel.clone()))
            .or_insert_with(|| added_in(Path::new(&t.file), &kernel))
            .clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_kernel_is_dated_by_the_commit_that_added_it() {
        let dir = std::env::temp_dir().join(format!("kg-added-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .unwrap();
            assert!(o.status.success(), "{o:?}");
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        let suite = dir.join("s.toml");
        git(&["init", "-q"]);
        std::fs::write(&suite, "[[kernel]]\nname = \"a\"\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "a"]);
        let first = git(&["rev-parse", "--short", "HEAD"]);
        std::fs::write(&suite, "[[kernel]]\nname = \"a\"\n[[kernel]]\nname=\"b\"\n").unwrap();
        git(&["commit", "-qam", "b"]);
        let second = git(&["rev-parse", "--short", "HEAD"]);
        assert_eq!(added_in(&suite, "a"), Some(first));
        assert_eq!(added_in(&suite, "b"), Some(second));
        assert_eq!(added_in(&suite, "c"), None);
        assert_eq!(added_in(Path::new("/nonexistent/s.toml"), "a"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
