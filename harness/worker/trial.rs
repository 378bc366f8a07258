//! `Trial`: one kernel trial in the worker, phase by phase — the launch limits, the footprint,
//! correctness on fresh inputs (keeping the reference's outputs), the timing plan and samples,
//! then what was timed checked against the reference and for plausibility.

use super::footprint::footprint_of;
use super::loaded::Loaded;
use super::op::{timed_pair, Op, Which};
use super::protocol::{BaseKernel, TrialRequest};
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::check::kernels::Kernels;
use crate::check::plausible::plausible;
use crate::check::reference::{Outputs, References};
use crate::check::verify;
use crate::device::{DeviceBuffer, Gpu};
use crate::failure::TrialFailure;
use crate::measure::{Footprint, Plan, Regime, Sampled, Samples, Timed, Timer};
use crate::suite::Suite;
use std::time::Instant;

/// What one trial works with: the device, the suite and request, the loaded kernels.
pub(super) struct Trial<'a> {
    /// The device.
    pub gpu: &'a Gpu,
    /// The trial's suite.
    pub suite: &'a Suite,
    /// Which case and kernel, with which seed, regime and effort.
    pub req: &'a TrialRequest,
    /// The suite's loaded functions.
    pub loaded: &'a Loaded,
    /// Paired: the base revision's kernel, its suite and its loaded functions.
    pub paired: Option<(BaseKernel, &'a Suite, &'a Loaded)>,
    /// The harness's check kernels.
    pub kernels: &'a Kernels,
}

