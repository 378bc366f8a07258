//! `load`: kernels that come built — PTX (from nvcc, Triton, Numba), a CUBIN or a fatbin — made
//! into a `Compiled` without NVRTC. The driver JIT-compiles PTX when the module loads; a CUBIN
//! must be for the GPU's architecture, checked here so the error names both.

use super::compile::{CompileError, Compiled};
use super::ptx;
use std::path::Path;

/// A fatbin's magic number, little-endian at offset 0.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// The module image of `path` for `arch` (e.g. `sm_90`), with its entries as given (PTX and
/// binaries are not mangled by kernelgate: name them as the file does). `text` is the PTX as
/// read when the suite was loaded; a cubin or fatbin is read here.
pub fn load(
    path: &Path,
    text: &str,
    entries: &[String],
    arch: &str,
) -> Result<Compiled, CompileError> {
    let bad = |message: String| CompileError::binary(path, message);
    let no_entry = |e: &String| CompileError::no_entry(path, e);
    let device =
        arch_number(arch).ok_or_else(|| bad(format!("`{arch}` is not an architecture")))?;
    let (image, fp64) = match path.extension().and_then(|e| e.to_str()) {
        Some("ptx") => {
            if let Some(target) = ptx_target(text).filter(|t| *t > device) {
                return Err(bad(format!(
                    "the PTX targets sm_{target}, newer than this GPU's {arch}: regenerate it for {arch} or older"
                )));
            }
            let functions = ptx::parse(text);
            let fp64 = (entries.iter())
                .map(|e| match ptx::fp64_use(&functions, e) {
                    Some(used) if functions[e].entry => Ok(used),
                    _ => Err(no_entry(e)),
                })
                .collect::<Result<_, _>>()?;
            let mut image = text.as_bytes().to_vec();
            image.push(0); // the driver reads PTX as a C string
            (image, fp64)
        }
        Some("cubin") => {
            let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
            let built = cubin_arch(&bytes).ok_or_else(|| {
                bad(
                    "not a CUBIN (no CUDA ELF header): build it with `nvcc -cubin -arch=sm_XX`"
                        .into(),
                )
            })?;
            if let Some(why) = cubin_target_problem(built, arch, &format!("this GPU ({arch})")) {
                return Err(bad(why));
            }
            if let Some(e) =
                (entries.iter()).find(|e| !contains(&bytes, format!(".text.{e}\0").as_bytes()))
            {
                return Err(no_entry(e));
            }
            (bytes, vec![ptx::Fp64Use::default(); entries.len()])
        }
        Some("fatbin") => {
            let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
            if !fatbin_magic(&bytes) {
                return Err(bad(NOT_A_FATBIN.into()));
            }
            (bytes, vec![ptx::Fp64Use::default(); entries.len()])
        }
        _ => return Err(bad("not a .ptx, .cubin or .fatbin file".into())),
    };
    Ok(Compiled {
        cubin: image,
        entries: entries.to_vec(),
        lowered: entries.to_vec(),
        fp64,
        log: String::new(),
        cached: false,
    })
}

/// What is wrong with a `.cubin` or `.fatbin` file's bytes, read from the file alone (no GPU, no
/// NVRTC): not the format its name says, a host ELF or a 32-bit one, a fatbin that holds no
/// code. `None` when it looks like what it claims.
pub fn file_problem(path: &Path, bytes: &[u8]) -> Option<String> {
    let text = bytes.iter().take(64).all(|b| b.is_ascii());
    let ptx_text =
        text && String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).contains(".version");
    match path.extension().and_then(|e| e.to_str()) {
        Some("cubin") if ptx_text => Some("holds PTX text, not a CUBIN: name it `.ptx` (the driver compiles PTX when it loads)".into()),
        Some("cubin") if bytes.len() < 0x34 || &bytes[..4] != b"\x7fELF" => Some(
            "not a CUBIN (no ELF header): build it with `nvcc -cubin -arch=sm_XX`".into(),
        ),
        Some("cubin") if bytes[4] != 2 => Some("a 32-bit ELF: a CUBIN is 64-bit (`nvcc -cubin -arch=sm_XX`)".into()),
        Some("cubin") if cubin_arch(bytes).is_none() => Some(
            "an ELF for the host, not a CUDA ELF: build the device code with `nvcc -cubin -arch=sm_XX`".into(),
        ),
        Some("fatbin") if ptx_text => Some("holds PTX text, not a fatbin: name it `.ptx`".into()),
        Some("fatbin") => {
            if !fatbin_magic(bytes) {
                return Some(NOT_A_FATBIN.into());
            }
            // The header: magic, version (2 bytes), header size (2), size of what follows (8).
            let size = bytes.get(8..16).map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
            match size {
                Some(0) | None => Some("an empty fatbin: it holds no CUBIN and no PTX".into()),
                Some(n) if 16 + n > bytes.len() as u64 => Some(format!(
                    "a cut-off fatbin: its header says {n} bytes follow, the file holds {}",
                    bytes.len().saturating_sub(16)
                )),
                Some(_) => None,
            }
        }
        _ => None,
    }
}

