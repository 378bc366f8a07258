//! `launch_problems`: what each case's launches ask of the target architecture, checked at lint
//! from the compiled code, so a launch the driver would refuse fails without a GPU: a block over
//! the kernel's `__launch_bounds__`, registers per thread times the block over the register
//! file, static and dynamic shared memory over what a block of the architecture may opt into.

use crate::sass::KernelCode;
use crate::suite::Suite;

/// 32-bit registers a block may use, on every architecture kernelgate compiles for (CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability": 64 K per SM and per
/// block, compute capability 5.0 to 12.x).
pub const REGISTERS_PER_BLOCK: u64 = 65_536;

/// Shared memory a block of `arch` may opt into, bytes (the same table: 163 KB on 8.0 and 8.7,
/// 99 KB on 8.6, 8.9 and 12.x, 227 KB on 9.0 and 10.x, 96 KB on 7.0, 64 KB on 7.5); `None` for
/// an architecture it does not list.
pub fn max_shared_optin(arch: &str) -> Option<u64> {
    let cc: u32 = arch
        .strip_prefix("sm_")?
        .trim_end_matches(['a', 'f'])
        .parse()
        .ok()?;
    let kib = match cc {
        70 | 72 => 96,
        75 => 64,
        80 | 87 => 163,
        86 | 89 | 120 | 121 => 99,
        90 | 100 | 101 | 103 | 110 => 227,
        _ => return None,
    };
    Some(kib * 1024)
}

/// Registers a block of `threads` threads holds at `per_thread` registers each: allocated per
/// warp, in units of 256.
pub fn block_registers(per_thread: u32, threads: u64) -> u64 {
    let per_warp = (u64::from(per_thread) * 32).div_ceil(256) * 256;
    per_warp * threads.div_ceil(32)
}

/// One launch the compiled code cannot run: its kernel (index), where the suite file writes the
/// value that breaks the limit (a byte offset; `None`: not written), and what is wrong.
pub type LaunchProblem = (usize, Option<usize>, String);

/// Each launch of `suite`'s cases that its compiled `code` (for `arch`) cannot run; one per
/// kernel, entry and limit, naming its first case and how many more break it.
pub fn launch_problems(suite: &Suite, code: &[KernelCode], arch: &str) -> Vec<LaunchProblem> {
    // Each limit one kernel entry's launches break, with where it is written and each case.
    let mut found = Vec::new();
    for (c, case) in suite.cases.iter().enumerate() {
        for (k, code) in code.iter().enumerate() {
            let entries = &suite.kernels[k].entries;
            for ((launch, id), entry) in case.launches[k].iter().zip(&code.entries).zip(entries) {
                let Some(res) = &id.resources else { continue };
                for (at, what) in over_limits(res, launch, arch) {
                    found.push(((k, entry, what), (at, c)));
                }
            }
        }
    }
    crate::order::grouped(found)
        .into_iter()
        .map(|((k, entry, what), cases)| {
            let (at, first) = cases[0];
            let case = &suite.cases[first].label;
            let more = match cases.len() - 1 {
                0 => String::new(),
                n => format!(" and {n} more case(s)"),
            };
            let kernel = &suite.kernels[k].name;
            (k, at, format!("kernel `{kernel}` launches `{entry}` with {what}, for {case}{more}: the launch would fail on {arch}"))
        })
        .collect()
}

/// What of `launch` goes over the limits of code with resources `res` on `arch`, each at the
/// value the suite writes for it (the block, or the shared memory).
fn over_limits(
    res: &crate::sass::Resources,
    launch: &crate::suite::Launch,
    arch: &str,
) -> Vec<(Option<usize>, String)> {
    let [block, shared_at] = launch.written;
    let threads: u64 = launch.block.iter().map(|b| u64::from(*b)).product();
    let mut says = Vec::new();
    if let Some(max) = res.max_threads {
        let bound: u64 = max.iter().map(|b| u64::from((*b).max(1))).product();
        if threads > bound {
            let what =
                format!("a block of {threads} threads, over its __launch_bounds__ of {bound}");
            says.push((block, what));
        }
    }
    if let Some(r) = res.registers {
        let held = block_registers(r, threads);
        if held > REGISTERS_PER_BLOCK {
            says.push((block, format!("{r} registers per thread × a block of {threads} threads = {held} registers, over the {REGISTERS_PER_BLOCK} of the register file (lower the block or max_registers)")));
        }
    }
    let shared = res.shared_bytes + u64::from(launch.shared);
    if let Some(limit) = max_shared_optin(arch).filter(|l| shared > *l) {
        says.push((shared_at.or(block), format!("{} B static + {} B dynamic shared memory = {shared} B, over the {limit} B a block of {arch} may opt into", res.shared_bytes, launch.shared)));
    }
    says
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_held_per_warp_and_shared_memory_per_architecture() {
        // Issue 32's kernel: 167 registers per thread in a block of 1024 threads.
        assert_eq!(block_registers(167, 1024), 172_032);
        assert!(block_registers(167, 1024) > REGISTERS_PER_BLOCK);
        // 64 registers × 1024 threads: exactly the register file.
        assert_eq!(block_registers(64, 1024), REGISTERS_PER_BLOCK);
        // A partial warp holds a whole warp's registers: 33 threads are two warps.
        assert_eq!(block_registers(32, 33), 2 * 1024);
        assert_eq!(max_shared_optin("sm_80"), Some(166_912));
        assert_eq!(max_shared_optin("sm_86"), Some(101_376));
        assert_eq!(max_shared_optin("sm_90a"), Some(232_448));
        assert_eq!(max_shared_optin("sm_120"), Some(101_376));
        assert_eq!(max_shared_optin("compute_90"), None);
    }
}
