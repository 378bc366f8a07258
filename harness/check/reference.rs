//! `References`: the reference kernel's outputs per case and seed, computed once in a worker
//! and reused for every kernel of the suite (issue 11: the reference re-ran for every kernel
//! and seed, and correctness was most of a run's time). Where they fit, the outputs stay on the
//! device and every check against them runs there — the kernels' comparisons, the timed
//! outputs' check, the vacuous-tolerance test (`check::vacuous_device`) — so they are
//! downloaded only when a check fails and its message (or dump) needs them on the host
//! (issue 22: each case's first trial transferred every output of the reference, per seed).
//! The first time a case's reference runs, it runs again with its outputs started from
//! another poison (`check::poison`), compared with the outputs just kept (on the device where
//! they are kept there): an output that depends on what it held before is an error, before
//! anything is compared.

use super::failure::Failure;
use super::input_set::InputSet;
use super::kernels::Kernels;
pub use super::reference_outputs::{Outputs, ReferenceOutputs};
use super::run::{download_outputs, run_checked};
use super::vacuous::{vacuous, Vacuous};
use super::vacuous_device::vacuous_on_device;
use crate::device::{DeviceBuffer, Function, Gpu};
use crate::suite::{Role, Suite};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// Host memory the cache may hold; past it, it starts over (a worker runs one suite's cases
/// in order, so older entries are rarely wanted again).
pub const CAPACITY_BYTES: usize = 4 << 30;

/// Device memory the cache may hold outputs in (so that checks against them run on the
/// device, transferring nothing when they pass); past it, the device copies are dropped and
/// made again when wanted. Small next to a GPU's memory, so that the timing copies made later
/// still fit. An output set larger than this alone is downloaded instead.
pub const DEVICE_CAPACITY_BYTES: usize = 1 << 30;

/// One cached run of the reference.
struct Entry {
    outputs: Outputs,
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
    /// the check `kernels`) only the first time. Fails when a tolerance could not
    /// fail on them.
    pub fn outputs(
        &mut self,
        gpu: &Gpu,
        suite: &Suite,
        (inputs, kernels): (&InputSet, &Kernels),
        funcs: &[Vec<Function>],
        bufs: &[DeviceBuffer],
    ) -> Result<Outputs, Failure> {
        let (case, seed) = (inputs.case, inputs.seed);
        let key = (suite.path.clone(), case, seed);
        if !self.entries.contains_key(&key) {
            let r = suite.reference;
            run_checked(gpu, suite, case, r, funcs, bufs, inputs, kernels)?;
            let entry = self.entry(gpu, suite, case, kernels, bufs)?;
            // Once per case: do the outputs depend on what they held before? (`bufs` then
            // hold the second run's outputs, the same as the first's when they do not.) Marked
            // done only when they do not, so every trial of a failing case fails.
            let this_case = (suite.path.clone(), case);
            if !self.poisoned_twice.contains(&this_case) {
                super::poison::poison_twice(
                    gpu,
                    suite,
                    case,
                    funcs,
                    bufs,
                    (inputs, kernels),
                    &entry.outputs,
                )?;
                self.poisoned_twice.insert(this_case);
            }
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

    /// The cache entry for what the reference just left in `bufs`: kept on the device (and
    /// tested for vacuous tolerances there) where it fits, else downloaded and tested on the
    /// host.
    fn entry(
        &mut self,
        gpu: &Gpu,
        suite: &Suite,
        case: usize,
        kernels: &Kernels,
        bufs: &[DeviceBuffer],
    ) -> Result<Entry, Failure> {
        let kept: Vec<usize> = (0..bufs.len())
            .filter(|&i| suite.buffers[i].role != Role::Input)
            .collect();
        let size: usize = kept.iter().map(|&i| bufs[i].bytes).sum();
        let this_case = Some((suite.path.clone(), case));
        if self.device_bytes + size > DEVICE_CAPACITY_BYTES || self.device_case != this_case {
            self.device_case = this_case;
            // Device copies of other cases (or past the capacity) go; so do the entries that
            // had no other copy.
            self.entries.retain(|_, e| e.outputs.device().is_none());
            self.device_bytes = 0;
        }
        let tolerances = |i: usize| suite.check.tolerances.get(&i).copied();
        if size <= DEVICE_CAPACITY_BYTES {
            if let Some(device) = keep(gpu, &kept, bufs)? {
                self.device_bytes += size;
                let mut found = Vec::new();
                for (i, d) in device.iter().enumerate() {
                    let (Some(buf), Some(tol)) = (d, tolerances(i)) else {
                        found.push(None);
                        continue;
                    };
                    let dtype = suite.buffers[i].dtype;
                    let n = buf.bytes / dtype.size();
                    found.push(vacuous_on_device(kernels, gpu, (buf, dtype, n), tol)?);
                }
                let dtypes = suite.buffers.iter().map(|b| b.dtype).collect();
                return Ok(Entry {
                    outputs: Rc::new(ReferenceOutputs::on_device(dtypes, device)),
                    vacuous: found,
                });
            }
        }
        let outputs = download_outputs(gpu, suite, bufs)?;
        if self.bytes + size > CAPACITY_BYTES {
            self.entries.retain(|_, e| e.outputs.device().is_some());
            self.bytes = 0;
        }
        self.bytes += size;
        let found = outputs
            .iter()
            .enumerate()
            .map(|(i, o)| vacuous(o.as_ref()?, tolerances(i)?))
            .collect();
        Ok(Entry {
            outputs: Rc::new(ReferenceOutputs::on_host(outputs)),
            vacuous: found,
        })
    }
}

/// Device copies of the buffers of `bufs` at `kept` (`None` when memory is short), one per
/// buffer of the case (`None` for the others).
fn keep(
    gpu: &Gpu,
    kept: &[usize],
    bufs: &[DeviceBuffer],
) -> Result<Option<Vec<Option<DeviceBuffer>>>, Failure> {
    let mut out: Vec<Option<DeviceBuffer>> = bufs.iter().map(|_| None).collect();
    for &i in kept {
        match gpu.alloc_plain(bufs[i].bytes) {
            Ok(c) => {
                gpu.copy(&c, &bufs[i])?;
                out[i] = Some(c);
            }
            Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(out))
}
