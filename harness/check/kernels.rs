//! `Kernels`: the harness's own check kernels, so that the work around timed launches stays on
//! the device (issue 11, "correctness at GPU speed"):
//! - `kernelgate_prepare` puts copies back into the checked starting state from one table of
//!   spans (poison an output, or restore an in-out buffer from its pristine copy): one launch
//!   per sample instead of one memset or copy per buffer per copy (a graph of 128 launches
//!   queued 128 of them before every replay);
//! - `kernelgate_compare` compares an output with its expected values under the tolerance
//!   rules of `check::compare` (the same IEEE steps as `compare::excess`, NaN and ∞ rules
//!   included) and writes, per block, the mismatches, the first and the worst: only those
//!   partials come back, and only a failure transfers more (for its message).

use crate::device::compile::{self, CompileRequest};
use crate::device::{DeviceBuffer, DeviceError, Function, Gpu, KernelArg, LaunchDims};
use crate::dtype::DType;
use crate::failure::TrialFailure;
use crate::suite::Tolerance;
use std::cell::{RefCell, RefMut};

/// The kernels' CUDA source. `kg_excess` is `check::compare::excess` line by line.
pub const SOURCE: &str = include_str!("kernels.cu");

/// The entries of `SOURCE` (and `check::vacuous_kernels`'), in the order `Kernels` keeps them.
pub const ENTRIES: [&str; 5] = [
    "kernelgate_prepare",
    "kernelgate_compare",
    "kernelgate_fill",
    "kernelgate_stats",
    "kernelgate_vacuous",
];

/// What NVRTC compiles: the generator, the rounding to `f16`/`bf16`, the kernels, then the
/// vacuous-tolerance test's (`check::vacuous_kernels`).
pub fn source() -> String {
    format!(
        "{}{}{SOURCE}{}",
        super::counter::DEVICE_SOURCE,
        super::narrow::DEVICE_SOURCE,
        super::vacuous_kernels::DEVICE_SOURCE
    )
}

/// Device memory for temporaries kept between calls (`Kernels::scratch`), at most; a larger
/// request gets memory of its own, freed after use.
pub const SCRATCH_KEEP_BYTES: usize = 256 << 20;

/// Blocks of one compare launch, at most (their partials are what comes back).
pub const COMPARE_BLOCKS: usize = 1024;
/// Bytes of one `KgPartial`.
const PARTIAL_BYTES: usize = 32;
/// Bytes of one `KgSpan`.
pub const SPAN_BYTES: usize = 24;

/// The code `kg_value` reads `dtype` by: its discriminant.
pub fn code(dtype: DType) -> i32 {
    dtype as i32
}

/// One step of the prepare table: poison `dst` (every byte 0xFF), or copy `src` over it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Device address written.
    pub dst: u64,
    /// Device address read, or `None` to poison.
    pub src: Option<u64>,
    /// Bytes.
    pub bytes: u64,
}

/// The table's bytes, as `KgSpan` lays them out.
pub fn encode(spans: &[Span]) -> Vec<u8> {
    let mut out = Vec::with_capacity(spans.len() * SPAN_BYTES);
    for s in spans {
        out.extend_from_slice(&s.dst.to_le_bytes());
        out.extend_from_slice(&s.src.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&s.bytes.to_le_bytes());
    }
    out
}

/// What a device comparison found: the mismatches, the first, and the worst (largest excess,
/// earliest index on ties, as `compare::compare` picks it).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Found {
    /// Elements outside the tolerance.
    pub count: u64,
    /// The first of them.
    pub first: u64,
    /// The worst of them.
    pub worst: u64,
    /// Its excess (`compare::excess`).
    pub excess: f64,
}

/// Merges the per-block partials `kernelgate_compare` wrote, as `kg_merge` does.
pub fn merge(raw: &[u8]) -> Found {
    let word = |p: &[u8], k: usize| u64::from_le_bytes(p[8 * k..8 * k + 8].try_into().expect("8"));
    let mut acc = Found::default();
    for p in raw.chunks_exact(PARTIAL_BYTES) {
        let b = Found {
            count: word(p, 0),
            first: word(p, 1),
            worst: word(p, 2),
            excess: f64::from_bits(word(p, 3)),
        };
        if b.count == 0 {
            continue;
        }
        if acc.count == 0 {
            acc = b;
            continue;
        }
        if b.excess > acc.excess || (b.excess == acc.excess && b.worst < acc.worst) {
            (acc.worst, acc.excess) = (b.worst, b.excess);
        }
        acc.first = acc.first.min(b.first);
        acc.count += b.count;
    }
    acc
}

/// The loaded check kernels, the buffers their partials come back in (on the device, and on
/// the host: both reused), and device memory for temporaries.
pub struct Kernels {
    prepare: Function,
    compare: Function,
    /// `kernelgate_fill` (see `check::device_fill`).
    pub(super) fill: Function,
    /// `kernelgate_stats` (see `check::vacuous_device`).
    pub(super) stats: Function,
    /// `kernelgate_vacuous` (see `check::vacuous_device`).
    pub(super) vacuous: Function,
    partials: RefCell<DeviceBuffer>,
    host: RefCell<Vec<u8>>,
    scratch: RefCell<Option<DeviceBuffer>>,
}

