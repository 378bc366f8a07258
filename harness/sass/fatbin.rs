//! `pick`: the module a fatbin holds for an architecture — the cubin the driver would load (its
//! own major architecture, the newest minor not above the target's), else the newest PTX not
//! above it, which the driver compiles — uncompressed where `nvcc`/`nvFatbin` compressed it
//! (LZ4 or Zstandard).
//!
//! The layout (NVIDIA does not document it; measured on `nvFatbin` 13.0's output, the fixtures
//! in `tests/fixtures/sass/`): a 16-byte header (magic `0xBA55ED50`, version, header size, size
//! of the entries), then entries, each a header — kind (1 PTX, 2 ELF) at 0, header size at 4,
//! padded payload size at 8, compressed size at 16 (0 when not compressed), architecture at 28, flags at 40,
//! uncompressed size at 56 — and its payload. Several fatbins may follow one another.

use super::error::SassError;
use super::image::Module;
use crate::device::binary::{arch_number, FATBIN_MAGIC as MAGIC};
use std::io::Read;

/// Flag bits of a compressed entry: LZ4 (`0x1000`, `0x2000`), Zstandard (`0x8000`).
const LZ4: u64 = 0x1000 | 0x2000;
const ZSTD: u64 = 0x8000;
/// The most an entry may claim to hold uncompressed (a cubin is far smaller).
const MAX_ENTRY: u64 = 1 << 30;

/// What a fatbin entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// PTX text.
    Ptx,
    /// A cubin.
    Cubin,
}

/// One entry of a fatbin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// PTX or cubin.
    pub kind: Kind,
    /// Its architecture number (`90` for sm_90 or compute_90).
    pub arch: u32,
    /// The `flags` word (compression, 64-bit, host).
    pub flags: u64,
    /// The payload: the compressed stream where `flags` say so, else the bytes as stored
    /// (which may end in padding).
    pub payload: &'a [u8],
    /// The uncompressed size, for a compressed entry.
    pub uncompressed: u64,
}

fn bad(what: impl Into<String>) -> SassError {
    SassError::BadFatbin(what.into())
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// `start..start + len` as a range of `b`, if it lies inside.
fn span(b: &[u8], start: usize, len: u64) -> Option<std::ops::Range<usize>> {
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= b.len()).then_some(start..end)
}

/// Every entry of the fatbins in `bytes`, in order.
pub fn entries(bytes: &[u8]) -> Result<Vec<Entry<'_>>, SassError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes[at..].iter().all(|&b| b == 0) {
            break; // padding after the last fatbin
        }
        if u32_at(bytes, at) != Some(MAGIC) {
            return Err(bad(format!("no fatbin magic number at byte {at}")));
        }
        let header = u16_at(bytes, at + 6).unwrap_or(0) as usize;
        if header < 16 {
            return Err(bad(format!(
                "the fatbin at byte {at} has a header of {header} bytes"
            )));
        }
        let size = u64_at(bytes, at + 8).ok_or_else(|| bad("the header is cut short"))?;
        let body = span(bytes, at + header, size).ok_or_else(|| {
            bad(format!(
                "the fatbin at byte {at} claims {size} bytes past the file's end"
            ))
        })?;
        let mut e = body.start;
        while e < body.end {
            let field = |off: usize| {
                u32_at(bytes, e + off).ok_or_else(|| bad(format!("entry at byte {e} is cut short")))
            };
            let kind = match field(0)? & 0xffff {
                1 => Kind::Ptx,
                2 => Kind::Cubin,
                other => return Err(bad(format!("entry at byte {e} is of unknown kind {other}"))),
            };
            let entry_header = field(4)? as usize;
            let padded = u64_at(bytes, e + 8).unwrap_or(0);
            let arch = field(28)?;
            // Fields past the header are 0 (a shorter header has none).
            let word = |off: usize| u64_at(bytes, e + off).filter(|_| entry_header >= off + 8);
            let (flags, uncompressed) = (word(40).unwrap_or(0), word(56).unwrap_or(0));
            if entry_header < 32 {
                return Err(bad(format!(
                    "entry at byte {e} has a header of {entry_header} bytes"
                )));
            }
            let stored = span(bytes, e + entry_header, padded)
                .filter(|r| r.end <= body.end && r.end > e)
                .ok_or_else(|| bad(format!("entry at byte {e} runs past the fatbin's end")))?;
            // A compressed entry says how many of its padded bytes are the compressed stream.
            let compressed = u64::from(field(16)?);
            let payload = if flags & (LZ4 | ZSTD) != 0 && compressed > 0 && compressed <= padded {
                stored.start..stored.start + compressed as usize
            } else {
                stored.clone()
            };
            out.push(Entry {
                kind,
                arch,
                flags,
                payload: &bytes[payload],
                uncompressed,
            });
            e = stored.end;
        }
        at = body.end;
    }
    Ok(out)
}

