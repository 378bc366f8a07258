//! `kernelgate-lab`: kernelgate's lab, outside the product — the calibration benchmark of
//! kernelgate itself (`kernelgate-lab calibrate`: accuracy beside CuPy and Nsight Compute, which
//! it runs as `python3` and `ncu`; sensitivity to planted slowdowns through the gate's own
//! policy) and, in its tests, the stopping rule's simulation (`stopping_tests`). Built with
//! `cargo build --release -p kernelgate-lab`; it drives the product's library, never the other
//! way round.

mod calibrate;
#[cfg(test)]
mod stopping_tests;

use clap::Parser;
use std::process::ExitCode;

/// kernelgate's lab tools.
#[derive(Parser)]
#[command(name = "kernelgate-lab", version)]
enum Lab {
    /// On a GPU: kernelgate's accuracy beside CuPy and Nsight Compute, and its sensitivity to
    /// kernels made 0 (A/A), 1, 2, 3 and 5% slower in stored and paired mode, as Markdown
    /// (docs/calibration.md)
    Calibrate(calibrate::Args),
}

fn main() -> ExitCode {
    kernelgate::device::libraries::ensure();
    // The GPU worker is this binary again (`current_exe`), as it is the product's.
    if std::env::var_os(kernelgate::worker::client::WORKER_ENV).is_some() {
        return kernelgate::main();
    }
    match Lab::parse() {
        Lab::Calibrate(args) => calibrate::calibrate(&args),
    }
}
