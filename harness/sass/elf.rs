//! `CudaElf`: a cubin read through the `object` crate's ELF parser — its sections with their
//! bytes and relocations, its symbols, and the `.nv.info` attribute records — every offset and
//! size checked, so bad bytes are an error, never a panic.

use super::error::SassError;
use object::elf;
use object::read::elf::{FileHeader, Rel, Rela, SectionHeader, Sym};

/// One section of a cubin.
#[derive(Debug, Clone)]
pub struct Section<'a> {
    /// Its name, e.g. `.text.saxpy` or `.nv.constant3`.
    pub name: String,
    /// `sh_type`: `SHT_PROGBITS`, `SHT_NOBITS`, or one of NVIDIA's (`0x7000_0000` and up).
    pub kind: u32,
    /// `sh_size`: the size in memory, also for `SHT_NOBITS` sections, which hold no bytes.
    pub size: u64,
    /// Its bytes in the file (empty for `SHT_NOBITS`).
    pub data: &'a [u8],
    /// The relocations that patch it, from the `.rel`/`.rela` section linked to it.
    pub relocations: Vec<Relocation>,
}

impl Section<'_> {
    /// Whether it holds machine code (`.text.<function>`).
    pub fn is_code(&self) -> bool {
        self.name.starts_with(".text.")
    }
}

/// One relocation: at `offset` in its section, patch in symbol `symbol` (plus `addend`) the
/// way `kind` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relocation {
    /// Byte offset in the patched section.
    pub offset: u64,
    /// `R_CUDA_*` type.
    pub kind: u32,
    /// Index in `CudaElf::symbols`.
    pub symbol: usize,
    /// Added to the symbol's address (0 for `.rel` relocations).
    pub addend: i64,
}

/// One symbol of a cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name (empty for some section symbols).
    pub name: String,
    /// The section it is defined in; `None` for an undefined or absolute symbol.
    pub section: Option<usize>,
    /// Its offset in that section.
    pub value: u64,
    /// `STT_FUNC`, `STT_OBJECT`, `STT_SECTION`, ...
    pub kind: u8,
}

/// A parsed cubin: what the identity and the disassembly read.
#[derive(Debug, Clone)]
pub struct CudaElf<'a> {
    /// The architecture number from the ELF header (`90` for sm_90).
    pub arch: u32,
    /// Every section, by ELF index (index 0 is the null section).
    pub sections: Vec<Section<'a>>,
    /// Every symbol, by ELF index.
    pub symbols: Vec<Symbol>,
}

/// `SHT_CUDA_INFO`: the `.nv.info` sections.
pub const SHT_CUDA_INFO: u32 = 0x7000_0000;

fn bad(what: impl Into<String>) -> SassError {
    SassError::BadCubin(what.into())
}

/// The `object` crate's error reading `what`, as a bad cubin.
fn at(what: impl std::fmt::Display) -> impl FnOnce(object::read::Error) -> SassError {
    move |e| bad(format!("{what}: {e}"))
}

impl<'a> CudaElf<'a> {
    /// Reads `bytes` as a CUDA ELF image (a cubin).
    pub fn parse(bytes: &'a [u8]) -> Result<CudaElf<'a>, SassError> {
        let arch = crate::device::binary::cubin_arch(bytes)
            .ok_or_else(|| bad("not a CUDA ELF image (no ELF header with the CUDA ABI)"))?;
        let header =
            elf::FileHeader64::<object::Endianness>::parse(bytes).map_err(at("ELF header"))?;
        let endian = header.endian().map_err(at("ELF header"))?;
        let table = header
            .sections(endian, bytes)
            .map_err(at("section table"))?;
        let symtab = (table.symbols(endian, bytes, elf::SHT_SYMTAB)).map_err(at("symbol table"))?;
        let mut symbols = Vec::with_capacity(symtab.len());
        for (index, sym) in symtab.enumerate() {
            let symbol = format!("symbol {}", index.0);
            let name = symtab.symbol_name(endian, sym).map_err(at(&symbol))?;
            let section = (symtab.symbol_section(endian, sym, index)).map_err(at(symbol))?;
            symbols.push(Symbol {
                name: String::from_utf8_lossy(name).into_owned(),
                section: section.map(|s| s.0),
                value: sym.st_value(endian),
                kind: sym.st_type().0,
            });
        }
        let mut sections = Vec::with_capacity(table.len());
        for (index, sh) in table.enumerate() {
            let name = table
                .section_name(endian, sh)
                .map_err(at(format!("section {}", index.0)))?;
            let name = String::from_utf8_lossy(name).into_owned();
            let data = sh
                .data(endian, bytes)
                .map_err(at(format!("section `{name}`")))?;
            sections.push(Section {
                name,
                kind: sh.sh_type(endian).0,
                size: sh.sh_size(endian),
                data,
                relocations: Vec::new(),
            });
        }
        // Relocations, moved onto the sections they patch (`sh_info`).
        for sh in table.iter() {
            let target = sh.sh_info(endian) as usize;
            let mut found = Vec::new();
            if let Some((rela, _)) = sh.rela(endian, bytes).map_err(at("relocations"))? {
                found.extend(rela.iter().map(|r| Relocation {
                    offset: r.r_offset(endian),
                    kind: r.r_type(endian, false).0,
                    symbol: r.r_sym(endian, false) as usize,
                    addend: r.r_addend(endian),
                }));
            }
            if let Some((rel, _)) = sh.rel(endian, bytes).map_err(at("relocations"))? {
                found.extend(rel.iter().map(|r| Relocation {
                    offset: r.r_offset(endian),
                    kind: r.r_type(endian).0,
                    symbol: r.r_sym(endian) as usize,
                    addend: 0,
                }));
            }
            if found.is_empty() {
                continue;
            }
            if let Some(r) = found.iter().find(|r| r.symbol >= symbols.len()) {
                return Err(bad(format!(
                    "a relocation names symbol {} of {}",
                    r.symbol,
                    symbols.len()
                )));
            }
            let section = sections.get_mut(target).ok_or_else(|| {
                bad(format!(
                    "relocations for section {target}, which is not there"
                ))
            })?;
            section.relocations.extend(found);
        }
        for s in &mut sections {
            s.relocations.sort();
        }
        Ok(CudaElf {
            arch,
            sections,
            symbols,
        })
    }

    /// The index of the section named `name`.
    pub fn section(&self, name: &str) -> Option<usize> {
        self.sections.iter().position(|s| s.name == name)
    }

    /// The index of the function symbol `name` (a kernel or a device function).
    pub fn function(&self, name: &str) -> Option<usize> {
        self.symbols
            .iter()
            .position(|s| s.name == name && s.kind == elf::STT_FUNC.0)
    }
}

/// One record of a `.nv.info` section: `EIATTR_*` code, `EIFMT_*` format, and its value bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoRecord<'a> {
    /// `EIFMT_NVAL` (1), `EIFMT_BVAL` (2), `EIFMT_HVAL` (3) or `EIFMT_SVAL` (4).
    pub format: u8,
    /// The `EIATTR_*` code (e.g. `0x2f`, `EIATTR_REGCOUNT`).
    pub attribute: u8,
    /// The value: 2 bytes for the short formats, the sized payload for `EIFMT_SVAL`.
    pub value: &'a [u8],
}

