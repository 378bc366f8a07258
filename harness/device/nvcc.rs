//! `compile` for sources with host code: nvcc (the toolkit's, or the `nvidia-cuda-nvcc` wheel's)
//! compiles the file where it is to PTX, and `ptxas` beside it assembles the CUBIN — the two
//! steps `nvcc -cubin` takes — through the same cache as NVRTC's. nvcc names kernels by their
//! mangled symbols and has no name expressions: a generated file includes the source and takes
//! each entry's address (`&scale<float>`), which instantiates templates and leaves the mangled
//! name in the PTX, where it is read back.

use super::compile::{self, CompileError, CompileRequest, Compiled};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The nvcc to use: `KERNELGATE_NVCC`, else the first found on `PATH`, beside CUDA's headers
/// (`CUDA_HOME`, `LD_LIBRARY_PATH`'s toolkits, `/usr/local/cuda`, the pip wheels' `nvidia/cu13`).
pub fn nvcc() -> Option<&'static (PathBuf, String)> {
    static FOUND: OnceLock<Option<(PathBuf, String)>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let tried: Vec<PathBuf> = match crate::config::var("KERNELGATE_NVCC") {
                Some(given) => vec![given.into()],
                None => {
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    let headers = super::headers::candidates().iter();
                    let beside = headers.map(|inc| inc.join("../bin/nvcc"));
                    let on_path = std::env::split_paths(&path).map(|d| d.join("nvcc"));
                    on_path.chain(beside).collect()
                }
            };
            tried.into_iter().find_map(|nvcc| {
                let out = Command::new(&nvcc).arg("--version").output().ok()?;
                if !out.status.success() {
                    return None;
                }
                // nvcc's version, and its front end's (the nvvm wheel is versioned apart from
                // nvcc's): both are in the cache key.
                let mut version = String::from_utf8_lossy(&out.stdout).trim().to_string();
                let cicc = nvcc.with_file_name("../nvvm/bin/cicc");
                if let Ok(m) = std::fs::metadata(&cicc) {
                    version.push_str(&format!("\ncicc {} bytes", m.len()));
                }
                Some((nvcc, version))
            })
        })
        .as_ref()
}

/// What to do when no nvcc is found.
pub const NO_NVCC: &str = "no nvcc: a source with host code is compiled with nvcc (pip install 'nvidia-cuda-nvcc==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*' beside NVRTC, a CUDA toolkit, or KERNELGATE_NVCC=/path/to/nvcc)";

/// Compiles `req` with nvcc, or loads it from `cache_dir`.
pub fn compile(req: &CompileRequest, cache_dir: Option<&Path>) -> Result<Compiled, CompileError> {
    let no_nvcc = || CompileError::binary(req.path, NO_NVCC.into());
    let (nvcc, version) = nvcc().ok_or_else(no_nvcc)?;
    let key = compile::cache_key(req, &format!("nvcc {version}"));
    compile::through_cache(cache_dir, &key, || {
        in_work(req, &key[..16], |work| build(req, nvcc, work))
    })
}

/// What `ptxas` made of a PTX file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assembled {
    /// It assembles.
    Clean,
    /// It does not: ptxas's messages.
    Failed(String),
    /// No ptxas runs here.
    NoPtxas,
}

/// The PTX file `path` assembled for `arch` by `ptxas` (beside the nvcc found, or on `PATH`),
/// without a GPU: what the driver's JIT would reject, found before a run.
pub fn assemble_ptx(path: &Path, arch: &str) -> Assembled {
    let beside = nvcc().map(|(n, _)| n.with_file_name("ptxas"));
    let candidates = beside.into_iter().chain([PathBuf::from("ptxas")]);
    for ptxas in candidates {
        let Ok(out) = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg("-o")
            .arg("/dev/null")
            .arg(path)
            .output()
        else {
            continue;
        };
        if out.status.success() {
            return Assembled::Clean;
        }
        let log = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| !l.contains("aborted due to errors"))
            .collect();
        return Assembled::Failed(lines.join("\n").trim().to_string());
    }
    Assembled::NoPtxas
}

/// The name of entry `i`'s address in the generated file.
fn slot(i: usize) -> String {
    format!("kernelgate_entry_{i}")
}

