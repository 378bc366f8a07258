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
//!   for its set (`check::timed_check`): a kernel that skipped work in timed launches (a
//!   launch counter) fails.

use super::failure::Failure;
use super::input_set::InputSet;
use super::kernels::{encode, Kernels, Span, SPAN_BYTES};
use crate::device::{DeviceBuffer, DeviceError, Gpu};
use crate::report::bytes;
use crate::suite::{Role, Suite};

/// A case's buffers, several times over.
pub struct Copies {
    pub(super) copies: Vec<Vec<DeviceBuffer>>,
    /// Per input set, the initial contents of each in-out buffer: (buffer index, contents).
    pristine: Vec<Vec<(usize, DeviceBuffer)>>,
    /// The input sets; copy `c` holds set `c % sets`.
    pub(super) sets: Vec<InputSet>,
    pub(super) roles: Vec<Role>,
    /// The prepare table on the device (see `check::kernels`), rebuilt when copies are added.
    table: Option<Table>,
    /// The allocations grown copies are carved from (after `copies`: their parts go first).
    arenas: Vec<DeviceBuffer>,
}

/// Every copy's spans (outputs to poison, in-out buffers to restore), copy by copy.
struct Table {
    buf: DeviceBuffer,
    /// Copy `c`'s spans are entries `starts[c]..starts[c + 1]`.
    starts: Vec<usize>,
    /// The largest span, bytes.
    largest: u64,
}

/// An out-of-memory error while making copies, said in the suite's words.
fn no_room(gpu: &Gpu, e: DeviceError, each: usize, wanted: usize) -> Failure {
    if e.kind() != crate::device::ErrorKind::OutOfMemory {
        return e.into();
    }
    let (free, _) = gpu.memory_info().unwrap_or((0, 0));
    Failure::Trial(crate::failure::TrialFailure::OutOfMemory(format!(
        "out of memory: timing runs on {wanted} copies of the case's buffers ({} each, one per launch of a graph and one per input set), the device has {} free (make the case smaller)",
        bytes(each as u64),
        bytes(free as u64)
    )))
}

