//! `ensure`: NVRTC found without set-up. cudarc opens CUDA's libraries by bare name, so the
//! loader must see their folder before anything loads, and NVRTC needs its builtins library
//! beside it. When NVRTC does not load as things are, and the pip wheels' `nvidia/cu13/lib` is
//! found — in the Python environment kernelgate was installed into (`pip install kernelgate`),
//! in this project's `target/nvrtc` (where `ci/test.sh` installs it), or in `python3`'s `nvidia`
//! package — the process runs itself again with that folder on `LD_LIBRARY_PATH`, which the
//! GPU workers inherit.

use std::path::{Path, PathBuf};

/// Set in the process run again, so it is done once.
const AGAIN: &str = "_KERNELGATE_LIBRARIES";

/// Runs this process again with the wheels' libraries on `LD_LIBRARY_PATH` where NVRTC does not
/// load without them; returns when nothing is to be done (or it cannot be done: the commands then
/// say what is missing, as before).
pub fn ensure() {
    if std::env::var_os(AGAIN).is_some() {
        return;
    }
    // SAFETY: only tries to open the library; no NVRTC call is made.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return;
    }
    let Some(dir) = wheels_nvrtc() else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut paths = vec![dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default(),
    ));
    let Ok(joined) = std::env::join_paths(paths) else {
        return;
    };
    let mut again = std::process::Command::new(exe);
    again
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", joined)
        .env(AGAIN, "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Replaces this process: returns only when it could not.
        let _ = again.exec();
    }
}

/// Whether a kernelgate process started here has NVRTC: it loads as things are, or [`ensure`]
/// finds the wheels' folder (a test process, which does not run itself again, asks this to
/// know what the binary it starts will see).
pub fn nvrtc_found() -> bool {
    // SAFETY: only tries to open the library; no NVRTC call is made.
    let loads = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    loads || wheels_nvrtc().is_some()
}

/// The nearest folder of [`candidates`] that holds NVRTC.
fn wheels_nvrtc() -> Option<PathBuf> {
    (candidates().into_iter()).find(|d| d.join("libnvrtc.so.13").is_file())
}

/// Folders that may hold the wheels' libraries, nearest first.
fn candidates() -> Vec<PathBuf> {
    let exe = std::env::current_exe().and_then(|e| e.canonicalize());
    // `<venv>/bin/kernelgate` → `<venv>/lib/python3.X/site-packages/nvidia/cu13/lib`.
    let venv = |e: PathBuf| Some(site_packages(&e.parent()?.parent()?.join("lib")));
    let mut out = exe.ok().and_then(venv).unwrap_or_default();
    out.push(PathBuf::from("target/nvrtc/nvidia/cu13/lib"));
    let headers = super::headers::candidates().iter();
    out.extend(headers.map(|inc| inc.join("../lib")));
    out
}

/// `<lib>/python3.X/site-packages/nvidia/cu13/lib` for each Python under `lib`.
fn site_packages(lib: &Path) -> Vec<PathBuf> {
    super::headers::children_named(lib, "python3")
        .into_iter()
        .map(|p| p.join("site-packages/nvidia/cu13/lib"))
        .collect()
}

/// Folders where CUDA installs its libraries, most specific first: the toolkit's (`CUDA_HOME`,
/// `CUDA_PATH`, `CUDA_ROOT`, `/usr/local/cuda`) and the pip wheels' (`nvidia/cu13/lib`).
fn cuda_dirs() -> Vec<PathBuf> {
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
        dirs.push(r.join("lib"));
    }
    dirs.extend(candidates());
    dirs
}

/// Whether a CUDA library loads: `present` says so as things are, or after the newest file
/// named `prefix*` (`libcupti.so`) in one of CUDA's folders is loaded — it stays loaded, so that
/// cudarc's later load by name finds it by its soname (cudarc panics where it cannot).
pub fn load_from_cuda(prefix: &str, present: impl Fn() -> bool) -> bool {
    if present() {
        return true;
    }
    for dir in cuda_dirs() {
        let Some(path) = newest(&dir, prefix) else {
            continue;
        };
        // SAFETY: loading a CUDA library runs its initialisers, which only set up the library;
        // it is kept loaded for the life of the process.
        if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
            std::mem::forget(lib);
            if present() {
                return true;
            }
        }
    }
    false
}

/// The file `prefix.N` (or `prefix`) in `dir` with the highest N.
pub fn newest(dir: &Path, prefix: &str) -> Option<PathBuf> {
    super::headers::children_named(dir, prefix).pop()
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
        assert_eq!(
            newest(&dir, "libcupti.so"),
            Some(dir.join("libcupti.so.13"))
        );
        assert_eq!(newest(&dir.join("absent"), "libcupti.so"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
