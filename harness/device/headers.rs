//! `CudaHeaders`: CUDA's own include folders, found for NVRTC without the suite naming them.
//!
//! NVRTC's wheel carries no CUDA headers, so `#include <cuda_fp16.h>` or `<cub/cub.cuh>` fails
//! with "cannot open source file" unless a folder is given. Searched in order, the first folder
//! holding each set wins (mixing versions of one set would compile against half of each):
//!
//! 1. `KERNELGATE_CUDA_INCLUDE` (folders separated by `:`), taken as given;
//! 2. `$CUDA_HOME/include`, `$CUDA_PATH/include`;
//! 3. `../include` beside every folder of `LD_LIBRARY_PATH` (the toolkit, or the pip wheels'
//!    `nvidia/cu13/lib`, next to the NVRTC that was loaded);
//! 4. `/usr/local/cuda/include`;
//! 5. the pip wheels `nvidia-cuda-runtime` and `nvidia-cuda-cccl`, found through `python3`
//!    (`nvidia/cu*/include`).
//!
//! The runtime set is a folder with `cuda_runtime_api.h`; CCCL (CUB, Thrust, `cuda::std`) is its
//! `cccl/` subfolder, as both the toolkit and the wheels lay it out. Their versions (and the
//! wheels' versions, where a `*.dist-info` sits beside them) go into the compile-cache key.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The include folders found, and what identifies their contents.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CudaHeaders {
    /// Folders to hand NVRTC, runtime first, then CCCL.
    pub dirs: Vec<PathBuf>,
    /// Paths and versions, for the compile-cache key.
    pub fingerprint: String,
    /// Every folder looked at, for the message when a header is missing.
    pub searched: Vec<PathBuf>,
}

/// The headers of this process's environment, searched once.
pub fn cuda_headers() -> &'static CudaHeaders {
    static FOUND: OnceLock<CudaHeaders> = OnceLock::new();
    FOUND.get_or_init(|| find(candidates()))
}

/// Where to look, in order (see the module's documentation); searched once per process (it
/// asks python3), for the headers and for what is found beside them (nvcc, the libraries).
pub(super) fn candidates() -> &'static [PathBuf] {
    static CANDIDATES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    CANDIDATES.get_or_init(search)
}

fn search() -> Vec<PathBuf> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(list) = crate::project::var("KERNELGATE_CUDA_INCLUDE") {
        out.extend(std::env::split_paths(&list));
    }
    let homes = ["CUDA_HOME", "CUDA_PATH"].into_iter().filter_map(env);
    out.extend(homes.map(|root| Path::new(&root).join("include")));
    if let Some(list) = env("LD_LIBRARY_PATH") {
        out.extend(std::env::split_paths(&list).map(|lib| lib.join("..").join("include")));
    }
    out.push("/usr/local/cuda/include".into());
    out.extend(python_wheel_includes());
    out
}

/// `nvidia/cu*/include` under every folder of Python's `nvidia` namespace package.
fn python_wheel_includes() -> Vec<PathBuf> {
    let script = "import nvidia\nfor p in nvidia.__path__: print(p)";
    let Ok(out) = std::process::Command::new("python3")
        .args(["-c", script])
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for root in String::from_utf8_lossy(&out.stdout).lines() {
        // The newest CUDA first: `cu13` before `cu12`.
        let cu = children_named(Path::new(root), "cu");
        dirs.extend(cu.into_iter().rev().map(|p| p.join("include")));
    }
    dirs
}

/// The entries of `dir` whose names start with `prefix`, sorted; none where it cannot be read.
pub(super) fn children_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

