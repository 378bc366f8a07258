//! `Copies`: the copies of a case's buffers that timed launches run on, each holding one of
//! `INPUT_SETS` input sets with different contents, put back into the checked starting state
//! before every sample, and checked against the reference after sampling.
//!
//! Why (issue 11, measured on an H200): a kernel that returns early when its output already
//! holds the answer passed correctness and was timed 1.21–1.32× faster than the reference,
//! because timed launches found the previous launch's answer in their output. Now:
//! - every timed launch starts as a checked one does: its outputs poisoned (0xFF) and its
//!   in-out buffers restored, outside the timed interval and before the L2 flush (so the
//!   poison's writes are evicted and an honest kernel's time does not change);
//! - in a graph every launch has its own copy (see `Plan::copies`), all poisoned before the
//!   replay; single launches alternate over one copy per input set;
//! - copy `c` holds input set `c % sets`: consecutive launches see different contents, so a
//!   result cached on input contents gains nothing;
//! - after sampling, every copy the kernel ran on is compared with the reference's outputs
//!   for its set: a kernel that skipped work in timed launches (a launch counter) fails.

use super::compare::compare;
use super::reference::Outputs;
use super::verify::Failure;
use crate::device::{DeviceBuffer, DeviceError, Gpu};
use crate::dtype::HostData;
use crate::report::bytes;
use crate::suite::{Role, Suite};

/// A case's buffers, several times over.
pub struct Copies {
    copies: Vec<Vec<DeviceBuffer>>,
    /// Per input set, the initial contents of each in-out buffer: (buffer index, contents).
    pristine: Vec<Vec<(usize, DeviceBuffer)>>,
    /// Per input set, what every buffer started with (`None` for outputs).
    host: Vec<Vec<Option<HostData>>>,
    roles: Vec<Role>,
}

/// An out-of-memory error while making copies, said in the suite's words.
fn no_room(gpu: &Gpu, e: DeviceError, each: usize, wanted: usize) -> Failure {
    if e.name != "CUDA_ERROR_OUT_OF_MEMORY" {
        return e.into();
    }
    let (free, _) = gpu.memory_info().unwrap_or((0, 0));
    Failure::Wrong(format!(
        "out of memory: timing runs on {wanted} copies of the case's buffers ({} each, one per launch of a graph and one per input set), the device has {} free (make the case smaller)",
        bytes(each as u64),
        bytes(free as u64)
    ))
}

