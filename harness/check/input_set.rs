//! `InputSet`: one seeded set of a case's initial contents. Buffers whose form the device can
//! generate (`check::device_fill`) are written there by a kernel — no host generation, no
//! transfer —, the others are generated on the host and uploaded; the host generates the whole
//! set only when something asks for it (a failure message, a dump, a host-side check).
//! Issue 11: generating and transferring inputs was most of the check's time.

use super::device_fill::{fill, form};
use super::failure::Failure;
use super::inputs::{generate, generate_buffer, stream};
use super::kernels::Kernels;
use crate::device::{DeviceBuffer, Gpu};
use crate::dtype::{DType, HostData};
use crate::suite::{Role, Suite};
use std::cell::OnceCell;

/// One input set: a case and a seed, its host contents made on demand.
pub struct InputSet {
    /// The case.
    pub case: usize,
    /// The seed.
    pub seed: u64,
    host: OnceCell<Vec<Option<HostData>>>,
}

impl InputSet {
    /// The set of `case` drawn from `seed`; nothing is generated yet.
    pub fn new(case: usize, seed: u64) -> InputSet {
        InputSet {
            case,
            seed,
            host: OnceCell::new(),
        }
    }

    /// Every buffer's initial contents on the host (`None` for outputs), generated once.
    pub fn host(&self, suite: &Suite) -> Result<&[Option<HostData>], Failure> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let h = generate(suite, self.case, self.seed)?;
        Ok(self.host.get_or_init(|| h))
    }

    /// Whether buffer `i` is generated on the device (with `kernels`).
    fn on_device(&self, suite: &Suite, kernels: Option<&Kernels>, i: usize) -> bool {
        let b = &suite.buffers[i];
        kernels.is_some()
            && suite
                .init(self.case, i)
                .and_then(|init| form(&init, b.dtype))
                .is_some()
    }

    /// Queues buffer `i`'s initial contents into `buf`: poison (every byte 0xFF) for an
    /// output, the device's generator where it can, the host's values otherwise.
    pub fn write(
        &self,
        gpu: &Gpu,
        kernels: Option<&Kernels>,
        suite: &Suite,
        i: usize,
        buf: &DeviceBuffer,
    ) -> Result<(), Failure> {
        let b = &suite.buffers[i];
        let Some(init) = suite.init(self.case, i) else {
            gpu.fill(buf, 0xFF)?;
            return Ok(());
        };
        if let (Some(k), Some(f)) = (kernels, form(&init, b.dtype)) {
            let n = suite.cases[self.case].lens[i];
            fill(k, gpu, (buf, n, b.dtype), f, stream(self.seed, i))?;
            return Ok(());
        }
        match self.host.get() {
            Some(h) => gpu.upload(buf, &h[i].as_ref().expect("initialized").bytes)?,
            None => {
                let data = generate_buffer(suite, self.case, self.seed, i)?.expect("initialized");
                gpu.upload(buf, &data.bytes)?;
            }
        }
        Ok(())
    }

    /// Queues the whole set into `bufs` (the case's buffers, in order).
    pub fn upload(
        &self,
        gpu: &Gpu,
        kernels: Option<&Kernels>,
        suite: &Suite,
        bufs: &[DeviceBuffer],
    ) -> Result<(), Failure> {
        for (i, buf) in bufs.iter().enumerate() {
            self.write(gpu, kernels, suite, i, buf)?;
        }
        Ok(())
    }

    /// The first input (role `input`) of `bufs` that no longer holds this set: regenerated on
    /// the device and compared there byte for byte where the device generated it, downloaded
    /// and compared with the host's values otherwise.
    pub fn changed(
        &self,
        gpu: &Gpu,
        kernels: Option<&Kernels>,
        suite: &Suite,
        bufs: &[DeviceBuffer],
    ) -> Result<Option<usize>, Failure> {
        let exact = crate::suite::Tolerance {
            rtol: 0.0,
            atol: 0.0,
            allow_nan: false,
        };
        for (i, b) in suite.buffers.iter().enumerate() {
            if b.role != Role::Input {
                continue;
            }
            if let (Some(k), true) = (kernels, self.on_device(suite, kernels, i)) {
                match gpu.alloc_plain(bufs[i].bytes) {
                    Ok(want) => {
                        self.write(gpu, kernels, suite, i, &want)?;
                        let n = bufs[i].bytes;
                        if k.compare(gpu, (&bufs[i], &want), DType::U8, n, exact)?
                            .count
                            > 0
                        {
                            return Ok(Some(i));
                        }
                        continue;
                    }
                    Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => {}
                    Err(e) => return Err(e.into()),
                }
            }
            let now = gpu.download(&bufs[i])?;
            let same = match self.host.get() {
                Some(h) => h[i].as_ref().is_some_and(|d| d.bytes == now),
                // This buffer alone, not the whole set.
                None => {
                    generate_buffer(suite, self.case, self.seed, i)?.is_some_and(|d| d.bytes == now)
                }
            };
            if !same {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}
