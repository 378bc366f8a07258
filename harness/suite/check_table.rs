//! Phase `check_table`: the `[check]` table — input sets per trial, the seed, tolerances (by
//! type, suite-wide, per output) and golden files, each golden file checked able to fail.

use super::buffer_tables::Buffers;
use super::ctx::{resolve_file, Ctx};
use super::schema::RawCheck;
use super::{Buffer, Check, Init, Role, Tolerance};
use crate::npy;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// Input sets per trial when `[check]` does not say (documented in docs/suites.md).
pub const DEFAULT_TRIALS: u32 = 3;
/// Seed of the first input set.
pub const DEFAULT_SEED: u64 = 0x5EED;

/// Reads `[check]` for the suite's buffers (of the suite file in `dir`); golden files' element
/// counts are noted in their `npy_checks`. Errors are recorded in `ctx`.
pub(super) fn check_table(
    ctx: &mut Ctx,
    raw: Option<&Spanned<RawCheck>>,
    all: &mut Buffers,
    dir: &Path,
) -> Check {
    let buffers = &all.list[..];
    let rc = raw.map(|r| r.get_ref());
    let mut check = Check {
        trials: DEFAULT_TRIALS,
        seed: DEFAULT_SEED,
        tolerances: default_tolerances(ctx, rc, buffers),
        golden: BTreeMap::new(),
    };
    let Some(rc) = rc else { return check };
    if let Some(t) = &rc.trials {
        if *t.get_ref() == 0 {
            ctx.error(t.span().start, "`trials` must be at least 1");
        }
        check.trials = (*t.get_ref()).max(1);
    }
    check.seed = rc.seed.unwrap_or(DEFAULT_SEED);
    for (name, tol) in &rc.output {
        let Some(i) = output_index(ctx, name, all) else {
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
        let Some(i) = output_index(ctx, name, all) else {
            continue;
        };
        let npy_checks = &mut all.npy_checks;
        if let Some(path) = golden(ctx, dir, (name, file), (i, buffers), &check, npy_checks) {
            check.golden.insert(i, path);
        }
    }
    check
}

/// Every output's tolerance: the suite-wide `rtol`/`atol` of `[check]`, else its type's.
fn default_tolerances(
    ctx: &mut Ctx,
    rc: Option<&RawCheck>,
    buffers: &[Buffer],
) -> BTreeMap<usize, Tolerance> {
    let (rtol, atol, allow_nan) = rc.map_or((None, None, false), |c| {
        (c.rtol.clone(), c.atol.clone(), c.allow_nan)
    });
    let outputs = buffers.iter().enumerate().filter(|b| b.1.role.is_output());
    outputs
        .map(|(i, b)| {
            let (dr, da) = b.dtype.default_tolerance();
            let tol = Tolerance {
                rtol: parse_tolerance(ctx, &rtol, dr),
                atol: parse_tolerance(ctx, &atol, da),
                allow_nan,
            };
            (i, tol)
        })
        .collect()
}

/// A tolerance as written (finite, at least 0), else `default`.
fn parse_tolerance(ctx: &mut Ctx, v: &Option<Spanned<f64>>, default: f64) -> f64 {
    match v {
        Some(t) if !(t.get_ref().is_finite() && *t.get_ref() >= 0.0) => {
            ctx.error(t.span().start, "tolerances are finite numbers >= 0");
            default
        }
        Some(t) => *t.get_ref(),
        None => default,
    }
}

/// The output buffer `name` names, or an error listing the outputs.
fn output_index(ctx: &mut Ctx, name: &Spanned<String>, all: &Buffers) -> Option<usize> {
    match all.by_name.get(name.get_ref()) {
        Some(&i) if all.list[i].role.is_output() => Some(i),
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
            let outs = all.list.iter().filter(|b| b.role.is_output());
            let outs = crate::suggest::quoted(outs.map(|b| &b.name), ", ");
            ctx.error(
                name.span().start,
                format!("no buffer `{}` (outputs: {outs})", name.get_ref()),
            );
            None
        }
    }
}

