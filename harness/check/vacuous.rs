//! `vacuous`: finds a check that cannot fail — a tolerance under which an output that holds
//! no answer at all (all zeros, all poison, one constant) passes against the reference.
//!
//! Seen in benchmark evaluators: an `atol` above every reference value lets an all-zero
//! output pass, and a kernel that writes nothing (or zeros) is then "correct" and very fast.

use super::compare::compare;
use crate::dtype::{DType, HostData};
use crate::suite::Tolerance;

/// An output with no answer in it that the tolerance accepts anyway.
#[derive(Debug, Clone, PartialEq)]
pub struct Vacuous {
    /// What the passing output holds, in words ("all zeros").
    pub holds: String,
    /// The largest magnitude among the expected values.
    pub largest: f64,
}

impl Vacuous {
    /// What to write in a failure: the output's name, the tolerance and what to change.
    pub fn message(&self, output: &str, tol: Tolerance) -> String {
        format!(
            "the check of output `{output}` cannot fail: an output of {} passes it (rtol {:e}, atol {:e}; the largest reference value is {:e}); set `atol` well below the reference's magnitude and `rtol` below 1 in [check] (or its per-output override)",
            self.holds, tol.rtol, tol.atol, self.largest
        )
    }
}

/// Elements summed per parallel chunk: fixed, so the sum (and the mean) is the same on every
/// machine and every run, whatever the thread count.
const CHUNK: usize = 1 << 16;

/// The sum, count and largest magnitude of `data`'s finite values: chunks in parallel, combined
/// in order. Seen on an H200 host (16 cores): one pass over a 16M-element output took ~30 ms
/// per seed sequentially — with three candidates' set-up, 62% of all correctness time.
fn finite_stats(data: &HostData) -> (f64, usize, f64) {
    use rayon::prelude::*;
    let n = data.len();
    let chunks: Vec<(f64, usize, f64)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            (c * CHUNK..((c + 1) * CHUNK).min(n))
                .map(|i| data.get(i))
                .filter(|v| v.is_finite())
                .fold((0.0, 0usize, 0.0f64), |(s, k, m), v| {
                    (s + v, k + 1, m.max(v.abs()))
                })
        })
        .collect();
    chunks
        .into_iter()
        .fold((0.0, 0, 0.0), |(s, k, m), (cs, ck, cm)| {
            (s + cs, k + ck, m.max(cm))
        })
}

/// One output with no answer in it: its name in words, and its element's value and bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What it holds, in words ("all zeros").
    pub name: String,
    /// Every element's value, as `HostData::get` reads it.
    pub value: f64,
    /// Every element's bytes, little-endian in the low bytes of a `u64`.
    pub bits: u64,
    /// Every element's bytes.
    bytes: Vec<u8>,
}

/// The mean the constant candidate holds: of `count` finite values summing to `sum`, rounded
/// for integer types (0 when there are none).
pub fn mean_of(sum: f64, count: usize, dtype: DType) -> f64 {
    let mean = if count > 0 { sum / count as f64 } else { 0.0 };
    if dtype.is_float() {
        mean
    } else {
        mean.round()
    }
}

/// The outputs with no answer that a tolerance must not accept, in the order they are tried:
/// all zeros, all poison (every byte 0xFF), one constant (`mean`).
pub fn candidates(dtype: DType, mean: f64) -> [Candidate; 3] {
    let one = |name: String, data: HostData| {
        let mut b = [0u8; 8];
        b[..data.bytes.len()].copy_from_slice(&data.bytes);
        Candidate {
            name,
            value: data.get(0),
            bits: u64::from_le_bytes(b),
            bytes: data.bytes,
        }
    };
    [
        one("all zeros".into(), HostData::from_f64(dtype, [0.0])),
        one(
            "all poison (every byte 0xFF)".into(),
            HostData::poison(dtype, 1),
        ),
        one(
            format!("one constant (every element {mean})"),
            HostData::from_f64(dtype, [mean]),
        ),
    ]
}

/// Whether an output of all zeros, all poison (0xFF bytes) or one constant (the expected
/// values' mean) would pass against `expected` under `tol`. `None` when the check can fail. A
/// candidate that *is* the expected output is not counted: when the reference itself is all
/// zeros or all one value, the inputs, not the tolerance, are what cannot tell kernels apart.
/// (`check::vacuous_device` asks the same of outputs kept on the device.)
pub fn vacuous(expected: &HostData, tol: Tolerance) -> Option<Vacuous> {
    let n = expected.len();
    if n == 0 {
        return None;
    }
    let (sum, count, largest) = finite_stats(expected);
    let dtype = expected.dtype;
    let kinds = candidates(dtype, mean_of(sum, count, dtype));
    let make = |kind: usize, len: usize| HostData {
        dtype,
        bytes: kinds[kind].bytes.repeat(len),
    };
    // A candidate almost always fails on the first elements: try those before all of them.
    let m = HEAD.min(n);
    let expected_head = HostData {
        dtype,
        bytes: expected.bytes[..m * dtype.size()].to_vec(),
    };
    (0..kinds.len())
        .find(|kind| {
            compare(&make(*kind, m), &expected_head, tol).is_ok() && {
                let c = make(*kind, n);
                c.bytes != expected.bytes && compare(&c, expected, tol).is_ok()
            }
        })
        .map(|kind| Vacuous {
            holds: kinds[kind].name.clone(),
            largest,
        })
}

