//! `Executor`: the runner's only way to GPU work (and to compiling). The worker pool
//! (`worker::pool::WorkerPool`) implements it over GPU worker processes; tests implement it with
//! scripted outcomes, so scheduling, re-measuring, blessing and failure handling are tested on
//! any machine.

use crate::code::SuiteCode;
use crate::device::DeviceInfo;
use crate::failure::TrialFailure;
use crate::measure::{Footprint, Regime, Samples};
use crate::plan::Kind;
use crate::report::results::{Compiled, RunTotals};
use crate::worker::protocol::SuiteRef;

/// One trial to execute.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialSpec {
    /// The suite's index in the run.
    pub suite: usize,
    /// What to do.
    pub kind: Kind,
    /// Seed of the first input set.
    pub seed: u64,
    /// The regime to time in (the baseline's), or `None` to choose by the launch floor.
    pub regime: Option<Regime>,
    /// Paired mode: the base revision's kernel to time against (its suite numbered after the
    /// run's own suites).
    pub base: Option<crate::worker::protocol::BaseKernel>,
    /// A counters-only request: read the hardware counters of the kernel and its counterpart
    /// on fresh allocations instead of checking and timing it (`worker::counters`). The
    /// runner sends these after all timing: a worker that has profiled times some kernels
    /// slower.
    pub counters: bool,
    /// Allocations the samples are split over (fresh buffers and copies each).
    pub units: u32,
    /// Run it in a fresh worker process (the slot's worker is restarted first): a time change
    /// is attributed to the machine only after it persists in a new process.
    pub fresh_worker: bool,
    /// 1 normally; [`crate::gate::REMEASURE_EFFORT`] when re-measuring a trial already checked
    /// (then correctness is not checked again).
    pub effort: u32,
    /// Other kernels of the case (variants of this one) timed in the same rounds, against one
    /// set of reference samples ([`Executor::execute_group`]).
    pub with: Vec<usize>,
}

impl TrialSpec {
    /// The same spec for kernel `kernel` of its case, alone.
    pub fn alone(&self, kernel: usize) -> TrialSpec {
        let kind = match self.kind {
            Kind::Kernel { case, .. } => Kind::Kernel { case, kernel },
            Kind::Compile => Kind::Compile,
        };
        TrialSpec {
            kind,
            with: Vec::new(),
            ..self.clone()
        }
    }

    /// Its kernels: its own, then `with`.
    pub fn kernels(&self) -> Vec<usize> {
        let own = match self.kind {
            Kind::Kernel { kernel, .. } => Some(kernel),
            Kind::Compile => None,
        };
        own.into_iter().chain(self.with.iter().copied()).collect()
    }
}

/// A trial that passed correctness and was timed.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The GPU it ran on.
    pub ordinal: i32,
    /// The timing samples.
    pub samples: Samples,
    /// Memory and resources of the kernel under test.
    pub footprint: Footprint,
    /// Paired mode: the base kernel's.
    pub base_footprint: Option<Footprint>,
    /// Seconds the trial took in the worker: setup, correctness and sampling.
    pub seconds: f64,
    /// The hardware counters, when the spec asked for them.
    pub counters: Option<crate::measure::counters::CounterReport>,
}

/// What executing a trial produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A compile trial passed.
    Compiled(Compiled),
    /// Not run, and why (no GPU, no NVRTC).
    Ignored(String),
    /// Failed, typed where it happened.
    Failed(TrialFailure),
    /// Checked and timed.
    Measured(Box<Measured>),
}

/// Runs trials. `slots` GPUs may work at once; the runner never gives one slot two trials at
/// the same time.
pub trait Executor: Sync {
    /// How many trials may run at once (one per GPU).
    fn slots(&self) -> usize;
    /// The device trials run on, when there is a usable one (opened on first use).
    fn device(&self) -> Option<DeviceInfo>;
    /// Executes one trial on `slot`.
    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome;
    /// Executes `spec`'s kernel and its `with` together: one outcome per kernel, in order. By
    /// default each alone.
    fn execute_group(&self, slot: usize, spec: &TrialSpec) -> Vec<Outcome> {
        if spec.with.is_empty() {
            return vec![self.execute(slot, spec)];
        }
        spec.kernels()
            .into_iter()
            .map(|k| self.execute(slot, &spec.alone(k)))
            .collect()
    }
    /// Executes counters-only trials on `slot` together (one profiling configuration where
    /// the device allows): one outcome per spec, in order. By default one at a time.
    fn execute_counters(&self, slot: usize, specs: &[TrialSpec]) -> Vec<Outcome> {
        specs.iter().map(|s| self.execute(slot, s)).collect()
    }
    /// Ends every worker; called once all trials, re-measures included, have run. By default
    /// nothing (an executor without processes).
    fn stop(&self) {}
    /// Where the time went, for the run's summary; by default nothing measured.
    fn totals(&self) -> RunTotals {
        RunTotals::default()
    }
    /// The code of suite `suite` (the run's own, or a paired run's base's) for the
    /// architecture its trials run on, compiled (through the compile cache) and identified in
    /// this process — no GPU needed; `None` where it cannot be had (no NVRTC, a suite that does
    /// not compile: its compile trial says why).
    fn code(&self, _suite: SuiteRef) -> Option<std::sync::Arc<SuiteCode>> {
        None
    }
}
