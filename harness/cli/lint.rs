//! `lint`: validates every suite and every stored baseline file and, where NVRTC can be
//! loaded, compiles every kernel and applies the instruction-mix gate (`mix`) — on any
//! machine, no GPU needed. Errors name the file and line. `kernelgate lint FILE...` checks the
//! files named instead, each with the validator that applies where kernelgate reads it.

use crate::config::Config;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `kernelgate lint` command: the suites and baselines, or the `files` named.
pub fn lint(files: &[PathBuf]) -> ExitCode {
    if !files.is_empty() {
        return lint_files(files);
    }
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::exit::code(crate::exit::BAD_INPUT);
        }
    };
    let suites = match super::suites::load_suites(&config, "kernelgate lint", "") {
        Ok(s) => s,
        Err(code) => return code,
    };
    // Every stored baseline parsed and validated, so GPU-less CI catches a broken one.
    let baselines = match super::suites::check_baselines(&config, None, "kernelgate lint", "") {
        Ok(n) => n,
        Err(code) => return code,
    };
    let kernels: usize = suites.iter().map(|s| s.kernels.len()).sum();
    let cases: usize = suites.iter().map(|s| s.cases.len()).sum();
    if let Some(reason) = crate::device::nvrtc_missing() {
        if config.require_nvrtc {
            eprintln!("error: {reason} (KERNELGATE_REQUIRE_NVRTC is set)");
            return crate::exit::code(crate::exit::BAD_INPUT);
        }
        println!("kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; not compiled: {reason}", suites.len(), baselines);
        return ExitCode::SUCCESS;
    }
    let mut failed = 0;
    let mut breaches = 0;
    let mut sources = 0;
    for s in &suites {
        match crate::compile_suite::compile_suite(s, &config.arch, Some(&config.cache)) {
            Ok(compiled) => {
                sources += compiled.len();
                // The instruction-mix gate (`mix`), at the kernel's line.
                for (ki, message) in crate::mix::fp64_breaches(s, &compiled) {
                    breaches += 1;
                    let line = s.kernel_lines.get(ki).copied().unwrap_or(1);
                    eprintln!("error: {}:{line}:1: {message}", s.path.display());
                }
            }
            Err(e) => {
                failed += 1;
                let line = s
                    .kernels
                    .iter()
                    .position(|k| k.source == e.source_index)
                    .and_then(|k| s.kernel_lines.get(k).copied())
                    .unwrap_or(1);
                eprintln!("error: {}:{line}:1: {e}", s.path.display());
            }
        }
    }
    println!(
        "kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; {sources} source(s) compiled for {}{}",
        suites.len(),
        baselines,
        config.arch,
        if failed > 0 { format!("; {failed} suite(s) do not compile") } else { String::new() }
    );
    if breaches > 0 {
        println!(
            "kernelgate lint: {breaches} kernel(s) hold FP64 instructions where fp64 = \"forbid\""
        );
    }
    if failed > 0 || breaches > 0 {
        crate::exit::code(crate::exit::COMPILE_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

/// What kind of file kernelgate reads `path` as, by its name and first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Suite,
    Npy,
    Results,
    Baseline,
    History,
}

/// Why a file named to `kernelgate lint` is unusable: its kind's own error.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error("cannot read `{}`: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}`: not a file kernelgate reads (a suite .toml, a golden or input .npy, a results or baseline .json, a history .sqlite)", .0.display())]
    Unknown(PathBuf),
    #[error(transparent)]
    Suite(#[from] crate::error::LoadError),
    #[error("`{}`: {source}", .path.display())]
    Npy {
        path: PathBuf,
        source: crate::npy::NpyError,
    },
    #[error(transparent)]
    Results(#[from] crate::report::results_file::ResultsError),
    #[error(transparent)]
    Baseline(#[from] crate::baseline::BaselineError),
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
}

fn kind(path: &Path) -> Result<Kind, FileError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let head = std::fs::read(path).map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(match ext {
        "toml" => Kind::Suite,
        "npy" => Kind::Npy,
        _ if head.starts_with(b"SQLite format 3\0") => Kind::History,
        "json" => {
            // A results file lists its trials; a baseline maps them by name.
            let v: serde_json::Value = serde_json::from_slice(&head).unwrap_or_default();
            if v.get("trials").is_some_and(serde_json::Value::is_array) {
                Kind::Results
            } else {
                Kind::Baseline
            }
        }
        _ => return Err(FileError::Unknown(path.to_path_buf())),
    })
}

/// Checks one file with its kind's validator: the message of the first problem.
fn check_file(path: &Path) -> Result<Kind, FileError> {
    let kind = kind(path)?;
    match kind {
        Kind::Suite => {
            crate::suite::load_file(path)
                .map_err(|diagnostics| crate::error::LoadError { diagnostics })?;
        }
        Kind::Npy => {
            crate::npy::read(path).map_err(|source| FileError::Npy {
                path: path.to_path_buf(),
                source,
            })?;
        }
        Kind::Results => {
            crate::report::results::Results::load(path)?;
        }
        Kind::Baseline => {
            crate::baseline::load(path)?;
        }
        Kind::History => crate::history::History::open_read_only(path)?.validate()?,
    }
    Ok(kind)
}

/// `kernelgate lint FILE...`: every file checked; exit 2 when one is unusable.
fn lint_files(files: &[PathBuf]) -> ExitCode {
    let mut bad = 0;
    for f in files {
        match check_file(f) {
            Ok(kind) => println!(
                "kernelgate lint: `{}` is a valid {kind:?} file",
                f.display()
            ),
            Err(FileError::Suite(e)) => {
                bad += 1;
                // Each diagnostic is its own `error: file:line:col: ...` line.
                eprintln!("{e}");
            }
            Err(e) => {
                bad += 1;
                eprintln!("error: {e}");
            }
        }
    }
    if bad > 0 {
        eprintln!("kernelgate lint: {bad} of {} file(s) unusable", files.len());
        return crate::exit::code(crate::exit::BAD_INPUT);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_is_read_as_its_kind() {
        let kinds: Vec<Result<Kind, FileError>> = [
            "suites/saxpy.toml",
            "suites/conv2d/golden.npy",
            "tests/fixtures/results/example.json",
        ]
        .iter()
        .map(|p| check_file(Path::new(p)))
        .collect();
        let kinds: Vec<Kind> = kinds.into_iter().map(Result::unwrap).collect();
        assert_eq!(kinds, [Kind::Suite, Kind::Npy, Kind::Results]);
        let baseline = std::fs::read_dir("baselines")
            .unwrap()
            .flatten()
            .find(|d| d.path().is_dir())
            .unwrap()
            .path()
            .join("saxpy.json");
        assert_eq!(check_file(&baseline).unwrap(), Kind::Baseline);
        let e = check_file(Path::new("README.md")).unwrap_err().to_string();
        assert!(e.contains("not a file kernelgate reads"), "{e}");
    }
}