/// Output `i`'s golden file: only with fixed inputs, of the output's type, and able to fail
/// at its tolerance (a check that cannot fail is reported before anything runs, issue 11).
fn golden(
    ctx: &mut Ctx,
    dir: &Path,
    (name, file): (&Spanned<String>, &Spanned<String>),
    (i, buffers): (usize, &[Buffer]),
    check: &Check,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Option<std::path::PathBuf> {
    let random = |b: &Buffer| b.init.as_ref().is_some_and(Init::is_seeded);
    if let Some(b) = buffers.iter().find(|b| b.role != Role::Output && random(b)) {
        ctx.error(name.span().start, format!("golden outputs need fixed inputs, but `{}` is random (give it `init = {{ npy = \"...\" }}`)", b.name));
    }
    let path = resolve_file(ctx, dir, file, "golden file")?;
    let at = file.span().start;
    match npy::read(&path) {
        Ok(a) if a.data.dtype != buffers[i].dtype => ctx.error(
            at,
            format!(
                "`{}` holds {} but output `{}` is `{}`",
                file.get_ref(),
                a.data.dtype,
                buffers[i].name,
                buffers[i].dtype
            ),
        ),
        Ok(a) => {
            let tol = check.tolerances[&i];
            // NaN never passes without `allow_nan`: one in the golden file fails every run.
            let nans = (0..a.data.len()).filter(|&k| a.data.get(k).is_nan());
            if let (false, Some(first)) = (tol.allow_nan, nans.clone().next()) {
                let all = nans.count();
                ctx.error(
                    at,
                    format!(
                        "`{}` holds NaN ({all} of {} elements, the first at index {first}): without `allow_nan` a NaN never passes, so the check could never pass (regenerate the golden output, or set `allow_nan = true` if NaN is the answer)",
                        file.get_ref(),
                        a.data.len()
                    ),
                );
            } else if let Some(v) = crate::check::vacuous::vacuous(&a.data, tol) {
                ctx.error(at, v.message(&buffers[i].name, tol));
            }
            npy_checks.push((i, a.data.len(), at))
        }
        Err(e) => ctx.error(at, format!("`{}`: {e}", file.get_ref())),
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::suite::ctx::tests::{messages, parsed};

    fn buffers() -> Buffers {
        let b = |name: &str, role, init| Buffer {
            name: name.into(),
            dtype: DType::F32,
            role,
            init,
        };
        Buffers {
            list: vec![
                b("x", Role::Input, Some(Init::Uniform { min: 0.0, max: 1.0 })),
                b("y", Role::Output, None),
            ],
            by_name: [("x".to_string(), 0), ("y".to_string(), 1)].into(),
            ..Buffers::default()
        }
    }

    fn read(check: &str) -> (Check, Vec<String>) {
        let (raw, text) = parsed(&format!("[suite]\nname = \"s\"\n{check}"));
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let c = check_table(&mut ctx, raw.check.as_ref(), &mut buffers(), Path::new("."));
        (c, messages(&ctx))
    }

    #[test]
    fn defaults_then_suite_wide_then_per_output() {
        let (c, m) = read("");
        assert!(m.is_empty(), "{m:?}");
        assert_eq!((c.trials, c.seed), (DEFAULT_TRIALS, DEFAULT_SEED));
        assert_eq!(c.tolerances[&1].rtol, DType::F32.default_tolerance().0);
        assert!(!c.tolerances.contains_key(&0), "inputs are not compared");
        let (c, m) = read("[check]\ntrials = 2\nrtol = 1e-3\n[check.output.y]\natol = 0.5\n");
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(c.trials, 2);
        assert_eq!((c.tolerances[&1].rtol, c.tolerances[&1].atol), (1e-3, 0.5));
    }

    #[test]
    fn inputs_unknown_outputs_and_random_goldens_are_errors() {
        let (_, m) = read(
            "[check]\ntrials = 0\n[check.output.x]\nrtol = -1.0\n[check.output.z]\natol = 1.0\n",
        );
        assert_eq!(m[0], "4:10: `trials` must be at least 1");
        assert_eq!(m[1], "5:15: `x` is an input: only outputs are compared");
        assert_eq!(m[2], "7:15: no buffer `z` (outputs: `y`)");
        let (c, m) = read("[check.golden]\ny = \"gone.npy\"\n");
        assert!(
            m[0].starts_with("4:1: golden outputs need fixed inputs, but `x` is random"),
            "{m:?}"
        );
        assert!(
            m[1].starts_with("4:5: golden file `gone.npy` not found"),
            "{m:?}"
        );
        assert!(c.golden.is_empty());
    }

    #[test]
    fn a_golden_file_holding_nan_can_never_pass() {
        let dir = std::env::temp_dir().join(format!("kg-nan-golden-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut values = [1.0f32; 8];
        values[3] = f32::NAN;
        values[5] = f32::NAN;
        let data = crate::dtype::HostData {
            dtype: DType::F32,
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        std::fs::write(
            dir.join("g.npy"),
            crate::npy::to_bytes(&data, &[8]).unwrap(),
        )
        .unwrap();
        let run = |check: &str| {
            let (raw, text) = parsed(&format!("[suite]\nname = \"s\"\n{check}"));
            let file = dir.join("s.toml");
            let mut ctx = Ctx::new(&file, &text);
            check_table(&mut ctx, raw.check.as_ref(), &mut buffers(), &dir);
            messages(&ctx)
        };
        let m = run("[check.golden]\ny = \"g.npy\"\n");
        assert!(
            m.iter().any(|m| m.starts_with("4:5: `g.npy` holds NaN (2 of 8 elements, the first at index 3): without `allow_nan`")),
            "{m:?}"
        );
        let m = run("[check]\nallow_nan = true\n[check.golden]\ny = \"g.npy\"\n");
        assert!(!m.iter().any(|m| m.contains("holds NaN")), "{m:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
