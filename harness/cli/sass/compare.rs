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
    // Each kernel's base side, where it has one; the changed ones' SASS diffs, every module
    // disassembled at once.
    let in_base = |name: &String| then.iter().find(|(n, _)| n == name).map(|(_, at)| *at);
    let changed: Vec<[Sided; 2]> = (now.iter())
        .filter_map(|(name, (s, i))| {
            let (bs, bi) = in_base(name)?;
            let (was, is) = ((&base[bs], bi), (&head[*s], *i));
            let same = was.0.code[was.1].1.same_code(&is.0.code[is.1].1);
            (!same).then(|| [sided(was, arch), sided(is, arch)])
        })
        .collect();
    let mut diffs = kernel_diffs(&changed, None, &mut run.listings).into_iter();
    let (mut unchanged, mut new) = (0, 0);
    for (name, (s, i)) in &now {
        let Some((bs, bi)) = in_base(name) else {
            writeln!(out, "new      {name} ({arch})")?;
            new += 1;
            continue;
        };
        if base[bs].code[bi].1.same_code(&head[*s].code[*i].1) {
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

/// Kernel `i` of built suite `b`, as one side of its SASS diff.
fn sided<'b>((b, i): (&'b Built, usize), arch: &'b str) -> Sided<'b> {
    let (kernel, code) = &b.code[i];
    Sided {
        suite: b.suite,
        kernel: *kernel,
        code,
        compiled: &b.compiled,
        arch,
    }
}
