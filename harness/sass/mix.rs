//! `Mix`: a SASS listing's static instruction mix by class — loads and stores by memory space
//! and width, FP32, FP16, FP64, tensor, integer, conversions, branches, barriers, other — and
//! the deltas between two listings. Static: instructions in the code, not executed (a loop body
//! counts once), which is what a code change changes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Where a load or store goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Space {
    /// Global memory (`LDG`, `STG`).
    Global,
    /// Shared memory (`LDS`, `STS`, `LDSM`).
    Shared,
    /// Local memory (`LDL`, `STL`): spills and run-time-indexed arrays.
    Local,
    /// Generic addresses (`LD`, `ST`).
    Generic,
}

/// An instruction class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A load of `bits` per thread (0: `LDSM`, a matrix load).
    Load(Space, u16),
    /// A store of `bits` per thread (0: `STSM`).
    Store(Space, u16),
    /// Atomics and reductions (`ATOM`, `ATOMG`, `ATOMS`, `RED`).
    Atomic,
    /// Asynchronous and bulk copies (`LDGSTS`, `UBLKCP`, `UTMALDG`, ...).
    AsyncCopy,
    /// Single precision (`FADD`, `FFMA`, `FMNMX`, `MUFU`, ...).
    Fp32,
    /// Half precision, packed (`HADD2`, `HFMA2`, ...).
    Fp16,
    /// Double precision (`DADD`, `DFMA`, ...).
    Fp64,
    /// Tensor cores (`HMMA`, `IMMA`, `DMMA`, `HGMMA`, `UTCHMMA`, ...).
    Tensor,
    /// Integer and logic, vector and uniform datapaths alike (`IMAD`, `IADD3`, `LOP3`, `UIADD3`).
    Integer,
    /// Conversions (`F2F`, `F2I`, `I2F`, `F2FP`, ...).
    Conversion,
    /// Control flow (`BRA`, `CALL`, `RET`, `EXIT`, `BSSY`, `BSYNC`, ...).
    Branch,
    /// Barriers and fences (`BAR`, `MEMBAR`, `DEPBAR`, `WARPSYNC`, `SYNCS`, ...).
    Barrier,
    /// Everything else (`MOV`, `SEL`, `S2R`, `LDC`, `SHFL`, ...).
    Other,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let space = |s: &Space| match s {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Generic => "generic",
        };
        match self {
            Class::Load(s, 0) => write!(f, "{} matrix load", space(s)),
            Class::Store(s, 0) => write!(f, "{} matrix store", space(s)),
            Class::Load(s, bits) => write!(f, "{} load {bits}-bit", space(s)),
            Class::Store(s, bits) => write!(f, "{} store {bits}-bit", space(s)),
            Class::Atomic => f.write_str("atomic"),
            Class::AsyncCopy => f.write_str("async copy"),
            Class::Fp32 => f.write_str("FP32"),
            Class::Fp16 => f.write_str("FP16"),
            Class::Fp64 => f.write_str("FP64"),
            Class::Tensor => f.write_str("tensor"),
            Class::Integer => f.write_str("integer"),
            Class::Conversion => f.write_str("conversion"),
            Class::Branch => f.write_str("branch"),
            Class::Barrier => f.write_str("barrier"),
            Class::Other => f.write_str("other"),
        }
    }
}

