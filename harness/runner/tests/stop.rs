//! A run asked to stop (SIGTERM, SIGINT) through the runner: the trial in flight and those not
//! started get no record; the ones that finished keep theirs.

use super::*;

/// An executor that asks the run to stop while its `at`-th kernel trial runs.
struct Stopping<'a> {
    inner: Scripted,
    stop: &'a crate::stop::Stop,
    at: usize,
    seen: Mutex<usize>,
}

impl Executor for Stopping<'_> {
    fn slots(&self) -> usize {
        1
    }
    fn device(&self) -> Option<DeviceInfo> {
        self.inner.device()
    }
    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        if matches!(spec.kind, Kind::Kernel { .. }) {
            let mut seen = self.seen.lock().unwrap();
            *seen += 1;
            if *seen == self.at {
                self.stop.request(15);
                // What the worker client answers once it has stopped its worker.
                return Outcome::Failed(TrialFailure::Harness("stopped by SIGTERM".into()));
            }
        }
        self.inner.execute(slot, spec)
    }
}

#[test]
fn a_stopped_run_keeps_what_finished_and_starts_nothing_more() {
    let dir = scratch("stop");
    let suites = vec![suite(&dir)];
    let config = config(&dir, Mode::Gate);
    bless_baselines(&config.baselines);
    let plan = plan(&suites);
    let fast = measured(10e-6, 32, 0.01, 1000);
    let script = vec![("t::naive", 1, fast.clone()), ("t::fast", 1, fast)];
    let stop = crate::stop::Stop::new();
    let executor = Stopping {
        inner: Scripted::new(&plan, script),
        stop: &stop,
        at: 2,
        seen: Mutex::new(0),
    };
    let runner = Runner {
        config: &config,
        suites: &suites,
        executor: &executor,
        progress: crate::runner::Progress::Off,
        base: None,
        stop: &stop,
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    let report = runner.run(&plan, &selected);
    let names: Vec<&str> = report
        .results
        .trials
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["t::compile", "t::naive"],
        "the trial cut short has no record"
    );
    assert_eq!(stop.requested(), Some("SIGTERM"));
    assert_eq!(
        executor.inner.calls(),
        [("t::naive".to_string(), 1)],
        "nothing ran after the signal"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
