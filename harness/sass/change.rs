//! `KernelDiff`: how one kernel's code changed between a base and a head — per changed entry,
//! which parts of its identity moved (code, constant data, attributes), its resource changes,
//! its instruction-mix deltas and a unified diff of its SASS — as a typed value, so that
//! `kernelgate sass --base`, the paired run's reports (carried in the results file) and bisect
//! say it the same way ([`KernelDiff::lines`]).

use super::mix::{describe_mix, Mix, MixDelta};
use super::{diff, KernelCode, KernelIdentity, SassError};
use serde::{Deserialize, Serialize};

/// An entry's SASS against the base's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SassText {
    /// The unified diff (`--- base`, `+++ head`); empty when the listings are the same.
    Diff {
        /// The diff's text.
        text: String,
    },
    /// A PTX entry: the driver compiles it when the module loads, so its SASS needs a GPU.
    Ptx,
    /// Not disassembled, and why (no `nvdisasm`).
    Unavailable {
        /// Why.
        why: String,
    },
    /// Disassembling failed.
    Failed {
        /// The error.
        error: String,
    },
}

/// One launch's entry whose identity changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDiff {
    /// The head's entry name.
    pub name: String,
    /// The base's, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    /// The base's and the head's identity hashes.
    pub hashes: [String; 2],
    /// What changed: `code`, `constant data and attributes`, `PTX`, `architecture`.
    pub what: String,
    /// `regs 18 → 24, smem 0 B → 4096 B`, when resources moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<String>,
    /// The instruction-mix deltas (empty when none, or no SASS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixDelta>,
    /// The SASS diff, or why there is none.
    pub sass: SassText,
}

/// A kernel whose code changed between a base and a head, for one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDiff {
    /// The suite.
    pub suite: String,
    /// The suite kernel.
    pub kernel: String,
    /// The architecture.
    pub arch: String,
    /// The entries launched, base then head, when their number changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<[Vec<String>; 2]>,
    /// How many launches the head's kernel makes (entries are named when more than one).
    pub launched: usize,
    /// The changed entries.
    pub entries: Vec<EntryDiff>,
}

/// A part of a kernel's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelPart {
    /// Its machine code (the text sections reached).
    Code,
    /// Its data: parameter bank, static shared memory, constant banks, global initializers.
    Data,
    /// Its attributes (`.nv.info`: registers, stack sizes, launch bounds).
    Attributes,
    /// A PTX kernel's text (or the driver that compiles it): no parts to tell apart.
    Ptx,
    /// A library call's declaration or the library's version (`suite::library`).
    Library,
    /// Its launches' entries (how many, or which).
    Entries,
}

impl KernelPart {
    /// `code`, `constant data`, ...: the words reports use.
    pub fn word(self) -> &'static str {
        match self {
            KernelPart::Code => "code",
            KernelPart::Data => "constant data",
            KernelPart::Attributes => "attributes",
            KernelPart::Ptx => "PTX",
            KernelPart::Library => "library call (its declaration or the library's version)",
            KernelPart::Entries => "launched entries",
        }
    }
}

/// The parts that differ between two identities of an entry: a cubin's code, data or
/// attributes (none where only the architecture differs); the whole, for PTX or a library call.
pub fn parts(was: &KernelIdentity, is: &KernelIdentity) -> Vec<KernelPart> {
    match (&was.parts, &is.parts) {
        (Some(a), Some(b)) => crate::order::flagged([
            (a.code != b.code, KernelPart::Code),
            (a.data != b.data, KernelPart::Data),
            (a.attributes != b.attributes, KernelPart::Attributes),
        ]),
        _ if [was, is]
            .iter()
            .any(|i| i.from == super::CodeSource::Library) =>
        {
            vec![KernelPart::Library]
        }
        // A cubin against PTX, or PTX against PTX.
        _ => vec![KernelPart::Ptx],
    }
}

/// `code`, `constant data and attributes`: which parts of an identity differ.
pub fn what_changed(was: &KernelIdentity, is: &KernelIdentity) -> String {
    let parts = parts(was, is);
    match parts[..] {
        [] => "architecture".into(),
        [KernelPart::Library] => "library call".into(),
        _ => parts
            .iter()
            .map(|p| p.word())
            .collect::<Vec<_>>()
            .join(" and "),
    }
}

/// Which side of a diff a listing is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The base.
    Base,
    /// The head (the working tree, the candidate, the commit).
    Head,
}

