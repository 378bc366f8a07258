//! `lint`: validates every suite and every stored baseline file and, where NVRTC can be
//! loaded, compiles every kernel and applies the instruction-mix gate (`mix`) — on any
//! machine, no GPU needed. Errors name the file and line.

use crate::config::Config;

use std::process::ExitCode;

/// The `kernelgate lint` command.
pub fn lint() -> ExitCode {
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::exit::code(crate::exit::BAD_INPUT);
        }
    };
    let suites = match super::suites::load_suites(&config, "kernelgate lint", "") {
        Ok(s) => s,
        Err(code) => return code,
    };
    // Every stored baseline parsed and validated, so GPU-less CI catches a broken one.
    let baselines = crate::baseline::check::check_dir(&config.baselines);
    for e in &baselines.errors {
        eprintln!("error: {e}");
    }
    if !baselines.errors.is_empty() {
        eprintln!(
            "kernelgate lint: {} unusable baseline file(s)",
            baselines.errors.len()
        );
        return crate::exit::code(crate::exit::BAD_INPUT);
    }
    let kernels: usize = suites.iter().map(|s| s.kernels.len()).sum();
    let cases: usize = suites.iter().map(|s| s.cases.len()).sum();
    if let Some(reason) = crate::device::nvrtc_missing() {
        if config.require_nvrtc {
            eprintln!("error: {reason} (KERNELGATE_REQUIRE_NVRTC is set)");
            return crate::exit::code(crate::exit::BAD_INPUT);
        }
        println!("kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; not compiled: {reason}", suites.len(), baselines.files.len());
        return ExitCode::SUCCESS;
    }
    let mut failed = 0;
    let mut breaches = 0;
    let mut sources = 0;
    for s in &suites {
        match crate::compile_suite::compile_suite(s, &config.arch, Some(&config.cache)) {
            Ok(compiled) => {
                sources += compiled.len();
                // The instruction-mix gate (`mix`), at the kernel's line.
                for (ki, message) in crate::mix::fp64_breaches(s, &compiled) {
                    breaches += 1;
                    let line = s.kernel_lines.get(ki).copied().unwrap_or(1);
                    eprintln!("error: {}:{line}:1: {message}", s.path.display());
                }
            }
            Err(e) => {
                failed += 1;
                let line = s
                    .kernels
                    .iter()
                    .position(|k| k.source == e.source_index)
                    .and_then(|k| s.kernel_lines.get(k).copied())
                    .unwrap_or(1);
                eprintln!("error: {}:{line}:1: {e}", s.path.display());
            }
        }
    }
    println!(
        "kernelgate lint: {} suite(s), {kernels} kernel(s), {cases} case(s), {} baseline file(s) valid; {sources} source(s) compiled for {}{}",
        suites.len(),
        baselines.files.len(),
        config.arch,
        if failed > 0 { format!("; {failed} suite(s) do not compile") } else { String::new() }
    );
    if breaches > 0 {
        println!(
            "kernelgate lint: {breaches} kernel(s) hold FP64 instructions where fp64 = \"forbid\""
        );
    }
    if failed > 0 || breaches > 0 {
        crate::exit::code(crate::exit::COMPILE_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}
