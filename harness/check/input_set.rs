//! `InputSet`: one seeded set of a case's initial contents. Buffers whose form the device can
//! generate (`check::device_fill`) are written there by a kernel — no host generation, no
//! transfer —, the others are generated on the host and uploaded; the host generates the whole
//! set only when something asks for it (a failure message, a dump, a host-side check).
//! Issue 11: generating and transferring inputs was most of the check's time.

use super::device_fill::{fill, form};
use super::failure::Failure;
use super::inputs::{generate, generate_buffer, stream};
use super::kernels::{Comparison, Kernels};
use crate::device::{DeviceBuffer, Gpu};
use crate::dtype::{DType, HostData};
use crate::suite::{Role, Suite};
use std::cell::{OnceCell, RefCell};
use std::collections::btree_map::{BTreeMap, Entry};

/// One input set: a case and a seed, its host contents made on demand.
pub struct InputSet {
    /// The case.
    pub case: usize,
    /// The seed.
    pub seed: u64,
    host: OnceCell<Vec<Option<HostData>>>,
    /// Buffers generated on the host one at a time (where the device cannot), kept: each is
    /// uploaded to every copy and unit, and compared after every checked run.
    made: RefCell<BTreeMap<usize, HostData>>,
}

impl InputSet {
    /// The set of `case` drawn from `seed`; nothing is generated yet.
    pub fn new(case: usize, seed: u64) -> InputSet {
        InputSet {
            case,
            seed,
            host: OnceCell::new(),
            made: RefCell::new(BTreeMap::new()),
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

    /// Whether buffer `i` is generated on the device.
    fn on_device(&self, suite: &Suite, i: usize) -> bool {
        let b = &suite.buffers[i];
        (suite.init(self.case, i))
            .and_then(|init| form(&init, b.dtype))
            .is_some()
    }

    /// Queues buffer `i`'s initial contents into `buf`: poison (every byte 0xFF) for an
    /// output, the device's generator where it can, the host's values otherwise.
    pub fn write(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        i: usize,
        buf: &DeviceBuffer,
    ) -> Result<(), Failure> {
        let b = &suite.buffers[i];
        let Some(init) = suite.init(self.case, i) else {
            gpu.fill(buf, 0xFF)?;
            return Ok(());
        };
        if let Some(f) = form(&init, b.dtype) {
            let n = suite.cases[self.case].lens[i];
            fill(kernels, gpu, (buf, n, b.dtype), f, stream(self.seed, i))?;
            return Ok(());
        }
        match self.host.get() {
            Some(h) => gpu.upload(buf, &h[i].as_ref().expect("initialized").bytes)?,
            None => self.with_buffer(suite, i, |data| gpu.upload(buf, &data.bytes))??,
        }
        Ok(())
    }

    /// Hands buffer `i`'s initial contents (it has an `init`), generated on the host once, to
    /// `use_it`.
    fn with_buffer<T>(
        &self,
        suite: &Suite,
        i: usize,
        use_it: impl FnOnce(&HostData) -> T,
    ) -> Result<T, Failure> {
        let mut made = self.made.borrow_mut();
        let data = match made.entry(i) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                e.insert(generate_buffer(suite, self.case, self.seed, i)?.expect("initialized"))
            }
        };
        Ok(use_it(data))
    }

    /// Queues the whole set into `bufs` (the case's buffers, in order).
    pub fn upload(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        bufs: &[DeviceBuffer],
    ) -> Result<(), Failure> {
        for (i, buf) in bufs.iter().enumerate() {
            self.write(gpu, kernels, suite, i, buf)?;
        }
        Ok(())
    }

    /// The first input (role `input`) of `bufs` that no longer holds this set: regenerated on
    /// the device (in the check kernels' reused scratch memory) and compared there byte for
    /// byte, all with one wait, where the device generated it; downloaded and compared with
    /// the host's values otherwise.
    pub fn changed(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        bufs: &[DeviceBuffer],
    ) -> Result<Option<usize>, Failure> {
        let inputs: Vec<usize> = (0..suite.buffers.len())
            .filter(|&i| suite.buffers[i].role == Role::Input)
            .collect();
        let on_device: Vec<usize> = inputs
            .iter()
            .copied()
            .filter(|&i| self.on_device(suite, i))
            .collect();
        let mut compared: Vec<(usize, bool)> = Vec::new();
        if !on_device.is_empty() {
            let sizes: Vec<usize> = on_device.iter().map(|&i| bufs[i].bytes).collect();
            match kernels.scratch(gpu, &sizes) {
                Ok(scratch) => {
                    let mut items = Vec::new();
                    for (j, &i) in on_device.iter().enumerate() {
                        self.write(gpu, kernels, suite, i, scratch.part(j))?;
                        items.push(Comparison {
                            actual: &bufs[i],
                            expected: scratch.part(j),
                            dtype: DType::U8,
                            n: bufs[i].bytes,
                            tol: super::compare::EXACT,
                        });
                    }
                    let found = kernels.compare_all(gpu, &items)?;
                    compared = on_device
                        .iter()
                        .copied()
                        .zip(found.iter().map(|f| f.count > 0))
                        .collect();
                }
                Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => {}
                Err(e) => return Err(e.into()),
            }
        }
        for i in inputs {
            if let Some((_, differs)) = compared.iter().find(|(c, _)| *c == i) {
                if *differs {
                    return Ok(Some(i));
                }
                continue;
            }
            let now = gpu.download(&bufs[i])?;
            let same = match self.host.get() {
                Some(h) => h[i].as_ref().is_some_and(|d| d.bytes == now),
                // This buffer alone, not the whole set.
                None if suite.buffers[i].init.is_some() => {
                    self.with_buffer(suite, i, |d| d.bytes == now)?
                }
                None => false,
            };
            if !same {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}
