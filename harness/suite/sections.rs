//! `parse_init`, `build_check`, `build_bench`: a buffer's `init` and the `[check]` and
//! `[bench]` tables, with their defaults.

use super::ctx::{expr, resolve_file, Ctx};
use super::decls::Located;
use super::expr::Expr;
use super::schema::RawInit;
use super::{Bench, Buffer, Check, Init, Role, Tolerance};
use crate::dtype::DType;
use crate::npy;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// Defaults, documented in docs/suites.md.
pub const DEFAULT_TRIALS: u32 = 3;
/// Seed of the first input set.
pub const DEFAULT_SEED: u64 = 0x5EED;
/// Samples always taken per kernel.
pub const DEFAULT_MIN_SAMPLES: usize = 10;
/// Samples never exceeded per kernel.
pub const DEFAULT_MAX_SAMPLES: usize = 2000;
/// Sampling time floor per trial.
pub const DEFAULT_MIN_TIME_MS: u64 = 10;
/// Sampling time cap per trial.
pub const DEFAULT_MAX_TIME_MS: u64 = 1000;
/// Target relative half-width of the median's 95% interval.
pub const DEFAULT_PRECISION: f64 = 0.01;
/// The smallest slowdown that fails a trial: changes smaller than 3% are not regressions.
pub const DEFAULT_MAX_SLOWDOWN: f64 = 0.03;

