//! `unified`: a unified diff of two normalised SASS listings (`disasm`), and `resources`: what
//! changed in a kernel's registers, shared, local and stack bytes.

use super::identity::Resources;

/// The unified diff of `base` against `head` (three lines of context), headed `--- base` and
/// `+++ head`; empty when they are the same.
pub fn unified(base: &[String], head: &[String]) -> String {
    if base == head {
        return String::new();
    }
    let (old, new) = (lines(base), lines(head));
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("base", "head")
        .to_string()
}

fn lines(listing: &[String]) -> String {
    listing.iter().map(|l| format!("{l}\n")).collect()
}

/// `regs 18 → 24, smem 0 B → 4096 B`: the resources that differ, or `None`.
pub fn resources(base: &Resources, head: &Resources) -> Option<String> {
    let mut out = Vec::new();
    let mut bytes = |what: &str, b: u64, h: u64| {
        if b != h {
            out.push(format!("{what} {b} B → {h} B"));
        }
    };
    bytes("smem", base.shared_bytes, head.shared_bytes);
    bytes("local", base.local_bytes.into(), head.local_bytes.into());
    bytes("stack", base.stack_bytes.into(), head.stack_bytes.into());
    bytes("code", base.code_bytes, head.code_bytes);
    if base.registers != head.registers {
        let show = |r: Option<u32>| r.map_or("?".to_string(), |r| r.to_string());
        out.insert(
            0,
            format!("regs {} → {}", show(base.registers), show(head.registers)),
        );
    }
    let dims =
        |d: Option<[u32; 3]>| d.map_or("none".to_string(), |[x, y, z]| format!("{x}×{y}×{z}"));
    for (what, b, h) in [
        ("max threads", base.max_threads, head.max_threads),
        (
            "required threads",
            base.required_threads,
            head.required_threads,
        ),
        ("cluster", base.cluster, head.cluster),
    ] {
        if b != h {
            out.push(format!("{what} {} → {}", dims(b), dims(h)));
        }
    }
    if base.barriers != head.barriers {
        out.push(format!("barriers {} → {}", base.barriers, head.barriers));
    }
    (!out.is_empty()).then(|| out.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn one_changed_instruction_is_one_hunk_of_a_few_lines() {
        let mut base: Vec<String> = (0..40)
            .map(|i| format!("IADD3 R{i}, R{i}, 0x1, RZ"))
            .collect();
        let mut head = base.clone();
        head[20] = "LDG.E.128 R4, desc[UR4][R2.64]".into();
        base[20] = "LDG.E R4, desc[UR4][R2.64]".into();
        let d = unified(&base, &head);
        let changed: Vec<&str> = d
            .lines()
            .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("---") && !l.starts_with("+++"))
            .collect();
        assert_eq!(
            changed,
            [
                "-LDG.E R4, desc[UR4][R2.64]",
                "+LDG.E.128 R4, desc[UR4][R2.64]"
            ]
        );
        assert!(
            d.starts_with("--- base\n+++ head\n@@ -18,7 +18,7 @@\n"),
            "{d}"
        );
        assert_eq!(d.lines().count(), 3 + 8, "{d}");
        assert_eq!(unified(&listing(&["EXIT"]), &listing(&["EXIT"])), "");
    }

    #[test]
    fn only_the_resources_that_changed_are_named() {
        let base = Resources {
            registers: Some(18),
            code_bytes: 256,
            ..Resources::default()
        };
        assert_eq!(resources(&base, &base), None);
        let head = Resources {
            registers: Some(24),
            shared_bytes: 4096,
            max_threads: Some([256, 1, 1]),
            ..base.clone()
        };
        assert_eq!(
            resources(&base, &head).unwrap(),
            "regs 18 → 24, smem 0 B → 4096 B, max threads none → 256×1×1"
        );
    }
}
