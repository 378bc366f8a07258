//! `ReferenceOutputs`: what the reference kernel left in a case's buffers for one input set,
//! kept on the device where it fits there (so that checks against it run there) and
//! downloaded only the first time something needs it on the host (`check::reference` makes
//! them; the checks, `check::poison` among them, read them).

use super::failure::Failure;
use crate::device::{DeviceBuffer, Gpu};
use crate::dtype::{DType, HostData};
use std::cell::OnceCell;
use std::rc::Rc;

/// What the reference left in every buffer for one input set (`Some` for outputs and
/// in-outs): on the device where it was kept there, on the host once something asked.
pub struct ReferenceOutputs {
    host: OnceCell<Vec<Option<HostData>>>,
    device: Option<Vec<Option<DeviceBuffer>>>,
    dtypes: Vec<DType>,
}

/// The reference's outputs for one input set, shared by the trials that check against them
/// (within the worker's one thread: device buffers belong to its context).
pub type Outputs = Rc<ReferenceOutputs>;

impl ReferenceOutputs {
    /// Outputs kept on the device only.
    pub(super) fn on_device(
        dtypes: Vec<DType>,
        device: Vec<Option<DeviceBuffer>>,
    ) -> ReferenceOutputs {
        ReferenceOutputs {
            host: OnceCell::new(),
            device: Some(device),
            dtypes,
        }
    }

    /// Outputs on the host only.
    pub fn on_host(host: Vec<Option<HostData>>) -> ReferenceOutputs {
        ReferenceOutputs {
            host: OnceCell::from(host),
            device: None,
            dtypes: Vec::new(),
        }
    }

    /// The outputs on the device, where they were kept there.
    pub fn device(&self) -> Option<&[Option<DeviceBuffer>]> {
        self.device.as_deref()
    }

    /// The outputs on the host: downloaded from the device the first time something needs
    /// them (a failing check's message, a dump, a golden file).
    pub fn host(&self, gpu: &Gpu) -> Result<&[Option<HostData>], Failure> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let mut out = Vec::new();
        for (i, d) in self.device.iter().flatten().enumerate() {
            let bytes = d.as_ref().map(|b| gpu.download(b)).transpose()?;
            out.push(bytes.map(|bytes| HostData {
                dtype: self.dtypes[i],
                bytes,
            }));
        }
        Ok(self.host.get_or_init(|| out))
    }
}
