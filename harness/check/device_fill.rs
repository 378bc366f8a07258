//! `device_fill`: generating a buffer's seeded inputs on the device with `kernelgate_fill`,
//! the counter-based generator of `check::counter` compiled for the GPU. The host computes the
//! same values (`check::inputs`), bit for bit: it regenerates a set only for a failure
//! message, a dump, or a buffer the device does not fill.
//!
//! Filled on the device: uniform, normal, heavy-tailed and constant floats (`f16`/`bf16`
//! rounded by `check::narrow`, as the host does), and integers into every type (within the
//! type's range). The rest (special values, sorted, iota, `.npy`, all-equal) is generated on
//! the host and uploaded, as before.

use super::kernels::{code, in_blocks, Kernels};
use crate::device::{DeviceBuffer, DeviceError, Gpu, KernelArg};
use crate::dtype::DType;
use crate::suite::Init;

/// One launch's parameters: the form code and its numbers, as `kernelgate_fill` takes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Form {
    /// 0 uniform, 1 normal, 2 integers, 3 heavy-tailed, 4 constant.
    pub code: i32,
    /// The form's floating-point parameters (`a`, `b`, `c`, `d`).
    pub params: [f64; 4],
    /// The integer bounds (form 2).
    pub bounds: [i64; 2],
}

/// How the device fills a buffer of `dtype` initialized by `init`, or `None` where the host
/// must (its values would not be the host's bit for bit).
pub fn form(init: &Init, dtype: DType) -> Option<Form> {
    // `f16`/`bf16` through `narrow`, the host's rounding (not the `half` crate's).
    let float = dtype.is_float();
    let f = |code, params| Form {
        code,
        params,
        bounds: [0, 0],
    };
    match init {
        Init::Uniform { min, max } if float => Some(f(0, [*min, *max, 0.0, 0.0])),
        Init::Normal { mean, std } if float => Some(f(1, [*mean, *std, 0.0, 0.0])),
        Init::Integers { min, max } => {
            let (lo, hi) = dtype.range();
            let fits = float || (*min as f64 >= lo && *max as f64 <= hi);
            fits.then_some(Form {
                code: 2,
                params: [0.0; 4],
                bounds: [*min, *max],
            })
        }
        Init::HeavyTailed {
            mean,
            std,
            outliers,
            scale,
        } if float => Some(f(3, [*mean, *std, *outliers, *scale])),
        Init::Constant(c) if float => Some(f(4, [*c, 0.0, 0.0, 0.0])),
        _ => None,
    }
}

/// Queues filling the first `n` elements of `buf` (of `dtype`) with `form` on `stream`.
pub fn fill(
    kernels: &Kernels,
    gpu: &Gpu,
    (buf, n, dtype): (&DeviceBuffer, usize, DType),
    form: Form,
    stream: u64,
) -> Result<(), DeviceError> {
    if n == 0 {
        return Ok(());
    }
    let dims = in_blocks(n.div_ceil(256).min(4096));
    let n = (n as u64).to_le_bytes();
    let (dtype, code) = (code(dtype).to_le_bytes(), form.code.to_le_bytes());
    let stream = stream.to_le_bytes();
    let p = form.params.map(f64::to_le_bytes);
    let b = form.bounds.map(i64::to_le_bytes);
    let args = [
        KernelArg::Buffer(buf),
        KernelArg::Scalar(&n),
        KernelArg::Scalar(&dtype),
        KernelArg::Scalar(&code),
        KernelArg::Scalar(&stream),
        KernelArg::Scalar(&p[0]),
        KernelArg::Scalar(&p[1]),
        KernelArg::Scalar(&p[2]),
        KernelArg::Scalar(&p[3]),
        KernelArg::Scalar(&b[0]),
        KernelArg::Scalar(&b[1]),
    ];
    gpu.launch(&kernels.fill, dims, &args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_fills_what_it_computes_as_the_host_does() {
        let uniform = Init::Uniform {
            min: -1.0,
            max: 1.0,
        };
        assert_eq!(form(&uniform, DType::F32).map(|f| f.code), Some(0));
        assert_eq!(form(&uniform, DType::Bf16).map(|f| f.code), Some(0));
        let ints = Init::Integers { min: 0, max: 300 };
        assert_eq!(form(&ints, DType::I32).map(|f| f.bounds), Some([0, 300]));
        assert_eq!(
            form(&ints, DType::U8),
            None,
            "out of u8's range: the host saturates"
        );
        assert_eq!(form(&Init::Special { nan: false }, DType::F32), None);
        let sorted = Init::Sorted(Box::new(uniform));
        assert_eq!(form(&sorted, DType::F32), None, "sorting is the host's");
    }

    /// `kernelgate_fill`'s arithmetic for one element, transcribed (form, then `kg_store` or
    /// the integer cast), against what `check::inputs` generates for the same buffer.
    #[test]
    fn the_fill_kernels_formulas_are_the_hosts() {
        use crate::check::counter::{integer, normal, substream, unit};
        use crate::check::inputs::{generate_buffer, stream};
        use crate::suite::load_text;
        let files = [
            "tests/fixtures/inits/inits.toml",
            "suites/saxpy.toml",
            "suites/half.toml",
            "suites/bfloat.toml",
        ];
        let suites: Vec<_> = files
            .iter()
            .map(|f| {
                let path = std::path::Path::new(f);
                load_text(path, &std::fs::read_to_string(path).unwrap()).unwrap()
            })
            .collect();
        let mut checked = 0;
        let mut types = std::collections::HashSet::new();
        for suite in &suites {
            for (i, b) in suite.buffers.iter().enumerate() {
                let Some(f) = b.init.as_ref().and_then(|init| form(init, b.dtype)) else {
                    continue;
                };
                let host = generate_buffer(suite, 0, 5, i).unwrap().unwrap();
                let st = stream(5, i);
                let [a, bb, c, d] = f.params;
                for j in (0..host.len()).step_by(97) {
                    let j64 = j as u64;
                    let v = match f.code {
                        0 => a + (bb - a) * unit(st, j64),
                        1 => a + bb * normal(st, j64),
                        2 => integer(st, j64, f.bounds[0], f.bounds[1]) as f64,
                        3 => {
                            let v = a + bb * normal(st, j64);
                            if unit(substream(st, 3), j64) < c {
                                v * d
                            } else {
                                v
                            }
                        }
                        _ => a,
                    };
                    let device = crate::check::narrow::store(b.dtype, [v]);
                    assert_eq!(device.bytes, host.bytes_of(j), "`{}`[{j}]", b.name);
                    checked += 1;
                    types.insert(b.dtype);
                }
            }
        }
        assert!(checked > 1000, "{checked}");
        for t in [DType::F32, DType::F16, DType::Bf16] {
            assert!(types.contains(&t), "{t:?} covered");
        }
    }
}