/// The first folder with the runtime headers and the first with CCCL, among `candidates`.
pub fn find(candidates: &[PathBuf]) -> CudaHeaders {
    let runtime = candidates
        .iter()
        .find(|d| d.join("cuda_runtime_api.h").is_file());
    let cccl = candidates
        .iter()
        .map(|d| d.join("cccl"))
        .find(|d| d.join("cuda/std/__cccl/version.h").is_file());
    let mut found = CudaHeaders {
        searched: candidates.to_vec(),
        ..CudaHeaders::default()
    };
    if let Some(d) = runtime {
        let version = define(&d.join("cuda_runtime_api.h"), "CUDART_VERSION");
        found.fingerprint += &format!(
            "runtime {} CUDART_VERSION {version} {};",
            d.display(),
            wheels(d)
        );
        found.dirs.push(d.clone());
    }
    if let Some(d) = cccl {
        let version = define(&d.join("cuda/std/__cccl/version.h"), "CCCL_VERSION");
        let site = d.parent().map(wheels).unwrap_or_default();
        found.fingerprint += &format!("cccl {} CCCL_VERSION {version} {site};", d.display());
        found.dirs.push(d);
    }
    found
}

/// The value of `#define NAME value` in `file`, or `?`.
fn define(file: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#define"))
        .filter_map(|l| l.trim().strip_prefix(name))
        .find(|rest| rest.starts_with([' ', '\t']))
        .map(|rest| rest.trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// The `nvidia_cuda_*.dist-info` names (which carry the wheels' exact versions) in the
/// site-packages folder of a wheel's `nvidia/cuNN/include`, sorted; empty for a toolkit.
fn wheels(include: &Path) -> String {
    let site = include.ancestors().nth(3);
    let names: Vec<String> = (site.map(|s| children_named(s, "nvidia_cuda_")))
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".dist-info"))
        .collect();
    names.join(" ")
}

/// C and C++ standard library headers: NVRTC has none (it compiles device code only).
pub const HOST_HEADERS: &[&str] = &[
    "cstdint",
    "cstddef",
    "cstdlib",
    "cstring",
    "cstdio",
    "cmath",
    "climits",
    "cassert",
    "iostream",
    "ostream",
    "sstream",
    "string",
    "vector",
    "memory",
    "algorithm",
    "utility",
    "type_traits",
    "limits",
    "new",
    "iterator",
    "functional",
    "tuple",
    "array",
    "atomic",
    "stdint.h",
    "stdlib.h",
    "stdio.h",
    "string.h",
    "math.h",
    "assert.h",
];

/// For NVRTC's log: when the source pulled in host code — a C++ standard header NVRTC does not
/// have, or a function marked `__host__` (device-wide CUB algorithms, Thrust) — what to include
/// instead. Seen: `#include <cub/cub.cuh>` fails with `cannot open source file "cstdint"` or
/// "A function explicitly marked as a __host__ function is not allowed in JIT mode".
pub fn host_only_hint(log: &str) -> Option<String> {
    let std_header = unopened(log).filter(|h| HOST_HEADERS.contains(h));
    let host_function = log.contains("__host__ function is not allowed in JIT mode");
    if std_header.is_none() && !host_function {
        return None;
    }
    let what = match std_header {
        Some(h) => format!(
            "`<{h}>` is a C++ standard library header, which NVRTC does not have{}",
            device_instead(h)
        ),
        None => "a header declares `__host__` functions, which NVRTC cannot compile".into(),
    };
    Some(format!(
        "{what}: kernels are compiled with NVRTC, device code only. `<cub/cub.cuh>`, `<cub/device/...>` and Thrust pull in host code (the device-wide algorithms launch kernels from the host): include the block- or warp-level header you use instead, e.g. `#include <cub/block/block_reduce.cuh>` or `<cub/warp/warp_reduce.cuh>`, and `<cuda/std/cstdint>` for fixed-width integer types (docs/suites.md, \"CUDA's headers\")"
    ))
}

