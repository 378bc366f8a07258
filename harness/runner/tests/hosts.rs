//! Host-aware stored baselines through the runner: `KERNELGATE_BLESS=add` pools a run from
//! another GPU and the gate allows the spread between runs; a verdict against a baseline from
//! another physical GPU says so on its line.

use super::*;
use crate::baseline::Origin;
use crate::config::Blessing;
use crate::report::results::Results;

const GPU_A: &str = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
const GPU_B: &str = "GPU-bbbbbbbb-5555-6666-7777-888888888888";

/// Runs every trial of suite `t` in `dir` (its baselines kept between calls) on the GPU of
/// UUID `uuid`: gating, or blessing as `bless`. Returns the records and what blessing wrote.
fn run_on(
    dir: &Path,
    uuid: &str,
    bless: Option<Blessing>,
    script: Vec<(&str, u32, Outcome)>,
) -> (Results, Vec<String>) {
    let suites = vec![suite(dir)];
    let mut config = config(dir, bless.map_or(Mode::Gate, |_| Mode::Bless));
    config.blessing = bless.unwrap_or_default();
    let plan = plan(&suites);
    let mut executor = Scripted::new(&plan, script);
    executor.uuid = Some(uuid.to_string());
    let report = run_all(&config, &suites, &plan, &executor);
    (report.results, report.blessed)
}

/// Both kernels at `t` seconds, tight, first measurement only.
fn both_at(t: f64) -> Vec<(&'static str, u32, Outcome)> {
    vec![
        ("t::naive", 1, measured(t, 32, 0.01, 1000)),
        ("t::fast", 1, measured(t, 32, 0.01, 1000)),
    ]
}

fn stored(dir: &Path) -> BaselineFile {
    let fingerprint = baseline::Fingerprint::of(&device());
    baseline::load(&baseline::path(&dir.join("baselines"), &fingerprint, "t"))
        .unwrap()
        .unwrap()
}

fn verdict(results: &Results, name: &str) -> Verdict {
    record(results, name).verdict.unwrap().verdict
}

