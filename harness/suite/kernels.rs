//! `launch_tables`, `limits`: a `[[kernel]]` table — its launches (inline or
//! `[[kernel.launch]]`), scratch buffers, and its memory and resource limits (the arguments are
//! checked against the source in `entry`).

use super::args;
use super::ctx::{choice, element_type, expr, is_ident, Ctx};
use super::decls::{LaunchDecl, Located};
use super::expr::Expr;
use super::schema::{ExprText, RawKernel, RawLaunch};
use super::{Limits, Scratch};
use crate::dtype::DType;
use std::collections::BTreeMap;
use toml::Spanned;

/// The launches of a kernel, each as a `[[kernel.launch]]` table (an inline launch as one); a
/// kernel takes an inline launch or `[[kernel.launch]]` tables.
pub(super) fn launch_tables(ctx: &mut Ctx, k: &RawKernel, at: usize) -> Vec<RawLaunch> {
    let name = k.name.get_ref();
    let inline = k.entry.is_some()
        || k.grid.is_some()
        || k.block.is_some()
        || k.shared.is_some()
        || k.args.is_some();
    if !k.launch.is_empty() {
        if inline {
            ctx.error(at, format!("kernel `{name}` has both inline `entry`/`grid`/`block`/`args` and `[[kernel.launch]]` tables (keep one form)"));
        }
        return k.launch.iter().map(|l| l.get_ref().clone()).collect();
    }
    match (&k.entry, &k.grid, &k.block, &k.args) {
        (Some(entry), Some(grid), Some(block), Some(args)) => vec![RawLaunch {
            entry: entry.clone(),
            grid: grid.clone(),
            block: block.clone(),
            shared: k.shared.clone(),
            args: args.clone(),
        }],
        _ => {
            let missing = crate::order::flagged([
                (k.entry.is_none(), "entry"),
                (k.grid.is_none(), "grid"),
                (k.block.is_none(), "block"),
                (k.args.is_none(), "args"),
            ]);
            ctx.error(
                at,
                format!(
                    "kernel `{name}` needs `{}` (or a sequence of `[[kernel.launch]]` tables)",
                    missing.join("`, `")
                ),
            );
            Vec::new()
        }
    }
}

pub(super) fn scratch_decls(
    ctx: &mut Ctx,
    k: &RawKernel,
    buffers: &BTreeMap<String, usize>,
    sizes: &[String],
) -> (Vec<Scratch>, Vec<Located<Expr>>) {
    let mut scratch: Vec<Scratch> = Vec::new();
    let mut lens = Vec::new();
    for rs in &k.scratch {
        let r = rs.get_ref();
        let name = r.name.get_ref().clone();
        if !is_ident(&name) || name.contains('-') {
            ctx.error(
                r.name.span().start,
                format!("scratch name `{name}` must be letters, digits or `_`"),
            );
        } else if buffers.contains_key(&name)
            || sizes.contains(&name)
            || scratch.iter().any(|s| s.name == name)
        {
            ctx.error(r.name.span().start, format!("scratch `{name}` has the name of a buffer, a size or another scratch (rename it)"));
        }
        let dtype = element_type(ctx, &r.dtype).unwrap_or(DType::U8);
        lens.extend(expr(ctx, &r.len, sizes));
        scratch.push(Scratch { name, dtype });
    }
    (scratch, lens)
}

pub(super) fn launch_decl(
    ctx: &mut Ctx,
    l: &RawLaunch,
    names: &BTreeMap<String, usize>,
    sizes: &[String],
) -> Option<LaunchDecl> {
    let mut ok = true;
    let mut dims = |ctx: &mut Ctx, list: &Spanned<Vec<Spanned<ExprText>>>, what: &str| {
        if list.get_ref().is_empty() || list.get_ref().len() > 3 {
            ctx.error(
                list.span().start,
                format!("`{what}` takes 1 to 3 dimensions, as in `{what} = [\"ceil(n / 256)\"]`"),
            );
            ok = false;
        }
        let parsed: Vec<_> = list
            .get_ref()
            .iter()
            .filter_map(|d| expr(ctx, d, sizes))
            .collect();
        ok &= parsed.len() == list.get_ref().len();
        parsed
    };
    let grid = dims(ctx, &l.grid, "grid");
    let block = dims(ctx, &l.block, "block");
    let shared = l.shared.as_ref().and_then(|s| {
        let e = expr(ctx, s, sizes);
        ok &= e.is_some();
        e
    });
    let mut parsed_args = Vec::new();
    for a in l.args.get_ref() {
        let base = a.span().start + 1;
        match args::parse(a.get_ref(), names, sizes) {
            Ok(spec) => parsed_args.push(Located {
                value: spec,
                at: base,
            }),
            Err(e) => {
                ctx.error(base + e.offset, e.message);
                ok = false;
            }
        }
    }
    ok.then_some(LaunchDecl {
        grid,
        block,
        shared,
        args: parsed_args,
    })
}

/// Parses `"512 MiB"`, `"2 GiB"`, `"1.5 GB"`, `"4096"` (bytes) into bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let v: f64 = number.parse().ok()?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => return None,
    };
    let bytes = v * scale;
    (v.is_finite() && v >= 0.0 && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

/// Limits from `memory_budget`, `max_registers`, `spills` and `fp64`, over `base` (the suite's,
/// for a kernel).
pub(super) fn limits(
    ctx: &mut Ctx,
    budget: &Option<Spanned<String>>,
    registers: &Option<Spanned<u32>>,
    spills: &Option<Spanned<String>>,
    fp64: &Option<Spanned<String>>,
    base: Limits,
) -> Limits {
    let mut out = base;
    if let Some(b) = budget {
        match parse_bytes(b.get_ref()) {
            Some(v) if v > 0 => out.memory_budget = Some(v),
            _ => ctx.error(b.span().start, format!("bad memory_budget `{}` (write e.g. \"512 MiB\", \"2 GiB\" or a number of bytes)", b.get_ref())),
        }
    }
    if let Some(r) = registers {
        if *r.get_ref() == 0 || *r.get_ref() > 255 {
            ctx.error(
                r.span().start,
                "max_registers is between 1 and 255 (registers per thread)",
            );
        }
        out.max_registers = Some(*r.get_ref());
    }
    out.forbid_spills = forbids(ctx, spills, "spills").unwrap_or(out.forbid_spills);
    out.forbid_fp64 = forbids(ctx, fp64, "fp64").unwrap_or(out.forbid_fp64);
    out
}

/// `key = "forbid" | "allow"` as whether it forbids; `None` where absent or unknown (recorded).
fn forbids(ctx: &mut Ctx, value: &Option<Spanned<String>>, key: &str) -> Option<bool> {
    let s = value.as_ref()?;
    let words = [("forbid", true), ("allow", false)];
    let fix = "write \"forbid\" or \"allow\"";
    choice(ctx, s.span().start, s.get_ref(), &words, key, fix)
}
