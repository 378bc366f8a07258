//! `kernelgate init`: kernelgate set up in an existing repository, beside its kernels where they
//! are — the project file, the baselines folder, the CI workflow and, with `--kernel PATH
//! --entry NAME`, a first suite over that source file in place, written from the kernel's own
//! signature (`suite::signature`). Never overwrites: a file that exists is kept and named.

use crate::exit;
use crate::suite::signature::{self, Lookup, Signature};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `kernelgate init`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An existing kernel source for a first suite (host code in it is fine: nvcc compiles it)
    #[arg(long, value_name = "PATH", requires = "entry")]
    pub kernel: Option<PathBuf>,
    /// The `__global__` function of --kernel to time (`name`, or `name<float>` for a template)
    #[arg(long, value_name = "NAME", requires = "kernel")]
    pub entry: Option<String>,
    /// The suites folder to write in the project file
    #[arg(long, value_name = "DIR", default_value = "perf/suites")]
    pub suites: PathBuf,
    /// The baselines folder to write in the project file
    #[arg(long, value_name = "DIR", default_value = "perf/baselines")]
    pub baselines: PathBuf,
    /// Write no CI workflow
    #[arg(long)]
    pub no_ci: bool,
}

/// The workflow `init` writes: a team's PR gate, main gate, bless and history (docs/ci.md).
pub const WORKFLOW: &str = include_str!("../../ci/team/kernelgate.yml");

/// The workflow that puts the gate's summary in one pull-request comment, forks' included.
pub const COMMENT: &str = include_str!("../../ci/team/kernelgate-comment.yml");

/// Why `init` wrote nothing (or stopped).
#[derive(Debug, thiserror::Error)]
enum InitError {
    /// A file or folder that cannot be read, created or written.
    #[error("cannot {what} `{}`: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A project folder given outside the repository.
    #[error("`{}`: the project's folders are inside the repository, relative to it", .0.display())]
    Outside(PathBuf),
    /// The entry is not a kernel of the file.
    #[error("`{entry}` is not a `__global__` function kernelgate can read in `{}`: {why}", .path.display())]
    Entry {
        entry: String,
        path: PathBuf,
        why: String,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InitError {
    let path = path.to_path_buf();
    move |source| InitError::Io { what, path, source }
}

/// A file `init` writes, and what it did with it.
struct Written {
    path: PathBuf,
    kept: bool,
}

fn write_new(path: &Path, text: &str) -> Result<Written, InitError> {
    let kept = path.exists();
    if !kept {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        }
        std::fs::write(path, text).map_err(io("write", path))?;
    }
    Ok(Written {
        path: path.to_path_buf(),
        kept,
    })
}

/// Runs `kernelgate init` in the working directory.
pub fn init(a: &Args) -> ExitCode {
    match try_init(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => exit::bad_input(format_args!("kernelgate init: {e}")),
    }
}

fn try_init(a: &Args) -> Result<(), InitError> {
    for dir in [&a.suites, &a.baselines] {
        let up = dir
            .components()
            .any(|c| c == std::path::Component::ParentDir);
        if dir.is_absolute() || up {
            return Err(InitError::Outside(dir.clone()));
        }
    }
    // The suite first: a wrong --kernel or --entry writes nothing at all.
    let suite = match (&a.kernel, &a.entry) {
        (Some(k), Some(e)) => Some(first_suite(k, e, &a.suites)?),
        _ => None,
    };
    let project = format!(
        "# kernelgate's project file (docs/project.md). Paths are relative to this folder.\n\
         suites = \"{}\"\n\
         baselines = \"{}\"\n\
         # The folders suites may read kernels, includes and data from (default: the whole\n\
         # repository), e.g. sources = [\"src/cuda\", \"kernels\"].\n\
         \n\
         [defaults]\n\
         # Any setting that is not chosen per run, as its KERNELGATE_* variable without the\n\
         # prefix; a variable set for a run wins. E.g. timeout = 300, arch = \"sm_90\".\n",
        a.suites.display(),
        a.baselines.display()
    );
    let mut written = vec![write_new(Path::new(crate::project::FILE), &project)?];
    std::fs::create_dir_all(&a.suites).map_err(io("create", &a.suites))?;
    written.push(write_new(
        &a.baselines.join("README.md"),
        "Stored baselines, one folder per GPU model: written by `KERNELGATE_BLESS=1 kernelgate run`\non a GPU machine, reviewed as diffs, committed on purpose.\n",
    )?);
    if !a.no_ci {
        let workflow = WORKFLOW.replace("perf/baselines", &a.baselines.display().to_string());
        written.push(write_new(
            Path::new(".github/workflows/kernelgate.yml"),
            &workflow,
        )?);
        written.push(write_new(
            Path::new(".github/workflows/kernelgate-comment.yml"),
            COMMENT,
        )?);
    }
    if let Some((path, text)) = &suite {
        written.push(write_new(path, text)?);
    }
    for w in &written {
        if w.kept {
            println!("kept     {} (it exists: nothing written)", w.path.display());
        } else {
            println!("wrote    {}", w.path.display());
        }
    }
    println!(
        "\nnext:\n  kernelgate lint                       # every suite valid, every kernel compiled: no GPU\n  kernelgate run                        # on a GPU machine: check and time every trial\n  KERNELGATE_BLESS=1 kernelgate run     # on a GPU machine: record baselines, then commit {}",
        a.baselines.display()
    );
    Ok(())
}

/// The path and text of a suite over `entry` of the existing source `kernel`.
fn first_suite(kernel: &Path, entry: &str, suites: &Path) -> Result<(PathBuf, String), InitError> {
    let text = std::fs::read_to_string(kernel).map_err(io("read", kernel))?;
    let why = match signature::lookup(&text, entry) {
        Lookup::Kernel(sig) => Ok(sig),
        Lookup::Absent => {
            let names = signature::kernel_names(&text);
            Err(match names.is_empty() {
                true => "the file has no kernel".to_string(),
                false => format!("not in the file (its kernels: {})", names.join(", ")),
            })
        }
        Lookup::NotGlobal { line, what } => Err(format!("a {what} function (line {line})")),
        Lookup::Overloaded { lines } => Err(format!("overloaded (lines {lines:?})")),
        Lookup::Mentioned { line, .. } => Err(format!(
            "line {line} names it, in no declaration kernelgate reads (a macro?)"
        )),
        Lookup::Unreadable(u) => Err(format!("line {}: {}", u.line, u.what)),
    };
    let sig = why.map_err(|why| InitError::Entry {
        entry: entry.to_string(),
        path: kernel.to_path_buf(),
        why,
    })?;
    let name: String = signature::base_name(entry)
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
            true => c,
            false => '_',
        })
        .collect();
    let name = if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name
    } else {
        format!("k_{name}")
    };
    let path = suites.join(format!("{name}.toml"));
    let source = relative(kernel, suites)?;
    let includes = include_dirs(kernel, &text)
        .iter()
        .map(|dir| Ok(format!("\"{}\"", relative(dir, suites)?)))
        .collect::<Result<Vec<_>, InitError>>()?;
    let includes = match includes.as_slice() {
        [] => String::new(),
        dirs => format!("include_dirs = [{}]\n", dirs.join(", ")),
    };
    Ok((path, suite_text(&name, &source, entry, &sig, &includes)))
}

