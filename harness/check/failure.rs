//! `Failure`: why a trial's check (or its timing on the worker) failed — typed where it
//! happened, turned into the [`TrialFailure`](crate::failure::TrialFailure) the worker reports.

use crate::device::DeviceError;

/// Why a trial failed.
#[derive(Debug)]
pub enum Failure {
    /// The kernel computed something wrong.
    Wrong(String),
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
            Failure::Trial(t) => t,
            Failure::Device(e) => match e.kind() {
                ErrorKind::OutOfMemory => T::OutOfMemory(e.to_string()),
                ErrorKind::ResourceLimit => T::ResourceLimit(e.to_string()),
                ErrorKind::Other => T::Fault(e.fault()),
            },
        }
    }
}

impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        Failure::Device(e)
    }
}
