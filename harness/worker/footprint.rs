//! `footprint_of`: what a kernel occupies on the device — pool peak, the driver's free-memory
//! drop, each launch's resources — from one run of it alone.

use crate::check::failure::Failure;
use crate::check::run::run_op;
use crate::device::{DeviceBuffer, Function, FunctionAttribute, Gpu};
use crate::measure::{Footprint, Resources};
use crate::suite::Suite;

/// One run of kernel `k` alone, to see what it occupies: the pool's high-water mark (reset
/// first, so it counts this case's buffers and the kernel's scratch), the driver's free-memory
/// drop across the launches (local memory it reserves for spills and stack frames), and each
/// launch's resources.
pub(super) fn footprint_of(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Function],
    bufs: &[DeviceBuffer],
) -> Result<Footprint, Failure> {
    gpu.synchronize()?;
    // A library call's kernels are the library's: CUPTI's records of this run say what they
    // were (none where CUPTI cannot load).
    let library = funcs.iter().any(Function::is_library);
    let activity = library
        .then(crate::device::counters::Activity::start)
        .and_then(Result::ok);
    gpu.reset_pool_high()?;
    let (free_before, _) = gpu.memory_info()?;
    run_op(gpu, suite, case, k, funcs, bufs)?;
    let (free_launched, _) = gpu.memory_info()?;
    gpu.synchronize()?;
    let (free_after, _) = gpu.memory_info()?;
    let records = activity.map(|a| a.take().unwrap_or_default());
    // A library call's workspace is held outside the pool: its own, added here.
    let workspace: u64 = funcs.iter().map(Function::library_workspace).sum();
    let pool_peak = gpu.pool_high()? + workspace;
    let mut launches = Vec::new();
    for ((f, l), entry) in funcs
        .iter()
        .zip(&suite.cases[case].launches[k])
        .zip(&suite.kernels[k].entries)
    {
        if f.is_library() {
            // No function handle to ask: CUPTI's records, below.
            continue;
        }
        let threads = l.block.iter().product::<u32>();
        launches.push(Resources {
            entry: entry.clone(),
            registers: f.attribute(FunctionAttribute::Registers)?,
            static_shared: f.attribute(FunctionAttribute::StaticShared)?,
            dynamic_shared: l.shared,
            local_bytes: f.attribute(FunctionAttribute::LocalBytes)?,
            max_threads: f.attribute(FunctionAttribute::MaxThreads)?,
            block_threads: threads,
            blocks_per_sm: f.blocks_per_sm(threads, l.shared)?,
        });
    }
    let seen = records.into_iter().flatten();
    launches.extend(seen.filter(|r| !r.is_kernelgates()).map(|r| Resources {
        block_threads: r.block.iter().product::<i32>().max(0) as u32,
        entry: r.name,
        registers: r.registers.into(),
        static_shared: r.shared[0],
        dynamic_shared: r.shared[1].max(0) as u32,
        local_bytes: r.local as i32,
        max_threads: 0,
        blocks_per_sm: 0,
    }));
    let resident = gpu.info.max_threads_per_sm.max(0) as u64 * gpu.info.sm_count.max(0) as u64;
    let local = launches.iter().map(|l| l.local_bytes.max(0) as u64).max();
    Ok(Footprint {
        pool_peak,
        local_reservation: local.unwrap_or(0) * resident,
        free_drop: free_before.saturating_sub(free_launched.min(free_after)) as u64,
        launches,
        fp64: None,
        library: library.then(|| {
            let algorithms = funcs.iter().filter_map(Function::library_algorithm);
            algorithms.collect::<Vec<_>>().join(" / ")
        }),
    })
}