const FP32: [&str; 12] = [
    "FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSET", "FSEL", "FCHK", "FRND", "FSWZADD", "MUFU",
    "FMNMX3",
];
const FP64: [&str; 6] = ["DADD", "DMUL", "DFMA", "DSETP", "DSET", "DMNMX"];
const CONVERSION: [&str; 8] = ["F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "F2IP", "I2IP"];
const INTEGER: [&str; 27] = [
    "IADD3",
    "IADD",
    "IMAD",
    "IMUL",
    "ISETP",
    "ISET",
    "IMNMX",
    "IABS",
    "LOP3",
    "LOP",
    "SHF",
    "SHL",
    "SHR",
    "LEA",
    "POPC",
    "FLO",
    "BREV",
    "BMSK",
    "SGXT",
    "IDP",
    "IDP4A",
    "VIADD",
    "VIADDMNMX",
    "VIMNMX",
    "VIMNMX3",
    "PRMT",
    "IMNMX3",
];
const BRANCH: [&str; 12] = [
    "BRA", "BRX", "BRXU", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "KILL",
];
const BARRIER: [&str; 10] = [
    "BAR",
    "MEMBAR",
    "DEPBAR",
    "ERRBAR",
    "WARPSYNC",
    "SYNCS",
    "FENCE",
    "ARRIVES",
    "LDGDEPBAR",
    "CCTL",
];
const ASYNC: [&str; 6] = [
    "LDGSTS", "UBLKCP", "UTMALDG", "UTMASTG", "UTMAPF", "UBLKRED",
];

/// The class of one instruction (`@P0 LDG.E.128 R4, [R2.64]`), or `None` for a label or `NOP`.
pub fn classify(instruction: &str) -> Option<Class> {
    let text = instruction.trim();
    if text.ends_with(':') {
        return None;
    }
    let mut words = text.split_whitespace();
    let mut opcode = words.next()?;
    if opcode.starts_with('@') {
        opcode = words.next()?;
    }
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let modifiers: Vec<&str> = parts.collect();
    let width = || {
        modifiers
            .iter()
            .find_map(|m| match *m {
                "U8" | "S8" | "8" => Some(8),
                "U16" | "S16" | "16" => Some(16),
                "32" => Some(32),
                "64" => Some(64),
                "128" => Some(128),
                _ => None,
            })
            .unwrap_or(32)
    };
    let memory = |space| match base {
        b if b.starts_with("LD") => Class::Load(space, width()),
        _ => Class::Store(space, width()),
    };
    // `HFMA2.MMA R3, -RZ, RZ, 0, 2.38e-07` is how sm_80 code moves a constant into a register.
    if opcode == "HFMA2.MMA" && text.contains(" -RZ, RZ, ") {
        return Some(Class::Other);
    }
    Some(match base {
        "NOP" => return None,
        "LDG" | "STG" => memory(Space::Global),
        "LDS" | "STS" => memory(Space::Shared),
        "LDL" | "STL" => memory(Space::Local),
        "LD" | "ST" => memory(Space::Generic),
        "LDSM" => Class::Load(Space::Shared, 0),
        "STSM" => Class::Store(Space::Shared, 0),
        "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" | "REDAS" => Class::Atomic,
        b if ASYNC.contains(&b) => Class::AsyncCopy,
        b if b.ends_with("MMA") => Class::Tensor,
        b if CONVERSION.contains(&b) => Class::Conversion,
        b if FP32.contains(&b) || FP32.contains(&b.trim_end_matches("32I")) => Class::Fp32,
        b if FP64.contains(&b) => Class::Fp64,
        b if b.starts_with('H') && b.ends_with('2') => Class::Fp16,
        b if INTEGER.contains(&b.trim_end_matches("32I"))
            || INTEGER.contains(&b.strip_prefix('U').unwrap_or("")) =>
        {
            Class::Integer
        }
        b if BRANCH.contains(&b) => Class::Branch,
        b if BARRIER.contains(&b) || b.starts_with("UCGABAR") => Class::Barrier,
        _ => Class::Other,
    })
}

/// Instruction counts by class.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mix(pub BTreeMap<Class, u32>);

impl Mix {
    /// The mix of a normalised listing (labels and NOPs not counted).
    pub fn of(listing: &[String]) -> Mix {
        let mut counts = BTreeMap::new();
        for class in listing.iter().filter_map(|l| classify(l)) {
            *counts.entry(class).or_insert(0) += 1;
        }
        Mix(counts)
    }

    /// Each class whose count differs, named, with its counts in `self` and in `head`.
    pub fn deltas(&self, head: &Mix) -> Vec<MixDelta> {
        let classes: std::collections::BTreeSet<&Class> =
            self.0.keys().chain(head.0.keys()).collect();
        classes
            .into_iter()
            .map(|c| MixDelta {
                class: c.to_string(),
                old: self.0.get(c).copied().unwrap_or(0),
                new: head.0.get(c).copied().unwrap_or(0),
            })
            .filter(|d| d.old != d.new)
            .collect()
    }
}

/// One instruction class whose static count moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixDelta {
    /// The class, as `mix` names it (`global load 128-bit`, `FP64`).
    pub class: String,
    /// Its count in the base.
    pub old: u32,
    /// Its count in the head.
    pub new: u32,
}

