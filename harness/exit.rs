//! Exit codes: every code any `kernelgate` command or the perf binary returns, as a named
//! constant. The README's exit-code table is checked against this module by a test.

/// Everything passed (or was ignored with a reason).
pub const SUCCESS: u8 = 0;
/// Performance: a trial regressed, or broke a memory or resource limit; for `compare`, a trial
/// regressed; for `lint`, a kernel does not compile.
pub const PERFORMANCE: u8 = 1;
/// Infrastructure or bad input: an invalid suite or variable, an unusable baseline or results
/// file, no GPU or NVRTC where one is required, a worker that cannot start.
pub const BAD_INPUT: u8 = 2;
/// Correctness: a wrong output, a fault, a time-out, a compile error (libtest's own failure code).
pub const CORRECTNESS: u8 = 101;

/// `kernelgate compare`: at least one trial regressed.
pub const REGRESSED: u8 = PERFORMANCE;
/// `kernelgate history --check`: a trend's latest run regressed against its trailing runs.
pub const DRIFT: u8 = PERFORMANCE;
/// `kernelgate lint`: a kernel does not compile.
pub const COMPILE_ERROR: u8 = PERFORMANCE;
/// `kernelgate bisect`: the first regressed commit could not be pinned down (bad did not
/// regress against good, or skipped commits hide which it is).
pub const NOT_FOUND: u8 = PERFORMANCE;

/// The GPU worker process's own exit after an internal error (an unreadable request, a panic,
/// an unreadable worker script): the client reports the trial as a harness failure, not a
/// crash of the kernel. Read by the client only, never a command's exit.
pub const WORKER_FAILED_INSIDE: u8 = BAD_INPUT;
/// The GPU worker process's exit after a sticky fault poisoned its CUDA context (it answered
/// the trial first); the client starts a fresh worker for the next trial.
pub const WORKER_POISONED: u8 = 3;

/// Every distinct code, for the README check.
pub const ALL: [u8; 4] = [SUCCESS, PERFORMANCE, BAD_INPUT, CORRECTNESS];

/// `code` as a process exit code.
pub fn code(code: u8) -> std::process::ExitCode {
    std::process::ExitCode::from(code)
}

/// Prints `e` as an error and gives the bad-input exit code ([`BAD_INPUT`]).
pub fn bad_input(e: impl std::fmt::Display) -> std::process::ExitCode {
    eprintln!("error: {e}");
    code(BAD_INPUT)
}

/// Runs a command; a panic anywhere in it is a harness error — its message and place printed,
/// exit code [`BAD_INPUT`] — never Rust's 101, which CI reads as "a kernel computed a wrong
/// result". Every entry point (each `kernelgate` command, the perf binary, the GPU worker)
/// runs inside one.
pub fn guard(command: impl FnOnce() -> std::process::ExitCode) -> std::process::ExitCode {
    install_panic_hook();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(command)) {
        Ok(code) => code,
        // The hook has printed the message and its place.
        Err(_) => code(BAD_INPUT),
    }
}

/// Makes every panic, in any thread, print one line that says it is kernelgate's fault and what
/// to do; Rust's default message and backtrace hint are replaced. Installed once.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("error: {}", internal_error(info));
        }));
    });
}

/// A panic as the message every entry point prints: what panicked, where, and that it is a
/// harness error.
pub fn internal_error(info: &std::panic::PanicHookInfo<'_>) -> String {
    let message = panic_message(info.payload());
    let place = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    format!("kernelgate failed inside ({message}{place}): a harness error, not your kernel's; please report it with the command that ran (exit code 2)")
}

/// The text of a panic's payload (`panic!` with a literal or a formatted message).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_a_command_is_exit_code_2() {
        let out = guard(|| panic!("index out of bounds: the len is 0 but the index is 0"));
        // The test binary's other tests keep Rust's own panic message.
        drop(std::panic::take_hook());
        assert_eq!(out, code(BAD_INPUT));
        assert_eq!(guard(|| code(PERFORMANCE)), code(PERFORMANCE));
        let payload: Box<dyn std::any::Any + Send> = Box::new(String::from("formatted 3"));
        assert_eq!(panic_message(payload.as_ref()), "formatted 3");
        let payload: Box<dyn std::any::Any + Send> = Box::new(7u8);
        assert_eq!(panic_message(payload.as_ref()), "a panic without a message");
    }

    /// The README's table lists exactly these codes, with the meaning of each for a run.
    #[test]
    fn the_readme_table_matches() {
        let readme = include_str!("../README.md");
        let table = readme
            .split("### Exit codes")
            .nth(1)
            .expect("the README has an exit-code section");
        let rows: Vec<(u8, &str)> = table
            .lines()
            .skip_while(|l| !l.starts_with("| code"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (cells[1].parse().expect("a numeric code"), cells[2])
            })
            .collect();
        let mut listed: Vec<u8> = rows.iter().map(|(c, _)| *c).collect();
        listed.sort();
        let mut all = ALL.to_vec();
        all.sort();
        assert_eq!(listed, all, "README rows against exit.rs");
        for (c, meaning) in rows {
            let word = match c {
                SUCCESS => "passed",
                PERFORMANCE => "performance",
                BAD_INPUT => "infrastructure",
                CORRECTNESS => "correctness",
                _ => unreachable!(),
            };
            assert!(
                meaning.contains(word),
                "code {c}: `{meaning}` should say {word}"
            );
        }
    }
}
