//! `Failure`: why a trial's check (or its timing on the worker) failed — typed where it
//! happened, turned into the [`TrialFailure`](crate::failure::TrialFailure) the worker reports.

use crate::device::DeviceError;
use crate::npy::NpyError;
use std::path::PathBuf;

/// A suite's input that could not be made: a `.npy` file (an init or a golden output) that
/// cannot be read, or changed since the suite was loaded; or a buffer declared an output that
/// the reference reads before writing. The suite's files are at fault, not the kernel: a
/// harness/config error (exit 2), never a wrong result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputError {
    /// A buffer's `.npy` init cannot be read.
    #[error("buffer `{buffer}`: {source}")]
    Npy {
        /// The buffer.
        buffer: String,
        /// What is wrong with the file.
        source: NpyError,
    },
    /// A buffer's `.npy` init no longer has the length or type the suite was loaded with.
    #[error("buffer `{buffer}`: `{}` changed since the suite was loaded", .path.display())]
    Changed {
        /// The buffer.
        buffer: String,
        /// The file.
        path: PathBuf,
    },
    /// A golden file cannot be read.
    #[error("golden `{}`: {source}", .path.display())]
    GoldenNpy {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: NpyError,
    },
    /// The reference's output depends on what the buffer held before it ran
    /// (`check::poison`): an in-out buffer declared as an output.
    #[error("output `{buffer}` depends on what it held before the reference kernel `{kernel}` ran: started as every byte 0xFF it ends {} at index {index}, started as every byte 0x00 it ends {} ({differ} of {len} elements differ). The kernel reads it before writing it, or leaves part of it unwritten, as a kernel accumulating into it (`atomicAdd`, `+=`) does. Declare it `role = \"inout\"` with its starting value as `init`, e.g. `init = {{ constant = 0 }}` (docs/suites.md, \"Accumulating kernels\")", .values[0], .values[1])]
    ReadsOutput {
        /// The buffer.
        buffer: String,
        /// The reference kernel.
        kernel: String,
        /// The first element that differs.
        index: usize,
        /// How many differ.
        differ: usize,
        /// Elements compared.
        len: usize,
        /// Its value after each start: from 0xFF, from 0x00.
        values: [String; 2],
    },
    /// A golden file no longer has the length the suite was loaded with.
    #[error("golden `{}` changed since the suite was loaded", .path.display())]
    GoldenChanged {
        /// The file.
        path: PathBuf,
    },
}

/// Why a trial failed.
#[derive(Debug)]
pub enum Failure {
    /// The kernel computed something wrong.
    Wrong(String),
    /// The suite's inputs could not be made (a harness/config error, not a wrong result).
    Input(InputError),
    /// Any other failure, already typed where it happened.
    Trial(crate::failure::TrialFailure),
    /// A CUDA call failed.
    Device(DeviceError),
}

impl Failure {
    /// The typed failure the worker reports: driver errors by their code.
    pub fn into_trial(self) -> crate::failure::TrialFailure {
        use crate::device::ErrorKind;
        use crate::failure::TrialFailure as T;
        match self {
            Failure::Wrong(m) => T::WrongOutput(m),
            Failure::Input(e) => T::Input(e.to_string()),
            Failure::Trial(t) => t,
            Failure::Device(e) => match e.kind() {
                ErrorKind::OutOfMemory => T::OutOfMemory(e.to_string()),
                ErrorKind::ResourceLimit => T::ResourceLimit(e.to_string()),
                ErrorKind::Other => T::Fault(e.fault()),
            },
        }
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        Failure::Input(e)
    }
}

impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        Failure::Device(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailKind;

    #[test]
    fn unusable_inputs_are_the_suites_fault_not_a_wrong_result() {
        let changed = InputError::GoldenChanged {
            path: "suites/g.npy".into(),
        };
        assert_eq!(
            changed.to_string(),
            "golden `suites/g.npy` changed since the suite was loaded"
        );
        let unreadable = InputError::Npy {
            buffer: "x".into(),
            source: NpyError::NotNpy,
        };
        assert_eq!(
            unreadable.to_string(),
            "buffer `x`: not a .npy file (no \\x93NUMPY magic)"
        );
        for e in [changed, unreadable] {
            let trial = Failure::from(e).into_trial();
            assert_eq!(trial.kind(), FailKind::Infrastructure, "{trial}");
            assert_eq!(trial.kind().exit_code(), crate::exit::BAD_INPUT);
        }
        let wrong = Failure::Wrong("output `y` differs".into()).into_trial();
        assert_eq!(wrong.kind().exit_code(), crate::exit::CORRECTNESS);
    }
}
