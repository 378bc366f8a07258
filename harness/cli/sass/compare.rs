//! `print`: `kernelgate sass --base`'s report — the kernels whose code identity differs between
//! the base and the working tree, each with what changed (code, constant data, attributes), its
//! resource changes, its instruction-mix deltas and a diff of its SASS; new and gone kernels
//! named; unchanged ones counted.

use super::run::{Built, Run, Side};
use crate::exit;
use crate::sass::mix::{self, Mix};
use crate::sass::{diff, KernelIdentity};
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
        let names: Vec<String> = failed.iter().map(|s| format!("`{s}`")).collect();
        format!("; not compared: {}", names.join(", "))
    };
    writeln!(
        out,
        "kernelgate sass: {changed} changed, {unchanged} unchanged, {new} new, {} gone ({arch}; {base_name} against the working tree){skipped}",
        gone.len()
    )
}

/// `code`, `constant data and attributes`: which parts of an identity differ.
fn what_changed(was: &KernelIdentity, is: &KernelIdentity) -> String {
    let (Some(a), Some(b)) = (&was.parts, &is.parts) else {
        return "PTX".into();
    };
    let parts: Vec<&str> = [
        (a.code != b.code, "code"),
        (a.data != b.data, "constant data"),
        (a.attributes != b.attributes, "attributes"),
    ]
    .iter()
    .filter(|(differs, _)| *differs)
    .map(|(_, what)| *what)
    .collect();
    if parts.is_empty() {
        "architecture".into()
    } else {
        parts.join(" and ")
    }
}

fn print_change(
    run: &mut Run,
    out: &mut dyn Write,
    name: &str,
    was: (&Built, usize),
    is: (&Built, usize),
    arch: &str,
) -> io::Result<()> {
    let (old, new) = (&was.0.code[was.1], &is.0.code[is.1]);
    let names = |c: &crate::sass::KernelCode| {
        c.entries
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "changed  {name} ({arch})")?;
    if old.1.entries.len() != new.1.entries.len() {
        writeln!(out, "  launches: {} → {}", names(&old.1), names(&new.1))?;
    }
    let several = new.1.entries.len() > 1;
    for (o, n) in old.1.entries.iter().zip(&new.1.entries) {
        if o.hash == n.hash {
            continue;
        }
        let entry = if o.name == n.name {
            n.name.clone()
        } else {
            format!("{} (was {})", n.name, o.name)
        };
        let what = what_changed(o, n);
        writeln!(
            out,
            "  {}{what} changed: {} → {}",
            if several {
                format!("{entry}: ")
            } else {
                String::new()
            },
            &o.hash[..12],
            &n.hash[..12]
        )?;
        if let (Some(a), Some(b)) = (&o.resources, &n.resources) {
            if let Some(line) = diff::resources(a, b) {
                writeln!(out, "  {line}")?;
            }
        }
        let sass = (
            run.entry_sass(was.0, old.0, o, arch),
            run.entry_sass(is.0, new.0, n, arch),
        );
        match sass {
            (Ok(Some(a)), Ok(Some(b))) => {
                let deltas = Mix::of(&a).deltas(&Mix::of(&b));
                if !deltas.is_empty() {
                    writeln!(out, "  instruction mix: {}", mix::describe(&deltas))?;
                }
                let d = diff::unified(&a, &b);
                if d.is_empty() {
                    writeln!(out, "  SASS the same: the {what} changed")?;
                }
                for line in d.lines() {
                    writeln!(out, "    {line}")?;
                }
            }
            (Ok(_), Ok(_)) => writeln!(out, "  PTX: its SASS comes from the driver, on a GPU")?,
            (Err(e), _) | (_, Err(e)) => {
                run.fail(exit::BAD_INPUT, &format!("{name}: {e}"));
            }
        }
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::{CodeSource, Parts};

    fn id(code: &str, data: &str) -> KernelIdentity {
        KernelIdentity {
            hash: format!("{code}{data}"),
            arch: "sm_90".into(),
            name: "k".into(),
            from: CodeSource::Cubin,
            parts: Some(Parts {
                code: code.into(),
                data: data.into(),
                attributes: "a".into(),
            }),
            resources: None,
        }
    }

    #[test]
    fn what_changed_names_the_parts_that_differ() {
        assert_eq!(what_changed(&id("c1", "d1"), &id("c2", "d1")), "code");
        assert_eq!(
            what_changed(&id("c1", "d1"), &id("c2", "d2")),
            "code and constant data"
        );
        let mut ptx = id("c", "d");
        ptx.parts = None;
        assert_eq!(what_changed(&ptx, &id("c", "d")), "PTX");
    }
}
