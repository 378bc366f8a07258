//! `DeviceError`: a failed CUDA driver call, with the driver's code kept as its type, and what
//! it means for a trial ([`ErrorKind`]).

use cudarc::driver::{result as cu, sys};

/// A failed CUDA driver call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{call} failed: {name} ({description})")]
pub struct DeviceError {
    /// The driver's code, kept as its type (`None` for errors the harness found before calling).
    code: Option<sys::CUresult>,
    /// The driver call.
    pub call: &'static str,
    /// The error's name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// Whether the context is unusable from now on (a fault in a kernel).
    pub sticky: bool,
}

/// Turns a failed driver call `call` into a [`DeviceError`], keeping the code.
pub(super) fn error(call: &'static str) -> impl Fn(cu::DriverError) -> DeviceError {
    move |e| {
        use sys::cudaError_enum as E;
        let name = e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", e.0));
        let description = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let sticky = matches!(
            e.0,
            E::CUDA_ERROR_ILLEGAL_ADDRESS
                | E::CUDA_ERROR_LAUNCH_FAILED
                | E::CUDA_ERROR_MISALIGNED_ADDRESS
                | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
                | E::CUDA_ERROR_INVALID_ADDRESS_SPACE
                | E::CUDA_ERROR_INVALID_PC
                | E::CUDA_ERROR_HARDWARE_STACK_ERROR
                | E::CUDA_ERROR_ASSERT
                | E::CUDA_ERROR_LAUNCH_TIMEOUT
                | E::CUDA_ERROR_ECC_UNCORRECTABLE
                | E::CUDA_ERROR_CONTEXT_IS_DESTROYED
        );
        DeviceError {
            code: Some(e.0),
            call,
            name,
            description,
            sticky,
        }
    }
}

/// What a driver error means for a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    OutOfMemory,
    /// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES` or an invalid launch shape.
    ResourceLimit,
    /// Anything else (faults, bad arguments).
    Other,
}

impl DeviceError {
    /// An error the harness found itself, before or instead of a driver call.
    pub fn harness(call: &'static str, name: &str, description: String) -> DeviceError {
        DeviceError {
            code: None,
            call,
            name: name.into(),
            description,
            sticky: false,
        }
    }

    /// What the driver's code means, by the code, not its name.
    pub fn kind(&self) -> ErrorKind {
        use sys::cudaError_enum as E;
        match self.code {
            Some(E::CUDA_ERROR_OUT_OF_MEMORY) => ErrorKind::OutOfMemory,
            Some(E::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) => ErrorKind::ResourceLimit,
            _ => ErrorKind::Other,
        }
    }

    /// The error as the worker reports it across the process boundary.
    pub fn fault(&self) -> crate::failure::DriverFault {
        crate::failure::DriverFault {
            call: self.call.to_string(),
            code: self.code.map(|c| c as u32).unwrap_or(0),
            name: self.name.clone(),
            description: self.description.clone(),
            sticky: self.sticky,
        }
    }
}
