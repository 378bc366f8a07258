//! `Listings`: the SASS of kernel entries from their compiled modules, disassembled once per
//! module (`nvdisasm` runs once per distinct cubin) — what `kernelgate sass`, the paired run's
//! SASS diffs and bisect read listings through. `nvdisasm` costs about a third of a second per
//! cubin however small (its start), so the modules a report needs are disassembled together, in
//! parallel ([`Listings::prefetch`]), and each listing is kept in the compile cache folder for
//! later runs ([`Listings::kept_in`]), keyed by the cubin's bytes and the disassembler's version.

use super::disasm::{Disassembler, Listing};
use super::elf::CudaElf;
use super::{Fields, KernelIdentity, Module, SassError};
use crate::device::compile::Compiled;
use crate::suite::SourceKind;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The last line of a kept listing: a file without it was cut short, and is disassembled again.
const END: &str = "// kernelgate: end of listing";

/// Disassembled modules, by their bytes, and the disassembler (`None`: none found, so no SASS).
#[derive(Debug, Default)]
pub struct Listings {
    /// The disassembler, when one was found.
    pub disassembler: Option<Disassembler>,
    cache: HashMap<Vec<u8>, Listing>,
    /// Where listings are kept between runs, with the disassembler's version (`--version`).
    kept: Option<(PathBuf, String)>,
}

impl Listings {
    /// Listings made with `disassembler` (`None`: every entry's SASS is `None`).
    pub fn new(disassembler: Option<Disassembler>) -> Listings {
        Listings {
            disassembler,
            ..Listings::default()
        }
    }

    /// These listings, each also kept in `dir` (the compile cache folder) for later runs and
    /// read from there when an earlier run disassembled the same cubin with the same
    /// disassembler; nothing is kept where the disassembler does not say its version.
    pub fn kept_in(mut self, dir: &Path) -> Listings {
        self.kept = self
            .disassembler
            .as_ref()
            .and_then(Disassembler::version)
            .map(|v| (dir.to_path_buf(), v));
        self
    }

    /// The file that keeps `cubin`'s listing: named by a hash of the disassembler's version,
    /// its options and the cubin.
    fn kept_file(&self, cubin: &[u8]) -> Option<PathBuf> {
        let (dir, version) = self.kept.as_ref()?;
        let mut key = Fields::default();
        key.field(b"nvdisasm --print-code")
            .field(version.as_bytes())
            .field(cubin);
        Some(dir.join(format!("{}.sass", super::identity::hex(&key.finish()))))
    }

    /// `cubin`'s listing as an earlier run kept it, if it did (and wrote it whole).
    fn read_kept(&self, cubin: &[u8]) -> Option<Listing> {
        let text = std::fs::read_to_string(self.kept_file(cubin)?).ok()?;
        let text = text.strip_suffix(END)?;
        Some(Listing::parse(text))
    }

