//! `Held`: a lock held across processes — `flock` through std's `File::lock`/`try_lock` (Rust
//! 1.89), freed by the OS when the process ends however it ends — with who holds it written
//! into the lock file, so a process that waits can say for whom. Two locks use it:
//!
//! - **one GPU, one measurement at a time**: every kernelgate process takes the lock of the
//!   physical GPU (by UUID) while its worker checks and times a trial, in every mode — a run,
//!   paired mode, bless, `calibrate`, one process per trial under nextest. Seen before this, on
//!   an H200: two concurrent stored runs each failed `matmul::naive::n=2048 REGRESSED +79.7%`
//!   and `reduce::atomic::n=4194304 REGRESSED +109.4%`, and nothing said why. The locks live in
//!   `KERNELGATE_LOCK_DIR` (default: the system's temporary folder); containers that share a GPU
//!   must share that folder (a bind mount), or they do not see each other's locks.
//! - **one baseline writer per device folder**: bless reads, merges and writes a suite's
//!   baseline inside the lock of its folder, so two concurrent `KERNELGATE_BLESS=add` runs
//!   keep every run (seen before: 1 run per entry + two concurrent adds = 2 runs, not 3).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a waiting process tries again.
const POLL: Duration = Duration::from_millis(50);

/// How often a waiting process says it is still waiting.
const REMIND: Duration = Duration::from_secs(60);

/// A lock this process holds; dropping it frees it.
#[derive(Debug)]
pub struct Held {
    _file: File,
    /// The lock file.
    pub path: PathBuf,
    /// How long this process waited for it.
    pub waited: Duration,
}

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file cannot be opened or locked.
    #[error("cannot use the lock file `{}`: {source} (set KERNELGATE_LOCK_DIR to a folder kernelgate may write)", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// Another process held it for longer than this one would wait.
    #[error("waited {} s for {what}, held by {holder}; giving up (is that process stuck? it frees the lock when it ends)", .waited.as_secs())]
    TimedOut {
        /// What the lock guards.
        what: String,
        /// Who held it, as it wrote itself into the lock file.
        holder: String,
        /// How long this process waited.
        waited: Duration,
    },
}

/// The folder of the GPU locks: `KERNELGATE_LOCK_DIR`, else the system's temporary folder.
pub fn lock_dir() -> PathBuf {
    crate::project::var("KERNELGATE_LOCK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

/// The lock file of the GPU with UUID `uuid` (`GPU-8c1f…`), or of device `ordinal` where the
/// UUID is unknown (then only processes that number the GPUs alike see each other).
pub fn gpu_lock_path(dir: &Path, uuid: Option<&str>, ordinal: i32) -> PathBuf {
    let name = match uuid {
        Some(u) => u.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
        None => format!("ordinal-{ordinal}"),
    };
    dir.join(format!("kernelgate-gpu-{name}.lock"))
}

/// The lock of a folder of baselines (`baselines/<device>`), in `dir`: named by a hash of the
/// folder's real path, so the folder itself gains no file (it is under version control).
pub fn folder_lock_path(dir: &Path, folder: &Path) -> PathBuf {
    use sha2::Digest;
    let real = folder
        .canonicalize()
        .unwrap_or_else(|_| std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf()));
    let hash = sha2::Sha256::digest(real.as_os_str().as_encoded_bytes());
    let short: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    dir.join(format!("kernelgate-baselines-{short}.lock"))
}

/// This process as a holder describes itself: `pid 4242 on h200-07: kernelgate run saxpy`.
pub fn this_process() -> String {
    let host = crate::baseline::host_name().unwrap_or_else(|| "this host".into());
    let command: Vec<String> = std::env::args().collect();
    format!(
        "pid {} on {host}: {}",
        std::process::id(),
        command.join(" ")
    )
}

/// Takes the lock at `path` for `what` (`GPU-8c1f… for timing`), waiting at most `wait`;
/// while it waits, `waiting(holder, waited)` is called once at first and then every minute,
/// with who holds it. Once taken, this process's description is written into the file.
pub fn acquire(
    path: &Path,
    what: &str,
    wait: Duration,
    waiting: &mut dyn FnMut(&str, Duration),
) -> Result<Held, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = match OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(f) => {
            // Another user's kernelgate must be able to take it too (a shared temp folder).
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
            }
            f
        }
        // Another user's lock file: `flock` needs no write access, only the name of who holds
        // it is not written.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            File::open(path).map_err(io)?
        }
        Err(e) => return Err(io(e)),
    };
    let start = Instant::now();
    let mut told: Option<Instant> = None;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::Error(e)) => return Err(io(e)),
            Err(TryLockError::WouldBlock) => {
                let holder = holder(&mut file);
                if start.elapsed() >= wait {
                    return Err(LockError::TimedOut {
                        what: what.to_string(),
                        holder,
                        waited: start.elapsed(),
                    });
                }
                if told.is_none_or(|t| t.elapsed() >= REMIND) {
                    waiting(&holder, start.elapsed());
                    told = Some(Instant::now());
                }
                std::thread::sleep(POLL);
            }
        }
    }
    // Who holds it now, for the next process that waits. A failure here only loses the name.
    let me = this_process();
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(me.as_bytes()))
        .and_then(|()| file.flush());
    Ok(Held {
        _file: file,
        path: path.to_path_buf(),
        waited: start.elapsed(),
    })
}