/// Parts of device memory for temporaries (`Kernels::scratch`), valid while this lives.
pub struct Scratch<'a> {
    parts: Vec<DeviceBuffer>,
    _memory: Held<'a>,
}

/// The memory the parts of a [`Scratch`] are carved from.
enum Held<'a> {
    /// The kernels' kept memory, borrowed while the parts are used.
    Kept {
        _borrowed: RefMut<'a, Option<DeviceBuffer>>,
    },
    /// Memory of its own, freed with the parts.
    Own { _memory: DeviceBuffer },
}

impl Scratch<'_> {
    /// Part `k`, of the size asked for.
    pub fn part(&self, k: usize) -> &DeviceBuffer {
        &self.parts[k]
    }
}

impl Kernels {
    /// Compiles (through the cache) and loads the kernels for this device.
    pub fn load(gpu: &Gpu, cache_dir: Option<&std::path::Path>) -> Result<Kernels, TrialFailure> {
        let entries: Vec<String> = ENTRIES.iter().map(|e| e.to_string()).collect();
        // No contraction into FMAs: `kg_excess` must round as `compare::excess` does.
        let options = ["--fmad=false".to_string()];
        let text = source();
        let req = CompileRequest {
            path: std::path::Path::new("kernelgate_check.cu"),
            text: &text,
            include_dirs: &[],
            options: &options,
            entries: &entries,
            arch: &gpu.info.arch(),
        };
        let harness = |e: &dyn std::fmt::Display| {
            TrialFailure::Harness(format!("the harness's check kernels: {e}"))
        };
        let c = compile::compile(&req, cache_dir).map_err(|e| harness(&e))?;
        let device = |e: DeviceError| harness(&e);
        let module = gpu.load(&c.cubin).map_err(device)?;
        Ok(Kernels {
            prepare: module.function(&c.lowered[0]).map_err(device)?,
            compare: module.function(&c.lowered[1]).map_err(device)?,
            fill: module.function(&c.lowered[2]).map_err(device)?,
            stats: module.function(&c.lowered[3]).map_err(device)?,
            vacuous: module.function(&c.lowered[4]).map_err(device)?,
            partials: RefCell::new(
                gpu.alloc_plain(COMPARE_BLOCKS * PARTIAL_BYTES)
                    .map_err(device)?,
            ),
            host: RefCell::new(Vec::new()),
            scratch: RefCell::new(None),
        })
    }

    /// Queues `launch`, given the device address to write `bytes` of partials at, waits, and
    /// hands what it wrote to `read`. The partials' device and host buffers are reused (grown
    /// when a launch needs more): no allocation and no free per comparison.
    pub(super) fn with_partials<T>(
        &self,
        gpu: &Gpu,
        bytes: usize,
        launch: impl FnOnce(u64) -> Result<(), DeviceError>,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, DeviceError> {
        let mut partials = self.partials.borrow_mut();
        if partials.bytes < bytes {
            *partials = gpu.alloc_plain(bytes.next_power_of_two())?;
        }
        launch(partials.address())?;
        let mut host = self.host.borrow_mut();
        host.resize(bytes, 0);
        gpu.download_into(&partials, &mut host[..bytes])?;
        Ok(read(&host[..bytes]))
    }

    /// Device memory for temporaries: one part per entry of `sizes` (bytes, each 256-byte
    /// aligned), carved from memory kept between calls (grown when too small) where the total
    /// is at most [`SCRATCH_KEEP_BYTES`] — so a check makes no allocation, and no free (which
    /// waits for the device), per call.
    pub fn scratch(&self, gpu: &Gpu, sizes: &[usize]) -> Result<Scratch<'_>, DeviceError> {
        let spans: Vec<usize> = sizes.iter().map(|b| b.div_ceil(256).max(1) * 256).collect();
        let total: usize = spans.iter().sum();
        let carve = |memory: &DeviceBuffer| {
            let mut at = 0;
            sizes
                .iter()
                .zip(&spans)
                .map(|(len, span)| {
                    let part = memory.part(at, *len);
                    at += span;
                    part
                })
                .collect::<Vec<_>>()
        };
        if let (true, Ok(mut kept)) = (total <= SCRATCH_KEEP_BYTES, self.scratch.try_borrow_mut()) {
            if kept.as_ref().is_none_or(|m| m.bytes < total) {
                *kept = None;
                *kept = Some(gpu.alloc_plain(total)?);
            }
            let parts = carve(kept.as_ref().expect("made above"));
            return Ok(Scratch {
                parts,
                _memory: Held::Kept { _borrowed: kept },
            });
        }
        let own = gpu.alloc_plain(total)?;
        Ok(Scratch {
            parts: carve(&own),
            _memory: Held::Own { _memory: own },
        })
    }

