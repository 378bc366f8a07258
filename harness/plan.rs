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
            for kernel in 0..suite.kernels.len() {
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