/// Who holds a lock, as the holder wrote itself into the file.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
    match text.trim() {
        "" => "another process (it has not said who)".into(),
        t => t.chars().take(300).collect(),
    }
}

/// The lock of `info`'s physical GPU (`crate::lock`), waiting — and saying for whom — while
/// another kernelgate process measures on it; at most ten trial time-outs and a minute.
pub fn take_gpu(
    (lock_dir, timeout): (&Path, Duration),
    info: &crate::device::DeviceInfo,
) -> Result<Held, LockError> {
    let path = gpu_lock_path(lock_dir, info.uuid.as_deref(), info.ordinal);
    let what = format!(
        "GPU {} ({})",
        info.ordinal,
        info.uuid.as_deref().unwrap_or("UUID unknown")
    );
    let wait = timeout
        .saturating_mul(10)
        .saturating_add(Duration::from_secs(60));
    acquire(&path, &what, wait, &mut |holder, waited| {
        eprintln!(
            "kernelgate: {what} is measuring for {holder}; waiting for it ({} s so far; one trial at a time per GPU, `{}`)",
            waited.as_secs(),
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_names_the_holder_and_gets_it_when_freed() {
        let dir = std::env::temp_dir().join(format!("kg-lock-{}", std::process::id()));
        let path = gpu_lock_path(&dir, Some("GPU-8c1f3f2e-aaaa"), 0);
        assert!(path.ends_with("kernelgate-gpu-GPU-8c1f3f2e-aaaa.lock"));
        let first = acquire(&path, "the GPU", Duration::from_secs(5), &mut |_, _| {}).unwrap();
        // Within this process a second open file is a second holder (flock is per open file).
        let mut heard = Vec::new();
        let e = acquire(&path, "the GPU", Duration::from_millis(200), &mut |h, _| {
            heard.push(h.to_string())
        })
        .unwrap_err();
        assert_eq!(heard.len(), 1, "said once that it waits: {heard:?}");
        assert!(
            heard[0].starts_with(&format!("pid {}", std::process::id())),
            "{heard:?}"
        );
        assert!(e.to_string().contains("held by pid"), "{e}");
        let freed = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            drop(first);
        });
        let second = acquire(&path, "the GPU", Duration::from_secs(5), &mut |_, _| {}).unwrap();
        assert!(
            second.waited >= Duration::from_millis(100),
            "{:?}",
            second.waited
        );
        freed.join().unwrap();
        assert_eq!(
            gpu_lock_path(&dir, None, 1).file_name().unwrap(),
            "kernelgate-gpu-ordinal-1.lock"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
