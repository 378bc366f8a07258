//! `print`: `kernelgate sass --base`'s report — the kernels whose code identity differs between
//! the base and the working tree, each with what changed (code, constant data, attributes), its
//! resource changes, its instruction-mix deltas and a diff of its SASS; new and gone kernels
//! named; unchanged ones counted.

use super::run::{Built, Run, Side};
use crate::code::kernel_cubin;
use crate::exit;
use crate::sass::change::{kernel_diff, Side as Which};
use std::io::{self, Write};

/// Where a kernel is: its side's suite and its place in that suite's `code`.
type At = (usize, usize);

/// `suite::kernel` → where, in the side's order.
fn index(side: &[Built]) -> Vec<(String, At)> {
    side.iter()
        .enumerate()
        .flat_map(|(s, b)| (0..b.code.len()).map(move |i| (b.name(i), (s, i))))
        .collect()
}

/// Prints the comparison of `base` with `head` for `arch`; `base_name` says which base. The
/// kernels of a suite that failed on either side are not compared (the failure was reported).
pub(super) fn print(
    run: &mut Run,
    out: &mut dyn Write,
    sides: (&Side, &Side),
    arch: &str,
    base_name: &str,
) -> io::Result<()> {
    let (base, head) = (&sides.0.built, &sides.1.built);
    let failed: Vec<&String> = sides.0.failed.iter().chain(&sides.1.failed).collect();
    let compared = |(name, _): &(String, At)| {
        !failed.iter().any(|suite| {
            name.strip_prefix(suite.as_str())
                .is_some_and(|r| r.starts_with("::"))
        })
    };
    let then: Vec<(String, At)> = index(base).into_iter().filter(compared).collect();
    let now: Vec<(String, At)> = index(head).into_iter().filter(compared).collect();
    // The modules of every changed kernel, disassembled at once.
    let cubins = now.iter().filter_map(|(name, (s, i))| {
        let (_, (bs, bi)) = then.iter().find(|(n, _)| n == name)?;
        let (was, is) = ((&base[*bs], *bi), (&head[*s], *i));
        (!was.0.code[was.1].1.same_code(&is.0.code[is.1].1)).then_some([was, is])
    });
    let cubins: Vec<_> = cubins
        .flatten()
        .filter_map(|(b, i)| kernel_cubin((b.suite, b.code[i].0), &b.compiled, arch))
        .collect();
    run.listings.prefetch(cubins);
    let (mut changed, mut unchanged, mut new) = (0, 0, 0);
    for (name, (s, i)) in &now {
        let Some((_, (bs, bi))) = then.iter().find(|(n, _)| n == name) else {
            writeln!(out, "new      {name} ({arch})")?;
            new += 1;
            continue;
        };
        let (was, is) = (&base[*bs].code[*bi].1, &head[*s].code[*i].1);
        if was.same_code(is) {
            unchanged += 1;
            continue;
        }
        changed += 1;
        print_change(run, out, name, (&base[*bs], *bi), (&head[*s], *i), arch)?;
    }
    let gone: Vec<&String> = then
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !now.iter().any(|(m, _)| m == *n))
        .collect();
    for name in &gone {
        writeln!(out, "gone     {name} ({arch})")?;
    }
    let skipped = if failed.is_empty() {
        String::new()
    } else {
        format!("; not compared: {}", crate::suggest::quoted(failed, ", "))
    };
    writeln!(
        out,
        "kernelgate sass: {changed} changed, {unchanged} unchanged, {new} new, {} gone ({arch}; {base_name} against the working tree){skipped}",
        gone.len()
    )
}

/// Prints how kernel `name` changed between `was` and `is` (each a built suite and the place
/// of the kernel in its `code`), reporting a module that cannot be disassembled.
fn print_change(
    run: &mut Run,
    out: &mut dyn Write,
    name: &str,
    was: (&Built, usize),
    is: (&Built, usize),
    arch: &str,
) -> io::Result<()> {
    let (old, new) = (&was.0.code[was.1], &is.0.code[is.1]);
    let (suite, kernel) = name.split_once("::").unwrap_or((name, ""));
    let d = kernel_diff(
        (suite, kernel, arch),
        &old.1,
        &new.1,
        None,
        |side, id| match side {
            Which::Base => run.entry_sass(was.0, old.0, id, arch),
            Which::Head => run.entry_sass(is.0, new.0, id, arch),
        },
    );
    for line in d.lines() {
        writeln!(out, "{line}")?;
    }
    for e in d.errors() {
        run.fail(exit::BAD_INPUT, &e);
    }
    Ok(())
}
