//! `Runner::run`: the run's order — execute every selected trial (one at a time per GPU), judge
//! them together (stored baselines or the paired base), bless when asked, and record one
//! [`TrialRecord`] per trial.

use super::trial::{State, Trial};
use super::{bless, code, identical, judge, paired, record, sass};
use super::{Outcome, Planned, Progress, RunReport, Runner, TICK_SECONDS};
use crate::baseline::{BaselineStore, Fingerprint};
use crate::config::Mode;
use crate::paired::Pairing;
use crate::report::results::{self, Noise, Results, TrialRecord};
use std::sync::Mutex;

/// What executing and judging a run's trials produced.
struct Done {
    /// Every trial of the plan, by plan index, as far as it got.
    trials: Vec<Trial>,
    /// The device the trials ran on, when one was measured.
    device: Option<crate::device::DeviceInfo>,
    /// One line per blessed trial or problem (`KERNELGATE_BLESS`).
    blessed: Vec<String>,
    /// Paired mode: the noise the A/A pairs measured, with its trial's plan index.
    noise: Option<(usize, Noise)>,
    /// Where the time went.
    totals: results::RunTotals,
}

impl Runner<'_> {
    /// Runs the trials of `plan` at the indices in `selected`, judges and (when asked) blesses
    /// them, and returns their records in plan order. In paired mode a trial whose code is
    /// identical at the base is not run (unless `KERNELGATE_TIME_IDENTICAL`).
    pub fn run(&self, plan: &[Planned], selected: &[usize]) -> RunReport {
        let any_kernel = selected.iter().any(|&i| plan[i].case_kernel().is_some());
        let pairing: Option<Vec<Option<Pairing>>> = self.base.map(|b| {
            plan.iter()
                .map(|p| crate::paired::pair(self.suites, b, p))
                .collect()
        });
        let store = (any_kernel && pairing.is_none())
            .then(|| self.store())
            .flatten();
        let mut trials = code::trial_codes(self, plan, selected, pairing.as_deref());
        let mut timed = Vec::new();
        for &i in selected {
            let identical = pairing.is_some() && trials[i].code.identical();
            if identical && !self.config.time_identical {
                trials[i].state = State::Identical;
            } else {
                timed.push(i);
            }
        }
        // Paired mode: the SASS diffs of the kernels that changed are made while the trials
        // run, where a GPU will run them (without one, no trial is compared: no diff is shown).
        let mut changing = pairing.as_deref().map_or(Vec::new(), |p| {
            sass::changed_kernels(self, plan, p, &sass::expected(&timed, p, &trials))
        });
        if !changing.is_empty() && (self.executor.slots() == 0 || self.executor.device().is_none())
        {
            changing.clear();
        }
        let (done, made, waited) = sass::alongside(self, &changing, || {
            self.execute_and_judge(plan, &timed, (store.as_ref(), pairing.as_deref()), trials)
        });
        let Done {
            trials,
            device,
            blessed,
            noise,
            mut totals,
        } = done;
        let trials: Vec<TrialRecord> = plan
            .iter()
            .zip(&trials)
            .filter_map(|(p, t)| record::record(self, p, t))
            .collect();
        let identical = pairing.as_ref().map(|_| {
            identical::summary(self, &trials, noise.map(|(i, n)| (plan[i].name.clone(), n)))
        });
        let (sass, sass_note) = match &pairing {
            Some(pairing) => {
                let (diffs, note, (seconds, now)) =
                    sass::pick(self, (plan, pairing), &trials, made);
                totals.sass_seconds = Some(seconds);
                totals.sass_wait_seconds = waited + now;
                (diffs, note)
            }
            None => (Vec::new(), None),
        };
        RunReport {
            results: Results {
                format: results::FORMAT,
                kernelgate: env!("CARGO_PKG_VERSION").to_string(),
                date: crate::baseline::today(),
                device: device.as_ref().map(Fingerprint::of),
                device_info: device,
                trials,
                totals: Some(totals),
                base: self.base.map(|b| crate::report::results::BaseRevision {
                    rev: b.rev.clone(),
                    commit: b.commit.clone(),
                }),
                gone: self
                    .base
                    .map(|b| crate::paired::gone(self.suites, b))
                    .unwrap_or_default(),
                identical,
                sass,
                sass_note,
                undecided: Vec::new(),
                pool: Vec::new(),
                provenance: Default::default(),
            },
            blessed,
        }
    }

    /// Executes the trials at `timed`, judges them (against the stored baselines in `store`,
    /// or the base each is paired with), blesses them when asked, and ends the workers.
    fn execute_and_judge(
        &self,
        plan: &[Planned],
        timed: &[usize],
        (store, pairing): (Option<&BaselineStore>, Option<&[Option<Pairing>]>),
        mut trials: Vec<Trial>,
    ) -> Done {
        for (i, outcome) in self
            .execute_all(plan, timed, store, pairing)
            .into_iter()
            .enumerate()
        {
            if let Some(outcome) = outcome {
                trials[i] = Trial::ran(std::mem::take(&mut trials[i].code), outcome);
            }
        }
        let any_measured = trials.iter().any(|t| t.measured().is_some());
        let device = any_measured.then(|| self.executor.device()).flatten();
        let mut blessed = Vec::new();
        // Judging's own time: its wall time less the trials it re-measured or read counters of.
        let judging = std::time::Instant::now();
        let executed = |t: &results::RunTotals| t.trials_seconds + t.counter_seconds;
        let before = executed(&self.executor.totals());
        let mut noise = None;
        if let (true, Some(pairing)) = (device.is_some(), pairing) {
            noise = paired::judge_paired(self, plan, &mut trials, pairing);
            self.count(plan, &mut trials, Some(pairing));
        } else if let (true, Some(store)) = (device.is_some(), store) {
            judge::judge(self, plan, &mut trials, store);
            self.count(plan, &mut trials, None);
            super::attribute::attribute_all(&mut trials);
            if self.config.mode == Mode::Bless {
                blessed = bless::bless(self, plan, &trials, store);
            }
        }
        let mut totals = self.executor.totals();
        totals.judge_seconds =
            (judging.elapsed().as_secs_f64() - (executed(&totals) - before)).max(0.0);
        self.executor.stop();
        Done {
            trials,
            device,
            blessed,
            noise,
            totals,
        }
    }

    /// The stored baselines of the run's suites for the device trials run on, when it is known.
    pub(super) fn store(&self) -> Option<BaselineStore> {
        self.executor.device().map(|info| {
            BaselineStore::open(
                &self.config.baselines,
                &Fingerprint::of(&info),
                self.suites.iter().map(|s| s.name.as_str()),
            )
        })
    }

    /// Runs the selected trials: in order on one GPU; with several, each slot takes the next
    /// trial when its GPU is free, so no GPU ever runs two at once.
    fn execute_all(
        &self,
        plan: &[Planned],
        selected: &[usize],
        store: Option<&BaselineStore>,
        pairing: Option<&[Option<Pairing>]>,
    ) -> Vec<Option<Outcome>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let slots: Vec<Mutex<Option<Outcome>>> = plan.iter().map(|_| Mutex::new(None)).collect();
        let items = self.items(plan, selected, store, pairing.is_some());
        let next = AtomicUsize::new(0);
        let started = AtomicUsize::new(0);
        let workers = self.executor.slots().max(1);
        // What each slot is running and since when, for the log's ticks.
        let running: Vec<Mutex<Running>> = (0..workers).map(|_| Mutex::new(None)).collect();
        let finished = std::sync::atomic::AtomicBool::new(false);
        let work = |slot: usize| loop {
            // Asked to stop: no trial starts, and the one a signal cut short is not kept.
            if self.stop.requested().is_some() {
                break;
            }
            let Some(item) = items.get(next.fetch_add(1, Ordering::SeqCst)) else {
                break;
            };
            let n = started.fetch_add(item.len(), Ordering::SeqCst);
            let trial = &plan[item[0]];
            let on = if workers > 1 {
                format!(" on GPU slot {slot}")
            } else {
                String::new()
            };
            let names = item
                .iter()
                .map(|&i| plan[i].name.as_str())
                .collect::<Vec<_>>();
            if self.progress == Progress::Terminal {
                let names = names.join(", ");
                self.progress(&format!("[{}/{}] {names}{on}", n + 1, selected.len()));
            }
            *running[slot].lock().unwrap_or_else(|e| e.into_inner()) = in_flight(&trial.name, item);
            let pair = pairing.and_then(|p| p[item[0]].as_ref());
            let mut spec = self.spec(trial, pair, 1, regime_of(self, store, trial));
            spec.with = item[1..]
                .iter()
                .filter_map(|&i| plan[i].case_kernel())
                .map(|c| c.1)
                .collect();
            let outcomes = self.executor.execute_group(slot, &spec);
            *running[slot].lock().unwrap_or_else(|e| e.into_inner()) = None;
            if self.stop.requested().is_some() {
                break;
            }
            for (k, (&i, outcome)) in item.iter().zip(outcomes).enumerate() {
                if let (Progress::Log, Some(line)) = (self.progress, measured_line(&outcome)) {
                    let at = n + k + 1;
                    self.progress(&format!(
                        "[{at}/{}] {}{on}: {line}",
                        selected.len(),
                        names[k]
                    ));
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            }
        };
        std::thread::scope(|scope| {
            if self.progress == Progress::Log {
                scope.spawn(|| self.tick(&running, &started, selected.len(), &finished));
            }
            let handles: Vec<_> = (0..workers)
                .map(|slot| {
                    let work = &work;
                    scope.spawn(move || work(slot))
                })
                .collect();
            for h in handles {
                let _ = h.join();
            }
            finished.store(true, Ordering::SeqCst);
        });
        slots
            .into_iter()
            .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }

    /// The selected trials as work items, in order: the variants of one kernel
    /// (`tile[TILE=16]`, …, declared by its axes) on one case go together, up to [`GROUP`] —
    /// timed in the same rounds against one set of reference samples — where trials are judged
    /// against stored baselines (not paired) and their baselines' regimes agree. Every other
    /// trial alone.
    fn items(
        &self,
        plan: &[Planned],
        selected: &[usize],
        store: Option<&BaselineStore>,
        paired: bool,
    ) -> Vec<Vec<usize>> {
        let mut items: Vec<Vec<usize>> = Vec::new();
        let mut open: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
        for &i in selected {
            let key = plan[i]
                .case_kernel()
                .filter(|_| !paired)
                .and_then(|(case, k)| {
                    let suite = &self.suites[plan[i].suite];
                    let name = &suite.kernels[k].name;
                    let at = name.find('[').filter(|_| k != suite.reference)?;
                    let regime = regime_of(self, store, &plan[i]);
                    Some((plan[i].suite, case, name[..at].to_string(), regime))
                });
            match key.as_ref().and_then(|k| open.get(k).copied()) {
                Some(j) if items[j].len() < GROUP => items[j].push(i),
                _ => {
                    if let Some(key) = key {
                        open.insert(key, items.len());
                    }
                    items.push(vec![i]);
                }
            }
        }
        items
    }

    /// The log's ticks until `finished`: every [`TICK_SECONDS`], how many of `total` trials are
    /// done (`started` of them have started) and the ones still `running`, with their time so
    /// far.
    fn tick(
        &self,
        running: &[Mutex<Running>],
        started: &std::sync::atomic::AtomicUsize,
        total: usize,
        finished: &std::sync::atomic::AtomicBool,
    ) {
        use std::sync::atomic::Ordering;
        let mut last = std::time::Instant::now();
        while !finished.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(200));
            if last.elapsed().as_secs() < TICK_SECONDS {
                continue;
            }
            last = std::time::Instant::now();
            let now: Vec<(String, usize, std::time::Instant)> = running
                .iter()
                .filter_map(|r| r.lock().unwrap_or_else(|e| e.into_inner()).clone())
                .collect();
            let in_flight: usize = now.iter().map(|(_, trials, _)| trials).sum();
            let done = started
                .load(Ordering::SeqCst)
                .min(total)
                .saturating_sub(in_flight);
            let now: Vec<String> = now
                .iter()
                .map(|(what, _, since)| format!("{what} ({} s)", since.elapsed().as_secs()))
                .collect();
            self.progress(&format!(
                "{done} of {total} trial(s) done; running {}",
                crate::suggest::joined_or_none(&now, ", ")
            ));
        }
    }
}

