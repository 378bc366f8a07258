//! `calibrate`: the benchmark that shows kernelgate's numbers can be trusted, run on a GPU
//! (`kernelgate calibrate [--reps N] [--out FILE.md]`). It prints one table:
//!
//! - **accuracy**: a compute-bound kernel from about 3 µs to 10 ms, kernelgate's median beside
//!   two independent timers over the same source — CuPy events (the usual way people time a
//!   kernel) and Nsight Compute's `gpu__time_duration.sum` with `--clock-control none` (the
//!   kernel alone, no launch overhead) — with the ratios;
//! - **sensitivity**: the same kind of kernel made 1%, 2%, 3% and 5% slower by extra work, each
//!   level measured in `reps` fresh worker processes and judged against a baseline taken in
//!   another, with `max_slowdown = 2%`: the fraction flagged `regressed`, and at 0% the A/A
//!   false-alarm rate;
//! - **cost**: the wall time of one verdict (compile from cache, check, sample).

use crate::config::Config;
use crate::gate::{self, GateInput, Verdict};
use crate::measure::Samples;
use crate::report::duration;
use crate::suite::{self, Suite};
use crate::worker::client::Worker;
use crate::worker::protocol::{TrialData, TrialRequest};
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The calibration kernel: two dependent FMAs per iteration per thread, plus `extra_pct`
/// percent more iterations. It reads nothing, so caches do not matter.
const SOURCE: &str = r#"
extern "C" __global__ void spin(float* out, int iters, int extra_pct) {
    int n = iters + (int)((long long)iters * extra_pct / 100);
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
    for (int i = 0; i < n; ++i) { x = fmaf(x, 0.999999f, y); y = fmaf(y, 0.999999f, x); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
"#;

/// Launch shape: four blocks of 256 per SM, on 132 SMs (an H100/H200); any GPU runs it.
const GRID: u32 = 528;
const BLOCK: u32 = 256;

/// The independent timers: CuPy events over the same source, and (with `--ncu`) plain
/// launches for Nsight Compute to time. Prints `{"iters": median_seconds}` as JSON.
const REFERENCE_TIMER: &str = r#"
import json, sys
import cupy as cp
src = open(sys.argv[1]).read()
iters = [int(v) for v in sys.argv[2].split(",")]
launches = int(sys.argv[3])
mod = cp.RawModule(code=src, backend="nvrtc")
spin = mod.get_function("spin")
out = cp.empty(528 * 256, dtype=cp.float32)
result = {}
for n in iters:
    for _ in range(5):
        spin((528,), (256,), (out, cp.int32(n), cp.int32(0)))
    times = []
    for _ in range(launches):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); spin((528,), (256,), (out, cp.int32(n), cp.int32(0))); b.record(); b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    times.sort()
    result[str(n)] = times[len(times) // 2]
print(json.dumps(result))
"#;

/// Slowdowns measured for sensitivity, percent.
const LEVELS: [i64; 5] = [0, 1, 2, 3, 5];

fn suite_text(name: &str, iters: &[i64], extra: &[i64], max_slowdown: &str) -> String {
    let list = |v: &[i64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        r#"[suite]
name = "{name}"
source = "spin.cu"
sizes = {{ iters = [{}], extra = [{}] }}

[[buffer]]
name = "out"
type = "f32"
len = {}
role = "output"

[[kernel]]
name = "spin"
entry = "spin"
reference = true
grid = [{GRID}]
block = [{BLOCK}]
args = ["out", "iters as i32", "extra as i32"]

[check]
trials = 1
rtol = 0.0
atol = 0.0

[bench]
max_slowdown = "{max_slowdown}"
"#,
        list(iters),
        list(extra),
        GRID * BLOCK
    )
}

fn load(dir: &Path, name: &str, text: &str) -> Result<Suite, String> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    suite::load_file(&path).map_err(|d| {
        d.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Checks and times kernel 0 of `suite` (the run's suite number `index`) on `case`.
fn measure(
    worker: &mut Worker,
    (index, suite): (usize, &Suite),
    case: usize,
    effort: u32,
    timeout: std::time::Duration,
) -> Result<(TrialData, f64), String> {
    let start = Instant::now();
    let request = TrialRequest {
        suite: index,
        case,
        kernel: 0,
        seed: suite.check.seed,
        check: true,
        regime: None,
        base: None,
        effort,
    };
    let result = worker
        .trial(&[(index, suite)], request, timeout)
        .map_err(|e| e.to_string())?;
    let data = result.outcome.map_err(|e| e.to_string())?;
    Ok((data, start.elapsed().as_secs_f64()))
}

fn median(samples: &Samples) -> f64 {
    samples
        .kernel_summary()
        .map(|s| s.median)
        .unwrap_or(f64::NAN)
}

/// Runs the independent timers; `None` for one that is not available here.
fn reference_times(dir: &Path, iters: &[i64]) -> (Option<Vec<f64>>, Option<Vec<f64>>) {
    let script = dir.join("reference_timer.py");
    if std::fs::write(&script, REFERENCE_TIMER).is_err() {
        return (None, None);
    }
    let list = iters
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let src = dir.join("spin.cu");
    let cupy = Command::new("python3")
        .arg(&script)
        .arg(&src)
        .arg(&list)
        .arg("200")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            serde_json::from_slice::<std::collections::BTreeMap<String, f64>>(&o.stdout).ok()
        })
        .map(|m| {
            iters
                .iter()
                .map(|i| m.get(&i.to_string()).copied().unwrap_or(f64::NAN))
                .collect()
        });
    // Nsight Compute: every launch of `spin`, timed on the GPU alone, clocks as they are.
    let ncu = Command::new("ncu")
        .args([
            "--clock-control",
            "none",
            "--metrics",
            "gpu__time_duration.sum",
            "--csv",
            "-k",
            "regex:^spin$",
            "python3",
        ])
        .arg(&script)
        .arg(&src)
        .arg(&list)
        .arg("20")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .and_then(|csv| ncu_medians(&csv, iters.len(), 25));
    (cupy, ncu)
}

/// Medians of `gpu__time_duration.sum` (ns in the CSV), per group of `per_group` launches in
/// launch order (5 warm-up launches and 20 timed per iteration count).
fn ncu_medians(csv: &str, groups: usize, per_group: usize) -> Option<Vec<f64>> {
    let mut values = Vec::new();
    for line in csv.lines().filter(|l| l.contains("gpu__time_duration.sum")) {
        let fields: Vec<&str> = line.split("\",\"").map(|f| f.trim_matches('"')).collect();
        let unit = fields.get(fields.len().checked_sub(2)?)?;
        let value: f64 = fields.last()?.replace(',', "").parse().ok()?;
        let scale = match *unit {
            "nsecond" | "ns" => 1e-9,
            "usecond" | "us" => 1e-6,
            "msecond" | "ms" => 1e-3,
            _ => 1e-9,
        };
        values.push(value * scale);
    }
    (values.len() == groups * per_group).then(|| {
        values
            .chunks(per_group)
            .map(|g| {
                let mut timed = g[5..].to_vec();
                timed.sort_by(f64::total_cmp);
                timed[timed.len() / 2]
            })
            .collect()
    })
}

/// The `kernelgate calibrate` command.
pub fn calibrate(args: &[String]) -> ExitCode {
    let mut reps = 20usize;
    let mut out: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.clone().next()) {
            ("--reps", Some(v)) if v.parse::<usize>().is_ok_and(|n| n > 0) => {
                reps = v.parse().expect("checked");
                it.next();
            }
            ("--out", Some(v)) => {
                out = Some(v.clone());
                it.next();
            }
            _ => {
                eprintln!("error: unknown argument `{a}` (kernelgate calibrate [--reps N] [--out FILE.md])");
                return ExitCode::from(crate::exit::BAD_INPUT);
            }
        }
    }
    match run(reps) {
        Ok(report) => {
            print!("{report}");
            if let Some(path) = out {
                if let Err(e) =
                    crate::baseline::write_atomically(Path::new(&path), report.as_bytes())
                {
                    eprintln!("error: {e}");
                    return ExitCode::from(crate::exit::BAD_INPUT);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: calibration failed: {e}");
            ExitCode::from(crate::exit::BAD_INPUT)
        }
    }
}

fn run(reps: usize) -> Result<String, String> {
    if let Some(reason) = crate::device::driver_missing() {
        return Err(format!("{reason}: calibration needs a GPU"));
    }
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("kernelgate-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("spin.cu"), SOURCE).map_err(|e| e.to_string())?;
    let ordinal = config.devices[0];
    let mut worker = Worker::new(ordinal);
    let info = worker.device().map_err(|e| format!("{e:?}"))?;
    let timeout = config.timeout;

    // Accuracy: iteration counts for about 3 µs to 10 ms, sized from a pilot kernel's time
    // per iteration on this device.
    const PILOT_ITERS: i64 = 100_000;
    let pilot = load(
        &dir,
        "pilot",
        &suite_text("pilot", &[PILOT_ITERS], &[0], "2%"),
    )?;
    let (pilot, _) = measure(&mut worker, (0, &pilot), 0, 1, timeout)?;
    let per_iteration = median(&pilot.samples) / PILOT_ITERS as f64;
    let targets = [3e-6, 10e-6, 30e-6, 100e-6, 1e-3, 10e-3];
    let iters: Vec<i64> = targets
        .iter()
        .map(|t| ((t / per_iteration) as i64).max(1))
        .collect();
    let accuracy = load(
        &dir,
        "accuracy",
        &suite_text("accuracy", &iters, &[0], "2%"),
    )?;
    let mut ours = Vec::new();
    let mut costs = Vec::new();
    for case in 0..accuracy.cases.len() {
        let (data, wall) = measure(&mut worker, (1, &accuracy), case, 1, timeout)?;
        ours.push((median(&data.samples), data.samples.regime));
        costs.push(wall);
    }
    worker.stop();
    let (cupy, ncu) = reference_times(&dir, &iters);

    // Sensitivity: a ~50 µs kernel; the baseline in one worker, each repetition in a fresh one.
    let sens_iters = ((50e-6 / per_iteration) as i64).max(1);
    let sensitivity = load(
        &dir,
        "sensitivity",
        &suite_text("sensitivity", &[sens_iters], &LEVELS, "2%"),
    )?;
    let mut baseline_worker = Worker::new(ordinal);
    let (baseline, _) = measure(&mut baseline_worker, (2, &sensitivity), 0, 1, timeout)?;
    baseline_worker.stop();
    let mut flagged = [0usize; LEVELS.len()];
    let mut inconclusive = [0usize; LEVELS.len()];
    for _ in 0..reps {
        let mut w = Worker::new(ordinal);
        let mut samples = Vec::new();
        for case in 0..LEVELS.len() {
            let (data, wall) = measure(&mut w, (2, &sensitivity), case, 1, timeout)?;
            costs.push(wall);
            samples.push(data.samples);
        }
        let input = |s: &Samples| GateInput {
            old_times: baseline.samples.kernel.clone(),
            new_times: s.kernel.clone(),
            speedups: None,
            max_slowdown: sensitivity.bench.max_slowdown,
            paired: None,
        };
        let inputs: Vec<GateInput> = samples.iter().map(input).collect();
        // As a run does: the gate's own policy, re-measuring inconclusive trials in this worker.
        let mut again = |k: usize| -> Result<GateInput, String> {
            let (data, wall) = measure(
                &mut w,
                (2, &sensitivity),
                k,
                gate::REMEASURE_EFFORT,
                timeout,
            )?;
            costs.push(wall);
            Ok(input(&data.samples))
        };
        let verdicts: Vec<gate::TrialVerdict> = gate::settle(inputs, Some(&mut again))
            .into_iter()
            .map(|d| d.map(|d| d.verdict))
            .collect::<Result<_, _>>()?;
        w.stop();
        for (k, v) in verdicts.iter().enumerate() {
            flagged[k] += (v.verdict == Verdict::Regressed) as usize;
            inconclusive[k] += (v.verdict == Verdict::Inconclusive) as usize;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);

    // The table.
    let mut t = format!(
        "# kernelgate calibration\n\n{} (sm_{}{}, {} SMs, driver {}), kernelgate {}, {}\n\n",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.sm_count,
        info.driver_release,
        env!("CARGO_PKG_VERSION"),
        crate::baseline::today()
    );
    t.push_str("## Accuracy: kernelgate's median beside independent timers\n\n");
    t.push_str("| kernel | kernelgate (regime) | CuPy events | ratio | ncu gpu__time_duration | ratio | difference |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (k, (ours, regime)) in ours.iter().enumerate() {
        let pick = |v: &Option<Vec<f64>>| {
            v.as_ref()
                .and_then(|v| v.get(k).copied())
                .filter(|x| x.is_finite())
        };
        let cell = |x: Option<f64>| x.map(duration).unwrap_or_else(|| "n/a".into());
        let ratio = |x: Option<f64>| {
            x.map(|x| format!("{:.3}", ours / x))
                .unwrap_or_else(|| "n/a".into())
        };
        let (c, n) = (pick(&cupy), pick(&ncu));
        let diff = n
            .or(c)
            .map(|x| format!("{:+.2} µs", (ours - x) * 1e6))
            .unwrap_or_else(|| "n/a".into());
        t.push_str(&format!(
            "| spin, {} iterations | {} ({regime}) | {} | {} | {} | {} | {diff} |\n",
            iters[k],
            duration(*ours),
            cell(c),
            ratio(c),
            cell(n),
            ratio(n)
        ));
    }
    t.push_str(&format!(
        "\n## Sensitivity: {} fresh processes per level against one baseline, max_slowdown = 2%\n\n| slowdown | flagged regressed | still inconclusive |\n| --- | --- | --- |\n",
        reps
    ));
    for (k, level) in LEVELS.iter().enumerate() {
        let what = if *level == 0 {
            " (A/A: false alarms)"
        } else {
            ""
        };
        t.push_str(&format!(
            "| {level}%{what} | {}/{reps} ({:.0}%) | {}/{reps} |\n",
            flagged[k],
            100.0 * flagged[k] as f64 / reps as f64,
            inconclusive[k]
        ));
    }
    let cost = crate::stats::Summary::of(&costs)
        .map(|s| s.median)
        .unwrap_or(f64::NAN);
    t.push_str(&format!(
        "\n## Cost\n\nMedian wall time of one verdict (a trial: load from the compile cache, check, sample): {} over {} trials.\n",
        duration(cost),
        costs.len()
    ));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calibration_suites_are_valid() {
        let dir = std::env::temp_dir().join(format!("kg-calibrate-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("spin.cu"), SOURCE).unwrap();
        let s = load(
            &dir,
            "sensitivity",
            &suite_text("sensitivity", &[1000], &LEVELS, "2%"),
        )
        .unwrap();
        assert_eq!(s.cases.len(), LEVELS.len());
        assert_eq!(s.cases[3].label, "iters=1000,extra=3");
        assert_eq!(s.bench.max_slowdown, 0.02);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ncu_csv_medians() {
        let mut csv = String::from(
            "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
        );
        for g in 0..2 {
            for i in 0..25 {
                let v = if g == 0 { 3000 + i } else { 9000 + i };
                csv.push_str(&format!(
                    "\"{}\",\"spin\",\"gpu__time_duration.sum\",\"nsecond\",\"{}\"\n",
                    g * 25 + i,
                    v
                ));
            }
        }
        let m = ncu_medians(&csv, 2, 25).unwrap();
        assert!(
            (m[0] - 3015e-9).abs() < 1e-12 && (m[1] - 9015e-9).abs() < 1e-12,
            "{m:?}"
        );
        assert_eq!(
            ncu_medians(&csv, 3, 25),
            None,
            "a launch count that does not add up is no answer"
        );
    }
}
