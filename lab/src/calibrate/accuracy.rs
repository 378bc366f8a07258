//! `Accuracy`: kernelgate's median for `spin` kernels from about 3 µs to 10 ms beside two
//! independent timers over the same source — CuPy events (the usual way people time a kernel)
//! and Nsight Compute's `gpu__time_duration.sum` with `--clock-control none` (the kernel alone,
//! no launch overhead) — with the ratios. A timer that is not installed reads `n/a`.

use kernelgate::measure::Regime;
use kernelgate::report::duration;
use std::path::Path;
use std::process::Command;

/// Kernel durations the accuracy table covers, seconds.
pub const TARGETS: [f64; 6] = [3e-6, 10e-6, 30e-6, 100e-6, 1e-3, 10e-3];

/// One row: kernelgate's median and regime, and the independent timers' medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The kernel's iteration count.
    pub iters: i64,
    /// kernelgate's median, seconds.
    pub ours: f64,
    /// The regime it was timed in.
    pub regime: Regime,
    /// CuPy events' median.
    pub cupy: Option<f64>,
    /// Nsight Compute's median.
    pub ncu: Option<f64>,
}

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

/// Runs the independent timers; `None` for one that is not available here.
pub fn reference_times(dir: &Path, iters: &[i64]) -> (Option<Vec<f64>>, Option<Vec<f64>>) {
    let script = dir.join("reference_timer.py");
    if std::fs::write(&script, REFERENCE_TIMER).is_err() {
        return (None, None);
    }
    let list = iters
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let src = dir.join("spin.cu");
    // The timer script run by `program` (after its own `options`), with `launches` per size:
    // what it printed, where it succeeded.
    let run = |program: &str, options: &[&str], launches: &str| {
        let mut command = Command::new(program);
        command.args(options).arg(&script).arg(&src).arg(&list);
        let out = command.arg(launches).output().ok();
        out.filter(|o| o.status.success()).map(|o| o.stdout)
    };
    let cupy = run("python3", &[], "200")
        .and_then(|o| serde_json::from_slice::<std::collections::BTreeMap<String, f64>>(&o).ok())
        .map(|m| {
            iters
                .iter()
                .map(|i| m.get(&i.to_string()).copied().unwrap_or(f64::NAN))
                .collect()
        });
    // Nsight Compute: every launch of `spin`, timed on the GPU alone, clocks as they are.
    let profile = "--clock-control none --metrics gpu__time_duration.sum --csv -k regex:^spin$";
    let options: Vec<&str> = profile.split(' ').chain(["python3"]).collect();
    let ncu = run("ncu", &options, "20")
        .and_then(|o| ncu_medians(&String::from_utf8_lossy(&o), iters.len(), 25));
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

/// The accuracy table, Markdown.
pub fn table(rows: &[Row]) -> String {
    let mut t = String::from("## Accuracy: kernelgate's median beside independent timers\n\n");
    t.push_str("| kernel | kernelgate (regime) | CuPy events | ratio | ncu gpu__time_duration | ratio | difference |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for r in rows {
        let known = |x: Option<f64>| x.filter(|x| x.is_finite());
        let cell = |x: Option<f64>| known(x).map(duration).unwrap_or_else(|| "n/a".into());
        let ratio = |x: Option<f64>| {
            known(x)
                .map(|x| format!("{:.3}", r.ours / x))
                .unwrap_or_else(|| "n/a".into())
        };
        let diff = known(r.ncu)
            .or(known(r.cupy))
            .map(|x| format!("{:+.2} µs", (r.ours - x) * 1e6))
            .unwrap_or_else(|| "n/a".into());
        t.push_str(&format!(
            "| spin, {} iterations | {} ({}) | {} | {} | {} | {} | {diff} |\n",
            r.iters,
            duration(r.ours),
            r.regime,
            cell(r.cupy),
            ratio(r.cupy),
            cell(r.ncu),
            ratio(r.ncu)
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_table_marks_missing_timers() {
        let rows = [Row {
            iters: 311,
            ours: 4.427e-6,
            regime: Regime::Graph,
            cupy: None,
            ncu: Some(5.344e-6),
        }];
        let t = table(&rows);
        assert!(
            t.contains("| spin, 311 iterations | 4.427 µs (graph) | n/a | n/a | 5.344 µs | 0.828 | -0.92 µs |"),
            "{t}"
        );
    }
}