/// Variants timed in one group of rounds, at most: each round holds a sample of each.
pub const GROUP: usize = 16;

/// The regime `trial`'s stored baseline was measured in, which it is timed in again.
fn regime_of(
    runner: &Runner,
    store: Option<&BaselineStore>,
    trial: &Planned,
) -> Option<crate::measure::Regime> {
    let suite = &runner.suites[trial.suite].name;
    store
        .and_then(|s| s.entry(suite, &trial.name))
        .map(|e| e.regime)
}

/// What a GPU slot is running (its trials), and since when.
type Running = Option<(String, usize, std::time::Instant)>;

/// A slot's work item, led by trial `lead`, from now on.
fn in_flight(lead: &str, item: &[usize]) -> Running {
    let what = match item.len() {
        1 => lead.to_string(),
        n => format!("{lead} and {} more variant(s)", n - 1),
    };
    Some((what, item.len(), std::time::Instant::now()))
}

/// A measured trial as the log says it as soon as it is measured: its median with the interval
/// and the speedup over what it was timed against (its verdict comes at the end); a failure's
/// first line; `None` for compile and ignored trials.
fn measured_line(outcome: &Outcome) -> Option<String> {
    use crate::report::duration;
    match outcome {
        Outcome::Measured(m) => {
            let time = m.samples.kernel_summary()?;
            let speedup = m
                .samples
                .speedup()
                .map(|s| format!(", {:.2}× [{:.2}, {:.2}]", s.median, s.low, s.high))
                .unwrap_or_default();
            Some(format!(
                "{}{speedup}, {} samples (verdict after the run)",
                crate::report::interval(&time, duration),
                m.samples.kernel.len()
            ))
        }
        Outcome::Failed(f) => Some(format!(
            "FAILED: {}",
            f.to_string().lines().next().unwrap_or_default()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Footprint, Samples};

    /// Off a terminal the log says each trial as soon as it is measured: its median with the
    /// interval and the sample count (its verdict comes after the run); a failure's first line;
    /// nothing for an ignored trial.
    #[test]
    fn the_log_says_each_trial_as_it_is_measured() {
        let kernel: Vec<f64> = (0..32).map(|i| 10e-6 * (1.0 + 0.001 * i as f64)).collect();
        let measured = Outcome::Measured(Box::new(super::super::executor::Measured {
            ordinal: 0,
            samples: Samples {
                launch_floor: 4e-6,
                kernel,
                reference: vec![20e-6; 32],
                wall_seconds: 0.01,
                ..Samples::none()
            },
            footprint: Footprint {
                pool_peak: 1 << 20,
                ..Default::default()
            },
            base_footprint: None,
            seconds: 0.5,
            counters: None,
        }));
        let line = measured_line(&measured).unwrap();
        assert!(
            line.starts_with("10.") && line.ends_with("32 samples (verdict after the run)"),
            "{line}"
        );
        let failed = Outcome::Failed(crate::failure::TrialFailure::Timeout { seconds: 5 });
        assert!(measured_line(&failed)
            .unwrap()
            .starts_with("FAILED: timed out after 5 s"));
        assert_eq!(measured_line(&Outcome::Ignored("no GPU".into())), None);
    }
}
