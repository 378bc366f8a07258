//! `Project`: the project file `kernelgate.toml`, found by walking up from the working directory
//! as cargo finds `Cargo.toml`. It says where a repository keeps its suites and baselines, which
//! folders suites may read kernels, includes and data from (anywhere inside the repository,
//! nothing outside it), and default settings. Precedence: a `KERNELGATE_*` variable, then the
//! project file, then kernelgate's default. Without the file everything is as before: the suites
//! folder is `suites`, and a suite reads only files inside it.
//!
//! ```toml
//! suites = "perf/suites"          # default "suites"
//! baselines = "perf/baselines"    # default "baselines"
//! sources = ["src/cuda", "dev"]   # default: the whole project
//! [defaults]                      # any setting that is not chosen per run
//! timeout = 300                   # as KERNELGATE_TIMEOUT=300
//! require_baseline = true
//! ```

use crate::error::Diagnostic;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use toml::Spanned;

/// The project file's name.
pub const FILE: &str = "kernelgate.toml";

/// The settings a project file may give defaults for (`KERNELGATE_` + the key, upper case).
/// The others are chosen per run (`base`, `bless`, `shard`, `seed`, output files...).
const DEFAULTS: &[&str] = &[
    "allow_empty",
    "annotations",
    "arch",
    "cache",
    "counters",
    "cuda_include",
    "history",
    "lock_dir",
    "nvcc",
    "require_baseline",
    "require_counters",
    "require_gpu",
    "require_nvrtc",
    "strict",
    "strict_time",
    "time_identical",
    "timeout",
];

/// Settings whose values are paths: relative to the project root.
const PATHS: &[&str] = &["cache", "cuda_include", "history", "lock_dir", "nvcc"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    suites: Option<Spanned<String>>,
    baselines: Option<Spanned<String>>,
    sources: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    defaults: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// Why the project file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectError {
    /// The file (or its folder) cannot be read.
    #[error("`{}`: {message}", .path.display())]
    File {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A mistake at a place in the file.
    #[error("{0}")]
    At(Diagnostic),
}

/// A project file, read and checked.
#[derive(Debug, Clone)]
pub struct Project {
    /// The folder that holds the file (every path in it is relative to this).
    pub root: PathBuf,
    /// The same folder, its real path.
    pub real_root: PathBuf,
    /// The suites folder.
    pub suites: PathBuf,
    /// The baselines folder.
    pub baselines: PathBuf,
    /// The folders suites may read files from, as real paths.
    pub sources: Vec<PathBuf>,
    /// `KERNELGATE_*` name → default value, as the variable would be written.
    defaults: BTreeMap<String, String>,
}

/// The project in effect for this process: the first `kernelgate.toml` from the working
/// directory up; `Ok(None)` without one. An unreadable or invalid file is an error, every time
/// it is asked for.
pub fn current() -> Result<Option<&'static Project>, ProjectError> {
    static CURRENT: OnceLock<Result<Option<Project>, ProjectError>> = OnceLock::new();
    CURRENT
        .get_or_init(|| {
            let cwd = std::env::current_dir().map_err(|e| ProjectError::File {
                path: ".".into(),
                message: format!("no working directory: {e}"),
            })?;
            match find(&cwd) {
                Some(file) => Project::read(&file, Some(&cwd)).map(Some),
                None => Ok(None),
            }
        })
        .as_ref()
        .map(Option::as_ref)
        .map_err(Clone::clone)
}

/// Moves to the project's root when the working directory is below it (a command run from a
/// subfolder), so every path — the project's folders, `KERNELGATE_*` paths, the paths in
/// messages — is relative to the root, as cargo's are to the workspace's. Call before anything
/// reads the project; commands that take file arguments do not.
pub fn enter() {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    if let Some(dir) = find(&cwd).as_deref().and_then(Path::parent) {
        if dir != cwd {
            let _ = std::env::set_current_dir(dir);
        }
    }
}