impl Copies {
    /// Copy 0 is `first` (the case's buffers); one more copy per further set of `host` (one
    /// per input set, as `generate` made them), each uploaded.
    pub fn new(
        gpu: &Gpu,
        suite: &Suite,
        first: Vec<DeviceBuffer>,
        host: Vec<Vec<Option<HostData>>>,
    ) -> Result<Copies, Failure> {
        assert!(!host.is_empty(), "at least one input set");
        let roles: Vec<Role> = suite.buffers.iter().map(|b| b.role).collect();
        let each: usize = first.iter().map(|b| b.bytes).sum();
        let mut host = host;
        let mut copies = vec![first];
        'sets: for _ in 1..host.len() {
            let mut copy = Vec::new();
            for b in &copies[0] {
                match gpu.alloc_plain(b.bytes) {
                    Ok(c) => copy.push(c),
                    // A case too large to hold twice is timed on one input set rather than
                    // not at all (the timed outputs are still checked).
                    Err(e) if e.name == "CUDA_ERROR_OUT_OF_MEMORY" => {
                        host.truncate(copies.len());
                        break 'sets;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            copies.push(copy);
        }
        let mut pristine = Vec::new();
        for (set, copy) in host.iter().zip(&copies) {
            super::verify::upload(gpu, copy, set)?;
            let mut inouts = Vec::new();
            for (i, _) in roles.iter().enumerate().filter(|(_, r)| **r == Role::Inout) {
                let p = gpu
                    .alloc_plain(copy[i].bytes)
                    .map_err(|e| no_room(gpu, e, each, host.len()))?;
                gpu.copy(&p, &copy[i])?;
                inouts.push((i, p));
            }
            pristine.push(inouts);
        }
        Ok(Copies {
            copies,
            pristine,
            host,
            roles,
        })
    }

    /// Input sets.
    pub fn sets(&self) -> usize {
        self.host.len()
    }

    /// Copies made so far.
    pub fn len(&self) -> usize {
        self.copies.len()
    }

    /// Whether there are none (never: copy 0 is the case's buffers).
    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }

    /// Copy `c`'s buffers.
    pub fn copy(&self, c: usize) -> &[DeviceBuffer] {
        &self.copies[c % self.copies.len()]
    }

    /// Bytes of one copy.
    pub fn bytes_each(&self) -> usize {
        self.copies[0].iter().map(|b| b.bytes).sum()
    }

    /// Adds copies until there are `n`; copy `c` is a device-side copy of copy `c % sets`
    /// (whose inputs the checked launches left unchanged).
    pub fn grow(&mut self, gpu: &Gpu, n: usize) -> Result<(), Failure> {
        let each = self.bytes_each();
        while self.copies.len() < n {
            let from = self.copies.len() % self.sets();
            let mut copy = Vec::new();
            for b in &self.copies[from] {
                let c = gpu
                    .alloc_plain(b.bytes)
                    .map_err(|e| no_room(gpu, e, each, n))?;
                gpu.copy(&c, b)?;
                copy.push(c);
            }
            self.copies.push(copy);
        }
        Ok(())
    }

    /// Queues the checked starting state for copy `c`, or for every copy: outputs poisoned
    /// (every byte 0xFF, as before a checked run), in-out buffers restored to their set's
    /// initial contents. Inputs are left alone: the checks showed the kernels do not write them.
    pub fn prepare(&self, gpu: &Gpu, c: Option<usize>) -> Result<(), DeviceError> {
        let range = match c {
            Some(c) => c % self.copies.len()..c % self.copies.len() + 1,
            None => 0..self.copies.len(),
        };
        for c in range {
            let set = c % self.sets();
            for (i, role) in self.roles.iter().enumerate() {
                if *role == Role::Output {
                    gpu.fill(&self.copies[c][i], 0xFF)?;
                }
            }
            for (i, p) in &self.pristine[set] {
                gpu.copy(&self.copies[c][*i], p)?;
            }
        }
        Ok(())
    }

    /// Compares what kernel `k`'s last timed-like launches left in copies `0..used` with
    /// `expected` (the reference's outputs per input set, from `seeds`), and checks their
    /// inputs unchanged.
    pub fn check(
        &self,
        gpu: &Gpu,
        suite: &Suite,
        (case, k): (usize, usize),
        used: usize,
        expected: &[Outputs],
        seeds: &[u64],
    ) -> Result<(), Failure> {
        gpu.synchronize()?;
        let name = &suite.kernels[k].name;
        let wrong = "the timed launches computed something else than the checked ones";
        for c in 0..used.min(self.copies.len()) {
            let set = c % self.sets();
            let at = format!(
                "input copy {} of {used}, inputs from seed {}",
                c + 1,
                seeds[set]
            );
            let mut actual = Vec::new();
            for (i, b) in suite.buffers.iter().enumerate() {
                let now = HostData {
                    dtype: b.dtype,
                    bytes: gpu.download(&self.copies[c][i])?,
                };
                if b.role == Role::Input {
                    let before = self.host[set][i].as_ref().expect("inputs are initialized");
                    if now.bytes != before.bytes {
                        return Err(Failure::Wrong(format!(
                            "{wrong}: kernel `{name}` changed input `{}` while it was timed ({at})",
                            b.name
                        )));
                    }
                    actual.push(None);
                } else {
                    actual.push(Some(now));
                }
            }
            for (i, b) in suite.buffers.iter().enumerate() {
                let (Some(now), Some(want)) = (&actual[i], &expected[set][i]) else {
                    continue;
                };
                if let Err(m) = compare(now, want, suite.check.tolerances[&i]) {
                    let dumped = super::dump::note(
                        suite,
                        &super::dump::Failing {
                            kernel: k,
                            case,
                            seed: seeds[set],
                            inputs: &self.host[set],
                            expected: &expected[set],
                            actual: &actual,
                        },
                    );
                    return Err(Failure::Wrong(format!(
                        "{wrong}: output `{}` of `{name}` after timing differs from the reference ({at}): {m} (a kernel must do its full work on every launch; outputs are poisoned before each timed launch as before each checked one){dumped}",
                        b.name
                    )));
                }
            }
        }
        Ok(())
    }
}