pub(super) fn parse_init(
    ctx: &mut Ctx,
    dir: &Path,
    raw: &Spanned<RawInit>,
    dtype: DType,
    buffer: usize,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Option<Init> {
    let at = raw.span().start;
    let i = raw.get_ref();
    let given = [
        i.random.is_some(),
        i.constant.is_some(),
        i.iota.is_some(),
        i.npy.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        ctx.error(at, "an init takes exactly one of `random`, `constant`, `iota` or `npy`, e.g. `{ random = \"normal\" }` or `{ constant = 0.0 }`");
        return None;
    }
    let (lo, hi) = dtype.range();
    let in_range = |v: f64| v >= lo && v <= hi;
    let init = if let Some(kind) = &i.random {
        match kind.get_ref().as_str() {
            "uniform" => {
                let (min, max) = (i.min.unwrap_or(0.0), i.max.unwrap_or(1.0));
                if !dtype.is_float() {
                    ctx.error(kind.span().start, format!("`{dtype}` holds integers: write `random = \"int\", min = .., max = ..`"));
                } else if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
                    ctx.error(at, format!("uniform needs min < max (got {min} and {max})"));
                }
                Init::Uniform { min, max }
            }
            "normal" | "equal" => {
                let (mean, std) = (i.mean.unwrap_or(0.0), i.std.unwrap_or(1.0));
                if !dtype.is_float() {
                    ctx.error(kind.span().start, format!("`{dtype}` holds integers: write `random = \"int\", min = .., max = ..`"));
                } else if std.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    ctx.error(at, format!("normal needs std > 0 (got {std})"));
                }
                match (kind.get_ref().as_str(), i.outliers) {
                    ("equal", _) => Init::Equal { mean, std },
                    (_, Some(outliers)) => {
                        let scale = i.scale.unwrap_or(1e4);
                        if !(0.0..=1.0).contains(&outliers) || !scale.is_finite() {
                            ctx.error(at, format!("outliers is a fraction in [0, 1] and scale a finite number (got {outliers} and {scale})"));
                        }
                        Init::HeavyTailed {
                            mean,
                            std,
                            outliers,
                            scale,
                        }
                    }
                    _ => Init::Normal { mean, std },
                }
            }
            "special" => {
                if !dtype.is_float() {
                    ctx.error(kind.span().start, format!("`{dtype}` holds integers: special values (±0, denormals, NaN) are for floats"));
                }
                Init::Special {
                    nan: i.nan.unwrap_or(false),
                }
            }
            "int" => {
                let (Some(min), Some(max)) = (i.min, i.max) else {
                    ctx.error(at, "random = \"int\" needs `min` and `max` (both included)");
                    return None;
                };
                if min.fract() != 0.0
                    || max.fract() != 0.0
                    || min > max
                    || !in_range(min)
                    || !in_range(max)
                {
                    ctx.error(at, format!("random = \"int\" needs whole numbers min <= max within `{dtype}` (got {min} and {max})"));
                }
                Init::Integers {
                    min: min as i64,
                    max: max as i64,
                }
            }
            other => {
                ctx.error(
                    kind.span().start,
                    format!(
                        "unknown random kind `{other}` (use \"uniform\", \"normal\", \"int\", \"special\" or \"equal\")"
                    ),
                );
                return None;
            }
        }
    } else if let Some(c) = i.constant {
        if !in_range(c) || (!dtype.is_float() && c.fract() != 0.0) {
            ctx.error(at, format!("constant {c} does not fit in `{dtype}`"));
        }
        Init::Constant(c)
    } else if let Some(start) = i.iota {
        Init::Iota {
            start,
            step: i.step.unwrap_or(1.0),
        }
    } else {
        let name = i.npy.as_ref()?;
        let path = resolve_file(ctx, dir, name, "npy file")?;
        match npy::read(&path) {
            Ok(a) if a.data.dtype != dtype => {
                ctx.error(name.span().start, format!("`{}` holds {} but the buffer is `{dtype}` (convert it with `.astype(...)` or change the type)", name.get_ref(), a.data.dtype));
            }
            Ok(a) => npy_checks.push((buffer, a.data.len(), name.span().start)),
            Err(e) => ctx.error(name.span().start, format!("`{}`: {e}", name.get_ref())),
        }
        Init::Npy(path)
    };
    let forms = [
        matches!(init, Init::HeavyTailed { .. }) || (i.outliers.is_none() && i.scale.is_none()),
        matches!(init, Init::Special { .. }) || i.nan.is_none(),
        matches!(
            init,
            Init::Uniform { .. } | Init::Normal { .. } | Init::Integers { .. }
        ) || i.sorted.is_none(),
    ];
    if forms.contains(&false) {
        ctx.error(at, "`outliers`/`scale` go with random = \"normal\", `nan` with random = \"special\", `sorted` with uniform, normal or int");
        return None;
    }
    let stray = match &init {
        Init::Uniform { .. } => i.mean.is_some() || i.std.is_some() || i.step.is_some(),
        Init::Normal { .. } => i.min.is_some() || i.max.is_some() || i.step.is_some(),
        Init::Integers { .. } => i.mean.is_some() || i.std.is_some() || i.step.is_some(),
        Init::Iota { .. } => {
            i.min.is_some() || i.max.is_some() || i.mean.is_some() || i.std.is_some()
        }
        Init::HeavyTailed { .. } | Init::Equal { .. } => {
            i.min.is_some() || i.max.is_some() || i.step.is_some()
        }
        Init::Sorted(_) => unreachable!("wrapped below"),
        Init::Constant(_) | Init::Npy(_) | Init::Special { .. } => {
            i.min.is_some()
                || i.max.is_some()
                || i.mean.is_some()
                || i.std.is_some()
                || i.step.is_some()
        }
    };
    if stray {
        ctx.error(at, "this init has keys its kind does not use (uniform and int take min/max, normal takes mean/std, iota takes step)");
    }
    if i.sorted == Some(true) {
        return Some(Init::Sorted(Box::new(init)));
    }
    Some(init)
}

pub(super) fn parse_tolerance(ctx: &mut Ctx, v: &Option<Spanned<f64>>, default: f64) -> f64 {
    match v {
        Some(t) if !(t.get_ref().is_finite() && *t.get_ref() >= 0.0) => {
            ctx.error(t.span().start, "tolerances are finite numbers >= 0");
            default
        }
        Some(t) => *t.get_ref(),
        None => default,
    }
}