    /// Keeps `output` (`nvdisasm`'s, for `cubin`) for later runs, through a temporary file
    /// and a rename. A cache that cannot be written costs time, not correctness: carry on.
    fn keep(&self, cubin: &[u8], output: &str) {
        let Some(file) = self.kept_file(cubin) else {
            return;
        };
        // Unique per process and per write, so two writers (threads too) never share one.
        static WRITES: AtomicUsize = AtomicUsize::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = file.with_extension(format!("sass.tmp{}-{n}", std::process::id()));
        let written = std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))
            .and_then(|()| std::fs::write(&tmp, format!("{output}{END}")))
            .and_then(|()| std::fs::rename(&tmp, &file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Disassembles every cubin of `cubins` not listed yet, at once: those an earlier run kept
    /// are read, the others given to `nvdisasm` in parallel (as many at a time as the machine
    /// has cores). One that fails is left for [`Listings::entry`] to run again and report.
    pub fn prefetch<'b>(&mut self, cubins: impl IntoIterator<Item = Cow<'b, [u8]>>) {
        let Some(disassembler) = self.disassembler.clone() else {
            return;
        };
        let mut todo: Vec<Cow<[u8]>> = Vec::new();
        for cubin in cubins {
            if self.cache.contains_key(&*cubin) || todo.contains(&cubin) {
                continue;
            }
            match self.read_kept(&cubin) {
                Some(listing) => {
                    self.cache.insert(cubin.into_owned(), listing);
                }
                None => todo.push(cubin),
            }
        }
        let lanes = std::thread::available_parallelism().map_or(4, usize::from);
        for chunk in todo.chunks(lanes) {
            let outputs: Vec<Result<String, SassError>> = std::thread::scope(|scope| {
                let running: Vec<_> = chunk
                    .iter()
                    .map(|cubin| scope.spawn(|| disassembler.output(cubin)))
                    .collect();
                running
                    .into_iter()
                    .map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for (cubin, output) in chunk.iter().zip(outputs) {
                if let Ok(text) = output {
                    self.keep(cubin, &text);
                    self.cache.insert(cubin.to_vec(), Listing::parse(&text));
                }
            }
        }
    }

    /// The SASS of entry `id` in `compiled` (a source of `kind`) for `arch`: `None` for PTX
    /// (the driver compiles it, on a GPU) or without a disassembler.
    pub fn entry(
        &mut self,
        kind: SourceKind,
        compiled: &Compiled,
        arch: &str,
        id: &KernelIdentity,
    ) -> Result<Option<Vec<String>>, SassError> {
        let Module::Cubin(cubin) = Module::of(kind, compiled, arch)? else {
            return Ok(None);
        };
        let Some(disassembler) = &self.disassembler else {
            return Ok(None);
        };
        if !self.cache.contains_key(&*cubin) {
            let listing = match self.read_kept(&cubin) {
                Some(kept) => kept,
                None => {
                    let text = disassembler.output(&cubin)?;
                    self.keep(&cubin, &text);
                    Listing::parse(&text)
                }
            };
            self.cache.insert(cubin.to_vec(), listing);
        }
        let elf = CudaElf::parse(&cubin)?;
        Ok(Some(self.cache[&*cubin].kernel(&elf, &id.name)?))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in `nvdisasm` in `dir`: says `version`, logs each disassembly to `dir/log`, and
    /// waits (up to 5 s) until another one has started too, logging `alone` when none did.
    fn fake(dir: &Path, name: &str, version: &str) -> Disassembler {
        let path = dir.join(name);
        let script = format!(
            r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "{version}"; exit 0; fi
d='{dir}'
touch "$d/started.$$"
n=0
while [ "$(ls "$d" | grep -c '^started\.')" -lt 2 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
[ $n -lt 50 ] || echo alone >> "$d/log"
echo run >> "$d/log"
printf '\t.section\t.text.k,"ax",@progbits\nk:\n        /*0000*/                   EXIT ;\n'
"#,
            dir = dir.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Disassembler { path }
    }

    fn log(dir: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn modules_are_disassembled_together_once_and_kept_for_later_runs() {
        let dir = std::env::temp_dir().join(format!("kernelgate-listings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cache = dir.join("cache");
        let v1 = fake(&dir, "nvdisasm", "release 13.2");
        let (a, b): (&[u8], &[u8]) = (b"cubin a", b"cubin b");
        let cubins = || [Cow::from(a), Cow::from(b), Cow::from(a)];
        let mut listings = Listings::new(Some(v1.clone())).kept_in(&cache);
        listings.prefetch(cubins());
        let runs = log(&dir);
        assert_eq!(runs.iter().filter(|l| *l == "run").count(), 2, "{runs:?}");
        if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
            assert!(!runs.contains(&"alone".into()), "both at once: {runs:?}");
        }
        assert_eq!(listings.cache[a].section(".text.k").unwrap(), ["EXIT"]);
        let kept: Vec<PathBuf> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept
            .iter()
            .all(|k| std::fs::read_to_string(k).unwrap().ends_with(END)));

        // A later run reads them; one cut short, or another disassembler, runs it again.
        let _ = std::fs::remove_file(dir.join("log"));
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("started.")
            {
                std::fs::remove_file(f).unwrap();
            }
        }
        let mut later = Listings::new(Some(v1.clone())).kept_in(&cache);
        later.prefetch(cubins());
        assert!(log(&dir).is_empty(), "read as kept: {:?}", log(&dir));
        assert_eq!(later.cache[b].section(".text.k").unwrap(), ["EXIT"]);
        let file = later.kept_file(a).unwrap();
        let whole = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, whole.strip_suffix(END).unwrap()).unwrap();
        let v2 = fake(&dir, "nvdisasm2", "release 13.3");
        // Each runs alone now: none waits for another.
        std::fs::write(dir.join("started.0"), "").unwrap();
        std::fs::write(dir.join("started.1"), "").unwrap();
        Listings::new(Some(v1)).kept_in(&cache).prefetch(cubins());
        Listings::new(Some(v2))
            .kept_in(&cache)
            .prefetch([Cow::from(b)]);
        let runs = log(&dir);
        assert_eq!(
            runs.iter().filter(|l| *l == "run").count(),
            2,
            "a, cut short; b, by another version: {runs:?}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), whole, "kept again");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
