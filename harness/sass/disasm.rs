//! `Disassembler` and `Listing`: a cubin's SASS from `nvdisasm` (which reads a cubin alone and
//! needs no GPU; `cuobjdump -sass` runs it too), split per code section and normalised for
//! reading and diffing — addresses and encodings stripped, branch targets as labels numbered
//! per function (`.L0`, `.L1`, ...), the NOP padding after the last instruction dropped — so a
//! one-instruction change is a few diff lines.

use super::elf::CudaElf;
use super::reach::Reach;
use super::SassError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The `nvdisasm` program kernelgate runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disassembler {
    /// Its path.
    pub path: PathBuf,
}

/// Where `nvdisasm` is looked for after `PATH`: `$CUDA_HOME/bin`, `/usr/local/cuda/bin`, the
/// PyPI wheel installed under the target folder (`ci/test.sh` installs it there), and beside the
/// libraries on `LD_LIBRARY_PATH`.
pub fn search_path() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(home) = std::env::var_os("CUDA_HOME").filter(|h| !h.is_empty()) {
        dirs.push(Path::new(&home).join("bin"));
    }
    dirs.push("/usr/local/cuda/bin".into());
    let target = crate::nextest::target_dir();
    dirs.push(target.join("cuda-tools/nvidia/cu13/bin"));
    dirs.push(target.join("cuda-tools/nvidia/cuda_nvdisasm/bin"));
    // Beside the libraries on LD_LIBRARY_PATH: the wheels' `nvidia/cu13/bin` once
    // `device::libraries` put their `lib` there (`pip install kernelgate`).
    if let Some(list) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&list).map(|lib| lib.join("../bin")));
    }
    dirs
}

impl Disassembler {
    /// The first `nvdisasm` on `search_path()`, or an error naming where it looked and what to
    /// install.
    pub fn find() -> Result<Disassembler, SassError> {
        let dirs = search_path();
        let path: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        path.iter()
            .chain(&dirs)
            .map(|d| d.join("nvdisasm"))
            .find(|p| p.is_file())
            .map(|path| Disassembler { path })
            .ok_or_else(|| SassError::NoDisassembler {
                looked: describe(&dirs),
            })
    }

