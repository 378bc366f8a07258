//! `dump`: writes a failing trial's inputs, expected and actual outputs as `.npy` files
//! (`KERNELGATE_DUMP=dir`), so that the failing case can be opened in NumPy.

use crate::dtype::HostData;
use crate::npy::{self, NpyError};
use crate::suite::Suite;
use std::path::{Path, PathBuf};

/// Why a failing trial could not be written out.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// A folder or file could not be written.
    #[error("`{}`: {source}", .path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// An array has no `.npy` form.
    #[error(transparent)]
    Npy(#[from] NpyError),
}

/// The variable naming the folder failing trials are written to.
pub const DUMP_ENV: &str = "KERNELGATE_DUMP";

/// A failing run of one kernel on one input set.
pub struct Failing<'a> {
    /// The kernel under test.
    pub kernel: usize,
    /// The case.
    pub case: usize,
    /// The input set's seed.
    pub seed: u64,
    /// What every buffer started with (`None` for outputs).
    pub inputs: &'a [Option<HostData>],
    /// The reference's outputs (`Some` for outputs and in-outs).
    pub expected: &'a [Option<HostData>],
    /// The kernel's outputs (`Some` for outputs and in-outs).
    pub actual: &'a [Option<HostData>],
}

/// A trial name as a folder name: anything but letters, digits, `.`, `=`, `-` and `_`
/// becomes `_` (`saxpy::vec4::n=4096` → `saxpy__vec4__n=4096`).
pub fn folder_name(trial: &str) -> String {
    trial.replace(
        |c: char| !c.is_ascii_alphanumeric() && !".=-_".contains(c),
        "_",
    )
}

/// Writes `f` under `dir/<trial>/seed-<seed>/` as `<buffer>.npy` (initial contents),
/// `<buffer>.expected.npy` and `<buffer>.actual.npy`; returns the folder.
pub fn write(dir: &Path, suite: &Suite, f: &Failing) -> Result<PathBuf, DumpError> {
    let trial = folder_name(&suite.trial_name(f.case, f.kernel));
    let folder = dir.join(trial).join(format!("seed-{}", f.seed));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DumpError::Io { path, source }
    };
    std::fs::create_dir_all(&folder).map_err(io(&folder))?;
    for (i, b) in suite.buffers.iter().enumerate() {
        let files = [
            (format!("{}.npy", b.name), f.inputs.get(i)),
            (format!("{}.expected.npy", b.name), f.expected.get(i)),
            (format!("{}.actual.npy", b.name), f.actual.get(i)),
        ];
        for (name, data) in files {
            let Some(Some(data)) = data else { continue };
            let bytes = npy::to_bytes(data, &[data.len()])?;
            let path = folder.join(name);
            std::fs::write(&path, bytes).map_err(io(&path))?;
        }
    }
    Ok(folder)
}

/// When `KERNELGATE_DUMP` is set, writes `f` there and returns a sentence for the failure
/// message saying where (or why it could not be written); otherwise an empty string.
pub fn note(suite: &Suite, f: &Failing) -> String {
    let Some(dir) = std::env::var_os(DUMP_ENV).filter(|d| !d.is_empty()) else {
        return String::new();
    };
    match write(Path::new(&dir), suite, f) {
        Ok(folder) => format!(
            " (inputs, expected and actual outputs written to `{}`)",
            folder.display()
        ),
        Err(e) => format!(" ({DUMP_ENV}: could not write the failing case: {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::suite::load_text;

    #[test]
    fn a_failing_case_is_written_as_npy() {
        let path = Path::new("suites/saxpy.toml");
        let suite = load_text(path, &std::fs::read_to_string(path).unwrap()).unwrap();
        let dir = std::env::temp_dir().join(format!("kernelgate-dump-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let n = suite.buffers.len();
        let data = HostData::from_f64(DType::F32, [1.0, 2.0, 3.0]);
        let inputs: Vec<Option<HostData>> = (0..n).map(|_| Some(data.clone())).collect();
        let f = Failing {
            kernel: 0,
            case: 0,
            seed: 7,
            inputs: &inputs,
            expected: &inputs,
            actual: &inputs,
        };
        let folder = write(&dir, &suite, &f).unwrap();
        assert!(folder.ends_with(format!("{}/seed-7", folder_name(&suite.trial_name(0, 0)))));
        let name = &suite.buffers[0].name;
        let back = npy::read(&folder.join(format!("{name}.actual.npy"))).unwrap();
        assert_eq!(back.data, data);
        assert_eq!(folder_name("saxpy::vec4::n=4096"), "saxpy__vec4__n=4096");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
