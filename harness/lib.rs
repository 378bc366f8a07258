//! kernelgate: a benchmark-regression test harness for CUDA kernels.
//!
//! A project keeps TOML suites under `suites/`, and `tests/perf.rs` (with `harness = false`)
//! hands over to [`main`]. `cargo test --test perf` then compiles every kernel with NVRTC,
//! checks each against its suite's reference kernel, and times it with CUDA events.

pub mod baseline;
pub mod bisect;
pub mod check;
pub mod cli;
pub mod code;
pub mod compile_suite;
pub mod config;
pub mod device;
pub mod dtype;
pub mod error;
pub mod exit;
pub mod failure;
pub mod gate;
pub mod gemm;
pub mod history;
pub mod html;
pub mod lock;
pub mod measure;
pub mod mix;
pub mod nextest;
pub mod npy;
pub mod order;
pub mod paired;
pub mod plan;
pub mod problems;
pub mod project;
pub mod report;
pub mod runner;
pub mod sass;
pub mod shard;
pub mod shell;
pub mod spent;
pub mod stats;
pub mod stop;
pub mod suggest;
pub mod suite;
pub mod usage;
pub mod variables;
pub mod worker;

pub use cli::run::main;