/// The folders of the repository that hold the headers `text` includes and that are neither
/// beside `kernel` nor CUDA's or the C++ library's own (`helper_cuda.h` in `Common/`): each
/// searched for by name under the working directory, taken where exactly one folder has it.
fn include_dirs(kernel: &Path, text: &str) -> Vec<PathBuf> {
    let beside = kernel.parent().unwrap_or(Path::new("."));
    let cuda = &crate::device::headers::cuda_headers().dirs;
    let names = crate::suite::compiler::includes(text)
        .into_iter()
        .map(|i| i.name);
    let wanted = crate::order::first_seen(names.filter(|name| {
        let system = crate::suite::compiler::host_header(name)
            || cuda.iter().any(|d| d.join(name).is_file());
        !system && !beside.join(name).is_file()
    }));
    let files = repository_files(Path::new("."), 50_000);
    let mut dirs: Vec<PathBuf> = Vec::new();
    for name in &wanted {
        let found: Vec<PathBuf> = files
            .iter()
            .filter(|f| f.ends_with(name))
            .map(|f| {
                let depth = Path::new(name).components().count();
                f.ancestors().nth(depth).unwrap_or(f).to_path_buf()
            })
            .collect();
        match found.as_slice() {
            [one] if !dirs.contains(one) => dirs.push(one.clone()),
            [_] => {}
            [] => eprintln!("note: `{name}`, included by `{}`, is not in the repository: add its folder to `include_dirs`", kernel.display()),
            many => eprintln!("note: `{name}` is in {} folders of the repository: add the right one to `include_dirs`", many.len()),
        }
    }
    dirs
}

/// Files under `dir` (hidden and build folders left out, as suites are looked for), at most
/// `limit`.
fn repository_files(dir: &Path, limit: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && !crate::suite::discover::hidden_or_build(&e.path()) {
                stack.push(e.path());
            } else if kind.is_file() && out.len() < limit {
                out.push(e.path());
            }
        }
    }
    out
}