/// The header NVRTC's log says it could not open first (`cannot open source file "x"`).
fn unopened(log: &str) -> Option<&str> {
    // NVRTC's words, then the host compiler's under nvcc.
    if let Some(at) = log.find("cannot open source file \"") {
        let at = at + "cannot open source file \"".len();
        return Some(&log[at..at + log[at..].find('"')?]);
    }
    let line = log
        .lines()
        .find(|l| l.ends_with(": No such file or directory"))?;
    let line = line.strip_suffix(": No such file or directory")?;
    Some(&line[line.rfind("fatal error: ")? + "fatal error: ".len()..])
}

/// What device code includes instead of the standard header `header`: libcu++'s
/// `<cuda/std/...>` (CUDA's CCCL, which kernelgate puts on NVRTC's include path), nothing for
/// what NVRTC has built in (`printf`, the math functions), or that it has no device
/// counterpart.
fn device_instead(header: &str) -> String {
    let name = header.trim_end_matches(".h");
    let name = match (header.ends_with(".h"), name) {
        (true, "stdint" | "stdlib" | "string" | "assert" | "math" | "stdio") => format!("c{name}"),
        _ => name.to_string(),
    };
    match name.as_str() {
        "cstdio" => " (`printf` needs no header in device code: drop the include)".into(),
        "cmath" => " (`sqrtf`, `expf`, `fmaxf` and the other math functions need no header under NVRTC; for `std::` names include `<cuda/std/cmath>`)".into(),
        "cassert" | "cstdint" | "cstddef" | "cstdlib" | "cstring" | "climits" | "type_traits"
        | "limits" | "utility" | "tuple" | "array" | "atomic" | "functional" | "iterator"
        | "new" | "memory" => format!(" (include `<cuda/std/{name}>` instead, and use `cuda::std::`)"),
        _ => " (it has no device counterpart: device code cannot use it)".into(),
    }
}

/// For a compiler's log (NVRTC's, or nvcc's host compiler's): when it could not open a cuBLAS
/// header, where those come from.
pub fn cublas_header_hint(log: &str) -> Option<String> {
    let header = unopened(log).filter(|h| h.starts_with("cublas"))?;
    Some(format!("`{header}` comes with cuBLAS, not with CUDA's runtime headers: the `nvidia-cublas` wheel's `nvidia/cu13/include` or a toolkit's `include`; put that folder in the suite's `include_dirs` (or on CPATH)"))
}

