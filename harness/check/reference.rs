//! `References`: the reference kernel's outputs per case and seed, computed once in a worker
//! and reused for every kernel of the suite (issue 11: the reference re-ran for every kernel
//! and seed, and correctness was most of a run's time).

use super::input_set::InputSet;
use super::kernels::Kernels;
use super::vacuous::{vacuous, Vacuous};
use super::verify::{run_once, Failure};
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
            let size: usize = outputs.iter().flatten().map(|o| o.bytes.len()).sum();
            if self.bytes + size > CAPACITY_BYTES {
                self.entries.clear();
                self.bytes = 0;
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
}
