//! `Run`: the state of one `kernelgate sass` — the suites built per architecture (`Side`,
//! `Built`), their listings, and the worst exit code so far.

use crate::code::{entry_sass, kernel_cubin, CodeError, SuiteCode};
use crate::config::Config;
use crate::exit;
use crate::sass::listings::Listings;
use crate::sass::mix::Mix;
use crate::sass::{KernelIdentity, Toolchain};
use crate::suite::Suite;
use serde::Serialize;
use std::io::Write;
use std::time::Duration;

/// One side (the working tree, or the base) built for one architecture.
#[derive(Default)]
pub(super) struct Side<'s> {
    /// The suites that compiled and were identified.
    pub(super) built: Vec<Built<'s>>,
    /// The suites that did not (already reported): their kernels are not compared.
    pub(super) failed: Vec<String>,
}

/// One suite compiled and identified for one architecture, and the kernels FILTER selects.
pub(super) struct Built<'s> {
    pub(super) suite: &'s Suite,
    pub(super) code: SuiteCode,
    /// The selected kernels' indices in the suite.
    pub(super) selected: Vec<usize>,
}

impl Built<'_> {
    /// `suite::kernel` of the `i`-th selected kernel.
    pub(super) fn name(&self, i: usize) -> String {
        format!(
            "{}::{}",
            self.suite.name, self.suite.kernels[self.selected[i]].name
        )
    }
}

/// The state of one `kernelgate sass`: what it was given, and the worst exit code so far.
pub(super) struct Run<'c> {
    pub(super) config: &'c Config,
    pub(super) toolchain: &'c Toolchain,
    pub(super) filter: Option<&'c str>,
    /// The kernels' listings (with the disassembler, unless `--json`).
    pub(super) listings: Listings,
    pub(super) worst: u8,
    pub(super) identifying: Duration,
}

impl Run<'_> {
    pub(super) fn fail(&mut self, code: u8, message: &str) {
        eprintln!("error: {message}");
        // 2 (bad input) outranks 1 (a kernel that does not compile).
        if self.worst != exit::BAD_INPUT {
            self.worst = code;
        }
    }

    /// Compiles (through the cache) every suite with a selected kernel, and identifies those
    /// kernels; a suite that does not compile, or whose module cannot be read, is reported and
    /// named in `Side::failed`.
    pub(super) fn build<'s>(&mut self, suites: &'s [Suite], arch: &str) -> Side<'s> {
        let mut out = Side::default();
        let mut progress = crate::cli::progress::Progress::new("kernelgate sass", suites.len());
        for (i, suite) in suites.iter().enumerate() {
            progress.step(i, &format!("{} ({arch})", suite.name));
            let selected: Vec<usize> = (0..suite.kernels.len())
                .filter(|&k| {
                    self.filter.is_none_or(|f| {
                        format!("{}::{}", suite.name, suite.kernels[k].name).contains(f)
                    })
                })
                .collect();
            if selected.is_empty() {
                continue;
            }
            let cache = Some(self.config.cache.as_path());
            match SuiteCode::build(suite, arch, cache, self.toolchain) {
                Ok(code) => {
                    self.identifying += Duration::from_secs_f64(code.identify_seconds);
                    out.built.push(Built {
                        suite,
                        code,
                        selected,
                    })
                }
                Err(e) => {
                    let exit = match e {
                        CodeError::Compile(_) => exit::COMPILE_ERROR,
                        _ => exit::BAD_INPUT,
                    };
                    progress.done();
                    self.fail(exit, &e.to_string());
                    out.failed.push(suite.name.clone());
                }
            }
        }
        progress.done();
        out
    }

    /// Writes every selected kernel's SASS to `out`.
    pub(super) fn print(
        &mut self,
        out: &mut dyn Write,
        built: &[Built],
        arch: &str,
    ) -> std::io::Result<()> {
        // Every module, disassembled at once.
        let cubins = built.iter().flat_map(|b| {
            (b.selected.iter()).filter_map(|&k| kernel_cubin((b.suite, k), &b.code.compiled, arch))
        });
        self.listings.prefetch(cubins.collect::<Vec<_>>());
        let mut kernels = 0;
        for b in built {
            for (i, &k) in b.selected.iter().enumerate() {
                kernels += 1;
                writeln!(out, "{} ({arch})", b.name(i))?;
                for id in &b.code.kernels[k].entries {
                    let short = &id.hash[..12];
                    // `None` for PTX: the driver compiles it.
                    match entry_sass((b.suite, k), &b.code.compiled, arch, id, &mut self.listings) {
                        Ok(Some(sass)) => {
                            let resources = id.resources.as_ref().map(|r| r.summary());
                            let count: u32 = Mix::of(&sass).0.values().sum();
                            writeln!(
                                out,
                                "  {}  code {short}  {} · {count} instructions",
                                id.name,
                                resources.unwrap_or_default()
                            )?;
                            for line in &sass {
                                // Labels stand out to the left of the instructions.
                                let indent = if line.ends_with(':') { "  " } else { "    " };
                                writeln!(out, "{indent}{line}")?;
                            }
                        }
                        Ok(None) => writeln!(
                            out,
                            "  {}  code {short}  PTX: the driver compiles it when the module loads, so its SASS needs a GPU",
                            id.name
                        )?,
                        Err(e) => self.fail(exit::BAD_INPUT, &format!("{}: {e}", b.name(i))),
                    }
                }
                writeln!(out)?;
            }
        }
        writeln!(out, "kernelgate sass: {kernels} kernel(s) for {arch}")
    }

    /// The identities of every selected kernel, as JSON records.
    pub(super) fn json(&self, built: &[Built], arch: &str) -> Vec<serde_json::Value> {
        #[derive(Serialize)]
        struct Record<'a> {
            name: String,
            arch: &'a str,
            entries: &'a [KernelIdentity],
        }
        built
            .iter()
            .flat_map(|b| {
                (b.selected.iter().enumerate()).map(move |(i, &k)| {
                    serde_json::to_value(Record {
                        name: b.name(i),
                        arch,
                        entries: &b.code.kernels[k].entries,
                    })
                    .unwrap_or_default()
                })
            })
            .collect()
    }
}