/// For NVRTC's log: when it could not open a CUDA header, which wheel or variable provides
/// it. `None` when the log names no missing header.
pub fn missing_header_hint(log: &str, found: &CudaHeaders) -> Option<String> {
    let header = unopened(log)?;
    let cccl = ["cub/", "thrust/", "cuda/", "nv/"]
        .iter()
        .any(|p| header.starts_with(p));
    let cuda = cccl
        || header.starts_with("cuda")
        || header.starts_with("cooperative_groups")
        || header.starts_with("vector_")
        || header.starts_with("sm_")
        || header.starts_with("mma.h")
        || header.starts_with("device_");
    if let Some(hint) = cublas_header_hint(log) {
        return Some(hint);
    }
    if !cuda {
        return Some(format!(
            "`{header}` is not a CUDA header: put its folder in the suite's `include_dirs`"
        ));
    }
    let wheel = if cccl {
        "nvidia-cuda-cccl"
    } else {
        "nvidia-cuda-runtime"
    };
    let searched = found
        .searched
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "`{header}` comes with CUDA's headers, which kernelgate did not find: `pip install '{wheel}==13.0.*'` (found through python3, or install it beside NVRTC), or set CUDA_HOME to a toolkit, or KERNELGATE_CUDA_INCLUDE to the folder that holds it (searched: {searched})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake wheel layout: `site/nvidia/cu13/include` with a runtime header and CCCL.
    fn wheel_site(root: &Path) -> PathBuf {
        let include = root.join("site/nvidia/cu13/include");
        std::fs::create_dir_all(include.join("cccl/cuda/std/__cccl")).unwrap();
        std::fs::write(
            include.join("cuda_runtime_api.h"),
            "#define CUDART_VERSION_X 1\n#define CUDART_VERSION  13000\n",
        )
        .unwrap();
        std::fs::write(
            include.join("cccl/cuda/std/__cccl/version.h"),
            "#define CCCL_VERSION 3000001\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("site/nvidia_cuda_runtime-13.0.96.dist-info")).unwrap();
        include
    }

    #[test]
    fn finds_runtime_and_cccl_with_their_versions() {
        let tmp = std::env::temp_dir().join(format!("kg-headers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let include = wheel_site(&tmp);
        let found = find(&[tmp.join("nothing-here"), include.clone()]);
        assert_eq!(found.dirs, vec![include.clone(), include.join("cccl")]);
        assert!(
            found.fingerprint.contains("CUDART_VERSION 13000"),
            "{found:?}"
        );
        assert!(
            found.fingerprint.contains("CCCL_VERSION 3000001"),
            "{found:?}"
        );
        assert!(found
            .fingerprint
            .contains("nvidia_cuda_runtime-13.0.96.dist-info"));
        // A different wheel version is a different fingerprint, so a different cache key.
        std::fs::rename(
            tmp.join("site/nvidia_cuda_runtime-13.0.96.dist-info"),
            tmp.join("site/nvidia_cuda_runtime-13.0.97.dist-info"),
        )
        .unwrap();
        assert_ne!(find(&[include]).fingerprint, found.fingerprint);
        assert_eq!(
            find(&[tmp.join("nothing-here")]).dirs,
            Vec::<PathBuf>::new()
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_missing_header_names_its_wheel() {
        let none = CudaHeaders::default();
        let log = "t.cu(1): catastrophic error: cannot open source file \"cuda_fp16.h\"";
        let hint = missing_header_hint(log, &none).unwrap();
        assert!(hint.contains("nvidia-cuda-runtime"), "{hint}");
        assert!(hint.contains("KERNELGATE_CUDA_INCLUDE"), "{hint}");
        let log = "cannot open source file \"cub/block/block_reduce.cuh\"";
        let hint = missing_header_hint(log, &none).unwrap();
        assert!(hint.contains("nvidia-cuda-cccl"), "{hint}");
        let log = "cannot open source file \"mine.cuh\"";
        assert!(missing_header_hint(log, &none)
            .unwrap()
            .contains("include_dirs"));
        assert_eq!(missing_header_hint("error: expected a `;`", &none), None);
        // nvcc's host compiler, on llm.c's `common.h`.
        let log = "common.h:4:10: fatal error: cublas_v2.h: No such file or directory";
        let hint = missing_header_hint(log, &none).unwrap();
        assert!(
            hint.starts_with("`cublas_v2.h` comes with cuBLAS") && hint.contains("nvidia-cublas"),
            "{hint}"
        );
        assert_eq!(
            cublas_header_hint(log),
            Some(hint),
            "nvcc's hint is the same"
        );
        let log = "t.cu(1): catastrophic error: cannot open source file \"cstdint\"";
        let hint = host_only_hint(log).unwrap();
        assert!(
            hint.starts_with("`<cstdint>` is a C++ standard library header"),
            "{hint}"
        );
        assert!(hint.contains("cub/block/block_reduce.cuh"), "{hint}");
        for (header, instead) in [
            ("assert.h", "include `<cuda/std/cassert>` instead"),
            ("cassert", "include `<cuda/std/cassert>` instead"),
            ("cmath", "need no header under NVRTC"),
            ("stdio.h", "`printf` needs no header"),
            ("vector", "no device counterpart"),
        ] {
            let log = format!("cannot open source file \"{header}\"");
            let hint = host_only_hint(&log).unwrap();
            assert!(hint.contains(instead), "{header}: {hint}");
        }
        let log =
            "error: A function explicitly marked as a __host__ function is not allowed in JIT mode";
        assert!(host_only_hint(log)
            .unwrap()
            .contains("declares `__host__` functions"));
        assert_eq!(host_only_hint("cannot open source file \"mine.cuh\""), None);
    }
}