/// How kernel `kernel` of `suite` changed from `old` to `new` on `arch`; `sass(side, id)` gives
/// an entry's normalised SASS (`None`: PTX, or no disassembler, as `unavailable` says).
pub fn kernel_diff(
    (suite, kernel, arch): (&str, &str, &str),
    old: &KernelCode,
    new: &KernelCode,
    unavailable: Option<&str>,
    mut sass: impl FnMut(Side, &KernelIdentity) -> Result<Option<Vec<String>>, SassError>,
) -> KernelDiff {
    let names = |c: &KernelCode| c.entries.iter().map(|e| e.name.clone()).collect();
    let launches = (old.entries.len() != new.entries.len()).then(|| [names(old), names(new)]);
    let changed = (old.entries.iter().zip(&new.entries)).filter(|(o, n)| o.hash != n.hash);
    let entries = changed.map(|(o, n)| {
        let mut mix = Vec::new();
        let text = match (sass(Side::Base, o), sass(Side::Head, n)) {
            (Ok(Some(a)), Ok(Some(b))) => {
                mix = Mix::of(&a).deltas(&Mix::of(&b));
                SassText::Diff {
                    text: diff::unified(&a, &b),
                }
            }
            (Err(e), _) | (_, Err(e)) => SassText::Failed {
                error: e.to_string(),
            },
            _ if o.parts.is_none() || n.parts.is_none() => SassText::Ptx,
            _ => SassText::Unavailable {
                why: unavailable.unwrap_or("no disassembler").to_string(),
            },
        };
        EntryDiff {
            name: n.name.clone(),
            was: (o.name != n.name).then(|| o.name.clone()),
            hashes: [o.hash.clone(), n.hash.clone()],
            what: what_changed(o, n),
            resources: (o.resources.as_ref().zip(n.resources.as_ref()))
                .and_then(|(a, b)| diff::resources(a, b)),
            mix,
            sass: text,
        }
    });
    KernelDiff {
        suite: suite.to_string(),
        kernel: kernel.to_string(),
        arch: arch.to_string(),
        launches,
        launched: new.entries.len(),
        entries: entries.collect(),
    }
}

impl KernelDiff {
    /// `suite::kernel`.
    pub fn name(&self) -> String {
        format!("{}::{}", self.suite, self.kernel)
    }

    /// The errors met disassembling, with the kernel's name.
    pub fn errors(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|e| match &e.sass {
                SassText::Failed { error } => Some(format!("{}: {error}", self.name())),
                _ => None,
            })
            .collect()
    }

    /// The report as `kernelgate sass --base` prints it: `changed  suite::kernel (sm_90)`, the
    /// launches when they changed, then per entry what changed with its hashes, resources,
    /// instruction mix and indented diff; a blank line last.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("changed  {} ({})", self.name(), self.arch)];
        if let Some([old, new]) = &self.launches {
            out.push(format!(
                "  launches: {} → {}",
                old.join(", "),
                new.join(", ")
            ));
        }
        let several = self.launched > 1;
        for e in &self.entries {
            let entry =
                (e.was.as_ref()).map_or(e.name.clone(), |was| format!("{} (was {was})", e.name));
            let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
            out.push(format!(
                "  {}{} changed: {} → {}",
                if several {
                    format!("{entry}: ")
                } else {
                    String::new()
                },
                e.what,
                short(&e.hashes[0]),
                short(&e.hashes[1])
            ));
            out.extend(e.resources.as_ref().map(|line| format!("  {line}")));
            if !e.mix.is_empty() {
                out.push(format!("  instruction mix: {}", describe_mix(&e.mix)));
            }
            match &e.sass {
                SassText::Diff { text } if text.is_empty() => {
                    out.push(format!("  SASS the same: the {} changed", e.what));
                }
                SassText::Diff { text } => out.extend(text.lines().map(|l| format!("    {l}"))),
                SassText::Ptx => out.push("  PTX: its SASS comes from the driver, on a GPU".into()),
                SassText::Unavailable { why } => out.push(format!("  no SASS: {why}")),
                SassText::Failed { .. } => {}
            }
        }
        out.push(String::new());
        out
    }
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

    #[test]
    fn a_diff_says_what_changed_with_its_mix_and_listing() {
        let code = |i: KernelIdentity| KernelCode {
            kernel: "vec4".into(),
            entries: vec![i],
        };
        let listing = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let d = kernel_diff(
            ("saxpy", "vec4", "sm_90"),
            &code(id("c1", "d1")),
            &code(id("c2", "d1")),
            None,
            |side, _| {
                Ok(Some(match side {
                    Side::Base => listing(&["LDG.E.128 R4, [R2]", "EXIT"]),
                    Side::Head => listing(&["LDG.E R4, [R2]", "EXIT"]),
                }))
            },
        );
        let text = d.lines().join("\n");
        assert!(text.starts_with("changed  saxpy::vec4 (sm_90)\n  code changed: c1d1 → c2d1\n  instruction mix: global load 32-bit 0 → 1 (+1), global load 128-bit 1 → 0 (-1)\n    --- base\n    +++ head\n"), "{text}");
        assert!(
            text.contains("\n    -LDG.E.128 R4, [R2]\n    +LDG.E R4, [R2]\n"),
            "{text}"
        );
        assert!(d.errors().is_empty());
        let missing = kernel_diff(
            ("saxpy", "vec4", "sm_90"),
            &code(id("c1", "d1")),
            &code(id("c2", "d1")),
            Some("no `nvdisasm` found"),
            |_, _| Ok(None),
        );
        assert_eq!(
            missing.lines()[2],
            "  no SASS: no `nvdisasm` found",
            "{missing:?}"
        );
    }
}