impl Trial<'_> {
    /// Every launch of the kernel, its reference and its base asks for no more dynamic shared
    /// memory than the device allows.
    pub fn shared_memory_fits(&self) -> Result<(), Failure> {
        let (req, suite) = (self.req, self.suite);
        let limit = self.gpu.max_shared_optin()? as u32;
        let mut checked: Vec<(&Suite, usize, usize)> = vec![(suite, req.case, suite.reference)];
        checked.extend(req.kernels().map(|k| (suite, req.case, k)));
        checked.extend(self.paired.map(|(b, bs, _)| (bs, b.case, b.kernel)));
        for (s, c, ki) in checked {
            if let Some(l) = s.cases[c].launches[ki].iter().find(|l| l.shared > limit) {
                return Err(Failure::Trial(TrialFailure::ResourceLimit(format!(
                    "kernel `{}` asks for {} bytes of dynamic shared memory; this device allows {limit}",
                    s.kernels[ki].name, l.shared
                ))));
            }
        }
        Ok(())
    }

    /// The footprint of each kernel (with its FP64 use) and, paired, of the base kernel, each
    /// from one run on `bufs`.
    pub fn footprints(
        &self,
        bufs: &[DeviceBuffer],
    ) -> Result<(Vec<Footprint>, Option<Footprint>), Failure> {
        let (suite, case, loaded) = (self.suite, self.req.case, self.loaded);
        let mut footprints = Vec::new();
        for k in self.req.kernels() {
            let mut f = footprint_of(self.gpu, suite, case, k, &loaded.functions[k], bufs)?;
            if loaded.fp64[k].count > 0 {
                f.fp64 = Some(Box::new(loaded.fp64[k].clone()));
            }
            footprints.push(f);
        }
        let base = self.paired.map(|(b, bs, bl)| {
            let functions = &bl.functions[b.kernel];
            footprint_of(self.gpu, bs, b.case, b.kernel, functions, bufs)
        });
        Ok((footprints, base.transpose()?))
    }

    /// Checks the kernel against the reference (unless the request says not to: a re-measure)
    /// and returns the reference's outputs for each of `sets`, which the timed outputs must
    /// match.
    pub fn check(
        &self,
        references: &mut References,
        bufs: &[DeviceBuffer],
        sets: &[InputSet],
    ) -> Result<Vec<Outputs>, Failure> {
        let (req, funcs) = (self.req, &self.loaded.functions);
        if req.work == super::protocol::Work::CheckAndTime {
            for k in self.req.kernels() {
                let first = verify::FirstInputs {
                    seed: req.seed,
                    sets,
                    kernels: self.kernels,
                };
                verify::verify(
                    self.gpu, self.suite, req.case, k, funcs, bufs, first, references,
                )?;
            }
        }
        sets.iter()
            .map(|set| references.outputs(self.gpu, self.suite, (set, self.kernels), funcs, bufs))
            .collect()
    }

    /// What the kernel is timed against: its suite's reference, or in paired mode the base
    /// revision's kernel (`None` when it is the reference itself).
    fn against(&self) -> Option<Which<'_>> {
        let (suite, req) = (self.suite, self.req);
        match self.paired {
            Some((b, bs, bl)) => Some((bs, b.case, b.kernel, &bl.functions)),
            None => (req.kernel != suite.reference).then_some((
                suite,
                req.case,
                suite.reference,
                &self.loaded.functions,
            )),
        }
    }

    /// Kernel `k` of the trial's case and what it is timed against, over `copies`.
    pub fn op_of<'c>(&'c self, k: usize, copies: &'c Copies) -> (Op<'c>, Option<Op<'c>>) {
        let under_test: Which = (self.suite, self.req.case, k, &self.loaded.functions);
        timed_pair(under_test, self.against(), copies, self.kernels)
    }

    /// Every kernel the trial times and what they are timed against, over `copies`.
    fn group_ops<'c>(&'c self, copies: &'c Copies) -> (Vec<Op<'c>>, Option<Op<'c>>) {
        let (lead, against) = self.op_of(self.req.kernel, copies);
        let with = self.req.with.iter().map(|&k| self.op_of(k, copies).0);
        (std::iter::once(lead).chain(with).collect(), against)
    }

    /// The timing settings of one of the request's allocations (units).
    /// A group's rounds hold a sample of every kernel: its time (not its samples) is each
    /// trial's times the kernels, so each gets the samples it would alone.
    pub fn bench(&self) -> crate::suite::Bench {
        let mut bench = self.suite.bench.with_effort(self.req.effort);
        let kernels = 1 + self.req.with.len() as u64;
        bench.min_time_ms *= kernels;
        bench.max_time_ms *= kernels;
        bench.per_unit(self.req.units)
    }

    /// Plans the timing (warm-up, regime) on `copies`, unless `planned` (an earlier unit's
    /// plans, kept so every unit is timed alike), grows `copies` to what the plans need, and
    /// samples every kernel in the same rounds; the time of each step goes to the process's
    /// [`crate::spent`] registry.
    pub fn time(
        &self,
        timer: &mut Timer,
        copies: &mut Copies,
        planned: Option<Vec<Plan>>,
    ) -> Result<(Sampled, Vec<Plan>), Failure> {
        let at = Instant::now();
        let plans = planned.map_or_else(|| self.plan(timer, copies), Ok)?;
        crate::spent::since("warmup", at);
        // Cold: the copies made for the input sets (one, when the case does not fit twice).
        let wanted = match plans[0].regime {
            Regime::Graph => plans.iter().map(Plan::copies).max().unwrap_or(1),
            _ => copies.len(),
        };
        let at = Instant::now();
        copies.grow(self.gpu, self.kernels, wanted)?;
        crate::spent::since("copies", at);
        let (mut kernels, mut against) = self.group_ops(copies);
        let mut kernels: Vec<&mut dyn Timed> = kernels.iter_mut().map(|o| o as _).collect();
        let against = against.as_mut().map(|o| o as &mut dyn Timed);
        let bench = self.bench();
        timer.set_profiling(self.gpu, self.req.profile)?;
        let n = copies.len();
        let sampled = timer.sample(self.gpu, &bench, &plans, n, &mut kernels, against)?;
        Ok((sampled, plans))
    }

    /// Kernel `i` of the group (its index in [`Trial::kernels`]) writes last after `sampled`
    /// (`Timer::write_last`), for its outputs to be checked.
    pub fn write_last(
        &self,
        timer: &mut Timer,
        copies: &Copies,
        (sampled, i): (&Sampled, usize),
    ) -> Result<(), Failure> {
        let k = self.req.kernels().nth(i).unwrap_or(self.req.kernel);
        let (mut op, _) = self.op_of(k, copies);
        let bench = self.bench();
        Ok(timer.write_last(self.gpu, &bench, (sampled, i), &mut op, copies.len())?)
    }

    /// Warms up and chooses the regime and batches (`Timer::plan`); paired, one batch for
    /// both.
    fn plan(&self, timer: &mut Timer, copies: &Copies) -> Result<Vec<Plan>, Failure> {
        let bench = self.bench();
        let mut plans = {
            let (mut kernels, mut against) = self.group_ops(copies);
            let mut kernels: Vec<&mut dyn Timed> = kernels.iter_mut().map(|o| o as _).collect();
            let against = against.as_mut().map(|o| o as &mut dyn Timed);
            timer.plan(self.gpu, &bench, &mut kernels, against, self.req.regime)?
        };
        // Paired: base and candidate replayed in graphs of one size. Seen on an H200, paired
        // A/A with batches chosen per side from each pilot (16 and 32 launches): the same
        // ~4 µs kernel read 3.8–4.3% slower on one side, every run (a graph's launch cost is
        // spread over its launches).
        if self.paired.is_some() {
            for p in &mut plans {
                let batch = p.kernel_batch.max(p.reference_batch);
                (p.kernel_batch, p.reference_batch) = (batch, batch);
            }
        }
        Ok(plans)
    }

    /// Times the kernel on the contents it was timed on, then on fresh ones (`measure::memo`),
    /// each a cold single launch on input copy 0: a kernel faster on every seen launch than on
    /// every fresh one keeps results keyed on its inputs, and fails. Nothing to do when no
    /// input draws from the seed (every set holds the same contents). `timed`: the kernel's
    /// samples of the allocation just timed, when they were taken as these launches are (the
    /// cold regime: each a single launch, prepared and flushed, on the copies of the input sets
    /// timing used) — then they are the seen launches, and none is taken again (issue 22: six
    /// more launches of a 7.4 ms kernel).
    pub fn fresh_inputs(
        &self,
        timer: &mut Timer,
        (copies, k): (&Copies, usize),
        timed: Option<&[f64]>,
    ) -> Result<(), Failure> {
        use crate::measure::memo::{remembers, PROBES};
        let (suite, req, gpu) = (self.suite, self.req, self.gpu);
        let bench = suite.bench.with_effort(1);
        let under_test: Which = (suite, req.case, k, &self.loaded.functions);
        let (mut kernel, _) = timed_pair(under_test, None, copies, self.kernels);
        // Seen first: the contents timing just used, which any cache that served it holds.
        // Then fresh ones, each new: whatever a cache keeps, it cannot have these.
        let seen = match timed {
            // The last ones, as many as would be probed.
            Some(t) if t.len() >= PROBES => t[t.len() - PROBES..].to_vec(),
            // Queued together, waited for once.
            _ => timer.samples_on(gpu, &bench, &mut kernel, (0, PROBES))?,
        };
        let slowest_seen = seen.iter().copied().fold(f64::MIN, f64::max);
        let mut fresh = Vec::new();
        for j in 0..PROBES as u64 {
            // Seeds no check and no timing used: the check's are `seed..seed + trials`.
            let unseen = req.seed.wrapping_add(0x5EED_0000 + j);
            if !copies.write_seeded(gpu, self.kernels, suite, 0, Some(unseen))? {
                return Ok(());
            }
            // One single launch on input copy 0, prepared and flushed as a cold sample is.
            let t = timer.samples_on(gpu, &bench, &mut kernel, (0, 1))?[0];
            fresh.push(t);
            // A fresh launch no slower than a seen one decides it: `remembers` needs every
            // fresh launch slower than every seen one. (An honest kernel stops here 6 times in
            // 7 after one fresh launch: issue 22, the probe was most of a slow trial's checks.)
            if t <= slowest_seen {
                break;
            }
        }
        copies.write_seeded(gpu, self.kernels, suite, 0, None)?;
        if !remembers(&seen, &fresh) {
            return Ok(());
        }
        let median = |v: &[f64]| crate::stats::Summary::of(v).map_or(0.0, |s| s.median);
        Err(Failure::Wrong(format!(
            "kernel `{}` is faster on inputs it has seen: {} per launch on the contents it was timed on, {} on fresh contents ({PROBES} launches each, every fresh one slower): it keeps results keyed on its inputs, so its timed launches are not its cost (docs/timing-integrity.md §3)",
            suite.kernels[k].name,
            crate::report::duration(median(&seen)),
            crate::report::duration(median(&fresh)),
        )))
    }

    /// Checks what the timed launches left (the kernel wrote last, see `Timer::sample`): every
    /// copy it ran on holds the reference's answer for that copy's input set (`expected`, from
    /// `seeds`); and the kernel's median is physically plausible for the bytes and flops the
    /// case declares.
    pub fn check_timed(
        &self,
        (copies, k): (&Copies, usize),
        plan: Plan,
        samples: &Samples,
        (expected, seeds): (&[Outputs], &[u64]),
    ) -> Result<(), Failure> {
        let (suite, req) = (self.suite, self.req);
        let used = plan.kernel_copies().min(copies.len());
        let at = (req.case, k);
        copies.check(self.gpu, self.kernels, suite, at, used, expected, seeds)?;
        let Some(median) = samples.kernel_summary().map(|s| s.median) else {
            return Ok(());
        };
        // Only where L2 cannot hold what a sample moves: the launches of one sample on
        // their own copies, at least twice the L2, after a flush.
        let case = &suite.cases[req.case];
        let l2 = self.gpu.info.l2_bytes.max(0) as f64;
        let launches = match plan.regime {
            Regime::Graph => plan.kernel_batch,
            _ => 1,
        };
        let moved = case.bytes.unwrap_or(0.0).min(copies.bytes_each() as f64);
        let bench = suite.bench.with_effort(req.effort);
        let from_dram =
            bench.l2_flush != crate::suite::Flush::Off && launches as f64 * moved >= 2.0 * l2;
        let work = (case.flops, suite.bench.flops_type);
        plausible(case.bytes, work, median, &self.gpu.info, from_dram)
            .map_err(|m| Failure::Wrong(format!("kernel `{}`: {m}", suite.kernels[k].name)))
    }
}