impl Copies {
    /// Copy 0 is `first` (the case's buffers); one more copy per further set of `sets`, each
    /// written (on the device where `kernels` can generate it).
    pub fn new(
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        first: Vec<DeviceBuffer>,
        sets: Vec<InputSet>,
    ) -> Result<Copies, Failure> {
        assert!(!sets.is_empty(), "at least one input set");
        let mut host = sets;
        let roles: Vec<Role> = suite.buffers.iter().map(|b| b.role).collect();
        let each: usize = first.iter().map(|b| b.bytes).sum();
        let mut copies = vec![first];
        'sets: for _ in 1..host.len() {
            let mut copy = Vec::new();
            for b in &copies[0] {
                match gpu.alloc_plain(b.bytes) {
                    Ok(c) => copy.push(c),
                    // A case too large to hold twice is timed on one input set rather than
                    // not at all (the timed outputs are still checked).
                    Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => {
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
            set.upload(gpu, kernels, suite, copy)?;
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
        let mut copies = Copies {
            copies,
            pristine,
            sets: host,
            roles,
            table: None,
            arenas: Vec::new(),
        };
        copies.build_table(gpu)?;
        Ok(copies)
    }

    /// The spans that put copy `c` back into the checked starting state.
    fn spans(&self, c: usize) -> Vec<Span> {
        let copy = &self.copies[c];
        let poison = (self.roles.iter().enumerate())
            .filter(|(_, role)| **role == Role::Output)
            .map(|(i, _)| Span {
                dst: copy[i].address(),
                src: None,
                bytes: copy[i].bytes as u64,
            });
        let restore = self.pristine[c % self.sets()].iter().map(|(i, p)| Span {
            dst: copy[*i].address(),
            src: Some(p.address()),
            bytes: p.bytes as u64,
        });
        poison.chain(restore).collect()
    }

    /// Uploads every copy's spans as one table.
    fn build_table(&mut self, gpu: &Gpu) -> Result<(), Failure> {
        self.table = None;
        let mut spans = Vec::new();
        let mut starts = vec![0];
        for c in 0..self.copies.len() {
            spans.extend(self.spans(c));
            starts.push(spans.len());
        }
        let largest = spans.iter().map(|s| s.bytes).max().unwrap_or(0);
        let bytes = encode(&spans);
        let buf = gpu
            .alloc_plain(bytes.len())
            .map_err(|e| no_room(gpu, e, self.bytes_each(), self.copies.len()))?;
        gpu.upload(&buf, &bytes)?;
        self.table = Some(Table {
            buf,
            starts,
            largest,
        });
        Ok(())
    }

    /// Input sets.
    pub fn sets(&self) -> usize {
        self.sets.len()
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

    /// Writes the seeded buffers of copy `c` — inputs and in-outs whose `init` draws from the
    /// seed — from a fresh set of `seed` (contents no launch has seen), or from the copy's own
    /// set again (`None`). False when no buffer is seeded: every set has the same contents.
    pub fn write_seeded(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        c: usize,
        seed: Option<u64>,
    ) -> Result<bool, Failure> {
        let own = &self.sets[c % self.sets.len()];
        let fresh = seed.map(|s| InputSet::new(own.case, s));
        let set = fresh.as_ref().unwrap_or(own);
        let mut any = false;
        for (i, b) in suite.buffers.iter().enumerate() {
            let seeded = suite.init(own.case, i).is_some_and(|init| init.is_seeded());
            if b.role != Role::Output && seeded {
                set.write(gpu, kernels, suite, i, &self.copy(c)[i])?;
                any = true;
            }
        }
        Ok(any)
    }

    /// Bytes of one copy.
    pub fn bytes_each(&self) -> usize {
        self.copies[0].iter().map(|b| b.bytes).sum()
    }

    /// Adds copies until there are `n`; copy `c` is a device-side copy of copy `c % sets`
    /// (whose inputs the checked launches left unchanged). The new copies are carved from one
    /// allocation (buffers 256-byte aligned) and filled by one `kernelgate_prepare` launch: a
    /// graph of 1024 launches made 2048 allocations, copies and frees per trial before.
    pub fn grow(&mut self, gpu: &Gpu, kernels: &Kernels, n: usize) -> Result<(), Failure> {
        let each = self.bytes_each();
        let missing = n.saturating_sub(self.copies.len());
        if missing > 0 {
            // Each buffer at its offset in a copy's `stride` bytes, 256-byte aligned.
            let (mut offsets, mut stride) = (Vec::new(), 0);
            for b in &self.copies[0] {
                offsets.push(stride);
                stride += b.bytes.div_ceil(256).max(1) * 256;
            }
            let arena = gpu
                .alloc_plain(stride * missing)
                .map_err(|e| no_room(gpu, e, each, n))?;
            let mut spans = Vec::new();
            for j in 0..missing {
                let from = self.copies.len() % self.sets();
                let mut copy = Vec::new();
                for (b, off) in self.copies[from].iter().zip(&offsets) {
                    let c = arena.part(j * stride + off, b.bytes);
                    spans.push(Span {
                        dst: c.address(),
                        src: Some(b.address()),
                        bytes: b.bytes as u64,
                    });
                    copy.push(c);
                }
                self.copies.push(copy);
            }
            let bytes = encode(&spans);
            let table = gpu.alloc_plain(bytes.len())?;
            gpu.upload(&table, &bytes)?;
            let largest = spans.iter().map(|s| s.bytes).max().unwrap_or(0);
            kernels.prepare(gpu, &table, (0, spans.len()), largest)?;
            gpu.synchronize()?;
            self.arenas.push(arena);
        }
        if self
            .table
            .as_ref()
            .is_none_or(|t| t.starts.len() != self.copies.len() + 1)
        {
            self.build_table(gpu)?;
        }
        Ok(())
    }

    /// Queues the checked starting state for copy `c`, or for every copy: outputs poisoned
    /// (every byte 0xFF, as before a checked run), in-out buffers restored to their set's
    /// initial contents. Inputs are left alone: the checks showed the kernels do not write them.
    /// One launch over the table does it all.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        c: Option<usize>,
    ) -> Result<(), DeviceError> {
        let (first, end) = match c {
            Some(c) => (c % self.copies.len(), c % self.copies.len() + 1),
            None => (0, self.copies.len()),
        };
        let t = self.table.as_ref().expect("built with the copies");
        let (from, to) = (t.starts[first], t.starts[end]);
        kernels.prepare(gpu, &t.buf, (from * SPAN_BYTES, to - from), t.largest)
    }
}
