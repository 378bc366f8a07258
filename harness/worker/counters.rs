//! `Profiling`: a worker's hardware-counter state — the CUPTI profiler session, made and
//! enabled on the first counters-only request (or why it could not be) and kept for the rest
//! of the process — and the collection of a batch's counters: each trial's kernel (and in
//! paired mode the base kernel) on each allocation, profiled in one configuration (one range
//! each, every replay pass replaying them all), each launch on input copy 0 put back into its checked
//! starting state, with L2 flushed and left clean (`Timer::clean_l2`) outside the range. A worker that has profiled
//! times nothing more: the pool restarts it before a timed request (`Worker::profiled`).

use super::op::Op;
use crate::device::counters::{CounterError, Profiled, Profiler, Session};
use crate::device::{DeviceError, Gpu};
use crate::measure::counters::{from_metrics, Counter, TrialCounters};
use crate::measure::{Timed, Timer};
use std::cell::RefCell;

/// The worker's profiler, made once.
#[derive(Default)]
pub(super) struct Profiling {
    session: Option<Result<Session, CounterError>>,
}

/// One operation as CUPTI profiles it.
struct Pass<'t, 'o> {
    gpu: &'t Gpu,
    timer: &'t RefCell<&'t mut Timer>,
    op: &'t mut Op<'o>,
}

impl Profiled for Pass<'_, '_> {
    fn prepare(&mut self) -> Result<(), DeviceError> {
        self.op.prepare(self.gpu, Some(0))?;
        self.timer.borrow_mut().clean_l2(self.gpu, true)
    }
    fn launch(&mut self) -> Result<(), DeviceError> {
        self.op.run(self.gpu, 0)?;
        self.gpu.synchronize()
    }
}

impl Profiling {
    /// The counters of each pair's kernel and what it is timed against (`against`, where
    /// given), or why they could not be read. Every pair is profiled in one CUPTI
    /// configuration (one range per operation, each pass replaying them all): a configuration
    /// costs ~24 ms to start and stop (seen on an H100), so a batch of trials shares one
    /// (`batch.rs`; issue 22: `KERNELGATE_COUNTERS=all` was 6 s for 60 trials with one per
    /// allocation). `ordinal` is the device's, for CUPTI's chip name.
    pub fn collect<'o>(
        &mut self,
        (gpu, ordinal): (&Gpu, i32),
        timer: &mut Timer,
        pairs: &mut [(Op<'o>, Option<Op<'o>>)],
    ) -> Result<Vec<TrialCounters>, CounterError> {
        let session = self.session.get_or_insert_with(|| {
            crate::spent::timed("counter_setup", || {
                Profiler::new(ordinal, &Counter::metrics()).and_then(Profiler::enable)
            })
        });
        let session = session.as_mut().map_err(|e| e.clone())?;
        let timer = RefCell::new(timer);
        let mut passes: Vec<Pass> = (pairs.iter_mut())
            .flat_map(|(kernel, against)| std::iter::once(kernel).chain(against.as_mut()))
            .map(|op| Pass {
                gpu,
                timer: &timer,
                op,
            })
            .collect();
        let mut ops: Vec<&mut dyn Profiled> =
            passes.iter_mut().map(|p| p as &mut dyn Profiled).collect();
        let values = session.profile_ops(&mut ops)?;
        let mut values = values.iter().map(|v| from_metrics(v));
        Ok(pairs
            .iter()
            .map(|(_, against)| TrialCounters {
                kernel: values.next().unwrap_or_default(),
                against: against.as_ref().and_then(|_| values.next()),
            })
            .collect())
    }
}