pub(super) fn build_check(
    ctx: &mut Ctx,
    raw: Option<&Spanned<super::schema::RawCheck>>,
    buffers: &[Buffer],
    by_name: &BTreeMap<String, usize>,
    dir: &Path,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Check {
    let mut check = Check {
        trials: DEFAULT_TRIALS,
        seed: DEFAULT_SEED,
        tolerances: BTreeMap::new(),
        golden: BTreeMap::new(),
    };
    let rc = raw.map(|r| r.get_ref());
    let (rtol, atol, allow_nan) = rc.map_or((None, None, false), |c| {
        (c.rtol.clone(), c.atol.clone(), c.allow_nan)
    });
    for (i, b) in buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.role.is_output())
    {
        let (dr, da) = b.dtype.default_tolerance();
        let tol = Tolerance {
            rtol: parse_tolerance(ctx, &rtol, dr),
            atol: parse_tolerance(ctx, &atol, da),
            allow_nan,
        };
        check.tolerances.insert(i, tol);
    }
    let Some(rc) = rc else { return check };
    if let Some(t) = &rc.trials {
        if *t.get_ref() == 0 {
            ctx.error(t.span().start, "`trials` must be at least 1");
        }
        check.trials = (*t.get_ref()).max(1);
    }
    check.seed = rc.seed.unwrap_or(DEFAULT_SEED);
    let output_index = |ctx: &mut Ctx, name: &Spanned<String>| -> Option<usize> {
        match by_name.get(name.get_ref()) {
            Some(&i) if buffers[i].role.is_output() => Some(i),
            Some(_) => {
                ctx.error(
                    name.span().start,
                    format!(
                        "`{}` is an input: only outputs are compared",
                        name.get_ref()
                    ),
                );
                None
            }
            None => {
                let outs: Vec<_> = buffers
                    .iter()
                    .filter(|b| b.role.is_output())
                    .map(|b| format!("`{}`", b.name))
                    .collect();
                ctx.error(
                    name.span().start,
                    format!(
                        "no buffer `{}` (outputs: {})",
                        name.get_ref(),
                        outs.join(", ")
                    ),
                );
                None
            }
        }
    };
    for (name, tol) in &rc.output {
        let Some(i) = output_index(ctx, name) else {
            continue;
        };
        let base = check.tolerances[&i];
        let t = tol.get_ref();
        let tol = Tolerance {
            rtol: parse_tolerance(ctx, &t.rtol, base.rtol),
            atol: parse_tolerance(ctx, &t.atol, base.atol),
            allow_nan: t.allow_nan.unwrap_or(base.allow_nan),
        };
        check.tolerances.insert(i, tol);
    }
    for (name, file) in &rc.golden {
        let Some(i) = output_index(ctx, name) else {
            continue;
        };
        let fixed = |b: &Buffer| {
            !matches!(
                b.init,
                Some(
                    Init::Uniform { .. }
                        | Init::Normal { .. }
                        | Init::Integers { .. }
                        | Init::HeavyTailed { .. }
                        | Init::Special { .. }
                        | Init::Equal { .. }
                        | Init::Sorted(_)
                )
            )
        };
        if let Some(b) = buffers.iter().find(|b| b.role != Role::Output && !fixed(b)) {
            ctx.error(name.span().start, format!("golden outputs need fixed inputs, but `{}` is random (give it `init = {{ npy = \"...\" }}`)", b.name));
        }
        let Some(path) = resolve_file(ctx, dir, file, "golden file") else {
            continue;
        };
        match npy::read(&path) {
            Ok(a) if a.data.dtype != buffers[i].dtype => ctx.error(
                file.span().start,
                format!(
                    "`{}` holds {} but output `{}` is `{}`",
                    file.get_ref(),
                    a.data.dtype,
                    buffers[i].name,
                    buffers[i].dtype
                ),
            ),
            Ok(a) => {
                // A check that cannot fail is reported before anything runs (issue 11).
                let tol = check.tolerances[&i];
                if let Some(v) = crate::check::vacuous::vacuous(&a.data, tol) {
                    ctx.error(file.span().start, v.message(&buffers[i].name, tol));
                }
                npy_checks.push((i, a.data.len(), file.span().start))
            }
            Err(e) => ctx.error(file.span().start, format!("`{}`: {e}", file.get_ref())),
        }
        check.golden.insert(i, path);
    }
    check
}

