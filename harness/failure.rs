//! `TrialFailure`: why a trial failed, typed where it happened (the worker, the worker client,
//! the gate), and the `FailKind` each one is — which decides the run's exit code. Nothing
//! re-classifies failures by their text.

use serde::{Deserialize, Serialize};

/// What kind of failure a trial had; the run's exit code follows the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailKind {
    /// Slower than its baseline, or over a memory or resource limit (exit code 1).
    Performance,
    /// Wrong output, a fault, a time-out, a compile error (exit code 101).
    Correctness,
    /// The setup: no GPU or NVRTC where required, an unusable baseline, a worker that cannot
    /// start, the harness's own probes failing (exit code 2).
    Infrastructure,
}

impl FailKind {
    /// The word reports use: `performance`, `correctness`, `infrastructure`.
    pub fn word(self) -> &'static str {
        match self {
            FailKind::Performance => "performance",
            FailKind::Correctness => "correctness",
            FailKind::Infrastructure => "infrastructure",
        }
    }

    /// The process exit code for a run whose worst failure is this.
    pub fn exit_code(self) -> u8 {
        match self {
            FailKind::Performance => crate::exit::PERFORMANCE,
            FailKind::Correctness => crate::exit::CORRECTNESS,
            FailKind::Infrastructure => crate::exit::BAD_INPUT,
        }
    }
}

/// A CUDA driver error as the worker saw it: the call, the driver's code (`CUresult`) and names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverFault {
    /// The driver call that returned it, e.g. `cuStreamSynchronize`.
    pub call: String,
    /// The numeric `CUresult`.
    pub code: u32,
    /// Its name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// The context is unusable from now on (a fault in a kernel): the worker restarts.
    pub sticky: bool,
}

/// Why a trial failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum TrialFailure {
    /// The kernel computed something else than the reference (or a golden file).
    #[error("{0}")]
    WrongOutput(String),
    /// The kernel wrote a buffer it was given as an input.
    #[error("{0}")]
    InputWritten(String),
    /// A kernel of the suite does not compile.
    #[error("{0}")]
    Compile(String),
    /// A CUDA call failed while the kernel ran (a fault, a launch error).
    #[error("{call} failed: {name} ({description}){hint}", call = .0.call, name = .0.name, description = .0.description, hint = if .0.sticky { " (a fault in a kernel poisons its CUDA context: the worker restarts; run `compute-sanitizer` on this trial to find the access)" } else { "" })]
    Fault(DriverFault),
    /// The case does not fit in the device's memory.
    #[error("{0}")]
    OutOfMemory(String),
    /// A launch asks for more than the device allows (shared memory, threads).
    #[error("{0}")]
    ResourceLimit(String),
    /// The kernel's code breaks a rule the suite declares (`fp64 = "forbid"`).
    #[error("{0}")]
    Forbidden(String),
    /// The trial took longer than `KERNELGATE_TIMEOUT`.
    #[error("timed out after {seconds} s (the worker was stopped and will restart; raise KERNELGATE_TIMEOUT if this kernel is that slow)")]
    Timeout {
        /// The limit that was hit.
        seconds: u64,
    },
    /// The worker process died while running the trial.
    #[error("the GPU worker crashed ({status}); it will restart for the next trial")]
    Crashed {
        /// How it ended, as the OS said.
        status: String,
    },
    /// The harness itself failed: its probe kernels, the worker protocol, a required tool.
    #[error("{0}")]
    Harness(String),
    /// The suite's inputs could not be made: a `.npy` init or golden file unreadable, or changed
    /// since the suite was loaded (the suite's files, not the kernel: exit code 2).
    #[error("{0}")]
    Input(String),
    /// No GPU or NVRTC where the run requires one (`KERNELGATE_REQUIRE_GPU`/`_NVRTC`).
    #[error("{0}")]
    Unavailable(String),
}

impl TrialFailure {
    /// The kind of failure, which decides the exit code.
    pub fn kind(&self) -> FailKind {
        match self {
            TrialFailure::WrongOutput(_)
            | TrialFailure::InputWritten(_)
            | TrialFailure::Compile(_)
            | TrialFailure::Fault(_)
            | TrialFailure::Timeout { .. }
            | TrialFailure::Crashed { .. } => FailKind::Correctness,
            TrialFailure::OutOfMemory(_)
            | TrialFailure::ResourceLimit(_)
            | TrialFailure::Forbidden(_) => FailKind::Performance,
            TrialFailure::Harness(_) | TrialFailure::Input(_) | TrialFailure::Unavailable(_) => {
                FailKind::Infrastructure
            }
        }
    }

    /// What happened, in two or three words (`wrong output`, `fault`, `time-out`).
    pub fn what(&self) -> &'static str {
        match self {
            TrialFailure::WrongOutput(_) => "wrong output",
            TrialFailure::InputWritten(_) => "input written",
            TrialFailure::Compile(_) => "compile error",
            TrialFailure::Fault(_) => "fault",
            TrialFailure::OutOfMemory(_) => "out of memory",
            TrialFailure::ResourceLimit(_) => "over a device limit",
            TrialFailure::Forbidden(_) => "forbidden code",
            TrialFailure::Timeout { .. } => "time-out",
            TrialFailure::Crashed { .. } => "worker crashed",
            TrialFailure::Harness(_) => "harness error",
            TrialFailure::Input(_) => "inputs unreadable",
            TrialFailure::Unavailable(_) => "no GPU or NVRTC",
        }
    }

    /// Whether the worker's CUDA context is unusable after this failure.
    pub fn is_fatal(&self) -> bool {
        matches!(self, TrialFailure::Fault(f) if f.sticky)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_has_its_kind() {
        let fault = DriverFault {
            call: "cuStreamSynchronize".into(),
            code: 700,
            name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            description: "an illegal memory access was encountered".into(),
            sticky: true,
        };
        assert_eq!(
            TrialFailure::Fault(fault.clone()).kind(),
            FailKind::Correctness
        );
        assert!(TrialFailure::Fault(fault.clone()).is_fatal());
        assert!(TrialFailure::Fault(fault)
            .to_string()
            .starts_with("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
        assert_eq!(
            TrialFailure::OutOfMemory("x".into()).kind(),
            FailKind::Performance
        );
        assert_eq!(
            TrialFailure::Harness("x".into()).kind(),
            FailKind::Infrastructure
        );
        assert_eq!(
            TrialFailure::Input("golden `g.npy` changed since the suite was loaded".into()).kind(),
            FailKind::Infrastructure,
            "the suite's files, not a wrong result"
        );
        assert_eq!(
            TrialFailure::Timeout { seconds: 5 }.kind(),
            FailKind::Correctness
        );
        assert_eq!(FailKind::Infrastructure.exit_code(), crate::exit::BAD_INPUT);
    }
}
