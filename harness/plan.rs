//! `Planned`: every trial of a run, in list order — per suite, its compile trial, then each
//! case's kernels — with the names libtest lists and selects. Below both `runner` (which
//! executes them) and `paired` (which pairs them with the base's).

use crate::suite::Suite;

/// What one trial is: a suite's compile check, or a kernel on a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Compile every kernel of the suite.
    Compile,
    /// Check and time kernel `kernel` on case `case`.
    Kernel {
        /// Case index.
        case: usize,
        /// Kernel index.
        kernel: usize,
    },
}

/// One trial of the run, in list order.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// `suite::kernel::case`, or `suite::compile`.
    pub name: String,
    /// The suite's index.
    pub suite: usize,
    /// What it does.
    pub kind: Kind,
}

impl Planned {
    /// The case and kernel of a kernel trial.
    pub fn case_kernel(&self) -> Option<(usize, usize)> {
        match self.kind {
            Kind::Kernel { case, kernel } => Some((case, kernel)),
            Kind::Compile => None,
        }
    }
}

/// Every trial, in list order.
pub fn plan(suites: &[Suite]) -> Vec<Planned> {
    let mut out = Vec::new();
    for (s, suite) in suites.iter().enumerate() {
        out.push(Planned {
            name: format!("{}::compile", suite.name),
            suite: s,
            kind: Kind::Compile,
        });
        for case in 0..suite.cases.len() {
            for kernel in (0..suite.kernels.len()).filter(|k| suite.has_trial(case, *k)) {
                out.push(Planned {
                    name: suite.trial_name(case, kernel),
                    suite: s,
                    kind: Kind::Kernel { case, kernel },
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_condition_over_the_sizes_removes_a_variant_from_the_cases_it_holds_for() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/t.toml");
        let text = "[suite]\nname = \"t\"\nsource = \"matmul/matmul.cu\"\nsizes = { n = [16, 64] }\n\
            [[buffer]]\nname = \"a\"\ntype = \"f32\"\nlen = \"n * n\"\ninit = { constant = 1.0 }\n\
            [[buffer]]\nname = \"b\"\ntype = \"f32\"\nlen = \"n * n\"\ninit = { constant = 1.0 }\n\
            [[buffer]]\nname = \"c\"\ntype = \"f32\"\nlen = \"n * n\"\nrole = \"output\"\n\
            [[kernel]]\nname = \"naive\"\nentry = \"matmul_naive\"\nreference = true\n\
            grid = [\"ceil(n / 16)\", \"ceil(n / 16)\"]\nblock = [16, 16]\nargs = [\"a\", \"b\", \"c\", \"n as i32\"]\n\
            [[kernel]]\nname = \"tile\"\nentry = \"matmul_tile<TILE>\"\naxes = { TILE = [8, 16, 32] }\n\
            skip = [\"TILE > n\", \"TILE * TILE * 2 > max_threads_per_sm\"]\n\
            grid = [\"ceil(n / TILE)\", \"ceil(n / TILE)\"]\nblock = [\"TILE\", \"TILE\"]\nargs = [\"a\", \"b\", \"c\", \"n as i32\"]\n";
        let suite = crate::suite::load_text(&path, text).unwrap_or_else(|d| panic!("{d:?}"));
        let names: Vec<String> = crate::plan::plan(std::slice::from_ref(&suite))
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names,
            [
                "t::compile",
                "t::naive::n=16",
                "t::tile[TILE=8]::n=16",
                "t::tile[TILE=16]::n=16",
                "t::naive::n=64",
                "t::tile[TILE=8]::n=64",
                "t::tile[TILE=16]::n=64",
                "t::tile[TILE=32]::n=64",
            ]
        );
        assert_eq!(suite.cases[0].skipped, [3], "TILE=32 > n=16");
        assert!(suite.cases[0].launches[3].is_empty() && !suite.has_trial(0, 3));
    }
}
