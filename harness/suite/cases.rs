//! `expand`: turns a suite's size sweep into cases, evaluating every expression for every case
//! so that a bad length, launch shape or argument value is reported at load time.

use super::args::ArgSpec;
use super::buffer_tables::Buffers;
use super::ctx::Ctx;
use super::decls::{KernelDecl, LaunchDecl, Located};
use super::expr::Expr;
use super::kernel_tables::Kernels;
use super::sweep::Sweep;
use super::values::{iota_overflow, MAX_CASES, MAX_REGISTERS_PER_BLOCK, MAX_SHARED_BYTES};
use super::{ArgValue, Case, Kernel, Launch};
use crate::dtype::DType;
use std::collections::BTreeMap;

/// Hardware limits on launch shapes (the same on every GPU since compute capability 3.0).
const MAX_GRID: [i64; 3] = [(1 << 31) - 1, 65535, 65535];
const MAX_BLOCK: [i64; 3] = [1024, 1024, 64];
const MAX_THREADS_PER_BLOCK: i64 = 1024;
/// Any value: an expression whose every result is allowed.
const ANY: (i64, i64) = (i64::MIN, i64::MAX);
/// The most memory any GPU kernelgate supports holds, bytes: a B300's 288 GB.
const MAX_DEVICE_BYTES: u64 = 288_000_000_000;

/// Everything `expand` evaluates per case: the phases' results, as they read them.
pub(super) struct Decls {
    pub sweep: Sweep,
    pub buffers: Buffers,
    pub kernels: Kernels,
    pub bytes: Option<Located<Expr>>,
    pub flops: Option<Located<Expr>>,
}

/// Each case's sizes, in the order the suite declares them.
fn combinations(sweep: &Sweep) -> Vec<Vec<(String, i64)>> {
    if sweep.zip && !sweep.sizes.is_empty() {
        let n = sweep.sizes[0].1.len();
        return (0..n)
            .map(|i| sweep.sizes.iter().map(|(k, v)| (k.clone(), v[i])).collect())
            .collect();
    }
    super::axes::combinations(&sweep.sizes)
}

/// ` for n=4096` where one of `exprs` is written over the sizes (the case is what made it
/// wrong); nothing where they are constants, wrong in every case alike.
fn sized_case(exprs: &[Located<Expr>], label: &str) -> String {
    let sized = exprs.iter().any(|e| !e.value.names().is_empty());
    in_case(if sized { label } else { "" })
}

/// ` for n=4096`, or nothing when the suite has no sizes.
fn in_case(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" for {label}")
    }
}

/// Evaluates `e`, recording an error that names the case when it fails or is out of range.
fn eval(
    ctx: &mut Ctx,
    e: &Located<Expr>,
    sizes: &BTreeMap<String, i64>,
    case: &str,
    (lo, hi): (i64, i64),
    what: &str,
) -> Option<i64> {
    // Said only in an error: the case, and which device's values an expression that reads
    // the device had.
    let place = |ctx: &Ctx| {
        let device = crate::device::Attributes::NAMES;
        let reads = e.value.names().iter().any(|(n, _)| device.contains(n));
        let on = ctx.device.as_ref().filter(|_| reads);
        in_case(case) + &on.map_or(String::new(), |d| format!(" on {}", d.name))
    };
    let (at, message) = match e.value.eval(sizes) {
        Ok(v) if v >= lo && v <= hi => return Some(v),
        Ok(v) => (
            e.at,
            format!("{what} is {v}{}, outside {lo}..={hi}", place(ctx)),
        ),
        Err(err) => (e.at + err.offset, format!("{}{}", err.message, place(ctx))),
    };
    ctx.error(at, message);
    None
}

/// Expands the sweep into cases. Errors are recorded in `ctx`; the returned cases are only
/// meaningful when none were.
pub fn expand(ctx: &mut Ctx, decls: &Decls) -> Vec<Case> {
    if !count_fits(ctx, &decls.sweep) {
        return Vec::new();
    }
    ctx.device
        .get_or_insert_with(super::device::for_expressions);
    let mut labels = std::collections::BTreeSet::new();
    let mut cases = Vec::new();
    for sizes in combinations(&decls.sweep) {
        let label = super::axes::shown(&sizes);
        if !labels.insert(label.clone()) {
            ctx.error(
                decls.sweep.at,
                format!("case `{label}` appears twice (remove the repeated size value)"),
            );
            continue;
        }
        cases.push(case(ctx, decls, sizes.into_iter().collect(), label));
    }
    cases
}

