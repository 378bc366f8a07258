//! `print`: `kernelgate sass --base`'s report — the kernels whose code identity differs between
//! the base and the working tree, each with what changed (code, constant data, attributes), its
//! resource changes, its instruction-mix deltas and a diff of its SASS; new and gone kernels
//! named; unchanged ones counted.

use super::run::{Built, Run, Side};
use crate::exit;
use crate::runner::{kernel_diffs, Sided};
use std::io::{self, Write};

/// Where a kernel is: its side's suite and its place in that suite's `code`.
type At = (usize, usize);

/// `suite::kernel` → where, in the side's order.
fn index(side: &[Built]) -> Vec<(String, At)> {
    side.iter()
        .enumerate()
        .flat_map(|(s, b)| (0..b.selected.len()).map(move |i| (b.name(i), (s, i))))
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
    // Each kernel's two sides, where it has a base side; the changed ones' SASS diffs, every
    // module disassembled at once.
    let sides = |name: &String, (s, i): At| {
        let (bs, bi) = then.iter().find(|(n, _)| n == name)?.1;
        Some([sided(&base[bs], bi), sided(&head[s], i)])
    };
    let differs = |[was, is]: &[Sided; 2]| !was.code.same_code(is.code);
    let changed: Vec<[Sided; 2]> = (now.iter())
        .filter_map(|(name, at)| sides(name, *at).filter(differs))
        .collect();
    let mut diffs = kernel_diffs(&changed, None, &mut run.listings).into_iter();
    let (mut unchanged, mut new) = (0, 0);
    for (name, at) in &now {
        let Some(pair) = sides(name, *at) else {
            writeln!(out, "new      {name} ({arch})")?;
            new += 1;
            continue;
        };
        if !differs(&pair) {
            unchanged += 1;
            continue;
        }
        let d = diffs.next().expect("a diff per changed kernel");
        for line in d.lines() {
            writeln!(out, "{line}")?;
        }
        for e in d.errors() {
            run.fail(exit::BAD_INPUT, &e);
        }
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
        "kernelgate sass: {} changed, {unchanged} unchanged, {new} new, {} gone ({arch}; {base_name} against the working tree){skipped}",
        changed.len(),
        gone.len()
    )
}

/// The `i`-th selected kernel of built suite `b`, as one side of its SASS diff.
fn sided<'b>(b: &'b Built, i: usize) -> Sided<'b> {
    Sided::of(b.suite, b.selected[i], &b.code)
}