/// Elements compared first, before the whole output.
const HEAD: usize = 4096;

#[cfg(test)]
mod tests {

    #[test]
    fn the_parallel_statistics_are_the_sequential_ones_and_skip_non_finite_values() {
        let n = 3 * CHUNK + 17;
        let values: Vec<f64> = (0..n)
            .map(|i| match i % 1000 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                _ => (i as f64 * 0.37).sin() * 3.0,
            })
            .collect();
        let data = HostData::from_f64(crate::dtype::DType::F64, values.iter().copied());
        let (sum, count, largest) = finite_stats(&data);
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        assert_eq!(count, finite.len());
        assert!((sum - finite.iter().sum::<f64>()).abs() < 1e-9 * n as f64);
        assert_eq!(largest, finite.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        assert_eq!(
            finite_stats(&data),
            (sum, count, largest),
            "the same every time"
        );
    }

    use super::*;
    use crate::dtype::DType;

    fn tol(rtol: f64, atol: f64) -> Tolerance {
        Tolerance {
            rtol,
            atol,
            allow_nan: false,
        }
    }

    fn ramp(dtype: DType) -> HostData {
        HostData::from_f64(dtype, (0..1000).map(|i| (i as f64 - 500.0) / 100.0))
    }

    #[test]
    fn an_atol_above_every_reference_value_is_vacuous() {
        let v = vacuous(&ramp(DType::F32), tol(1e-5, 10.0)).expect("zeros pass");
        assert_eq!(v.holds, "all zeros");
        assert_eq!(v.largest, 5.0);
        let m = v.message("y", tol(1e-5, 10.0));
        assert!(m.starts_with("the check of output `y` cannot fail: an output of all zeros passes it (rtol 1e-5, atol 1e1; the largest reference value is 5e0)"), "{m}");
    }

    #[test]
    fn an_rtol_of_one_is_vacuous() {
        // |0 - e| <= 1 * max(|0|, |e|) holds for every e.
        assert!(vacuous(&ramp(DType::F32), tol(1.0, 0.0)).is_some());
    }

    #[test]
    fn a_constant_passes_when_atol_spans_the_values() {
        let e = HostData::from_f64(DType::F32, (0..100).map(|i| 1000.0 + i as f64 / 100.0));
        let v = vacuous(&e, tol(0.0, 1.0)).expect("the mean passes");
        assert!(v.holds.starts_with("one constant"), "{}", v.holds);
    }

    #[test]
    fn ordinary_tolerances_can_fail() {
        assert_eq!(vacuous(&ramp(DType::F32), tol(1e-5, 1e-6)), None);
        let ints = HostData::from_f64(DType::I32, (0..100).map(|i| i as f64 * 3.0));
        assert_eq!(vacuous(&ints, tol(0.0, 0.0)), None);
    }

    #[test]
    fn poison_passing_integers_is_vacuous() {
        // 0xFFFFFFFF as i32 is -1: an atol of 2 over values in {-1, 0, 1} accepts anything.
        let e = HostData::from_f64(DType::I32, (0..90).map(|i| (i % 3) as f64 - 1.0));
        assert!(vacuous(&e, tol(0.0, 2.0)).is_some());
    }

    #[test]
    fn a_single_element_output_is_checked_too() {
        let sum = HostData::from_f64(DType::F32, [2.5e6]);
        assert!(vacuous(&sum, tol(0.0, 1e7)).is_some());
        assert_eq!(vacuous(&sum, tol(1e-4, 1e-3)), None);
    }

    #[test]
    fn a_constant_reference_is_not_the_tolerances_fault() {
        // The mean of an all-2 output is the answer itself: not a sign of a loose tolerance...
        let e = HostData::from_f64(DType::F32, (0..100).map(|_| 2.0));
        assert_eq!(vacuous(&e, tol(1e-5, 1e-6)), None);
        // ...but zeros passing against it still are.
        let v = vacuous(&e, tol(0.0, 100.0)).unwrap();
        assert_eq!(v.holds, "all zeros");
        let zeros = HostData::from_f64(DType::F32, (0..100).map(|_| 0.0));
        assert_eq!(vacuous(&zeros, tol(0.0, 100.0)), None, "zero is the answer");
    }
}
