//! `attributes`: a kernel's `.nv.info` records as they enter its identity — those of every
//! function the kernel reaches, and the module records that name one of them, with symbol
//! indices written as `Reach::symbol` writes them and the toolchain's API level left out — and
//! the resources read from them (registers, frame and stack sizes, launch bounds, barriers).

use super::elf::{info_records, CudaElf, InfoRecord, EIFMT_SVAL, SHT_CUDA_INFO};
use super::error::SassError;
use super::reach::Reach;
use super::types::Resources;

/// `EIATTR_*` codes kernelgate reads (NVIDIA's numbering, as `cuobjdump -elf` names them).
mod eiattr {
    pub const MAX_THREADS: u8 = 0x05;
    pub const PARAM_CBANK: u8 = 0x0a;
    pub const EXTERNS: u8 = 0x0f;
    pub const REQNTID: u8 = 0x10;
    pub const FRAME_SIZE: u8 = 0x11;
    pub const MIN_STACK_SIZE: u8 = 0x12;
    pub const CBANK_PARAM_SIZE: u8 = 0x19;
    pub const CRS_STACK_SIZE: u8 = 0x1e;
    pub const MAX_STACK_SIZE: u8 = 0x23;
    pub const REGCOUNT: u8 = 0x2f;
    pub const CUDA_API_VERSION: u8 = 0x37;
    pub const CTA_PER_CLUSTER: u8 = 0x3d;
    pub const NUM_BARRIERS: u8 = 0x4c;
}

/// Module `.nv.info` records whose first word names a function: `(symbol, value)`.
const PER_FUNCTION: [u8; 5] = [
    eiattr::FRAME_SIZE,
    eiattr::MIN_STACK_SIZE,
    eiattr::CRS_STACK_SIZE,
    eiattr::MAX_STACK_SIZE,
    eiattr::REGCOUNT,
];

/// The normalised `.nv.info` records of the reached functions (sorted, so their order in the
/// file does not matter), and the kernel's resources read from them.
pub(super) fn attributes(
    elf: &CudaElf,
    reach: &Reach,
    name: &str,
) -> Result<(Vec<Vec<u8>>, Resources), SassError> {
    let kernel = elf.function(name);
    let mut res = Resources {
        shared_bytes: elf
            .section(&format!(".nv.shared.{name}"))
            .map_or(0, |i| elf.sections[i].size),
        code_bytes: reach.code(elf).iter().map(|s| s.size).sum(),
        ..Resources::default()
    };
    let mut out = Vec::new();
    // Each reached function's own `.nv.info.<function>`.
    for s in reach.code(elf) {
        let Some(function) = s.name.strip_prefix(".text.") else {
            continue;
        };
        let Some(info) = elf
            .sections
            .iter()
            .find(|i| i.kind == SHT_CUDA_INFO && i.name == format!(".nv.info.{function}"))
        else {
            continue;
        };
        let own = function == name;
        for r in info_records(info.data)? {
            if r.attribute == eiattr::CUDA_API_VERSION {
                continue; // the toolchain's API level, recorded beside the hash
            }
            let symbols: &[usize] = match r.attribute {
                eiattr::PARAM_CBANK => &[0],
                eiattr::EXTERNS => &[usize::MAX],
                _ => &[],
            };
            out.push(normalise(elf, reach, &r, symbols));
            if own {
                read_own(&r, &mut res);
            }
        }
    }
    // The module's `.nv.info`: the records that name a reached function, and every record that
    // names none (those apply to the whole module).
    for info in elf
        .sections
        .iter()
        .filter(|i| i.kind == SHT_CUDA_INFO && i.name == ".nv.info")
    {
        for r in info_records(info.data)? {
            let per_function = PER_FUNCTION.contains(&r.attribute) && r.format == EIFMT_SVAL;
            let Some(symbol) = r.word(0).filter(|_| per_function) else {
                out.push(normalise(elf, reach, &r, &[]));
                continue;
            };
            let symbol = symbol as usize;
            let reached = elf
                .symbols
                .get(symbol)
                .and_then(|s| s.section)
                .is_some_and(|s| reach.contains(s));
            if !reached {
                continue;
            }
            out.push(normalise(elf, reach, &r, &[0]));
            if Some(symbol) == kernel {
                let value = r.word(1).unwrap_or(0);
                match r.attribute {
                    eiattr::REGCOUNT => res.registers = Some(value),
                    eiattr::FRAME_SIZE => res.local_bytes = value,
                    eiattr::MIN_STACK_SIZE | eiattr::MAX_STACK_SIZE => {
                        res.stack_bytes = res.stack_bytes.max(value)
                    }
                    _ => {}
                }
            }
        }
    }
    out.sort();
    Ok((out, res))
}

/// A record as it enters the hash: its attribute, format and value, with the words at
/// `symbols` (`usize::MAX`: every word) written as `Reach::symbol` does.
fn normalise(elf: &CudaElf, reach: &Reach, r: &InfoRecord, symbols: &[usize]) -> Vec<u8> {
    let mut out = vec![r.attribute, r.format];
    let words = r.value.len() / 4;
    let is_symbol = |i: usize| symbols.contains(&i) || symbols.contains(&usize::MAX);
    if symbols.is_empty() || r.format != EIFMT_SVAL {
        out.extend_from_slice(r.value);
        return out;
    }
    for i in 0..words {
        let word = r.word(i).unwrap_or(0);
        if is_symbol(i) {
            out.extend(reach.symbol(elf, word as usize));
        } else {
            out.extend(word.to_le_bytes());
        }
    }
    out.extend_from_slice(&r.value[words * 4..]);
    out
}

/// The resources a kernel's own `.nv.info.<name>` record gives.
fn read_own(r: &InfoRecord, res: &mut Resources) {
    let dims = || Some([r.word(0)?, r.word(1)?, r.word(2)?]);
    match r.attribute {
        eiattr::NUM_BARRIERS => res.barriers = u32::from(r.short()),
        eiattr::CBANK_PARAM_SIZE => res.param_bytes = Some(u32::from(r.short())),
        eiattr::MAX_THREADS => res.max_threads = dims(),
        eiattr::REQNTID => res.required_threads = dims(),
        eiattr::CTA_PER_CLUSTER => res.cluster = dims(),
        _ => {}
    }
}