    /// Queues the spans `count` entries from byte `offset` of `table` (an uploaded `encode`)
    /// describe, in one launch; `largest` is the largest span's size in bytes.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        table: &DeviceBuffer,
        (offset, count): (usize, usize),
        largest: u64,
    ) -> Result<(), DeviceError> {
        if count == 0 {
            return Ok(());
        }
        let words = largest.div_ceil(16).max(1);
        let dims = LaunchDims {
            grid: [
                words.div_ceil(256).min(1024) as u32,
                count.min(65_535) as u32,
                1,
            ],
            block: [256, 1, 1],
            shared: 0,
        };
        let at = (table.address() + offset as u64).to_le_bytes();
        let n = (count as u32).to_le_bytes();
        let args = [KernelArg::Scalar(&at), KernelArg::Scalar(&n)];
        gpu.launch(&self.prepare, dims, &args)
    }

    /// Compares `actual` with `expected` (both `n` elements of `dtype`) under `tol` on the
    /// device; waits and returns what it found.
    pub fn compare(
        &self,
        gpu: &Gpu,
        (actual, expected): (&DeviceBuffer, &DeviceBuffer),
        dtype: DType,
        n: usize,
        tol: Tolerance,
    ) -> Result<Found, DeviceError> {
        let c = Comparison {
            actual,
            expected,
            dtype,
            n,
            tol,
        };
        Ok(self.compare_all(gpu, &[c])?[0])
    }

    /// Whether each buffer `i` of `actual` matches `expected[i]` by `rule(i)` (its type and
    /// tolerance), compared on the device with one wait; a buffer with no expected contents or
    /// no rule is not compared.
    pub fn all_match(
        &self,
        gpu: &Gpu,
        actual: &[DeviceBuffer],
        expected: &[Option<DeviceBuffer>],
        rule: impl Fn(usize) -> Option<(DType, Tolerance)>,
    ) -> Result<bool, DeviceError> {
        let items: Vec<Comparison> = (0..actual.len())
            .filter_map(|i| {
                let w = expected.get(i)?.as_ref()?;
                let (dtype, tol) = rule(i)?;
                Some(Comparison {
                    actual: &actual[i],
                    expected: w,
                    dtype,
                    n: w.bytes / dtype.size(),
                    tol,
                })
            })
            .collect();
        Ok(self.compare_all(gpu, &items)?.iter().all(|f| f.count == 0))
    }

    /// Several comparisons (as `compare`), queued together and read back with one wait and
    /// one transfer: what each found, in order.
    pub fn compare_all(&self, gpu: &Gpu, items: &[Comparison]) -> Result<Vec<Found>, DeviceError> {
        let blocks: Vec<usize> = items.iter().map(|c| blocks_for(c.n)).collect();
        let total: usize = blocks.iter().sum();
        if total == 0 {
            return Ok(Vec::new());
        }
        let queue = |partials: u64| {
            let mut at = 0;
            for (c, b) in items.iter().zip(&blocks) {
                self.queue_compare(gpu, c, partials + (at * PARTIAL_BYTES) as u64)?;
                at += b;
            }
            Ok(())
        };
        let read = |raw: &[u8]| {
            let mut out = Vec::new();
            let mut at = 0;
            for b in &blocks {
                out.push(merge(&raw[at * PARTIAL_BYTES..(at + b) * PARTIAL_BYTES]));
                at += b;
            }
            out
        };
        self.with_partials(gpu, total * PARTIAL_BYTES, queue, read)
    }

    /// Queues one `kernelgate_compare` writing its partials at device address `partials`.
    fn queue_compare(&self, gpu: &Gpu, c: &Comparison, partials: u64) -> Result<(), DeviceError> {
        let (len, code) = ((c.n as u64).to_le_bytes(), code(c.dtype).to_le_bytes());
        let (rtol, atol) = (c.tol.rtol.to_le_bytes(), c.tol.atol.to_le_bytes());
        let allow_nan = (c.tol.allow_nan as i32).to_le_bytes();
        let partials = partials.to_le_bytes();
        let args = [
            KernelArg::Buffer(c.actual),
            KernelArg::Buffer(c.expected),
            KernelArg::Scalar(&len),
            KernelArg::Scalar(&code),
            KernelArg::Scalar(&rtol),
            KernelArg::Scalar(&atol),
            KernelArg::Scalar(&allow_nan),
            KernelArg::Scalar(&partials),
        ];
        gpu.launch(&self.compare, in_blocks(blocks_for(c.n)), &args)
    }
}

/// Blocks of a comparison (and of the vacuous-tolerance test's kernels) of `n` elements.
pub(super) fn blocks_for(n: usize) -> usize {
    n.div_ceil(256).clamp(1, COMPARE_BLOCKS)
}

/// A launch of `blocks` blocks of 256 threads in a row, without shared memory.
pub(super) fn in_blocks(blocks: usize) -> LaunchDims {
    LaunchDims::line(blocks as u32, 256)
}

/// One comparison for `Kernels::compare_all`.
pub struct Comparison<'a> {
    /// What the kernel left.
    pub actual: &'a DeviceBuffer,
    /// What was expected.
    pub expected: &'a DeviceBuffer,
    /// Their type.
    pub dtype: DType,
    /// Elements.
    pub n: usize,
    /// The rules.
    pub tol: Tolerance,
}

#[cfg(test)]
#[path = "kernels_tests.rs"]
mod tests;
