//! Tests of `check::kernels`: the CUDA compiles in NVRTC, and the device's formulas, written
//! again in Rust step by step, agree with the host's (`compare::compare`, `HostData::get`).

use super::*;
use crate::check::compare::{compare, excess};
use crate::dtype::HostData;

/// `kg_half`, transcribed.
fn kg_half(h: u16) -> f64 {
    let (e, m) = (((h >> 10) & 0x1f) as i32, (h & 0x3ff) as u32);
    let v = if e == 0 {
        m as f64 * 2f64.powi(-24)
    } else if e == 31 {
        if m != 0 {
            f64::NAN
        } else {
            f64::INFINITY
        }
    } else {
        (m | 0x400) as f64 * 2f64.powi(e - 25)
    };
    if h >> 15 != 0 {
        -v
    } else {
        v
    }
}

#[test]
fn the_device_reads_every_half_and_bfloat_as_the_host_does() {
    for h in 0..=u16::MAX {
        let host = HostData {
            dtype: DType::F16,
            bytes: h.to_le_bytes().to_vec(),
        }
        .get(0);
        let device = kg_half(h);
        assert!(
            host.to_bits() == device.to_bits() || (host.is_nan() && device.is_nan()),
            "f16 {h:#06x}: host {host}, device {device}"
        );
        // bf16: the 16 bits on top of an f32 (`kg_value` case 3).
        let host = HostData {
            dtype: DType::Bf16,
            bytes: h.to_le_bytes().to_vec(),
        }
        .get(0);
        let device = f32::from_bits((h as u32) << 16) as f64;
        assert!(host.to_bits() == device.to_bits() || (host.is_nan() && device.is_nan()));
    }
}

/// What `kernelgate_compare` computes for `blocks` blocks of 256 threads, each thread
/// striding over the elements and merging as `kg_merge` does, then `merge` on the partials.
fn simulate(actual: &HostData, expected: &HostData, tol: Tolerance, blocks: usize) -> Found {
    let n = actual.len();
    let mut raw = Vec::new();
    for b in 0..blocks {
        let mut block = Vec::new();
        for t in 0..256 {
            let mut mine = Vec::new();
            let mut i = b * 256 + t;
            while i < n {
                let x = excess(actual.get(i), expected.get(i), &tol);
                if x > 0.0 {
                    mine.extend(partial(1, i as u64, i as u64, x));
                }
                i += blocks * 256;
            }
            // A thread's partial is the merge of its elements, in index order.
            let m = merge(&mine);
            block.extend(partial(m.count, m.first, m.worst, m.excess));
        }
        let m = merge(&block);
        raw.extend(partial(m.count, m.first, m.worst, m.excess));
    }
    merge(&raw)
}

fn partial(count: u64, first: u64, worst: u64, excess: f64) -> Vec<u8> {
    [count, first, worst, excess.to_bits()]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

#[test]
fn the_device_reduction_finds_what_the_host_compare_finds() {
    let tol = Tolerance {
        rtol: 1e-3,
        atol: 1e-6,
        allow_nan: false,
    };
    let n = 5000;
    let expected = HostData::from_f64(DType::F32, (0..n).map(|i| (i % 17) as f64));
    let mut values: Vec<f64> = (0..n).map(|i| (i % 17) as f64).collect();
    values[7] = 7.5; // excess 0.5 / 7e-3
    values[300] = f64::NAN; // infinite: the worst
    values[4000] = f64::NAN; // as bad, later: not the worst
    values[4999] += 1e-4; // within rtol
    let actual = HostData::from_f64(DType::F32, values);
    let host = compare(&actual, &expected, tol).unwrap_err();
    for blocks in [1, 3, 20] {
        let device = simulate(&actual, &expected, tol, blocks);
        assert_eq!(
            (device.count as usize, device.worst as usize, device.first),
            (host.count, host.worst, 7),
            "{blocks} blocks"
        );
    }
    let same = simulate(&expected, &expected, tol, 4);
    assert_eq!(same.count, 0, "no mismatch, nothing found");
    assert!(compare(&expected, &expected, tol).is_ok());
}

#[test]
fn the_device_reduction_agrees_on_integers_and_allowed_nan() {
    let exact = Tolerance {
        rtol: 0.0,
        atol: 0.0,
        allow_nan: false,
    };
    let a = HostData::from_f64(DType::I32, (0..3000).map(|i| (i % 7) as f64));
    let mut values: Vec<f64> = (0..3000).map(|i| (i % 7) as f64).collect();
    values[2999] = 100.0;
    values[10] = 4.0;
    let b = HostData::from_f64(DType::I32, values);
    let host = compare(&a, &b, exact).unwrap_err();
    let device = simulate(&a, &b, exact, 2);
    assert_eq!(
        (device.count as usize, device.worst as usize),
        (host.count, host.worst)
    );
    let nan = Tolerance {
        rtol: 1e-3,
        atol: 0.0,
        allow_nan: true,
    };
    let both = HostData::from_f64(DType::F64, [f64::NAN, 1.0, f64::INFINITY]);
    assert!(compare(&both, &both, nan).is_ok());
    assert_eq!(
        simulate(&both, &both, nan, 1).count,
        0,
        "NaN against NaN, allowed"
    );
    let other = HostData::from_f64(DType::F64, [f64::NAN, 1.0, f64::NEG_INFINITY]);
    let device = simulate(&both, &other, nan, 1);
    assert_eq!(
        (device.count, device.worst),
        (1, 2),
        "∞ against -∞ never passes"
    );
}

#[test]
fn partials_merge_to_the_largest_excess_and_the_earliest_index() {
    let mut raw = partial(0, 0, 0, 0.0);
    raw.extend(partial(2, 40, 41, 3.0));
    raw.extend(partial(1, 10, 10, 3.0));
    raw.extend(partial(5, 90, 95, 2.0));
    assert_eq!(
        merge(&raw),
        Found {
            count: 8,
            first: 10,
            worst: 10,
            excess: 3.0
        }
    );
    assert_eq!(merge(&partial(0, 0, 0, 0.0)), Found::default());
}

#[test]
fn spans_are_laid_out_as_the_kernel_reads_them() {
    let table = encode(&[
        Span {
            dst: 0x1000,
            src: None,
            bytes: 17,
        },
        Span {
            dst: 0x2000,
            src: Some(0x3000),
            bytes: 64,
        },
    ]);
    assert_eq!(table.len(), 2 * SPAN_BYTES);
    let word = |k: usize| u64::from_le_bytes(table[8 * k..8 * k + 8].try_into().unwrap());
    assert_eq!(
        (0..6).map(word).collect::<Vec<_>>(),
        [0x1000, 0, 17, 0x2000, 0x3000, 64]
    );
}

#[test]
fn dtype_codes_are_distinct_and_follow_kg_value() {
    let codes: Vec<i32> = crate::dtype::ALL.iter().map(|d| code(*d)).collect();
    assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn the_check_kernels_compile() {
    crate::sass::require_nvrtc();
    let entries: Vec<String> = ENTRIES.iter().map(|e| e.to_string()).collect();
    let options = ["--fmad=false".to_string()];
    let text = source();
    let req = CompileRequest {
        path: std::path::Path::new("kernelgate_check.cu"),
        text: &text,
        include_dirs: &[],
        options: &options,
        entries: &entries,
        arch: "sm_90",
    };
    let c = compile::compile(&req, None).expect("the check kernels compile");
    assert!(!c.cubin.is_empty());
    assert_eq!(c.lowered.len(), ENTRIES.len());
}
