//! `spin`: calibration's own kernel and suites — a compute-bound kernel whose time is set by an
//! iteration count (sized on the device from a pilot) and made `extra` percent slower by more
//! iterations — and the one call that measures a trial of them in a worker.

use super::error::CalibrateError;
use crate::measure::Regime;
use crate::suite::{self, Suite};
use crate::worker::client::Worker;
use crate::worker::protocol::{BaseKernel, TrialData, TrialRequest};
use std::path::Path;
use std::time::{Duration, Instant};

/// The calibration kernel: two dependent FMAs per iteration per thread, plus `extra_pct`
/// percent more iterations. It reads nothing, so caches do not matter.
pub const SOURCE: &str = r#"
extern "C" __global__ void spin(float* out, int iters, int extra_pct) {
    int n = iters + (int)((long long)iters * extra_pct / 100);
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
    for (int i = 0; i < n; ++i) { x = fmaf(x, 0.999999f, y); y = fmaf(y, 0.999999f, x); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
"#;

/// Launch shape: four blocks of 256 per SM, on 132 SMs (an H100/H200); any GPU runs it.
pub const GRID: u32 = 528;
/// Threads per block.
pub const BLOCK: u32 = 256;

/// The text of a suite of `spin` with one case per (iterations, extra percent).
pub fn suite_text(name: &str, iters: &[i64], extra: &[i64], max_slowdown: &str) -> String {
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

/// Writes `text` as `dir/name.toml` (beside `spin.cu`) and loads it.
pub fn load(dir: &Path, name: &str, text: &str) -> Result<Suite, CalibrateError> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).map_err(|e| CalibrateError::File {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    suite::load_file(&path).map_err(|d| {
        CalibrateError::Suite(
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })
}

/// Iterations for a kernel of about `seconds`, from the pilot's time per iteration.
pub fn iterations_for(seconds: f64, per_iteration: f64) -> i64 {
    if per_iteration.is_finite() && per_iteration > 0.0 {
        ((seconds / per_iteration) as i64).clamp(1, i32::MAX as i64 / 2)
    } else {
        1
    }
}

/// One measurement: which suite (by the index the worker knows it by), case and kernel, timed
/// alone or against a base, in which regime, at which effort.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    /// The suite's index in the worker.
    pub suite: usize,
    /// Case.
    pub case: usize,
    /// Kernel.
    pub kernel: usize,
    /// The input seed.
    pub seed: u64,
    /// Paired: the base to time against.
    pub base: Option<BaseKernel>,
    /// The pinned regime, or `None` to let the launch floor choose.
    pub regime: Option<Regime>,
    /// Sampling effort (1, or the re-measure's).
    pub effort: u32,
}

/// Runs `ask` in `worker` (which is sent the `suites` it needs first) and returns what it
/// measured and the wall time the trial took; `what` names it in errors.
pub fn measure(
    worker: &mut Worker,
    suites: &[(usize, &Suite)],
    ask: Ask,
    timeout: Duration,
    what: &str,
) -> Result<(TrialData, f64), CalibrateError> {
    let start = Instant::now();
    let request = TrialRequest {
        suite: ask.suite,
        case: ask.case,
        kernel: ask.kernel,
        seed: ask.seed,
        // As a run does: a re-measure is not checked again.
        check: ask.effort <= 1,
        regime: ask.regime,
        base: ask.base,
        effort: ask.effort,
    };
    let failed = |failure| CalibrateError::Trial {
        what: what.to_string(),
        failure,
    };
    let result = worker.trial(suites, request, timeout).map_err(failed)?;
    let data = result.outcome.map_err(failed)?;
    if data.samples.kernel.is_empty() {
        return Err(CalibrateError::Incomplete {
            what: what.to_string(),
            reason: "no timing samples".into(),
        });
    }
    if ask.base.is_some() && data.samples.reference.len() != data.samples.kernel.len() {
        return Err(CalibrateError::Incomplete {
            what: what.to_string(),
            reason: "paired, but the base's samples do not match the rounds".into(),
        });
    }
    Ok((data, start.elapsed().as_secs_f64()))
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
            &suite_text("sensitivity", &[1000], &[0, 1, 2, 3, 5], "2%"),
        )
        .unwrap();
        assert_eq!(s.cases.len(), 5);
        assert_eq!(s.cases[3].label, "iters=1000,extra=3");
        assert_eq!(s.bench.max_slowdown, 0.02);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn iterations_are_sized_from_the_pilot() {
        assert_eq!(iterations_for(5e-6, 1e-8), 500);
        assert_eq!(iterations_for(1e-3, 1e-8), 100_000);
        assert_eq!(iterations_for(5e-6, 1.0), 1, "at least one");
        assert_eq!(
            iterations_for(5e-6, f64::NAN),
            1,
            "a failed pilot still gives a count"
        );
        assert!(
            iterations_for(10.0, 1e-15) <= i32::MAX as i64 / 2,
            "fits the kernel's int"
        );
    }
}
