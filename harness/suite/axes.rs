//! `variants`: a `[[kernel]]`'s own axes (`axes = { TILE = [16, 32], threads = [128, 256] }`).
//! Every combination a `skip` condition does not remove is a variant of the kernel — a trial of
//! its own, `tiled[TILE=16,threads=128]` — with the values put into its template arguments
//! (`entry = "tiled<TILE>"`), passed as `-D` defines (`defines = ["TILE"]`), and read by its
//! launch expressions.

use super::ctx::Ctx;
use super::decls::{Condition, Variant};
use super::schema::{RawKernel, SizeTable};
use std::collections::BTreeMap;
use toml::Spanned;

/// More variants than this in one kernel is an error: each is compiled and timed.
pub const MAX_VARIANTS: usize = 256;

/// More combinations of axis values than this is an error before any `skip` is evaluated.
const MAX_COMBINATIONS: usize = 1 << 16;

/// The variants of kernel `k` (its table at `table_at`); `names` are what its expressions may read
/// besides its axes (sizes and device attributes). One plain variant without axes; errors are
/// recorded, and a kernel whose axes are wrong keeps one variant so that the rest is checked.
pub(super) fn variants(
    ctx: &mut Ctx,
    (k, table_at): (&RawKernel, usize),
    names: &[String],
) -> Vec<Variant> {
    let Some(table) = &k.axes else {
        let stray = k.defines.first().map(|d| (d.span().start, "defines"));
        if let Some((at, key)) = stray.or(k.skip.first().map(|s| (s.span().start, "skip"))) {
            ctx.error(at, format!("`{key}` reads the kernel's axes, and kernel `{}` declares none (add `axes = {{ NAME = [values] }}`)", k.name.get_ref()));
        }
        return vec![Variant::default()];
    };
    let at = table.span().start;
    let axes = super::sweep::values(ctx, Some(table), (at, "axis"), false);
    // After an error, one variant of the first values: the rest of the kernel is still checked,
    // its expressions reading the axes.
    let first: Vec<(String, i64)> = axes.iter().map(|(n, v)| (n.clone(), v[0])).collect();
    let placeholder = || vec![variant(k, first.clone())];
    if k.reference.as_ref().is_some_and(|r| *r.get_ref()) {
        ctx.error(at, "the reference cannot have axes: every variant is timed against it (give it fixed values, and the axes to the kernels compared with it)");
        return placeholder();
    }
    if !axes_named_well(ctx, (k, table_at), table, &axes, names) {
        return placeholder();
    }
    // Counted as the sizes' cases are (`cases`): a product past `usize` is too many.
    let count = axes
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()));
    let Some(count) = count.filter(|&c| c <= MAX_COMBINATIONS) else {
        let n = count.map_or_else(|| "too many".to_string(), |c| c.to_string());
        ctx.error(at, format!("the axes make {n} combinations, over the limit of {MAX_COMBINATIONS} (fewer values)"));
        return placeholder();
    };
    let Some((skips, case_skips)) = skip_conditions(ctx, k, &axes, names) else {
        return placeholder();
    };
    let device = ctx
        .device
        .clone()
        .unwrap_or_else(super::device::for_expressions);
    let mut out = Vec::new();
    for values in combinations(&axes) {
        let known: BTreeMap<String, i64> = device.named().chain(values.clone()).collect();
        if !any_holds(ctx, &skips, &known) {
            out.push(Variant {
                case_skips: case_skips.clone(),
                ..variant(k, values)
            });
        }
    }
    if out.is_empty() {
        let at = k.skip.first().map_or(at, |s| s.span().start);
        ctx.error(
            at,
            format!(
                "every variant of kernel `{}` is skipped on {} (loosen a `skip` condition)",
                k.name.get_ref(),
                device.name
            ),
        );
        return placeholder();
    }
    if out.len() > MAX_VARIANTS {
        let n = out.len();
        ctx.error(at, format!("the axes make {n} variants ({count} combinations, {} skipped), over the limit of {MAX_VARIANTS} (fewer values, or a `skip` condition)", count - n));
        return placeholder();
    }
    out
}

