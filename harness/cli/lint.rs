//! `lint`: validates every suite and every stored baseline file and, where NVRTC can be
//! loaded, compiles every kernel and applies the instruction-mix gate (`mix`) — on any
//! machine, no GPU needed. Errors name the file and line. `kernelgate lint FILE...` checks the
//! files named instead, each with the validator that applies where kernelgate reads it.

use crate::config::Config;
use crate::suite::ArgValue;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The project's options and suites (every problem printed), or lint's exit code.
fn project_suites() -> Result<(Config, Vec<crate::suite::Suite>), ExitCode> {
    crate::project::enter();
    let config = Config::from_env().map_err(crate::exit::bad_input)?;
    let suites = super::suites::load_suites(&config, "kernelgate lint", "")?;
    Ok((config, suites))
}

/// `kernelgate lint --launches [FILTER]`: each kernel trial's launches, resolved for its case,
/// of the trials whose name contains `filter` — `suite::kernel::case`, then a line per launch:
/// `entry<<<grid, block, shared>>>(arguments)`, a buffer by its name, a scalar by its value
/// and type.
pub fn launches(filter: &str) -> ExitCode {
    // Where expressions read the device: as a run would, on this machine's GPU if it has one.
    let reads = Config::from_env()
        .ok()
        .filter(|c| crate::suite::device::named_in(&c.suites));
    if let Some(c) = &reads {
        crate::suite::device::set_from_gpu(c.devices.first().copied().unwrap_or(0));
    }
    let suites = match project_suites() {
        Ok((_, suites)) => suites,
        Err(code) => return code,
    };
    let dims = |d: [u32; 3]| format!("[{}, {}, {}]", d[0], d[1], d[2]);
    if reads.is_some() {
        let device = crate::suite::device::for_expressions();
        let values: Vec<String> = (device.named())
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        let values = values.join(", ");
        println!(
            "# expressions read {} ({values}); a run reads its GPU's",
            device.name
        );
    }
    for s in &suites {
        for (c, case) in s.cases.iter().enumerate() {
            for (k, kernel) in s.kernels.iter().enumerate() {
                let name = s.trial_name(c, k);
                if !name.contains(filter) || !s.has_trial(c, k) {
                    continue;
                }
                println!("{name}");
                let defines = &s
                    .sources
                    .get(kernel.source)
                    .map_or(&[][..], |s| &s.defines[..]);
                if !defines.is_empty() {
                    println!("  compiled with {}", defines.join(" "));
                }
                for (l, launch) in case.launches[k].iter().enumerate() {
                    let args: Vec<String> = (launch.args.iter().zip(&launch.shown))
                        .map(|(a, shown)| match (a, shown) {
                            (ArgValue::Buffer(b), _) => s.buffers[*b].name.clone(),
                            (ArgValue::Scratch(i), _) => kernel.scratch[*i].name.clone(),
                            (_, Some(text)) => text.clone(),
                            (ArgValue::Scalar(bytes), None) => format!("{} byte(s)", bytes.len()),
                        })
                        .collect();
                    if let Some(call) = &s.sources[kernel.source].library {
                        let words = serde_json::to_string(call).unwrap_or_default();
                        println!("  cublasLt::gemm({}) {words}", args.join(", "));
                        continue;
                    }
                    println!(
                        "  {}<<<grid {}, block {}, shared {} B>>>({})",
                        kernel.entries.get(l).map_or("?", String::as_str),
                        dims(launch.grid),
                        dims(launch.block),
                        launch.shared,
                        args.join(", ")
                    );
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// The `kernelgate lint` command: the suites and baselines, or the `files` named.
pub fn lint(files: &[PathBuf]) -> ExitCode {
    if !files.is_empty() {
        return lint_files(files);
    }
    lint_project().unwrap_or_else(|code| code)
}

/// `kernelgate lint` of the project; `Err` is an exit before anything is compiled.
fn lint_project() -> Result<ExitCode, ExitCode> {
    let (config, suites) = project_suites()?;
    // Every stored baseline parsed and validated, so GPU-less CI catches a broken one.
    let files = super::suites::check_baselines(&config, None, "kernelgate lint", "")?;
    super::suites::stale_entries(&files, &suites);
    let baselines = files.len();
    let kernels: usize = suites.iter().map(|s| s.kernels.len()).sum();
    let cases: usize = suites.iter().map(|s| s.cases.len()).sum();
    // PTX assembled by ptxas, with or without NVRTC: what the driver would reject at run time;
    // and launch expressions that read the device, for every known device of the target.
    if ptx_problems(&suites, &config.arch) + device_problems(&suites, &config.arch) > 0 {
        return Err(crate::exit::code(crate::exit::BAD_INPUT));
    }
    if let Some(reason) = crate::device::nvrtc_missing() {
        if config.require_nvrtc {
            eprintln!("error: {reason} (KERNELGATE_REQUIRE_NVRTC is set)");
            return Err(crate::exit::code(crate::exit::BAD_INPUT));
        }
        println!("kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; not compiled: {reason}", suites.len(), baselines);
        return Ok(ExitCode::SUCCESS);
    }
    let (mut failed, mut breaches, mut sources) = (0, 0, 0);
    let mut progress = super::progress::Progress::new("kernelgate lint", suites.len());
    let toolchain = crate::sass::Toolchain::here();
    for (i, s) in suites.iter().enumerate() {
        progress.step(i, &s.name);
        match crate::compile_suite::compile_suite(s, &config.arch, Some(&config.cache)) {
            Ok(compiled) => {
                sources += compiled.len();
                // Which compiler took a source, where it is not NVRTC, and why.
                for src in &s.sources {
                    if let Some(why) = &src.nvcc {
                        println!(
                            "kernelgate lint: `{}` compiled with nvcc: {why}",
                            src.path.display()
                        );
                    }
                }
                // The instruction-mix gate (`mix`) and the launches the compiled code cannot
                // run on the target (`limits`): each at the kernel's line, a launch's at the value
                // that breaks the limit.
                let code = crate::sass::identities(s, &compiled, &config.arch, &toolchain);
                let launches = code.map_or_else(
                    |_| Vec::new(),
                    |code| super::limits::launch_problems(s, &code, &config.arch),
                );
                // The suite's text, read only where a launch's value is to be placed.
                let text = match launches.iter().any(|(_, at, _)| at.is_some()) {
                    true => std::fs::read_to_string(&s.path).unwrap_or_default(),
                    false => String::new(),
                };
                let fp64 = crate::mix::fp64_breaches(s, &compiled).into_iter();
                for (ki, at, message) in fp64.map(|(k, m)| (k, None, m)).chain(launches) {
                    breaches += 1;
                    progress.done();
                    let (line, col) = match at {
                        Some(at) => crate::error::line_col(&text, at),
                        None => (s.kernel_lines.get(ki).copied().unwrap_or(1), 1),
                    };
                    eprintln!("error: {}:{line}:{col}: {message}", s.path.display());
                }
            }
            Err(e) => {
                failed += 1;
                let line = super::binaries::source_line(s, e.source_index);
                progress.done();
                eprintln!("error: {}:{line}:1: {e}", s.path.display());
            }
        }
    }
    progress.done();
    println!(
        "kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; {sources} source(s) compiled for {}{}",
        suites.len(),
        baselines,
        config.arch,
        if failed > 0 { format!("; {failed} suite(s) do not compile") } else { String::new() }
    );
    if breaches > 0 {
        println!("kernelgate lint: {breaches} kernel(s) hold FP64 instructions where fp64 = \"forbid\", or launch what their code cannot run on {}", config.arch);
    }
    Ok(if failed > 0 || breaches > 0 {
        crate::exit::code(crate::exit::COMPILE_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

/// Each suite whose expressions read the device, loaded again for every known device of `arch`
/// but the one it was loaded for (`suite::device`): its errors, which name the device. Returns
/// how many suites failed on some device.
fn device_problems(suites: &[crate::suite::Suite], arch: &str) -> usize {
    let used = crate::suite::device::for_expressions();
    let mut failed = 0;
    for s in suites {
        // A suite that names no attribute reads none (a name in a comment costs a load).
        let text = std::fs::read_to_string(&s.path).unwrap_or_default();
        if !crate::suite::device::names(&text) {
            continue;
        }
        let known = crate::suite::device::known(arch);
        if known.is_empty() {
            eprintln!("warning: {}: its expressions read the device, and kernelgate knows no device of {arch}: they were resolved for {} (a run reads its GPU's)", s.path.display(), used.name);
        }
        let others = known.into_iter().filter(|d| *d != used);
        let errors: Vec<_> = others
            .filter_map(|d| crate::suite::load_file_on(&s.path, d).err())
            .flatten()
            .collect();
        for d in &errors {
            eprintln!("error: {d}");
        }
        failed += usize::from(!errors.is_empty());
    }
    failed
}

/// Assembles every PTX source with ptxas for `arch`; prints each that does not assemble at its
/// `source` value, and a note when no ptxas is here. Returns how many failed.
fn ptx_problems(suites: &[crate::suite::Suite], arch: &str) -> usize {
    use crate::device::nvcc::{assemble_ptx, Assembled};
    let mut failed = 0;
    for s in suites {
        for (si, source) in s.sources.iter().enumerate() {
            if source.kind() != crate::suite::SourceKind::Ptx {
                continue;
            }
            match assemble_ptx(&source.path, arch) {
                Assembled::Clean => {}
                Assembled::Failed(log) => {
                    failed += 1;
                    let (line, col) = super::binaries::source_place(s, si);
                    eprintln!(
                        "error: {}:{line}:{col}: source `{}` does not assemble for {arch} (ptxas, as the driver would when it loads the module):\n{log}",
                        s.path.display(),
                        source.path.display()
                    );
                }
                Assembled::NoPtxas => {
                    println!("kernelgate lint: `{}` not assembled: no ptxas here (the nvidia-cuda-nvcc wheel or a CUDA toolkit has it)", source.path.display());
                }
            }
        }
    }
    failed
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
        Kind::Suite => crate::suite::load_file(path)
            .map(drop)
            .map_err(|diagnostics| crate::error::LoadError { diagnostics })?,
        Kind::Npy => crate::npy::read(path)
            .map(drop)
            .map_err(|source| FileError::Npy {
                path: path.to_path_buf(),
                source,
            })?,
        Kind::Results => crate::report::results::Results::load(path).map(drop)?,
        Kind::Baseline => crate::baseline::load(path).map(drop)?,
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
            Err(e) => {
                bad += 1;
                match e {
                    // Each diagnostic is its own `error: file:line:col: ...` line.
                    FileError::Suite(e) => eprintln!("{e}"),
                    e => eprintln!("error: {e}"),
                }
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

    /// Every committed results fixture and baseline reads (format 3's code, units and counters
    /// among them); a damaged value of format 3 is refused at its place.
    #[test]
    fn format_3_files_read_and_their_damaged_fields_are_named() {
        let baselines = std::fs::read_dir("baselines")
            .unwrap()
            .flatten()
            .find(|d| d.path().is_dir())
            .unwrap()
            .path();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&baselines)
            .unwrap()
            .flatten()
            .map(|d| d.path())
            .collect();
        files.extend(
            std::fs::read_dir("tests/fixtures/results")
                .unwrap()
                .flatten()
                .map(|d| d.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json")),
        );
        for f in &files {
            if let Err(e) = check_file(f) {
                panic!("{}: {e}", f.display());
            }
        }
        let dir = std::env::temp_dir().join(format!("kernelgate-lint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let damaged = |file: &Path, name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            edit(&mut v);
            let path = dir.join(name);
            std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
            check_file(&path).unwrap_err().to_string()
        };
        let paired = Path::new("tests/fixtures/results/h200-paired-block.json");
        let measured = |v: &mut serde_json::Value| -> usize {
            let trials = v["trials"].as_array().unwrap();
            trials
                .iter()
                .position(|t| t["measurement"]["counters"].is_object())
                .unwrap()
        };
        let e = damaged(paired, "r1.json", &|v| {
            let i = measured(v);
            v["trials"][i]["measurement"]["counters"]["collected"][0]["kernel"]["occupancy"] =
                5.0.into();
        });
        assert!(
            e.contains(".measurement.counters.collected[0].kernel.occupancy` is 5; write a number from 0 to 1"),
            "{e}"
        );
        let e = damaged(paired, "r2.json", &|v| {
            let i = measured(v);
            v["trials"][i]["base_code"]["identity"] = "".into();
        });
        assert!(
            e.contains(".base_code.identity` is ``; write 64 lower-case hex digits"),
            "{e}"
        );
        let e = damaged(paired, "r3.json", &|v| {
            let i = measured(v);
            v["trials"][i]["measurement"]["counter_changes"][0]["new"] = (-3.0).into();
        });
        assert!(
            e.contains(".measurement.counter_changes[0].new` is -3"),
            "{e}"
        );
        let e = damaged(paired, "r4.json", &|v| {
            v["identical"]["saved_seconds"] = (-1.0).into();
        });
        assert!(e.contains("`identical.saved_seconds` is -1"), "{e}");
        let saxpy = baselines.join("saxpy.json");
        let e = damaged(&saxpy, "saxpy.json", &|v| {
            let (_, entry) = v["trials"]
                .as_object_mut()
                .unwrap()
                .iter_mut()
                .next()
                .unwrap();
            entry["counters"][1]["instructions"] = (-928.0).into();
        });
        assert!(
            e.contains(".counters[1].instructions` is -928; write a number from 0 to 1e18"),
            "{e}"
        );
        let e = damaged(&saxpy, "saxpy.json", &|v| {
            let (_, entry) = v["trials"]
                .as_object_mut()
                .unwrap()
                .iter_mut()
                .next()
                .unwrap();
            entry["code"]["kernels"][0]["entries"][0]["hash"] = "96b2".into();
        });
        assert!(
            e.contains(
                ".code.kernels[0].entries[0].hash` is `96b2`; write 64 lower-case hex digits"
            ),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