/// The first `kernelgate.toml` in `dir` or a folder above it.
pub fn find(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(FILE)).find(|f| f.is_file())
}

/// A project default for variable `name` (`KERNELGATE_TIMEOUT`), when a project file gives one.
pub fn default_for(name: &str) -> Option<String> {
    current().ok().flatten()?.defaults.get(name).cloned()
}

/// A setting: the variable `name` where it is set (unset and empty are the same), else the
/// project file's default.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| default_for(name))
}

impl Project {
    /// Reads the project file `file`. Paths are shown relative to `cwd` when the project root
    /// is the working directory (the usual case: errors then name `suites/x.toml`), absolute
    /// otherwise.
    pub fn read(file: &Path, cwd: Option<&Path>) -> Result<Project, ProjectError> {
        let bad = |path: &Path, message: String| ProjectError::File {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(file).map_err(|e| bad(file, format!("cannot read: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|_| bad(file, "not UTF-8 text".into()))?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let real_root = dir.canonicalize().map_err(|e| bad(dir, e.to_string()))?;
        let root = match cwd.and_then(|c| c.canonicalize().ok()) {
            Some(cwd) if real_root == cwd => PathBuf::new(),
            _ => real_root.clone(),
        };
        let shown = root.join(FILE);
        let fail = |at: usize, message: String| {
            ProjectError::At(Diagnostic::at(&shown, &text, at, message))
        };
        let raw: Raw = toml::from_str(&text).map_err(|e| {
            fail(
                e.span().map_or(0, |s| s.start),
                format!(
                    "{} (a project file holds `suites`, `baselines`, `sources` and a `[defaults]` table: docs/project.md)",
                    e.message().trim()
                ),
            )
        })?;
        let folder = |v: &Option<Spanned<String>>, default: &str| match v {
            None => Ok(root.join(default)),
            Some(s) => match outside(&real_root, s.get_ref()) {
                None => Ok(root.join(s.get_ref())),
                Some(m) => Err(fail(s.span().start, m)),
            },
        };
        let suites = folder(&raw.suites, "suites")?;
        let baselines = folder(&raw.baselines, "baselines")?;
        let mut sources = Vec::new();
        for s in raw
            .sources
            .as_ref()
            .map(|l| l.get_ref().as_slice())
            .unwrap_or_default()
        {
            let p = real_root.join(s.get_ref());
            let Ok(real) = p.canonicalize() else {
                return Err(fail(
                    s.span().start,
                    format!(
                        "source folder `{}` does not exist (it would be `{}`)",
                        s.get_ref(),
                        p.display()
                    ),
                ));
            };
            if let Some(m) = outside(&real_root, s.get_ref()) {
                return Err(fail(s.span().start, m));
            }
            sources.push(real);
        }
        if raw.sources.is_none() {
            sources.push(real_root.clone());
        }
        let defaults = (raw.defaults.iter())
            .map(|(key, value)| default(&root, key, value).map_err(|(at, m)| fail(at, m)))
            .collect::<Result<_, _>>()?;
        Ok(Project {
            root,
            real_root,
            suites,
            baselines,
            sources,
            defaults,
        })
    }
}

/// A `[defaults]` entry as the variable's name and value, or where and what is wrong.
fn default(
    root: &Path,
    key: &Spanned<String>,
    value: &Spanned<toml::Value>,
) -> Result<(String, String), (usize, String)> {
    let name = key.get_ref();
    if !DEFAULTS.contains(&name.as_str()) {
        let hint = match crate::suggest::closest(name, DEFAULTS.iter().copied()) {
            Some(k) => format!("did you mean `{k}`?"),
            None if crate::variables::KNOWN.contains(&variable(name).as_str()) => {
                format!("it is chosen per run: set {} for the run", variable(name))
            }
            None => "it is no setting of kernelgate".into(),
        };
        let message = format!(
            "`{name}` cannot have a project default: {hint} (defaults: {})",
            DEFAULTS.join(", ")
        );
        return Err((key.span().start, message));
    }
    let text = match value.get_ref() {
        toml::Value::String(s) if PATHS.contains(&name.as_str()) => {
            root.join(s).display().to_string()
        }
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => if *b { "1" } else { "0" }.into(),
        _ => {
            let message = format!("`{name}`: write a string, a whole number or true/false");
            return Err((value.span().start, message));
        }
    };
    Ok((variable(name), text))
}

/// `KERNELGATE_TIMEOUT` for `timeout`.
fn variable(key: &str) -> String {
    format!("KERNELGATE_{}", key.to_ascii_uppercase())
}

/// What is wrong when `rel` leaves `root` (a `..` out of it, an absolute path elsewhere).
fn outside(root: &Path, rel: &str) -> Option<String> {
    let p = root.join(rel);
    let mut depth = 0i32;
    for c in Path::new(rel).components() {
        match c {
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            _ => depth = -1,
        }
        if depth < 0 {
            break;
        }
    }
    let real = p.canonicalize().unwrap_or(p.clone());
    if depth >= 0 && real.starts_with(root) {
        return None;
    }
    Some(format!(
        "`{rel}` is outside the project (`{}`): the project's folders are inside the folder of its `{FILE}`, which is what a clone, the CI bundle and paired mode's base carry",
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(text: &str) -> (PathBuf, Result<Project, ProjectError>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kg-project-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(dir.join("src/cuda")).unwrap();
        std::fs::write(dir.join(FILE), text).unwrap();
        let p = Project::read(&dir.join(FILE), Some(&dir));
        (dir, p)
    }

    #[test]
    fn folders_and_defaults_are_read_relative_to_the_root() {
        let (dir, p) = project(
            "suites = \"perf\"\nsources = [\"src/cuda\"]\n[defaults]\ntimeout = 300\nrequire_baseline = true\ncache = \".cache/kg\"\n",
        );
        let p = p.unwrap();
        assert_eq!(p.root, PathBuf::new(), "the root is the working directory");
        assert_eq!(p.suites, Path::new("perf"));
        assert_eq!(p.baselines, Path::new("baselines"));
        assert_eq!(p.sources, [dir.join("src/cuda").canonicalize().unwrap()]);
        assert_eq!(p.defaults["KERNELGATE_TIMEOUT"], "300");
        assert_eq!(p.defaults["KERNELGATE_REQUIRE_BASELINE"], "1");
        assert_eq!(p.defaults["KERNELGATE_CACHE"], ".cache/kg");
        let elsewhere = Project::read(&dir.join(FILE), Some(Path::new("/"))).unwrap();
        assert_eq!(elsewhere.suites, dir.canonicalize().unwrap().join("perf"));
        assert_eq!(find(&dir.join("src/cuda")), Some(dir.join(FILE)));
    }

    #[test]
    fn mistakes_are_named_at_their_place() {
        let cases = [
            ("suites = \"../x\"\n", "1:10: `../x` is outside the project"),
            ("sources = [\"src\", \"nope\"]\n", "1:19: source folder `nope` does not exist"),
            ("[defaults]\nbless = 1\n", "2:1: `bless` cannot have a project default: it is chosen per run: set KERNELGATE_BLESS"),
            ("[defaults]\ntimout = 1\n", "2:1: `timout` cannot have a project default: did you mean `timeout`?"),
            ("[defaults]\ntimeout = [1]\n", "2:11: `timeout`: write a string"),
            ("suite = \"x\"\n", "1:1: unknown field `suite`"),
        ];
        for (text, want) in cases {
            let (_, p) = project(text);
            let e = p.unwrap_err().to_string();
            assert!(e.starts_with(FILE) && e.contains(want), "{text}: {e}");
        }
    }
}
