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
/// `kernelgate history --check`: a trial's level moved beyond `max_slowdown`.
pub const DRIFT: u8 = PERFORMANCE;
/// `kernelgate lint`: a kernel does not compile.
pub const COMPILE_ERROR: u8 = PERFORMANCE;
/// `kernelgate bisect`: the first regressed commit could not be pinned down (bad did not
/// regress against good, or skipped commits hide which it is).
pub const NOT_FOUND: u8 = PERFORMANCE;

/// Every distinct code, for the README check.
pub const ALL: [u8; 4] = [SUCCESS, PERFORMANCE, BAD_INPUT, CORRECTNESS];

/// `code` as a process exit code.
pub fn code(code: u8) -> std::process::ExitCode {
    std::process::ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

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