#[test]
fn bless_add_pools_a_run_from_another_gpu_and_the_gate_allows_its_spread() {
    let dir = scratch("bless-add");
    bless_baselines(&dir.join("baselines"));
    // This GPU is 5% slower than the one the baselines came from (hosts of one model differ
    // by 3–8%): the reference regresses in time alone.
    let (results, _) = run_on(&dir, GPU_B, None, both_at(10.5e-6));
    assert_eq!(verdict(&results, "t::naive"), Verdict::Regressed);

    // Adding this GPU's run keeps the old one: two runs, 5% apart.
    let (_, blessed) = run_on(&dir, GPU_B, Some(Blessing::Add), both_at(10.5e-6));
    assert!(
        blessed.iter().any(|l| l
            .starts_with("blessed t::naive: added a run of 10.50 µs → 2 runs, pooled 10.00 µs → ")
            && l.ends_with("between-run spread +5.0%")),
        "{blessed:?}"
    );
    let file = stored(&dir);
    let naive = &file.trials["t::naive"];
    assert_eq!(naive.runs.len(), 2);
    assert_eq!(
        naive.runs[0].origin,
        Origin::default(),
        "the old run, origin unknown"
    );
    assert_eq!(naive.runs[1].origin.gpu.as_deref(), Some(GPU_B));
    assert_eq!(naive.runs[1].origin.host, baseline::host_name());
    assert_eq!(
        naive.time_samples.len(),
        64,
        "both runs' samples are pooled"
    );
    assert!((naive.spread() - 1.05).abs() < 1e-9, "{}", naive.spread());

    // The same GPU again: within the spread, not a regression; the line says why.
    let (results, _) = run_on(&dir, GPU_B, None, both_at(10.5e-6));
    assert_ne!(verdict(&results, "t::naive"), Verdict::Regressed);
    let message = said(record(&results, "t::naive"));
    assert!(
        message.contains("(baseline of 2 runs, spread +5.0%: threshold +8.1%)"),
        "{message}"
    );
    assert!(
        !message.contains("vs baseline from"),
        "this GPU is pooled: {message}"
    );

    // A real slowdown, 12% over the slower run, is still caught, and explained.
    let (results, _) = run_on(&dir, GPU_B, None, both_at(11.76e-6));
    let naive = record(&results, "t::naive");
    assert_eq!(naive.verdict.unwrap().verdict, Verdict::Regressed);
    let message = said(naive);
    assert!(
        message.contains(
            "max_slowdown 3% × the spread +5.0% between the baseline's 2 runs: threshold +8.1%"
        ),
        "{message}"
    );

    // KERNELGATE_BLESS=1 still replaces: one run, from this GPU.
    run_on(&dir, GPU_B, Some(Blessing::Replace), both_at(10.5e-6));
    let file = stored(&dir);
    assert_eq!(file.trials["t::naive"].runs.len(), 1);
    assert_eq!(file.trials["t::naive"].spread(), 1.0);
    assert_eq!(
        file.trials["t::fast"].runs[0].origin.gpu.as_deref(),
        Some(GPU_B)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_verdict_against_another_physical_gpu_says_so() {
    let dir = scratch("other-gpu");
    run_on(&dir, GPU_A, Some(Blessing::Replace), both_at(10e-6));
    let from_a = Origin {
        gpu: Some(GPU_A.into()),
        host: baseline::host_name(),
    }
    .describe();
    assert!(from_a.starts_with("GPU-aaaaaaaa"), "{from_a}");

    let (results, _) = run_on(&dir, GPU_B, None, both_at(10e-6));
    let naive = record(&results, "t::naive");
    assert_eq!(naive.verdict.unwrap().verdict, Verdict::Unchanged);
    let message = said(naive);
    assert!(
        message.ends_with(&format!(" vs baseline from {from_a}")),
        "{message}"
    );
    match &naive.gate {
        Some(GateNote::Compared { baseline, .. }) => {
            assert_eq!(baseline.other_gpus[0].gpu.as_deref(), Some(GPU_A));
            assert_eq!((baseline.runs, baseline.spread), (1, 1.0));
        }
        other => panic!("{other:?}"),
    }

    // A regression against another GPU's baseline says so in its failure too.
    let (results, _) = run_on(&dir, GPU_B, None, both_at(11e-6));
    let message = said(record(&results, "t::naive"));
    // In its first line, which is the headline of every one-line report.
    assert!(
        message.starts_with(&format!(
            "regressed against a baseline from another physical GPU ({from_a}): "
        )),
        "{message}"
    );
    // Re-blessing adds this GPU's run to the baseline, never replaces it.
    assert!(
        message.contains("rebless: KERNELGATE_BLESS=add "),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "the baseline came from another physical GPU ({from_a})"
        )),
        "{message}"
    );

    // On the GPU it was blessed on, nothing is said.
    let (results, _) = run_on(&dir, GPU_A, None, both_at(10e-6));
    let message = said(record(&results, "t::naive"));
    assert!(!message.contains("vs baseline from"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An executor that holds every trial until `together` other runs have reached theirs: each
/// run has read its baselines (at its start) before any blesses.
struct Together<'a> {
    inner: &'a Scripted,
    barrier: &'a std::sync::Barrier,
    waited: std::sync::atomic::AtomicBool,
}

impl Executor for Together<'_> {
    fn slots(&self) -> usize {
        1
    }
    fn device(&self) -> Option<DeviceInfo> {
        self.inner.device()
    }
    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        if !self.waited.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.barrier.wait();
        }
        self.inner.execute(slot, spec)
    }
}

#[test]
fn concurrent_bless_add_runs_keep_every_run() {
    // Seen on an H200 before the lock: a baseline of 1 run per entry and two concurrent
    // `KERNELGATE_BLESS=add` runs left 2 runs per entry, not 3.
    let dir = scratch("bless-together");
    bless_baselines(&dir.join("baselines"));
    let suites = vec![suite(&dir)];
    let mut config = config(&dir, Mode::Bless);
    config.blessing = Blessing::Add;
    let plan = plan(&suites);
    let runs = 4;
    let barrier = std::sync::Barrier::new(runs);
    std::thread::scope(|s| {
        for r in 0..runs {
            let (suites, config, plan, barrier) = (&suites, &config, &plan, &barrier);
            s.spawn(move || {
                let mut inner = Scripted::new(plan, both_at(10e-6 * (1.0 + 0.01 * r as f64)));
                inner.uuid = Some(format!("GPU-0000000{r}-1111-2222-3333-444444444444"));
                let executor = Together {
                    inner: &inner,
                    barrier,
                    waited: false.into(),
                };
                let runner = Runner {
                    base: None,
                    stop: &crate::stop::Stop::new(),
                    config,
                    suites,
                    executor: &executor,
                    progress: crate::runner::Progress::Off,
                };
                let selected: Vec<usize> = (0..plan.len()).collect();
                let report = runner.run(plan, &selected);
                assert!(
                    report.blessed.iter().any(|l| l.starts_with("wrote ")),
                    "{:?}",
                    report.blessed
                );
            });
        }
    });
    let file = stored(&dir);
    for name in ["t::naive", "t::fast"] {
        let entry = &file.trials[name];
        assert_eq!(entry.runs.len(), 1 + runs, "{name}: every run kept");
        let mut gpus: Vec<_> = entry.runs[1..]
            .iter()
            .map(|r| r.origin.gpu.clone())
            .collect();
        gpus.sort();
        gpus.dedup();
        assert_eq!(gpus.len(), runs, "one run from each process");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
