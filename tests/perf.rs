//! The GPU benchmark-regression run: `cargo test --test perf`. Everything is in the library.

fn main() -> std::process::ExitCode {
    kernelgate::main()
}
