//! `cupti_missing`: whether `libcupti` loads, loading it from CUDA's folders when it is not on
//! the loader's path (cudarc panics when it cannot load it).

use cudarc::cupti::sys as cp;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Folders where CUDA installs `libcupti`, most specific first.
fn cupti_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut dirs = Vec::new();
    for r in roots {
        dirs.push(r.join("extras/CUPTI/lib64"));
        dirs.push(r.join("lib64"));
        dirs.push(r.join("targets/x86_64-linux/lib"));
    }
    // The PyPI wheel `nvidia-cuda-cupti`, installed beside NVRTC by ci/test.sh.
    dirs.push(PathBuf::from("target/nvrtc/nvidia/cu13/lib"));
    dirs
}

/// Why CUPTI cannot be used here, or `None` when `libcupti` loads.
///
/// When it is not on the loader's path but in one of CUDA's folders, it is loaded from there
/// (and stays loaded), so that cudarc's later load by name finds it by its soname.
pub fn cupti_missing() -> Option<String> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: only tries to open the library; no CUPTI call is made.
            if unsafe { cp::is_culib_present() } {
                return None;
            }
            for dir in cupti_dirs() {
                let Some(path) = newest_cupti(&dir) else {
                    continue;
                };
                // SAFETY: loading libcupti runs its initialisers, which only set up the
                // library; it is kept loaded for the life of the process.
                if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                    std::mem::forget(lib);
                    // SAFETY: as above.
                    if unsafe { cp::is_culib_present() } {
                        return None;
                    }
                }
            }
            Some(
                "no CUPTI: libcupti could not be loaded (it ships with CUDA in extras/CUPTI/lib64 \
                 or lib64, or `pip install 'nvidia-cuda-cupti==13.0.*'`; put its folder on \
                 LD_LIBRARY_PATH or set CUDA_HOME)"
                    .to_string(),
            )
        })
        .clone()
}

/// `libcupti.so.N` in `dir`, the highest N first.
fn newest_cupti(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libcupti.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_library_in_a_folder_is_chosen() {
        let dir = std::env::temp_dir().join(format!("kg-cupti-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "libcupti.so.12",
            "libcupti.so.13",
            "libnvperf_host.so",
            "libcupti.so",
        ] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        assert_eq!(newest_cupti(&dir), Some(dir.join("libcupti.so.13")));
        assert_eq!(newest_cupti(&dir.join("absent")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