/// Whether the sweep makes at most `MAX_CASES` cases; an error when not.
fn count_fits(ctx: &mut Ctx, sweep: &Sweep) -> bool {
    // `None`: a product past `usize`.
    let mut lens = sweep.sizes.iter().map(|s| s.1.len());
    let count = if sweep.zip {
        Some(lens.next().unwrap_or(1))
    } else {
        lens.try_fold(1usize, |n, len| n.checked_mul(len))
    };
    if count.is_some_and(|c| c <= MAX_CASES) {
        return true;
    }
    let n = count.map_or_else(|| "too many".to_string(), |c| c.to_string());
    ctx.error(sweep.at, format!("the sizes make {n} cases, over the limit of {MAX_CASES} (use `sweep = \"zip\"` to pair lists, or fewer values)"));
    false
}

/// One case: every buffer's length, every kernel's launches and scratch, the amounts.
fn case(ctx: &mut Ctx, decls: &Decls, cased: BTreeMap<String, i64>, label: String) -> Case {
    // Evaluated over the sizes and the device's attributes; the case keeps its sizes.
    let mut sizes = cased.clone();
    if let Some(d) = &ctx.device {
        sizes.extend(d.named());
    }
    let buffers = &decls.buffers;
    let lens: Vec<usize> = (buffers.lens.iter())
        .map(|l| eval(ctx, l, &sizes, &label, (1, i64::MAX), "buffer length").unwrap_or(1) as usize)
        .collect();
    check_contents(ctx, buffers, &lens, &label);
    let buffer_bytes = bytes_of(&lens, buffers.list.iter().map(|b| b.dtype));
    if buffer_bytes.is_none_or(|b| b > MAX_DEVICE_BYTES) {
        // At the largest buffer's length: no GPU could hold the case (issue 32: terabytes).
        let largest = (lens.iter().zip(&buffers.list).enumerate())
            .max_by_key(|(_, (n, b))| (**n as u128) * b.dtype.size() as u128)
            .map_or(0, |(i, _)| i);
        let need = buffer_bytes.map_or("more than 2^64".to_string(), |b| b.to_string());
        let at = buffers.lens.get(largest).map_or(0, |l| l.at);
        ctx.error(at, format!("the buffers of a case take {need} bytes{}, more than any GPU holds ({MAX_DEVICE_BYTES} bytes, a B300's 288 GB): shrink the sizes", in_case(&label)));
    }
    let mut launches = Vec::new();
    let mut scratch_lens = Vec::new();
    let mut skipped = Vec::new();
    let kernels = decls.kernels.decls.iter().zip(&decls.kernels.list);
    for (ki, (k, model)) in kernels.enumerate() {
        // A variant's expressions read its axes too, and its errors name them.
        let mut values = sizes.clone();
        values.extend(k.variant.values.iter().cloned());
        let shown = [label.clone(), super::axes::shown(&k.variant.values)];
        let label = shown
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(",");
        // `values` holds the device's attributes too (`sizes` above).
        if super::axes::any_holds(ctx, &k.variant.case_skips, &values) {
            launches.push(Vec::new());
            scratch_lens.push(Vec::new());
            skipped.push(ki);
            continue;
        }
        let (steps, scratch) = kernel(
            ctx,
            (k, model),
            &values,
            &label,
            (buffers.lens.len(), buffer_bytes),
        );
        if let (Some(at), Some(call)) = (k.library, steps.first()) {
            super::library::check_case(ctx, call, &lens, &in_case(&label), at);
        }
        launches.push(steps);
        scratch_lens.push(scratch);
    }
    let amount = |ctx: &mut Ctx, e: &Option<Located<Expr>>, what: &str| {
        e.as_ref()
            .and_then(|e| eval(ctx, e, &sizes, &label, (0, i64::MAX), what))
            .map(|v| v as f64)
    };
    let bytes = amount(ctx, &decls.bytes, "bytes");
    let flops = amount(ctx, &decls.flops, "flops");
    let init_bounds = init_bounds(ctx, buffers, &sizes, &label);
    Case {
        label,
        sizes: cased,
        lens,
        launches,
        scratch_lens,
        skipped,
        bytes,
        flops,
        init_bounds,
    }
}