pub(super) type BenchParts = (Bench, Option<Located<Expr>>, Option<Located<Expr>>);

pub(super) fn build_bench(
    ctx: &mut Ctx,
    raw: Option<&Spanned<super::schema::RawBench>>,
    sizes: &[String],
) -> BenchParts {
    let mut bench = Bench {
        l2_flush: true,
        min_samples: DEFAULT_MIN_SAMPLES,
        max_samples: DEFAULT_MAX_SAMPLES,
        min_time_ms: DEFAULT_MIN_TIME_MS,
        max_time_ms: DEFAULT_MAX_TIME_MS,
        precision: DEFAULT_PRECISION,
        max_slowdown: DEFAULT_MAX_SLOWDOWN,
        memory_growth: 0.0,
    };
    let Some(rb) = raw.map(|r| r.get_ref()) else {
        return (bench, None, None);
    };
    bench.l2_flush = rb.l2_flush.unwrap_or(true);
    if let Some(m) = &rb.min_samples {
        bench.min_samples = *m.get_ref();
        if bench.min_samples < 3 {
            ctx.error(m.span().start, "`min_samples` must be at least 3");
        }
    }
    if let Some(m) = &rb.max_samples {
        bench.max_samples = *m.get_ref();
        if bench.max_samples < bench.min_samples {
            ctx.error(
                m.span().start,
                format!(
                    "`max_samples` must be at least `min_samples` ({})",
                    bench.min_samples
                ),
            );
        }
    }
    if let Some(m) = &rb.min_time_ms {
        bench.min_time_ms = *m.get_ref();
    }
    if let Some(m) = &rb.max_time_ms {
        bench.max_time_ms = *m.get_ref();
        if bench.max_time_ms == 0 || bench.max_time_ms < bench.min_time_ms {
            ctx.error(
                m.span().start,
                format!(
                    "`max_time_ms` must be positive and at least `min_time_ms` ({})",
                    bench.min_time_ms
                ),
            );
        }
    }
    if let Some(p) = &rb.precision {
        match parse_percent(p.get_ref()) {
            Some(v) if v > 0.0 && v < 1.0 => bench.precision = v,
            _ => ctx.error(
                p.span().start,
                format!(
                    "bad precision `{}` (write a percentage such as \"0.5%\")",
                    p.get_ref()
                ),
            ),
        }
    }
    if let Some(m) = &rb.max_slowdown {
        match parse_percent(m.get_ref()) {
            Some(v) if v > 0.0 && v < 10.0 => bench.max_slowdown = v,
            _ => ctx.error(
                m.span().start,
                format!(
                    "bad max_slowdown `{}` (write a percentage such as \"3%\")",
                    m.get_ref()
                ),
            ),
        }
    }
    if let Some(m) = &rb.memory_growth {
        match parse_percent(m.get_ref()) {
            Some(v) if v >= 0.0 => bench.memory_growth = v,
            _ => ctx.error(
                m.span().start,
                format!(
                    "bad memory_growth `{}` (write a percentage such as \"0%\" or \"10%\")",
                    m.get_ref()
                ),
            ),
        }
    }
    if let Some(p) = rb
        .precision
        .as_ref()
        .filter(|_| bench.precision >= bench.max_slowdown)
    {
        ctx.error(p.span().start, format!("precision {} is not finer than max_slowdown {}: a slowdown that size could never be told from noise (make precision a fraction of max_slowdown, e.g. \"{}%\")", p.get_ref(), rb.max_slowdown.as_ref().map_or("3%".to_string(), |m| m.get_ref().clone()), bench.max_slowdown * 100.0 / 3.0));
    }
    let bytes = rb.bytes.as_ref().and_then(|b| expr(ctx, b, sizes));
    let flops = rb.flops.as_ref().and_then(|f| expr(ctx, f, sizes));
    (bench, bytes, flops)
}

/// Parses `"2%"` as 0.02.
pub fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    v.is_finite().then_some(v / 100.0)
}