/// `global load 128-bit 1 → 0 (-1), global load 32-bit 0 → 4 (+4)`; empty when none.
pub fn describe_mix(deltas: &[MixDelta]) -> String {
    deltas
        .iter()
        .map(|d| {
            let change = i64::from(d.new) - i64::from(d.old);
            format!("{} {} → {} ({change:+})", d.class, d.old, d.new)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_by_class_with_widths() {
        let cases = [
            (
                "LDG.E.128 R4, desc[UR4][R2.64]",
                Some(Class::Load(Space::Global, 128)),
            ),
            (
                "@P0 LDG.E R0, desc[UR4][R2.64]",
                Some(Class::Load(Space::Global, 32)),
            ),
            (
                "LDG.E.LTC128B.64 R4, desc[UR4][R2.64]",
                Some(Class::Load(Space::Global, 64)),
            ),
            (
                "STG.E.U16 desc[UR4][R2.64], R5",
                Some(Class::Store(Space::Global, 16)),
            ),
            ("LDS.U8 R0, [R7+UR4]", Some(Class::Load(Space::Shared, 8))),
            ("STS.128 [R7], R4", Some(Class::Store(Space::Shared, 128))),
            (
                "LDSM.16.M88.4 R4, [R0]",
                Some(Class::Load(Space::Shared, 0)),
            ),
            ("STL [R1], R3", Some(Class::Store(Space::Local, 32))),
            (
                "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, RZ, desc[UR4][R2.64], R5",
                Some(Class::Atomic),
            ),
            ("FFMA R5, R0, R3, R4", Some(Class::Fp32)),
            ("FMUL32I R0, R0, 0.5", Some(Class::Fp32)),
            ("MUFU.RCP R3, R0", Some(Class::Fp32)),
            ("HFMA2 R0, R1, R2, R3", Some(Class::Fp16)),
            ("DFMA R4, R2, R4, R6", Some(Class::Fp64)),
            ("F2F.F64.F32 R2, R0", Some(Class::Conversion)),
            ("HMMA.16816.F32 R4, R8, R12, R4", Some(Class::Tensor)),
            (
                "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24",
                Some(Class::Tensor),
            ),
            ("IMAD.WIDE R2, R5, 0x4, R2", Some(Class::Integer)),
            ("UIADD3 UR4, UR4, 0x1, URZ", Some(Class::Integer)),
            (
                "LOP3.LUT R7, R0, 0x1fc, RZ, 0xc0, !PT",
                Some(Class::Integer),
            ),
            ("@P0 BRA `(.L0)", Some(Class::Branch)),
            ("EXIT", Some(Class::Branch)),
            ("BAR.SYNC.DEFER_BLOCKING 0x0", Some(Class::Barrier)),
            ("SHFL.BFLY PT, R3, R0, 0x10, 0x1f", Some(Class::Other)),
            ("MOV R2, 0x190", Some(Class::Other)),
            (
                "HFMA2.MMA R3, -RZ, RZ, 0, 2.384185791015625e-07",
                Some(Class::Other),
            ),
            ("NOP", None),
            (".L0:", None),
        ];
        for (instruction, class) in cases {
            assert_eq!(classify(instruction), class, "{instruction}");
        }
    }

    #[test]
    fn deltas_name_only_the_classes_that_moved() {
        let listing =
            |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| l.to_string()).collect() };
        let base = Mix::of(&listing(&[
            "LDG.E.128 R4, [R2]",
            "FFMA R0, R1, R2, R3",
            "EXIT",
        ]));
        let head = Mix::of(&listing(&[
            "LDG.E R4, [R2]",
            "LDG.E R5, [R2+0x4]",
            "FFMA R0, R1, R2, R3",
            "EXIT",
        ]));
        assert_eq!(
            describe_mix(&base.deltas(&head)),
            "global load 32-bit 0 → 2 (+2), global load 128-bit 1 → 0 (-1)"
        );
        assert!(base.deltas(&base).is_empty());
    }
}