/// The PTX nvcc makes, in `work`, of `req`'s source with `appended` after it (a generated file
/// that includes the source, so its own includes resolve where it is), and nvcc's log.
fn ptx_of(
    req: &CompileRequest,
    nvcc: &Path,
    work: &Path,
    appended: &str,
) -> Result<(String, String), CompileError> {
    let source = req
        .path
        .canonicalize()
        .unwrap_or_else(|_| req.path.to_path_buf());
    let unit = work.join("kernelgate_entries.cu");
    let ptx_path = work.join("module.ptx");
    let io = |e: std::io::Error| CompileError::binary(req.path, e.to_string());
    std::fs::write(
        &unit,
        format!("#include \"{}\"\n{appended}", source.display()),
    )
    .map_err(io)?;
    let mut cmd = Command::new(nvcc);
    cmd.args(["-ptx", "-std=c++17"])
        .arg(format!("-arch={}", req.arch))
        .args(
            req.include_dirs
                .iter()
                .map(|d| format!("-I{}", d.display())),
        )
        .args(req.options)
        .arg("-o")
        .arg(&ptx_path)
        .arg(&unit);
    let out = cmd.output().map_err(io)?;
    // Without the generated file's own line: the user's file is the one to read.
    let log: Vec<&str> = std::str::from_utf8(&out.stderr)
        .unwrap_or("")
        .lines()
        .filter(|l| {
            !(l.starts_with("In file included from") && l.contains("kernelgate_entries.cu"))
        })
        .collect();
    let log = log.join("\n").trim().to_string();
    if !out.status.success() {
        // An entry that is no kernel fails in the generated file, not the user's.
        let failed = (req.entries.iter().enumerate())
            .find(|(i, _)| log.contains(&format!("kernelgate_entries.cu({})", i + 2)));
        let hint = match failed {
            // A kernel named as a host function is (llm.c's launchers take their kernels'
            // names): its address cannot be taken by name alone.
            Some((_, e)) if log.contains("which instance of") => Some(format!("`{e}` names more than one function (a host function of the same name?): kernelgate takes the kernel's address by its name, so rename one of them")),
            Some((_, e)) => return Err(CompileError::no_entry(req.path, e)),
            None => super::headers::cublas_header_hint(&log),
        };
        return Err(CompileError::source("nvcc", req.path, log, hint));
    }
    Ok((std::fs::read_to_string(&ptx_path).map_err(io)?, log))
}

/// The PTX of `req`'s source with `appended` after it, made by nvcc in a folder of its own
/// (`None`: no nvcc here).
pub fn ptx_with(req: &CompileRequest, appended: &str) -> Option<Result<String, CompileError>> {
    static QUERIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (nvcc, _) = nvcc()?;
    let n = QUERIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tag = format!("query-{n}");
    Some(in_work(req, &tag, |work| {
        ptx_of(req, nvcc, work, appended).map(|(ptx, _)| ptx)
    }))
}

/// `f` run in a folder of its own (`tag` tells this process's apart), removed after it.
fn in_work<T>(
    req: &CompileRequest,
    tag: &str,
    f: impl FnOnce(&Path) -> Result<T, CompileError>,
) -> Result<T, CompileError> {
    let work = std::env::temp_dir().join(format!("kernelgate-nvcc-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| {
        CompileError::binary(req.path, format!("cannot create `{}`: {e}", work.display()))
    })?;
    let result = f(&work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn build(req: &CompileRequest, nvcc: &Path, work: &Path) -> Result<Compiled, CompileError> {
    let slots: String = (req.entries.iter().enumerate())
        .map(|(i, e)| format!("__device__ void *{} = (void *)&{e};\n", slot(i)))
        .collect();
    let (ptx, log) = ptx_of(req, nvcc, work, &slots)?;
    let ptx_path = work.join("module.ptx");
    let cubin_path = work.join("module.cubin");
    let io = |e: std::io::Error| CompileError::binary(req.path, e.to_string());
    let lowered = (req.entries.iter().enumerate())
        .map(|(i, e)| {
            lowered_name(&ptx, &slot(i)).ok_or_else(|| CompileError::no_entry(req.path, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ptxas = nvcc.with_file_name("ptxas");
    let out = Command::new(&ptxas)
        .arg(format!("-arch={}", req.arch))
        .arg("-o")
        .arg(&cubin_path)
        .arg(&ptx_path)
        .output()
        .map_err(|e| {
            CompileError::binary(req.path, format!("cannot run `{}`: {e}", ptxas.display()))
        })?;
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(CompileError::source("ptxas", req.path, log, None));
    }
    let cubin = std::fs::read(&cubin_path).map_err(io)?;
    Ok(Compiled::new(cubin, req, lowered, &ptx, log))
}

/// The symbol the PTX initializes `slot` with: `.global .align 8 .u64 slot = _Z5scaleIfEvPfi;`.
fn lowered_name(ptx: &str, slot: &str) -> Option<String> {
    ptx.lines().find_map(|l| {
        let rest = l.split_once(&format!(" {slot} = "))?.1;
        let name = rest.trim().trim_end_matches(';').trim();
        let name = name
            .strip_prefix("generic(")
            .map_or(name, |n| n.trim_end_matches(')'));
        (!name.is_empty()).then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::lowered_name;

    #[test]
    fn entries_are_read_from_their_slots() {
        let ptx = ".global .align 8 .u64 kernelgate_entry_0 = _Z9vectorAddPKfS0_Pfi;\n.global .align 8 .u64 kernelgate_entry_1 = generic(_Z5scaleIfEvPT_i);\n";
        assert_eq!(
            lowered_name(ptx, "kernelgate_entry_0").as_deref(),
            Some("_Z9vectorAddPKfS0_Pfi")
        );
        assert_eq!(
            lowered_name(ptx, "kernelgate_entry_1").as_deref(),
            Some("_Z5scaleIfEvPT_i")
        );
        assert_eq!(lowered_name(ptx, "kernelgate_entry_2"), None);
    }
}