    /// What `nvdisasm --version` prints, naming its release and build (`None` where it cannot
    /// say): listings kept between runs are keyed by it.
    pub fn version(&self) -> Option<String> {
        let out = Command::new(&self.path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    }

    /// `nvdisasm --print-code`'s output for `cubin`, as it printed it ([`Listing::parse`] reads
    /// it).
    pub fn output(&self, cubin: &[u8]) -> Result<String, SassError> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let file = std::env::temp_dir().join(format!(
            "kernelgate-sass-{}-{}.cubin",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let fail = |message: String| SassError::Disassembler {
            tool: self.path.display().to_string(),
            file: file.display().to_string(),
            message,
        };
        std::fs::write(&file, cubin).map_err(|e| fail(format!("cannot write it: {e}")))?;
        let out = Command::new(&self.path)
            .arg("--print-code")
            .arg(&file)
            .stdin(Stdio::null())
            .output();
        let _ = std::fs::remove_file(&file);
        let out = out.map_err(|e| fail(format!("cannot run it: {e}")))?;
        if !out.status.success() {
            return Err(fail(format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// `PATH, ` and the other folders searched, as the error lists them.
fn describe(dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    format!("PATH, {}", shown.join(", "))
}

/// A cubin's SASS: per code section (`.text.<function>`), its instructions and labels, one per
/// line, normalised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    sections: BTreeMap<String, Vec<String>>,
}

impl Listing {
    /// Reads `nvdisasm --print-code` output.
    pub fn parse(text: &str) -> Listing {
        let mut sections: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut current: Option<String> = None;
        for raw in text.lines() {
            let line = raw.trim();
            // `.section .text.k,...` (not `.sectioninfo`, which sm_80 listings add).
            let section = line
                .strip_prefix(".section")
                .filter(|r| r.starts_with(char::is_whitespace));
            if let Some(rest) = section {
                let name = rest.trim().split(',').next().unwrap_or("").trim();
                current = name.starts_with(".text.").then(|| name.to_string());
                continue;
            }
            let Some(section) = &current else { continue };
            let function = &section[".text.".len()..];
            let lines = sections.entry(section.clone()).or_default();
            if let Some(label) = line.strip_suffix(':').filter(|l| !l.contains(' ')) {
                // The section's own labels say nothing; other labels are branch targets.
                if label != section && label != function {
                    lines.push(format!("{label}:"));
                }
                continue;
            }
            if !line.starts_with("/*") {
                continue; // directives: .align, .global, .type, ...
            }
            let instruction = strip_comments(line);
            let instruction = instruction.trim().trim_end_matches(';').trim();
            if !instruction.is_empty() {
                lines.push(instruction.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        for lines in sections.values_mut() {
            // The padding after the last instruction, and the end-of-function label after it.
            while lines.last().is_some_and(|l| l == "NOP" || l.ends_with(':')) {
                lines.pop();
            }
            rename_labels(lines);
        }
        Listing { sections }
    }

    /// The normalised SASS of one code section (`.text.saxpy`).
    pub fn section(&self, name: &str) -> Option<&[String]> {
        self.sections.get(name).map(Vec::as_slice)
    }

    /// The SASS of kernel `name` of `cubin` (parsed as `elf`): its own code, then each callee
    /// section the kernel reaches, headed by the callee's name.
    pub fn kernel(&self, elf: &CudaElf, name: &str) -> Result<Vec<String>, SassError> {
        let reach = Reach::walk(elf, name)?;
        let mut out = Vec::new();
        for (i, s) in reach.code(elf).into_iter().enumerate() {
            if i > 0 {
                out.push(format!("{}:", &s.name[".text.".len()..]));
            }
            out.extend(self.section(&s.name).unwrap_or_default().iter().cloned());
        }
        Ok(out)
    }
}

/// `line` without its `/* ... */` comments (the address, and encodings with `-hex`).
fn strip_comments(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = (rest[start..].find("*/")).map_or("", |end| &rest[start + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// Renames `nvdisasm`'s module-wide labels (`.L_x_12`) to `.L0`, `.L1`, ... in the order the
/// function defines them, in definitions and in branch operands alike.
fn rename_labels(lines: &mut [String]) {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for line in lines.iter() {
        if let Some(label) = line.strip_suffix(':').filter(|l| l.starts_with(".L_x_")) {
            let next = format!(".L{}", names.len());
            names.entry(label.to_string()).or_insert(next);
        }
    }
    for line in lines.iter_mut() {
        if !line.contains(".L_x_") {
            continue;
        }
        let mut out = String::with_capacity(line.len());
        let mut rest = line.as_str();
        while let Some(at) = rest.find(".L_x_") {
            out.push_str(&rest[..at]);
            let digits = rest[at + 5..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let label = &rest[at..at + 5 + digits];
            out.push_str(names.get(label).map_or(label, String::as_str));
            rest = &rest[at + 5 + digits..];
        }
        out.push_str(rest);
        *line = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvdisasm --print-code` 13.2 output for two kernels of one module (NVRTC 13.0, sm_90; the
    /// `.sectioninfo` line from an sm_80 listing).
    const OUTPUT: &str = "
\t.target\tsm_90
\t.elftype\t@\"ET_EXEC\"

//--------------------- .text.k2                  --------------------------
\t.section\t.text.k2,\"ax\",@progbits
\t.sectioninfo\t@\"SHI_REGISTERS=8\"
\t.align\t128
        .global         k2
        .type           k2,@function
k2:
.text.k2:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0070*/               @P0 EXIT ;
.L_x_10:
        /*00b0*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*00c0*/               @P1 BRA `(.L_x_10) ;
        /*00e0*/                   EXIT ;
.L_x_3:
        /*00f0*/                   BRA `(.L_x_3);
        /*0100*/                   NOP;
        /*0110*/                   NOP;
.L_x_11:

//--------------------- .text.k1                  --------------------------
\t.section\t.text.k1,\"ax\",@progbits
k1:
.text.k1:
        /*0000*/                   CALL.REL.NOINC `($k1$_Z6helperf) ; /* 0x0000000000387944 */
$k1$_Z6helperf:
        /*0010*/                   RET.REL.NODEC R2 `(k1) ;
";

    #[test]
    fn addresses_encodings_and_padding_go_and_labels_are_numbered_per_function() {
        let listing = Listing::parse(OUTPUT);
        assert_eq!(
            listing.section(".text.k2").unwrap(),
            [
                "LDC R1, c[0x0][0x28]",
                "@P0 EXIT",
                ".L0:",
                "LDG.E R0, desc[UR4][R2.64]",
                "@P1 BRA `(.L0)",
                "EXIT",
                ".L1:",
                "BRA `(.L1)",
            ]
        );
        assert_eq!(
            listing.section(".text.k1").unwrap(),
            [
                "CALL.REL.NOINC `($k1$_Z6helperf)",
                "$k1$_Z6helperf:",
                "RET.REL.NODEC R2 `(k1)",
            ]
        );
    }

    #[test]
    fn a_missing_disassembler_names_where_it_looked_and_what_to_install() {
        let e = SassError::NoDisassembler {
            looked: describe(&["/usr/local/cuda/bin".into()]),
        }
        .to_string();
        assert!(e.starts_with("no `nvdisasm` found (looked in PATH, /usr/local/cuda/bin): install it with `python3 -m pip install --target target/cuda-tools 'nvidia-cuda-nvdisasm==13.2.*'`"), "{e}");
    }
}
