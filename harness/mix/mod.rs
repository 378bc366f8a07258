//! `mix`: the instruction-mix gate. Per kernel, the double-precision instructions of its
//! compiled code (counted from PTX by `device::ptx`; see there what counts), and the policy
//! `fp64 = "forbid"` that fails a kernel holding any.
//!
//! Why: a convolution meant to be float32 ran 0.87× because its accumulator was `double`
//! (`conv2d::f64_acc`); only a profiler's FP64 counters said why. The count is static — it is
//! in the code whether or not a case executes it — so it needs no GPU and gates exactly.

use crate::device::compile::Compiled;
use crate::device::ptx::Fp64Use;
use crate::suite::Suite;

/// Each kernel's FP64 use, in the suite's kernel order: the sum over its launches' entries
/// (an entry launched twice counts twice), the example taken from the first that has one.
/// `compiled` pairs a source index with its module, as `compile_suite::compile_suite` returns them.
pub fn kernel_fp64(suite: &Suite, compiled: &[(usize, Compiled)]) -> Vec<Fp64Use> {
    suite
        .kernels
        .iter()
        .map(|k| {
            let mut total = Fp64Use::default();
            let Some((_, c)) = compiled.iter().find(|(si, _)| *si == k.source) else {
                return total;
            };
            for entry in &k.entries {
                let Some(at) = c.entries.iter().position(|e| e == entry) else {
                    continue;
                };
                let used = c.fp64.get(at).cloned().unwrap_or_default();
                total.count += used.count;
                if total.example.is_none() {
                    total.example = used.example;
                }
            }
            total
        })
        .collect()
}

/// The message for a kernel whose limits forbid FP64 and whose code holds `used.count`
/// instructions; `None` when it passes.
pub fn fp64_breach(kernel: &str, forbid: bool, used: &Fp64Use) -> Option<String> {
    if !forbid || used.count == 0 {
        return None;
    }
    let example = used
        .example
        .as_deref()
        .map(|e| format!(", e.g. `{e}`"))
        .unwrap_or_default();
    Some(format!(
        "kernel `{kernel}` has {} double-precision instruction(s) in its code{example}, and fp64 = \"forbid\" (look for a `double` variable or an unsuffixed literal such as `0.5` where `0.5f` was meant)",
        used.count
    ))
}

/// Every breach in a compiled suite, as `(kernel index, message)`.
pub fn fp64_breaches(suite: &Suite, compiled: &[(usize, Compiled)]) -> Vec<(usize, String)> {
    kernel_fp64(suite, compiled)
        .iter()
        .enumerate()
        .filter_map(|(ki, used)| {
            let k = &suite.kernels[ki];
            fp64_breach(&k.name, k.limits.forbid_fp64, used).map(|m| (ki, m))
        })
        .collect()
}

/// `fp64 ops: `f64_acc` 12` for the compile trial's line: the kernels that use FP64, with
/// their counts; empty when none does.
pub fn fp64_summary(suite: &Suite, compiled: &[(usize, Compiled)]) -> String {
    let used: Vec<String> = kernel_fp64(suite, compiled)
        .iter()
        .zip(&suite.kernels)
        .filter(|(u, _)| u.count > 0)
        .map(|(u, k)| format!("`{}` {}", k.name, u.count))
        .collect();
    if used.is_empty() {
        String::new()
    } else {
        format!("fp64 ops: {}", used.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Footprint;

    /// The fixture suite, with a module as NVRTC makes it for its source: `window_f64` holds
    /// 17 FP64 instructions (NVRTC 13.0), `window_f32` none.
    fn fixture() -> (Suite, Vec<(usize, Compiled)>) {
        let suite =
            crate::suite::load_file(std::path::Path::new("tests/fixtures/fp64/forbid.toml"))
                .unwrap();
        let used = |count: u64, example: Option<&str>| Fp64Use {
            count,
            example: example.map(String::from),
        };
        let compiled = Compiled {
            cubin: Vec::new(),
            entries: vec!["window_f32".into(), "window_f64".into()],
            lowered: vec!["window_f32".into(), "window_f64".into()],
            fp64: vec![used(0, None), used(17, Some("cvt.f64.f32 %fd1, %f1;"))],
            log: String::new(),
            cached: false,
        };
        (suite, vec![(0, compiled)])
    }

    #[test]
    fn kernels_get_their_entries_counts_and_only_the_forbidding_one_fails() {
        let (suite, compiled) = fixture();
        let counts: Vec<u64> = kernel_fp64(&suite, &compiled)
            .iter()
            .map(|u| u.count)
            .collect();
        assert_eq!(counts, vec![0, 17, 17], "f32_acc, f64_acc, f64_allowed");
        let breaches = fp64_breaches(&suite, &compiled);
        assert_eq!(breaches.len(), 1, "{breaches:?}");
        assert_eq!(breaches[0].0, 1);
        assert_eq!(
            fp64_summary(&suite, &compiled),
            "fp64 ops: `f64_acc` 17, `f64_allowed` 17"
        );
    }

    #[test]
    fn the_footprint_shows_fp64_ops_only_when_there_are_some() {
        let mut f = Footprint {
            pool_peak: 0,
            free_drop: 0,
            local_reservation: 0,
            launches: Vec::new(),
            fp64: None,
            library: None,
        };
        assert!(!crate::report::footprint(&f).contains("fp64"));
        f.fp64 = Some(Box::new(Fp64Use {
            count: 508,
            example: None,
        }));
        assert!(
            crate::report::footprint(&f).ends_with(" · fp64 ops 508"),
            "{}",
            crate::report::footprint(&f)
        );
    }

    #[test]
    fn a_forbidding_kernel_with_fp64_is_named_with_count_and_example() {
        let used = Fp64Use {
            count: 3,
            example: Some("cvt.f64.f32 %fd2, %f1;".into()),
        };
        let m = fp64_breach("f64_acc", true, &used).unwrap();
        assert!(
            m.starts_with("kernel `f64_acc` has 3 double-precision instruction(s)"),
            "{m}"
        );
        assert!(m.contains("e.g. `cvt.f64.f32 %fd2, %f1;`"), "{m}");
        assert_eq!(fp64_breach("f64_acc", false, &used), None, "allowed");
        assert_eq!(
            fp64_breach("f32_acc", true, &Fp64Use::default()),
            None,
            "none used"
        );
    }
}