/// `EIFMT_SVAL`: a record with a 16-bit size and that many bytes of value.
pub const EIFMT_SVAL: u8 = 4;

impl InfoRecord<'_> {
    /// The value's `i`-th little-endian 32-bit word, if it has one.
    pub fn word(&self, i: usize) -> Option<u32> {
        let bytes = self.value.get(i * 4..i * 4 + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The value as a 16-bit number (`EIFMT_HVAL`, `EIFMT_BVAL`).
    pub fn short(&self) -> u16 {
        let b = |i: usize| self.value.get(i).copied().unwrap_or(0);
        u16::from_le_bytes([b(0), b(1)])
    }
}

/// The records of a `.nv.info` section's bytes, in order; an error where one runs past the end.
pub fn info_records(bytes: &[u8]) -> Result<Vec<InfoRecord<'_>>, SassError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 4)
            .ok_or_else(|| bad(format!(".nv.info record at byte {at} is cut short")))?;
        let (format, attribute) = (head[0], head[1]);
        let value = if format == EIFMT_SVAL {
            let size = u16::from_le_bytes([head[2], head[3]]) as usize;
            let value = bytes.get(at + 4..at + 4 + size).ok_or_else(|| {
                bad(format!(
                    ".nv.info record at byte {at} holds {size} bytes past the section's end"
                ))
            })?;
            at += 4 + size;
            value
        } else {
            at += 4;
            &head[2..4]
        };
        out.push(InfoRecord {
            format,
            attribute,
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_records_split_by_format_and_refuse_a_cut_record() {
        // EIATTR_REGCOUNT (SVAL: symbol 0x12, 12 registers), then NUM_BARRIERS (BVAL 1),
        // then MAXREG_COUNT (HVAL 0xff), as NVRTC 13.0 writes them.
        let bytes = [
            0x04, 0x2f, 0x08, 0x00, 0x12, 0, 0, 0, 0x0c, 0, 0, 0, 0x02, 0x4c, 0x01, 0x00, 0x03,
            0x1b, 0xff, 0x00,
        ];
        let records = info_records(&bytes).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(
            (records[0].attribute, records[0].word(0), records[0].word(1)),
            (0x2f, Some(0x12), Some(12))
        );
        assert_eq!((records[1].attribute, records[1].short()), (0x4c, 1));
        assert_eq!((records[2].attribute, records[2].short()), (0x1b, 0xff));
        let e = info_records(&bytes[..10]).unwrap_err().to_string();
        assert!(e.contains("holds 8 bytes past the section's end"), "{e}");
        let e = info_records(&bytes[..14]).unwrap_err().to_string();
        assert!(e.contains("record at byte 12 is cut short"), "{e}");
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        for bytes in [
            &b""[..],
            b"\x7fELF",
            b"not an elf file at all, but long enough to hold a header, surely it is.......",
        ] {
            assert!(CudaElf::parse(bytes).is_err());
        }
        // A CUDA ELF header whose section table points past the end.
        let mut h = vec![0u8; 0x40];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // 64-bit
        h[5] = 1; // little-endian
        h[6] = 1;
        h[7] = 0x41;
        h[8] = 8;
        h[0x30..0x34].copy_from_slice(&0x6005a04u32.to_le_bytes());
        h[0x28..0x30].copy_from_slice(&0x1000u64.to_le_bytes()); // e_shoff
        h[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        h[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes()); // e_shnum
        let e = CudaElf::parse(&h).unwrap_err().to_string();
        assert!(e.starts_with("not a usable cubin: "), "{e}");
    }
}