impl Entry<'_> {
    /// The payload uncompressed (or as stored, when it is not compressed).
    pub fn bytes(&self) -> Result<Vec<u8>, SassError> {
        let what = match self.kind {
            Kind::Ptx => "PTX",
            Kind::Cubin => "cubin",
        };
        let failed = |e: String| {
            bad(format!(
                "the sm_{} {what} does not uncompress: {e}",
                self.arch
            ))
        };
        if self.flags & (LZ4 | ZSTD) == 0 {
            return Ok(self.payload.to_vec());
        }
        // LZ4 expands at most 255-fold; Zstandard's stream is read through a bound instead.
        let most = if self.flags & ZSTD != 0 {
            MAX_ENTRY
        } else {
            (self.payload.len() as u64 * 255).min(MAX_ENTRY)
        };
        if self.uncompressed == 0 || self.uncompressed > most {
            return Err(failed(format!(
                "it claims {} bytes uncompressed",
                self.uncompressed
            )));
        }
        let size = self.uncompressed as usize;
        let out = if self.flags & ZSTD != 0 {
            let mut source = self.payload;
            let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source)
                .map_err(|e| failed(e.to_string()))?;
            let mut out = Vec::new();
            decoder
                .take(self.uncompressed)
                .read_to_end(&mut out)
                .map_err(|e| failed(e.to_string()))?;
            out
        } else {
            let mut out = vec![0u8; size];
            let written = lz4_flex::block::decompress_into(self.payload, &mut out)
                .map_err(|e| failed(e.to_string()))?;
            out.truncate(written);
            out
        };
        if out.len() != size {
            return Err(failed(format!("{} bytes, not {size}", out.len())));
        }
        Ok(out)
    }
}