/// The variant of kernel `k` with these axis values, and its defines.
fn variant(k: &RawKernel, values: Vec<(String, i64)>) -> Variant {
    let defines = k.defines.iter().filter_map(|d| {
        let v = values.iter().find(|(n, _)| n == d.get_ref())?.1;
        Some(format!("-D{}={v}", d.get_ref()))
    });
    Variant {
        defines: defines.collect(),
        values,
        case_skips: Vec::new(),
    }
}

/// Axis values as names and labels show them: `TILE=16,threads=128` (empty for none).
pub(super) fn shown(values: &[(String, i64)]) -> String {
    let shown: Vec<String> = values.iter().map(|(n, v)| format!("{n}={v}")).collect();
    shown.join(",")
}

/// Axis names that are not sizes or device attributes, `defines` that name axes, and every axis
/// used somewhere: else two variants would be the same code and launch under two names.
fn axes_named_well(
    ctx: &mut Ctx,
    (k, table_at): (&RawKernel, usize),
    table: &Spanned<SizeTable>,
    axes: &[(String, Vec<i64>)],
    names: &[String],
) -> bool {
    let before = ctx.diagnostics.len();
    let at = table.span().start;
    for (axis, _) in axes {
        if names.contains(axis) {
            let what = match crate::device::Attributes::NAMES.contains(&axis.as_str()) {
                true => "a device attribute",
                false => "a size of the suite",
            };
            ctx.error(
                at,
                format!("axis `{axis}` has the name of {what} (rename the axis)"),
            );
        }
    }
    let axis_names: Vec<&str> = axes.iter().map(|(n, _)| n.as_str()).collect();
    for d in &k.defines {
        if !axis_names.contains(&d.get_ref().as_str()) {
            let hint = crate::suggest::did_you_mean(d.get_ref(), axis_names.iter().copied());
            ctx.error(
                d.span().start,
                format!(
                    "`defines` names `{}`{hint}, which is not an axis of this kernel (axes: {})",
                    d.get_ref(),
                    axis_names.join(", ")
                ),
            );
        }
    }
    let used = written(ctx, k, table_at);
    for (axis, _) in axes {
        let defined = k.defines.iter().any(|d| d.get_ref() == axis);
        if !defined && !used.iter().any(|w| w == axis) {
            ctx.error(at, format!("axis `{axis}` changes nothing: name it in the entry's template arguments (`kernel<{axis}>`), in `defines`, or in a launch expression"));
        }
    }
    ctx.diagnostics.len() == before
}

/// The words of everything a variant's values can reach: the entries' template arguments, and
/// the launch and scratch expressions.
fn written(ctx: &mut Ctx, k: &RawKernel, at: usize) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    for l in super::kernels::launch_tables(ctx, k, at) {
        let entry = l.entry.get_ref();
        texts.extend(entry.split_once('<').map(|(_, t)| t.to_string()));
        let exprs = l.grid.get_ref().iter().chain(l.block.get_ref());
        texts.extend(exprs.chain(&l.shared).map(|e| e.get_ref().text.clone()));
        texts.extend(l.args.get_ref().iter().map(|a| a.get_ref().clone()));
    }
    let lens = k.scratch.iter().map(|s| &s.get_ref().len);
    texts.extend(lens.map(|len| len.get_ref().text.clone()));
    let words = texts.iter().flat_map(|t| {
        let words = t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        words.map(str::to_string).collect::<Vec<_>>()
    });
    words.collect()
}

/// Every combination of the named lists' values (a kernel's axes, a suite's sizes), the first
/// list slowest.
pub(super) fn combinations(axes: &[(String, Vec<i64>)]) -> Vec<Vec<(String, i64)>> {
    let mut out = vec![Vec::new()];
    for (name, values) in axes {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<(String, i64)>| {
                values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push((name.clone(), *v));
                    next
                })
            })
            .collect();
    }
    out
}

