//! Values checked against what they feed: NVRTC `options` against what kernelgate owns, a
//! buffer's `init` against its element type, a kernel's launches against the outputs it must
//! write. Launch shapes, shared memory, registers and memory budgets are checked per case in
//! `cases`, where the sizes are known; the limits live here.

use super::args::ArgSpec;
use super::ctx::Ctx;
use super::decls::LaunchDecl;
use super::{Buffer, Init};
use crate::dtype::DType;
use toml::Spanned;

/// Dynamic shared memory one block may use on the sm_90 class (227 KiB: H100 / H200).
pub const MAX_SHARED_BYTES: i64 = 227 * 1024;
/// Registers one block may use (the register file of an SM, sm_50 to sm_90).
pub const MAX_REGISTERS_PER_BLOCK: i64 = 64 * 1024;
/// Cases one suite may expand to; a sweep past this is a typo (a list pasted twice, a
/// product meant as `zip`) and would take hours of GPU time.
pub const MAX_CASES: usize = 4096;

/// NVRTC options that kernelgate owns, and what to do instead.
fn owned_option(o: &str) -> Option<&'static str> {
    let flag = o.split(['=', ' ']).next().unwrap_or(o);
    Some(match flag {
        "-arch" | "--gpu-architecture" | "-code" | "--gpu-code" | "-gencode"
        | "--generate-code" => "kernelgate owns the target architecture: it compiles for the GPU it runs on (or `KERNELGATE_ARCH` where there is none), so the cached cubin and the run agree; remove this option",
        "-rdc" | "--relocatable-device-code" | "-dc" => "kernels are loaded as one complete module, with no device link step; remove this option",
        "-G" | "--device-debug" => "debug code is not what ships: its times mean nothing; use `-lineinfo` for profiling instead",
        "-I" | "--include-path" => "write the folder in `include_dirs` (relative to the suite file) instead",
        _ if flag.starts_with("-I") => "write the folder in `include_dirs` (relative to the suite file) instead",
        _ if flag.starts_with("-arch") || flag.starts_with("--gpu-arch") => "kernelgate owns the target architecture; remove this option",
        _ if flag.len() <= 3 && flag.starts_with("-O") => "an optimization level is a host compiler's flag, which NVRTC rejects: device code is compiled optimized by default (ptxas -O3); remove it (`-dopt` and `-Xptxas -O1`-style choices are NVRTC's and nvcc's own)",
        _ => return None,
    })
}

/// Checks `options`: NVRTC flags, none of them ones kernelgate owns.
pub(super) fn check_options(ctx: &mut Ctx, options: &[Spanned<String>]) {
    for (i, o) in options.iter().enumerate() {
        let text = o.get_ref().trim();
        if !text.starts_with('-') {
            // A value split from its flag (`"-arch", "sm_80"`) is reported with its flag.
            let after_owned = i > 0 && owned_option(options[i - 1].get_ref().trim()).is_some();
            if !after_owned {
                ctx.error(o.span().start, format!("option `{text}` is not an NVRTC flag (flags start with `-`, e.g. \"-use_fast_math\")"));
            }
        } else if let Some(why) = owned_option(text) {
            ctx.error(o.span().start, format!("option `{text}`: {why}"));
        }
    }
}

/// Checks an init's values against the element type: finite, and within what `dtype` holds.
pub(super) fn check_init(ctx: &mut Ctx, at: usize, init: &Init, dtype: DType) {
    let (lo, hi) = dtype.range();
    let fits = |v: f64| v.is_finite() && v >= lo && v <= hi;
    let range = format!("{dtype} holds {lo:e}..={hi:e}");
    let message = match *init {
        Init::Uniform { min, max } if !fits(min) || !fits(max) => Some(format!(
            "uniform bounds {min} and {max} must be finite and inside the type ({range}): e.g. `min = -1.0, max = 1.0`"
        )),
        Init::Normal { mean, std } if !(mean.is_finite() && std.is_finite()) => Some(format!(
            "normal needs a finite mean and std (got {mean} and {std})"
        )),
        Init::Normal { mean, std } if !fits(mean - 6.0 * std) || !fits(mean + 6.0 * std) => {
            Some(format!(
                "normal with mean {mean} and std {std} draws values outside the type ({range}; mean ± 6 std must fit): lower the std"
            ))
        }
        Init::Iota { start, step } if !(start.is_finite() && step.is_finite()) => Some(format!(
            "iota needs a finite start and step (got {start} and {step})"
        )),
        Init::Iota { step, .. } if step.abs() == 0.0 => {
            Some("iota with `step = 0` is a constant: write `{ constant = ... }`".to_string())
        }
        Init::Iota { start, step }
            if !dtype.is_float() && (start.fract() != 0.0 || step.fract() != 0.0) =>
        {
            Some(format!(
                "`{dtype}` holds integers: iota needs a whole start and step (got {start} and {step})"
            ))
        }
        Init::Iota { start, .. } if !fits(start) => {
            Some(format!("iota starts at {start}, outside the type ({range})"))
        }
        _ => None,
    };
    if let Some(m) = message {
        ctx.error(at, m);
    }
}

/// The last value of an iota over `len` elements, when it leaves the element type.
pub(super) fn iota_overflow(start: f64, step: f64, len: usize, dtype: DType) -> Option<f64> {
    let (lo, hi) = dtype.range();
    let last = start + step * (len.saturating_sub(1)) as f64;
    (!(last >= lo && last <= hi)).then_some(last)
}

/// Every output buffer must be an argument of some launch of each kernel: a kernel that never
/// receives an output leaves it poisoned, and fails every trial.
pub(super) fn outputs_written(
    ctx: &mut Ctx,
    kernel: &str,
    at: usize,
    buffers: &[Buffer],
    launches: &[LaunchDecl],
) {
    for (i, b) in buffers.iter().enumerate() {
        let passed = launches
            .iter()
            .flat_map(|l| &l.args)
            .any(|a| matches!(a.value, ArgSpec::Buffer(x) if x == i));
        if b.role.is_output() && !passed {
            ctx.error(at, format!("kernel `{kernel}` never passes output `{}` to a launch, so it would stay poisoned and fail every trial (add `{}` to `args`, or make it an input)", b.name, b.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_options() {
        for o in [
            "-arch=sm_80",
            "--gpu-architecture=compute_80",
            "-code=sm_80",
            "-rdc=true",
            "-G",
            "-I/usr/include",
            "-arch sm_80",
        ] {
            assert!(owned_option(o).is_some(), "{o}");
        }
        for o in [
            "-use_fast_math",
            "-lineinfo",
            "-std=c++17",
            "-DN=4",
            "--extra-device-vectorization",
        ] {
            assert_eq!(owned_option(o), None, "{o}");
        }
    }

    #[test]
    fn iota_ends() {
        assert_eq!(iota_overflow(0.0, 1.0, 256, DType::U8), None);
        assert_eq!(iota_overflow(0.0, 1.0, 257, DType::U8), Some(256.0));
        assert_eq!(iota_overflow(0.0, -1.0, 2, DType::U32), Some(-1.0));
        assert_eq!(iota_overflow(0.0, 1.0, 70_000, DType::F16), Some(69_999.0));
    }
}