/// The module the driver would load from fatbin `bytes` on `arch`: the cubin of the same major
/// architecture with the newest minor not above it, else the newest PTX not above it.
pub fn pick(bytes: &[u8], arch: &str) -> Result<Module<'static>, SassError> {
    let target =
        arch_number(arch).ok_or_else(|| bad(format!("`{arch}` is not an architecture")))?;
    let all = entries(bytes)?;
    let cubin = all
        .iter()
        .filter(|e| e.kind == Kind::Cubin && e.arch / 10 == target / 10 && e.arch <= target)
        .max_by_key(|e| e.arch);
    if let Some(e) = cubin {
        return Ok(Module::Cubin(e.bytes()?.into()));
    }
    let ptx = all
        .iter()
        .filter(|e| e.kind == Kind::Ptx && e.arch <= target)
        .max_by_key(|e| e.arch);
    if let Some(e) = ptx {
        let mut text = e.bytes()?;
        while text.last() == Some(&0) {
            text.pop();
        }
        let text = String::from_utf8(text)
            .map_err(|_| bad(format!("the compute_{} PTX is not UTF-8 text", e.arch)))?;
        return Ok(Module::Ptx(text.into()));
    }
    let held: Vec<String> = all
        .iter()
        .map(|e| match e.kind {
            Kind::Cubin => format!("sm_{} cubin", e.arch),
            Kind::Ptx => format!("compute_{} PTX", e.arch),
        })
        .collect();
    Err(SassError::NoArch {
        arch: arch.to_string(),
        held: if held.is_empty() {
            "nothing".into()
        } else {
            held.join(", ")
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `relu.fatbin` (uncompressed), `relu-lz4.fatbin` and `relu-zstd.fatbin`: sm_80 and sm_90
    /// cubins and compute_90 PTX of one kernel, written by nvFatbin 13.0
    /// (`tests/fixtures/sass/make_fatbins.py`).
    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("tests/fixtures/sass/{name}")).unwrap()
    }

    #[test]
    fn the_entries_of_a_real_fatbin_uncompressed_or_not() {
        let plain = fixture("relu.fatbin");
        let found: Vec<(Kind, u32)> = entries(&plain)
            .unwrap()
            .iter()
            .map(|e| (e.kind, e.arch))
            .collect();
        assert_eq!(
            found,
            [(Kind::Cubin, 80), (Kind::Cubin, 90), (Kind::Ptx, 90)]
        );
        let expected: Vec<Vec<u8>> = entries(&plain)
            .unwrap()
            .iter()
            .map(|e| e.bytes().unwrap())
            .collect();
        for compressed in ["relu-lz4.fatbin", "relu-zstd.fatbin"] {
            let bytes = fixture(compressed);
            let got: Vec<Vec<u8>> = entries(&bytes)
                .unwrap()
                .iter()
                .map(|e| e.bytes().unwrap())
                .collect();
            assert_eq!(got.len(), 3, "{compressed}");
            for (g, e) in got.iter().zip(&expected) {
                // The stored payloads are padded; the uncompressed ones are exact.
                assert!(e.starts_with(g), "{compressed}");
                assert!(e[g.len()..].iter().all(|&b| b == 0), "{compressed}");
            }
        }
    }

    #[test]
    fn the_driver_s_pick_same_major_newest_minor_else_ptx() {
        let bytes = fixture("relu.fatbin");
        let arch_of = |m: &Module| match m {
            Module::Cubin(c) => {
                format!("cubin sm_{}", crate::device::binary::cubin_arch(c).unwrap())
            }
            Module::Ptx(t) => format!(
                "ptx {}",
                t.lines().find(|l| l.starts_with(".target")).unwrap()
            ),
            Module::Library(_) => unreachable!("a fatbin holds code"),
        };
        assert_eq!(arch_of(&pick(&bytes, "sm_90").unwrap()), "cubin sm_90");
        assert_eq!(arch_of(&pick(&bytes, "sm_89").unwrap()), "cubin sm_80");
        assert_eq!(
            arch_of(&pick(&bytes, "sm_100").unwrap()),
            "ptx .target sm_90"
        );
        let e = pick(&bytes, "sm_75").unwrap_err().to_string();
        assert!(
            e.contains("holds no cubin or PTX that sm_75 can load (it holds sm_80 cubin, sm_90 cubin, compute_90 PTX)"),
            "{e}"
        );
    }

    #[test]
    fn cut_or_lying_fatbins_are_errors() {
        let bytes = fixture("relu.fatbin");
        for cut in [20, 100, bytes.len() - 1] {
            assert!(entries(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut lying = bytes.clone();
        lying[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = entries(&lying).unwrap_err().to_string();
        assert!(
            e.contains("claims 18446744073709551615 bytes past the file's end"),
            "{e}"
        );
        let mut huge = fixture("relu-zstd.fatbin");
        let first = 16;
        huge[first + 56..first + 64].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = entries(&huge).unwrap()[0].bytes().unwrap_err().to_string();
        assert!(
            e.contains("claims 18446744073709551615 bytes uncompressed"),
            "{e}"
        );
        assert!(entries(b"not a fatbin").is_err());
    }
}
