//! `CalibrateError`: why `kernelgate calibrate` could not measure something, rendered at the
//! edge (the command prints it and exits 2).

use crate::failure::TrialFailure;
use std::path::PathBuf;

/// Why calibration (or one of its measurements) failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    /// No CUDA driver here.
    #[error("{0}: calibration needs a GPU")]
    NoGpu(String),
    /// The harness's configuration (`KERNELGATE_*`) is wrong.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The GPU worker could not open the device.
    #[error("the GPU worker could not open device {ordinal}: {reason}")]
    Device {
        /// The device ordinal.
        ordinal: i32,
        /// What went wrong.
        reason: String,
    },
    /// A file could not be written or read.
    #[error("`{}`: {reason}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A suite (calibration's own, or the user's) does not load.
    #[error("suites do not load:\n{0}")]
    Suite(String),
    /// A measurement failed.
    #[error("{what}: {failure}")]
    Trial {
        /// What was measured.
        what: String,
        /// Why it failed.
        failure: TrialFailure,
    },
    /// A measurement came back without what calibration needs from it.
    #[error("{what}: {reason}")]
    Incomplete {
        /// What was measured.
        what: String,
        /// What is missing.
        reason: String,
    },
}