/// Per buffer, the bounds of a `random` init written over the sizes, evaluated for this case
/// and checked as numbers would be at load: whole and `min <= max` for `int`, `min < max` for
/// `uniform`, both inside the element type. Empty when no bound is written over the sizes.
fn init_bounds(
    ctx: &mut Ctx,
    buffers: &Buffers,
    sizes: &BTreeMap<String, i64>,
    label: &str,
) -> Vec<Option<[f64; 2]>> {
    if buffers.init_bounds.is_empty() {
        return Vec::new();
    }
    let mut out = vec![None; buffers.list.len()];
    for ib in &buffers.init_bounds {
        let [min, max] = [0, 1].map(|k| match &ib.bounds[k] {
            Ok(v) => Some(*v),
            Err(e) => eval(ctx, e, sizes, label, ANY, "the init's bound").map(|v| v as f64),
        });
        let (Some(min), Some(max)) = (min, max) else {
            continue;
        };
        let (lo, hi) = ib.dtype.range();
        let inside = |v: f64| v >= lo && v <= hi;
        let ordered = if ib.integers { min <= max } else { min < max };
        let whole = !ib.integers || (min.fract() == 0.0 && max.fract() == 0.0);
        if !(ordered && whole && inside(min) && inside(max)) {
            let (kind, order) = match ib.integers {
                true => ("int", "min <= max"),
                false => ("uniform", "min < max"),
            };
            ctx.error(
                ib.at,
                format!(
                    "random = \"{kind}\" needs {order} within `{}` (got {min} and {max}{})",
                    ib.dtype,
                    in_case(label)
                ),
            );
            continue;
        }
        if let Some(slot) = out.get_mut(ib.buffer) {
            *slot = Some([min, max]);
        }
    }
    out
}

/// Bytes of buffers of these lengths and element types; `None` past `u64`.
fn bytes_of(lens: &[usize], types: impl IntoIterator<Item = DType>) -> Option<u64> {
    lens.iter().zip(types).try_fold(0u64, |sum, (n, t)| {
        sum.checked_add((*n as u64).checked_mul(t.size() as u64)?)
    })
}

/// What the buffers' lengths must agree with: each .npy file's element count, and each iota's
/// last value within its type.
fn check_contents(ctx: &mut Ctx, buffers: &Buffers, lens: &[usize], label: &str) {
    for &(buffer, count, at) in &buffers.npy_checks {
        if lens.get(buffer) != Some(&count) {
            ctx.error(
                at,
                format!(
                    "the .npy file holds {count} elements but the buffer's length is {}{}",
                    lens.get(buffer).copied().unwrap_or(0),
                    in_case(label)
                ),
            );
        }
    }
    for &(buffer, start, step, dtype, at) in &buffers.iotas {
        let len = lens.get(buffer).copied().unwrap_or(1);
        if let Some(last) = iota_overflow(start, step, len, dtype) {
            ctx.error(at, format!("iota reaches {last} at element {}{}, outside what `{dtype}` holds (lower the step, or use a wider type)", len - 1, in_case(label)));
        }
    }
}

/// One kernel in a case: its launches, and its scratch buffers' lengths checked with the
/// case's buffers (`buffers`: their count and bytes) against its memory budget.
fn kernel(
    ctx: &mut Ctx,
    (k, kernel): (&KernelDecl, &Kernel),
    sizes: &BTreeMap<String, i64>,
    label: &str,
    (buffers, buffer_bytes): (usize, Option<u64>),
) -> (Vec<Launch>, Vec<usize>) {
    let lens: Vec<usize> = k
        .scratch_lens
        .iter()
        .map(|l| eval(ctx, l, sizes, label, (1, i64::MAX), "scratch length").unwrap_or(1) as usize)
        .collect();
    if let (Some(budget), Some(at)) = (kernel.limits.memory_budget, k.budget_at) {
        let need = buffer_bytes
            .zip(bytes_of(&lens, kernel.scratch.iter().map(|s| s.dtype)))
            .and_then(|(a, b)| a.checked_add(b));
        if need.is_none_or(|n| n > budget) {
            let need = need.map_or("more than 2^64".to_string(), |n| n.to_string());
            // An error at the budget: every trial of the case would fail on the GPU with what
            // is known here (seen before, as a warning: a run whose every trial failed).
            ctx.error(at, format!("the buffers and scratch of a case take {need} bytes{}, over memory_budget ({budget} bytes): raise the budget or shrink the sizes", in_case(label)));
        }
    }
    let steps = k
        .launches
        .iter()
        .map(|l| launch(ctx, l, sizes, label, buffers, kernel.limits.max_registers))
        .collect();
    (steps, lens)
}