/// The kernel's skip conditions, parsed, each reading its axes, the device's attributes and the
/// suite's `sizes`: those that read no size (decided per variant), then those that do (decided
/// per case); `None` after an error.
type Conditions = (Vec<Condition>, Vec<Condition>);
fn skip_conditions(
    ctx: &mut Ctx,
    k: &RawKernel,
    axes: &[(String, Vec<i64>)],
    sizes: &[String],
) -> Option<Conditions> {
    let before = ctx.diagnostics.len();
    let mut out: Conditions = (Vec::new(), Vec::new());
    for s in &k.skip {
        let base = s.span().start + s.get_ref().quoted as usize;
        match Condition::parse(&s.get_ref().text, base) {
            Ok(c) => {
                let mut per_case = false;
                for (name, offset) in c.names() {
                    let axis = axes.iter().any(|(a, _)| a == name);
                    let size = sizes.iter().any(|n| n == name);
                    let device = crate::device::Attributes::NAMES.contains(&name);
                    per_case |= size && !device;
                    if !axis && !size && !device {
                        let list = crate::suggest::quoted(axes.iter().map(|(a, _)| a), ", ");
                        ctx.error(base + offset, format!("unknown name `{name}` in a skip condition: it reads this kernel's axes ({list}), the suite's sizes and the device's attributes"));
                    }
                }
                if per_case { &mut out.1 } else { &mut out.0 }.push(c);
            }
            Err(e) => ctx.error(
                base + e.offset,
                format!("bad skip condition: {}", e.message),
            ),
        }
    }
    (ctx.diagnostics.len() == before).then_some(out)
}

/// Whether one of the skip `conditions` holds for `values` (a variant's axes and the device's
/// attributes; for those that read a size, a case's sizes too); an error in one is recorded
/// and does not skip.
pub(super) fn any_holds(
    ctx: &mut Ctx,
    conditions: &[Condition],
    values: &BTreeMap<String, i64>,
) -> bool {
    let mut skipped = false;
    for cond in conditions {
        match cond.holds(values) {
            Ok(holds) => skipped |= holds,
            Err(e) => ctx.error(cond.at + e.offset, format!("bad skip condition: {e}")),
        }
    }
    skipped
}

/// Kernel `k` as variant `v` declares it: its name with the variant's suffix, and each entry's
/// template arguments with the axes' values put in (`tiled<TILE>` → `tiled<16>`).
pub(super) fn apply(k: &RawKernel, v: &Variant) -> RawKernel {
    let mut out = k.clone();
    if v.values.is_empty() {
        return out;
    }
    *out.name.get_mut() = format!("{}[{}]", k.name.get_ref(), shown(&v.values));
    let put = |entry: &mut Spanned<String>| {
        if let Some((name, args)) = entry.get_ref().split_once('<') {
            *entry.get_mut() = format!("{name}<{}", substitute(args, &v.values));
        }
    };
    out.entry.iter_mut().for_each(put);
    out.launch
        .iter_mut()
        .for_each(|l| put(&mut l.get_mut().entry));
    out
}

/// `text` with every word that names an axis replaced by its value.
fn substitute(text: &str, values: &[(String, i64)]) -> String {
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let pieces = text.split_inclusive(|c: char| !word_char(c)).map(|piece| {
        let word = piece.trim_end_matches(|c: char| !word_char(c));
        match values.iter().find(|(n, _)| n == word) {
            Some((_, v)) => format!("{v}{}", &piece[word.len()..]),
            None => piece.to_string(),
        }
    });
    pieces.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_arguments_take_the_values_word_by_word() {
        let v = [("BM".to_string(), 64), ("B".to_string(), 8)];
        assert_eq!(substitute("BM, B, BMX, float>", &v), "64, 8, BMX, float>");
        assert_eq!(
            combinations(&[("a".into(), vec![1, 2]), ("b".into(), vec![3])]).len(),
            2
        );
    }

    #[test]
    fn conditions_compare_two_expressions() {
        let values: BTreeMap<String, i64> =
            [("BM".to_string(), 64), ("BN".to_string(), 128)].into();
        let holds = |t: &str| Condition::parse(t, 0).unwrap().holds(&values).unwrap();
        assert!(holds("BM * BN > 4096"));
        assert!(!holds("BM * BN <= 4096"));
        assert!(holds("BM != BN") && holds("BM == 64") && holds("BN >= 128") && holds("BM < BN"));
        let e = Condition::parse("BM * BN", 0).err().unwrap();
        assert!(e.message.starts_with("a skip condition compares"), "{e:?}");
        let e = Condition::parse("BM > * 2", 0).err().unwrap();
        assert_eq!(e.offset, 5, "{e:?}");
    }
}
