//! `parse_init`: a buffer's `init` — one of `random` (uniform, normal, int, special, equal, with
//! outliers or sorted), `constant`, `iota` or `npy` — checked against the element type, with
//! keys its kind does not use refused.

use super::ctx::{resolve_file, Ctx};
use super::decls::{InitBounds, Located};
use super::expr::Expr;
use super::schema::{Bound, RawInit};
use super::Init;
use crate::dtype::DType;
use crate::npy;
use std::path::Path;
use toml::Spanned;

/// The init written at `raw` for buffer `buffer` of type `dtype` (`sizes`: the size names); a
/// `.npy` file's element count is noted in `npy_checks` for the cases to check against the
/// buffer's length, and bounds written over the sizes in `bounds` for the cases to resolve.
pub(super) fn parse_init(
    ctx: &mut Ctx,
    (dir, sizes): (&Path, &[String]),
    raw: &Spanned<RawInit>,
    (dtype, buffer): (DType, usize),
    (npy_checks, bounds): (&mut Vec<(usize, usize, usize)>, &mut Vec<InitBounds>),
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
    let init = if let Some(kind) = &i.random {
        let [min, max] = [&i.min, &i.max].map(|b| bound(ctx, b, sizes));
        // Uniform's missing bound is its default; int has none.
        let integers = kind.get_ref() == "int";
        if integers && (min.is_none() || max.is_none()) {
            ctx.error(at, "random = \"int\" needs `min` and `max` (both included)");
            return None;
        }
        // Numbers here; a bound over the sizes is checked per case (`cases`).
        let number = |b: &Option<Result<f64, Located<Expr>>>| match b {
            Some(Ok(v)) => Some(Some(*v)),
            Some(Err(_)) => None,
            None => Some(None),
        };
        let range = [number(&min), number(&max)];
        if range.contains(&None) && (integers || kind.get_ref() == "uniform") {
            bounds.push(InitBounds {
                buffer,
                bounds: [min.unwrap_or(Ok(0.0)), max.unwrap_or(Ok(1.0))],
                integers,
                dtype,
                at,
            });
        }
        random(ctx, at, i, kind, dtype, range)?
    } else if let Some(c) = i.constant {
        let (lo, hi) = dtype.range();
        if !(c >= lo && c <= hi) || (!dtype.is_float() && c.fract() != 0.0) {
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
        npy_file(ctx, dir, name, dtype, buffer, npy_checks)?
    };
    if !keys_fit(ctx, at, i, &init) {
        return None;
    }
    if i.sorted == Some(true) {
        return Some(Init::Sorted(Box::new(init)));
    }
    Some(init)
}

/// A `min` or `max` as written: a number, or an expression over the sizes (`Err`, parsed);
/// `None` when absent or when the expression has errors (recorded).
fn bound(
    ctx: &mut Ctx,
    raw: &Option<Spanned<Bound>>,
    sizes: &[String],
) -> Option<Result<f64, Located<Expr>>> {
    let raw = raw.as_ref()?;
    match raw.get_ref() {
        Bound::Number(v) => Some(Ok(*v)),
        Bound::Expr(text) => {
            let spanned = Spanned::new(raw.span(), text.clone());
            super::ctx::expr(ctx, &spanned, sizes).map(Err)
        }
    }
}

/// `random = "..."`: the seeded kinds. `range` holds `min` and `max` as numbers (`None` where
/// absent); a bound written over the sizes is `None` outside (the cases check it), and the
/// checks that need it wait for the cases.
fn random(
    ctx: &mut Ctx,
    at: usize,
    i: &RawInit,
    kind: &Spanned<String>,
    dtype: DType,
    range: [Option<Option<f64>>; 2],
) -> Option<Init> {
    let over_sizes = range.iter().any(Option::is_none);
    let [min, max] = range.map(|r| r.flatten());
    let integers = |ctx: &mut Ctx, what: &str| {
        if !dtype.is_float() {
            ctx.error(
                kind.span().start,
                format!("`{dtype}` holds integers: {what}"),
            );
        }
    };
    let int_instead = "write `random = \"int\", min = .., max = ..`";
    Some(match kind.get_ref().as_str() {
        "uniform" => {
            let (min, max) = (min.unwrap_or(0.0), max.unwrap_or(1.0));
            if !dtype.is_float() {
                integers(ctx, int_instead);
            } else if !over_sizes && min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
                ctx.error(at, format!("uniform needs min < max (got {min} and {max})"));
            }
            Init::Uniform { min, max }
        }
        "normal" | "equal" => {
            let (mean, std) = (i.mean.unwrap_or(0.0), i.std.unwrap_or(1.0));
            if !dtype.is_float() {
                integers(ctx, int_instead);
            } else if std.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                ctx.error(at, format!("normal needs std > 0 (got {std})"));
            }
            normal(ctx, at, i, kind.get_ref() == "equal", (mean, std))
        }
        "special" => {
            integers(ctx, "special values (±0, denormals, NaN) are for floats");
            Init::Special {
                nan: i.nan.unwrap_or(false),
            }
        }
        "int" if over_sizes => Init::Integers {
            min: min.unwrap_or(0.0) as i64,
            max: max.unwrap_or(0.0) as i64,
        },
        // Both given (`parse_init`): numbers here.
        "int" => int(ctx, at, (min.unwrap_or(0.0), max.unwrap_or(0.0)), dtype),
        other => {
            ctx.error(
                kind.span().start,
                format!(
                    "unknown random kind `{other}`{} (use \"uniform\", \"normal\", \"int\", \"special\" or \"equal\")",
                    crate::suggest::did_you_mean(other, ["uniform", "normal", "int", "special", "equal"])
                ),
            );
            return None;
        }
    })
}