/// Resolves one launch for a case.
fn launch(
    ctx: &mut Ctx,
    l: &LaunchDecl,
    sizes: &BTreeMap<String, i64>,
    label: &str,
    buffers: usize,
    max_registers: Option<u32>,
) -> Launch {
    let mut dims = |list: &[Located<Expr>], max: [i64; 3], what: &str| {
        let mut out = [1u32; 3];
        for (i, d) in list.iter().enumerate() {
            let what = format!("{what}[{i}]");
            out[i] = eval(ctx, d, sizes, label, (1, max[i]), &what).unwrap_or(1) as u32;
        }
        out
    };
    let grid = dims(&l.grid, MAX_GRID, "grid");
    let block = dims(&l.block, MAX_BLOCK, "block");
    let threads: i64 = block.iter().map(|b| *b as i64).product();
    let block_at = l.block.first().map(|b| b.at);
    let at = block_at.unwrap_or(0);
    if threads > MAX_THREADS_PER_BLOCK {
        ctx.error(
            at,
            format!("a block of {threads} threads{} is over the limit of {MAX_THREADS_PER_BLOCK} (make the product of `block` at most {MAX_THREADS_PER_BLOCK}, e.g. [256] or [32, 32])", sized_case(&l.block, label)),
        );
    }
    if let Some(r) = max_registers.filter(|r| threads * *r as i64 > MAX_REGISTERS_PER_BLOCK) {
        ctx.error(at, format!("a block of {threads} threads at max_registers = {r} needs {} registers{}, over the {MAX_REGISTERS_PER_BLOCK} of an SM: the launch would fail (lower max_registers to {} or use smaller blocks)", threads * r as i64, in_case(label), MAX_REGISTERS_PER_BLOCK / threads.max(1)));
    }
    let what = "dynamic shared memory (bytes; 227 KiB at most on sm_90)";
    let shared = (l.shared.as_ref())
        .and_then(|s| eval(ctx, s, sizes, label, (0, MAX_SHARED_BYTES), what))
        .unwrap_or(0) as u32;
    let (args, shown) = args(ctx, l, sizes, label, buffers);
    Launch {
        grid,
        block,
        shared,
        args,
        shown,
        written: [block_at, l.shared.as_ref().map(|s| s.at)],
    }
}

/// A launch's arguments resolved for a case, and each scalar as `lint --launches` shows it.
fn args(
    ctx: &mut Ctx,
    l: &LaunchDecl,
    sizes: &BTreeMap<String, i64>,
    label: &str,
    buffers: usize,
) -> (Vec<ArgValue>, Vec<Option<String>>) {
    let mut args = Vec::new();
    let mut shown = Vec::new();
    for a in &l.args {
        let value = match &a.value {
            ArgSpec::Buffer(b) if *b < buffers => ArgValue::Buffer(*b),
            ArgSpec::Buffer(b) => ArgValue::Scratch(*b - buffers),
            ArgSpec::Literal(_, bytes) => ArgValue::Scalar(bytes.clone()),
            ArgSpec::Expr(e, ty, offset) => {
                let located = Located {
                    value: e.clone(),
                    at: a.at + offset,
                };
                let bytes =
                    eval(ctx, &located, sizes, label, ANY, "argument").map(|v| ty.encode_int(v));
                if let Some(Err(m)) = &bytes {
                    ctx.error(a.at, format!("{m} for {label}"));
                }
                ArgValue::Scalar(bytes.and_then(Result::ok).unwrap_or_default())
            }
        };
        shown.push(match &value {
            ArgValue::Scalar(b) => a.value.scalar_type().map(|ty| ty.show(b)),
            _ => None,
        });
        args.push(value);
    }
    (args, shown)
}
