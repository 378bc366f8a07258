//! `Op`: a kernel of a case (all its launches) as the timing loop's [`Timed`] operation over
//! the timing copies, each sample starting from the checked state.

use crate::check::copies::Copies;
use crate::check::kernels::Kernels;
use crate::check::run::run_op;
use crate::device::{DeviceError, Function, Gpu};
use crate::measure::Timed;
use crate::suite::Suite;

/// A kernel (all its launches) as a timed operation over the timing copies, each sample
/// starting from the checked state (see `check::copies`).
pub(super) struct Op<'a> {
    suite: &'a Suite,
    case: usize,
    kernel: usize,
    funcs: &'a [Function],
    copies: &'a Copies,
    kernels: &'a Kernels,
}

/// A kernel, one of `functions`, on `case` of `suite`.
pub(super) type Which<'a> = (&'a Suite, usize, usize, &'a [Vec<Function>]);

/// The kernel under test and what it is timed against (when anything), over `copies`.
pub(super) fn timed_pair<'a>(
    kernel: Which<'a>,
    against: Option<Which<'a>>,
    copies: &'a Copies,
    kernels: &'a Kernels,
) -> (Op<'a>, Option<Op<'a>>) {
    let op = |(suite, case, kernel, funcs): Which<'a>| Op {
        suite,
        case,
        kernel,
        funcs: &funcs[kernel],
        copies,
        kernels,
    };
    (op(kernel), against.map(op))
}

impl Timed for Op<'_> {
    fn prepare(&mut self, gpu: &Gpu, copy: Option<usize>) -> Result<(), DeviceError> {
        self.copies.prepare(gpu, self.kernels, copy)
    }
    fn run(&mut self, gpu: &Gpu, copy: usize) -> Result<(), DeviceError> {
        let bufs = self.copies.copy(copy);
        run_op(gpu, self.suite, self.case, self.kernel, self.funcs, bufs)
    }
}
