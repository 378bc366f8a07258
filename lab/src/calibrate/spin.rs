//! `spin`: calibration's own kernel and suites — a compute-bound kernel whose time is set by an
//! iteration count (sized on the device from a pilot) and made `extra` percent slower by more
//! iterations.

use kernelgate::cli::calibrate::error::CalibrateError;
use kernelgate::suite::{self, Suite};
use std::path::Path;

/// The calibration kernel: two dependent FMAs per iteration per thread, plus `extra_pct`
/// percent more iterations. It reads nothing, so caches do not matter.
pub const SOURCE: &str = include_str!("spin.cu");

/// Launch shape: four blocks of 256 per SM, on 132 SMs (an H100/H200); any GPU runs it.
pub const GRID: u32 = 528;
/// Threads per block.
pub const BLOCK: u32 = 256;

/// The text of a suite of `spin` with one case per (iterations, extra percent), judged at a
/// `max_slowdown` of 2%.
fn suite_text(name: &str, iters: &[i64], extra: &[i64]) -> String {
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
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
max_slowdown = "2%"
"#,
        list(iters),
        list(extra),
        GRID * BLOCK
    )
}

/// Writes the suite `name` of `spin` ([`suite_text`]) as `dir/name.toml` (beside `spin.cu`)
/// and loads it.
pub fn load(dir: &Path, name: &str, iters: &[i64], extra: &[i64]) -> Result<Suite, CalibrateError> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, suite_text(name, iters, extra)).map_err(|e| CalibrateError::File {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calibration_suites_are_valid() {
        let dir = std::env::temp_dir().join(format!("kg-calibrate-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("spin.cu"), SOURCE).unwrap();
        let s = load(&dir, "sensitivity", &[1000], &[0, 1, 2, 3, 5]).unwrap();
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