/// Why a CUBIN built for `sm_{built}` cannot run on `arch` (`sm_90`; `target` says what that
/// is: this GPU, lint's target): a CUBIN runs only on its own major architecture, at the same or
/// a later minor. `None` when it can.
pub fn cubin_target_problem(built: u32, arch: &str, target: &str) -> Option<String> {
    let device: u32 = arch.trim_start_matches("sm_").parse().ok()?;
    (built / 10 != device / 10 || built > device).then(|| {
        format!(
            "the CUBIN is built for sm_{built}, which {target} cannot run: a CUBIN runs only on its own major architecture at the same or a later minor (rebuild with -arch={arch}, or ship PTX or a fatbin)"
        )
    })
}

/// The entries (kernels) of a CUBIN: the names of its `.text.<name>` sections.
pub fn cubin_entries(bytes: &[u8]) -> Vec<String> {
    let names = bytes
        .split(|&b| b == 0)
        .filter_map(|part| std::str::from_utf8(part.strip_prefix(b".text.")?).ok());
    crate::order::first_seen(names.filter(|n| !n.is_empty()).map(String::from))
}

/// `90` for `sm_90` or `sm_90a`.
pub fn arch_number(arch: &str) -> Option<u32> {
    arch.strip_prefix("sm_")?
        .trim_end_matches(['a', 'f'])
        .parse()
        .ok()
}

/// The number of the PTX's `.target sm_XX` directive.
fn ptx_target(text: &str) -> Option<u32> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".target"))?;
    let target = line.trim_start_matches(".target").trim();
    arch_number(target.split([',', ' ']).next()?)
}

/// The architecture a CUDA ELF image is built for, from its header's flags: bits 8-15 from
/// ABI version 8 on (NVRTC 13 writes 8), bits 0-7 before. `None` when it is not CUDA ELF.
pub fn cubin_arch(bytes: &[u8]) -> Option<u32> {
    const ELFOSABI_CUDA: u8 = 0x41;
    if bytes.len() < 0x34 || &bytes[..4] != b"\x7fELF" || bytes[7] != ELFOSABI_CUDA {
        return None;
    }
    let flags = u32::from_le_bytes(bytes[0x30..0x34].try_into().ok()?);
    Some(if bytes[8] >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    })
}

/// Whether `bytes` begin with [`FATBIN_MAGIC`].
fn fatbin_magic(bytes: &[u8]) -> bool {
    bytes.get(..4) == Some(&FATBIN_MAGIC.to_le_bytes()[..])
}

/// What a file named `.fatbin` without the magic number is.
const NOT_A_FATBIN: &str = "not a fatbin (no fatbin magic number): build it with `nvcc -fatbin`";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ELF header fields NVRTC 13.0 writes (ABI version 8, flags 0x6005a04 for sm_90,
    /// 0x6006402 for sm_100), measured on its output.
    fn header(abi: u8, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 0x40];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[7] = 0x41;
        h[8] = abi;
        h[0x30..0x34].copy_from_slice(&flags.to_le_bytes());
        h
    }

    #[test]
    fn cubin_architectures_from_the_elf_header() {
        assert_eq!(cubin_arch(&header(8, 0x6005a04)), Some(90));
        assert_eq!(cubin_arch(&header(8, 0x6006402)), Some(100));
        assert_eq!(cubin_arch(&header(7, 0x0500550)), Some(80));
        assert_eq!(
            cubin_arch(b"not elf at all, long enough to hold a header......"),
            None
        );
    }

    #[test]
    fn a_cubin_for_another_arch_names_both() {
        let tmp = std::env::temp_dir().join(format!("kg-binary-{}.cubin", std::process::id()));
        let mut bytes = header(8, 0x6005004); // sm_80
        bytes.extend_from_slice(b".text.k\0");
        std::fs::write(&tmp, &bytes).unwrap();
        let entries = ["k".to_string()];
        let e = load(&tmp, "", &entries, "sm_90").unwrap_err().to_string();
        assert!(
            e.contains("built for sm_80, which this GPU (sm_90) cannot run"),
            "{e}"
        );
        let ok = load(&tmp, "", &entries, "sm_86").unwrap();
        assert_eq!(ok.lowered, entries);
        let e = load(&tmp, "", &["missing".to_string()], "sm_80").unwrap_err();
        assert!(e.to_string().contains("`missing` is not"), "{e}");
        std::fs::remove_file(&tmp).unwrap();
    }

    #[test]
    fn ptx_is_checked_for_its_target_and_entries_and_counted() {
        let ptx = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 k_param_0\n)\n{\nadd.f64 %fd1, %fd1, %fd1;\nret;\n}\n";
        let path = Path::new("k.ptx");
        let c = load(path, ptx, &["k".to_string()], "sm_90").unwrap();
        assert_eq!(c.fp64[0].count, 1);
        assert_eq!(c.cubin.last(), Some(&0), "NUL-terminated for the driver");
        let e = load(path, ptx, &["k".to_string()], "sm_80").unwrap_err();
        assert!(
            e.to_string()
                .contains("targets sm_90, newer than this GPU's sm_80"),
            "{e}"
        );
        assert!(load(path, ptx, &["j".to_string()], "sm_90").is_err());
    }
}
