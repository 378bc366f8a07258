//! `References`: the reference kernel's outputs per case and seed, computed once in a worker
//! and reused for every kernel of the suite (issue 11: the reference re-ran for every kernel
//! and seed, and correctness was most of a run's time). The first time a case's reference
//! runs, it runs again with its outputs started from another poison (`check::poison`): an
//! output that depends on what it held before is an error, before anything is compared.

use super::failure::Failure;
use super::input_set::InputSet;
use super::kernels::Kernels;
use super::run::run_once;
use super::vacuous::{vacuous, Vacuous};
use crate::device::{DeviceBuffer, Function, Gpu};
use crate::dtype::HostData;
use crate::suite::Suite;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Host memory the cache may hold; past it, it starts over (a worker runs one suite's cases
/// in order, so older entries are rarely wanted again).
pub const CAPACITY_BYTES: usize = 4 << 30;

/// What the reference left in every buffer for one input set: `Some` for outputs and in-outs.
pub type Outputs = Arc<Vec<Option<HostData>>>;

/// Device memory the cache may hold copies of outputs in (so that a checked run is compared
/// on the device, transferring nothing when it passes); past it, the device copies are
/// dropped (the host copies stay). Small next to a GPU's memory, so that the timing copies
/// made later still fit.
pub const DEVICE_CAPACITY_BYTES: usize = 1 << 30;

/// One cached run of the reference.
struct Entry {
    outputs: Outputs,
    /// The same outputs on the device, while within `DEVICE_CAPACITY_BYTES`.
    device: Option<Vec<Option<DeviceBuffer>>>,
    /// Per buffer, an output with no answer that its tolerance would accept (see `vacuous`).
    vacuous: Vec<Option<Vacuous>>,
}

/// The cache, keyed by suite file, case and seed.
#[derive(Default)]
pub struct References {
    entries: HashMap<(PathBuf, usize, u64), Entry>,
    bytes: usize,
    device_bytes: usize,
    /// The case whose outputs the device copies are of: only one case's are kept, so that
    /// device memory is not held for cases the worker has moved past.
    device_case: Option<(PathBuf, usize)>,
    /// The cases whose reference already ran under the second poison (`check::poison`).
    poisoned_twice: std::collections::HashSet<(PathBuf, usize)>,
}

impl References {
    /// The reference's outputs on `inputs` (its case and seed), running it (on `bufs`, with
    /// the check `kernels` where loaded) only the first time. Fails when a tolerance could not
    /// fail on them.
    pub fn outputs(
        &mut self,
        gpu: &Gpu,
        suite: &Suite,
        (inputs, kernels): (&InputSet, Option<&Kernels>),
        funcs: &[Vec<Function>],
        bufs: &[DeviceBuffer],
    ) -> Result<Outputs, Failure> {
        let (case, seed) = (inputs.case, inputs.seed);
        let key = (suite.path.clone(), case, seed);
        if !self.entries.contains_key(&key) {
            let r = suite.reference;
            let outputs = run_once(gpu, suite, case, r, funcs, bufs, inputs, kernels)?;
            // Once per case: do the outputs depend on what they held before? (`bufs` then
            // hold the second run's outputs, the same as the first's when they do not.)
            if self.poisoned_twice.insert((suite.path.clone(), case)) {
                super::poison::poison_twice(
                    gpu, suite, case, funcs, bufs, inputs, kernels, &outputs,
                )?;
            }
            let size: usize = outputs.iter().flatten().map(|o| o.bytes.len()).sum();
            if self.bytes + size > CAPACITY_BYTES {
                self.entries.clear();
                self.bytes = 0;
                self.device_bytes = 0;
            }
            let this_case = Some((suite.path.clone(), case));
            if self.device_bytes + size > DEVICE_CAPACITY_BYTES || self.device_case != this_case {
                self.device_case = this_case;
                self.entries.values_mut().for_each(|e| e.device = None);
                self.device_bytes = 0;
            }
            // `bufs` still hold the reference's outputs: keep a device copy where it fits.
            let device = if kernels.is_some() && size <= DEVICE_CAPACITY_BYTES {
                keep(gpu, &outputs, bufs)?
            } else {
                None
            };
            if device.is_some() {
                self.device_bytes += size;
            }
            let vacuous = outputs
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let tol = suite.check.tolerances.get(&i)?;
                    vacuous(o.as_ref()?, *tol)
                })
                .collect();
            self.bytes += size;
            let entry = Entry {
                outputs: Arc::new(outputs),
                device,
                vacuous,
            };
            self.entries.insert(key.clone(), entry);
        }
        let entry = &self.entries[&key];
        if let Some((i, v)) = entry
            .vacuous
            .iter()
            .enumerate()
            .find_map(|(i, v)| v.as_ref().map(|v| (i, v)))
        {
            let tol = suite.check.tolerances[&i];
            return Err(Failure::Wrong(format!(
                "{} (seen on the reference's outputs with inputs from seed {seed})",
                v.message(&suite.buffers[i].name, tol)
            )));
        }
        Ok(entry.outputs.clone())
    }

    /// The device copy of the outputs `outputs` returned for `inputs`, if kept.
    pub fn on_device(&self, suite: &Suite, inputs: &InputSet) -> Option<&[Option<DeviceBuffer>]> {
        let key = (suite.path.clone(), inputs.case, inputs.seed);
        self.entries.get(&key)?.device.as_deref()
    }
}

/// Device copies of the buffers of `bufs` that `outputs` holds (`None` when memory is short).
fn keep(
    gpu: &Gpu,
    outputs: &[Option<HostData>],
    bufs: &[DeviceBuffer],
) -> Result<Option<Vec<Option<DeviceBuffer>>>, Failure> {
    let mut out = Vec::new();
    for (o, b) in outputs.iter().zip(bufs) {
        if o.is_none() {
            out.push(None);
            continue;
        }
        match gpu.alloc_plain(b.bytes) {
            Ok(c) => {
                gpu.copy(&c, b)?;
                out.push(Some(c));
            }
            Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(out))
}