/// `random = "normal"` (heavy-tailed with `outliers`) or `"equal"`.
fn normal(ctx: &mut Ctx, at: usize, i: &RawInit, equal: bool, (mean, std): (f64, f64)) -> Init {
    match (equal, i.outliers) {
        (true, _) => Init::Equal { mean, std },
        (false, Some(outliers)) => {
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
        (false, None) => Init::Normal { mean, std },
    }
}

/// `random = "int"`: whole `min <= max`, both inside the type.
fn int(ctx: &mut Ctx, at: usize, (min, max): (f64, f64), dtype: DType) -> Init {
    let (lo, hi) = dtype.range();
    let in_range = |v: f64| v >= lo && v <= hi;
    if min.fract() != 0.0 || max.fract() != 0.0 || min > max || !in_range(min) || !in_range(max) {
        ctx.error(at, format!("random = \"int\" needs whole numbers min <= max within `{dtype}` (got {min} and {max})"));
    }
    Init::Integers {
        min: min as i64,
        max: max as i64,
    }
}

/// `npy = "file.npy"`: found beside the suite, of the buffer's type.
fn npy_file(
    ctx: &mut Ctx,
    dir: &Path,
    name: &Spanned<String>,
    dtype: DType,
    buffer: usize,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Option<Init> {
    let path = resolve_file(ctx, dir, name, "npy file")?;
    match npy::read(&path) {
        Ok(a) if a.data.dtype != dtype => {
            ctx.error(name.span().start, format!("`{}` holds {} but the buffer is `{dtype}` (convert it with `.astype(...)` or change the type)", name.get_ref(), a.data.dtype));
        }
        Ok(a) => npy_checks.push((buffer, a.data.len(), name.span().start)),
        Err(e) => ctx.error(name.span().start, format!("`{}`: {e}", name.get_ref())),
    }
    Some(Init::Npy(path))
}

/// Whether every key given goes with `init`'s kind; `false` (recorded) for a form's key on
/// another kind. Keys of the wrong kind that change nothing are an error that still loads.
fn keys_fit(ctx: &mut Ctx, at: usize, i: &RawInit, init: &Init) -> bool {
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
        return false;
    }
    let (range, moments, step) = (
        i.min.is_some() || i.max.is_some(),
        i.mean.is_some() || i.std.is_some(),
        i.step.is_some(),
    );
    let stray = match init {
        Init::Uniform { .. } | Init::Integers { .. } => moments || step,
        Init::Normal { .. } | Init::HeavyTailed { .. } | Init::Equal { .. } => range || step,
        Init::Iota { .. } => range || moments,
        Init::Sorted(_) => unreachable!("wrapped after this check"),
        Init::Constant(_) | Init::Npy(_) | Init::Special { .. } => range || moments || step,
    };
    if stray {
        ctx.error(at, "this init has keys its kind does not use (uniform and int take min/max, normal takes mean/std, iota takes step)");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ctx::tests::messages;

    fn read(init: &str, dtype: DType) -> (Option<Init>, Vec<String>) {
        let text = format!("init = {init}\n");
        #[derive(serde::Deserialize)]
        struct One {
            init: Spanned<RawInit>,
        }
        let one: One = toml::from_str(&text).unwrap();
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let (mut npy, mut bounds) = (Vec::new(), Vec::new());
        let sizes = ["n".to_string(), "nbins".to_string()];
        let init = parse_init(
            &mut ctx,
            (Path::new("."), &sizes),
            &one.init,
            (dtype, 0),
            (&mut npy, &mut bounds),
        );
        (init, messages(&ctx))
    }

    #[test]
    fn each_kind_with_its_keys() {
        let ok = |init: &str, dtype| {
            let (i, m) = read(init, dtype);
            assert!(m.is_empty(), "{init}: {m:?}");
            i.unwrap()
        };
        assert_eq!(
            ok("{ random = \"uniform\" }", DType::F32),
            Init::Uniform { min: 0.0, max: 1.0 }
        );
        assert_eq!(
            ok("{ random = \"normal\", outliers = 0.01 }", DType::F32),
            Init::HeavyTailed {
                mean: 0.0,
                std: 1.0,
                outliers: 0.01,
                scale: 1e4
            }
        );
        assert_eq!(
            ok("{ random = \"int\", min = 0, max = 9 }", DType::I32),
            Init::Integers { min: 0, max: 9 }
        );
        assert_eq!(
            ok("{ random = \"uniform\", sorted = true }", DType::F32),
            Init::Sorted(Box::new(Init::Uniform { min: 0.0, max: 1.0 }))
        );
        assert_eq!(
            ok("{ iota = 1.0, step = 2.0 }", DType::F32),
            Init::Iota {
                start: 1.0,
                step: 2.0
            }
        );
        assert_eq!(
            ok("{ random = \"special\", nan = true }", DType::F16),
            Init::Special { nan: true }
        );
    }

    #[test]
    fn wrong_kinds_keys_and_types_say_what_to_write() {
        let (i, m) = read("{ random = \"uniform\", constant = 1.0 }", DType::F32);
        assert_eq!(i, None);
        assert!(
            m[0].starts_with("1:8: an init takes exactly one of"),
            "{m:?}"
        );
        let (_, m) = read("{ random = \"normal\" }", DType::I32);
        assert!(
            m[0].starts_with("1:19: `i32` holds integers: write `random = \"int\""),
            "{m:?}"
        );
        let (i, m) = read("{ random = \"int\", min = 0 }", DType::I32);
        assert_eq!(
            (i, m[0].as_str()),
            (
                None,
                "1:8: random = \"int\" needs `min` and `max` (both included)"
            )
        );
        let (i, m) = read("{ constant = 1.0, nan = true }", DType::F32);
        assert_eq!(i, None);
        assert!(m[0].starts_with("1:8: `outliers`/`scale` go with"), "{m:?}");
        let (i, m) = read("{ constant = 300.0, step = 1.0 }", DType::U8);
        assert_eq!(i, Some(Init::Constant(300.0)));
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[1].starts_with("1:8: this init has keys its kind does not use"),
            "{m:?}"
        );
        let (i, m) = read("{ random = \"zipf\" }", DType::F32);
        assert_eq!(i, None);
        assert!(
            m[0].starts_with("1:19: unknown random kind `zipf`"),
            "{m:?}"
        );
    }
}