/// `to` as a path relative to the folder `from` (both relative to the working directory).
fn relative(to: &Path, from: &Path) -> Result<String, InitError> {
    let cwd = std::env::current_dir().map_err(io("read", Path::new(".")))?;
    let to = to.canonicalize().map_err(io("find", to))?;
    let from = crate::suite::ctx::clean(&cwd.join(from));
    let common = to
        .components()
        .zip(from.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from.components().count() - common;
    let mut out: PathBuf = std::iter::repeat_n("..", ups).collect();
    out.extend(to.components().skip(common));
    Ok(out.display().to_string())
}

/// A C type as the suite's type name, through the entry's template arguments (`T` of
/// `scale<float>` is `float`).
fn c_type(base: &str, sig: &Signature, entry: &str) -> String {
    let args = signature::template_args(entry)
        .ok()
        .and_then(|(_, args)| args);
    let i = sig.template.iter().flatten().position(|t| t.name == base);
    i.and_then(|i| args?.into_iter().nth(i))
        .unwrap_or_else(|| base.to_string())
}

/// The parameter's name: the declaration's last identifier.
fn param_name(text: &str, base: &str, i: usize) -> String {
    let name: String = text
        .trim_end()
        .trim_end_matches(']')
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|s| !s.is_empty())
        .unwrap_or("")
        .to_string();
    let unnamed = base.rsplit(' ').next() == Some(name.as_str());
    if unnamed || name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p{i}")
    } else {
        name
    }
}

/// The suite's text; `includes`: its `include_dirs` line, or nothing.
fn suite_text(name: &str, source: &str, entry: &str, sig: &Signature, includes: &str) -> String {
    let mut buffers = String::new();
    let mut args = Vec::new();
    for (i, p) in sig.params.iter().enumerate() {
        let pname = param_name(&p.text, &p.base, i);
        let ty = &c_type(&p.base, sig, entry);
        if p.pointer {
            let (dtype, note) = match signature::element_type(ty) {
                Some(d) => (d.name().to_string(), String::new()),
                None => (
                    "f32".into(),
                    format!("  # `{ty}`: kernelgate cannot tell its element type: write it"),
                ),
            };
            let integer = !matches!(dtype.as_str(), "f32" | "f64" | "f16" | "bf16");
            let init = if integer {
                "{ random = \"int\", min = 0, max = 9 }"
            } else {
                "{ random = \"uniform\", min = -1.0, max = 1.0 }"
            };
            let role = if p.const_pointee { "input" } else { "inout" };
            buffers.push_str(&format!(
                "\n[[buffer]]\nname = \"{pname}\"\ntype = \"{dtype}\"{note}\nlen = \"n\"            # elements, an expression over the sizes: set the real length\nrole = \"{role}\"\ninit = {init}\n"
            ));
            args.push(format!("\"{pname}\""));
        } else {
            let value = match signature::scalar_type(ty).map(|s| s.name()) {
                Some(t @ ("f32" | "f64")) => format!("1.0{t}"),
                Some(t) => format!("n as {t}"),
                None => "0".into(),
            };
            args.push(format!("\"{value}\""));
        }
    }
    format!(
        "# A first suite over `{source}`, written by `kernelgate init` from `{entry}`'s parameters.\n\
         # Review the lengths and arguments. The kernel is its own reference until you add a\n\
         # second [[kernel]] (your faster version) and move `reference = true` to the one you trust.\n\
         [suite]\nname = \"{name}\"\nsource = \"{source}\"\n{includes}sizes = {{ n = [1048576] }}\n{buffers}\n\
         [[kernel]]\nname = \"{name}\"\nentry = \"{entry}\"\nreference = true\ngrid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [{}]\n",
        args.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_is_written_from_the_signature() {
        let src = "template <typename T> __global__ void add(const T* __restrict__ a, T *out, int n, float s) {}\n";
        let Lookup::Kernel(sig) = signature::lookup(src, "add<double>") else {
            panic!("not read")
        };
        let text = suite_text("add", "../k.cu", "add<double>", &sig, "");
        let dir = std::env::temp_dir().join(format!("kg-init-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.cu"), src).unwrap();
        std::fs::create_dir_all(dir.join("s")).unwrap();
        let suite = crate::suite::load_text(&dir.join("s/add.toml"), &text)
            .unwrap_or_else(|d| panic!("{text}\n{d:?}"));
        assert_eq!(suite.buffers.len(), 2);
        assert_eq!(suite.buffers[0].dtype.name(), "f64");
        assert!(
            text.contains("args = [\"a\", \"out\", \"n as i32\", \"1.0f32\"]"),
            "{text}"
        );
        assert_eq!(param_name("float x[]", "float", 0), "x");
        assert_eq!(param_name("unsigned int", "unsigned int", 3), "p3");
    }
}
