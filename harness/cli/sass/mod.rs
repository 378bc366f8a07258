//! `sass`: `kernelgate sass [FILTER]` prints the SASS of every kernel entry of the suites'
//! kernels whose `suite::kernel` name contains FILTER; `--json` prints their code identities;
//! `--base REV|FOLDER` lists the kernels whose code differs from the base's (`compare`). No GPU:
//! NVRTC compiles (through the compile cache, so a warm cache compiles nothing), `nvdisasm`
//! disassembles, `crate::sass` identifies. Every architecture of `KERNELGATE_ARCH` (a list is
//! allowed here) in turn.

mod compare;

use crate::config::Config;
use crate::device::compile::Compiled;
use crate::exit;
use crate::sass::disasm::{Disassembler, Listing};
use crate::sass::elf::CudaElf;
use crate::sass::mix::Mix;
use crate::sass::{KernelCode, KernelIdentity, Module, SassError, Toolchain};
use crate::suite::Suite;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: kernelgate sass [FILTER] [--json]
       kernelgate sass --base REV|FOLDER [FILTER]";

/// What `kernelgate sass` was asked.
#[derive(Debug, Default, PartialEq, Eq)]
struct Request {
    /// `--base`: the revision (or folder of suites) to compare with.
    base: Option<String>,
    /// `--json`: the identities as JSON instead of the SASS.
    json: bool,
    /// The `suite::kernel` substring.
    filter: Option<String>,
}

fn parse(args: &[String]) -> Result<Request, String> {
    let mut r = Request::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--base" => {
                let rev = it
                    .next()
                    .ok_or("`--base` needs a git revision or a folder of the base's suites")?;
                r.base = Some(rev.clone());
            }
            "--json" => r.json = true,
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            filter => match &r.filter {
                None => r.filter = Some(filter.to_string()),
                Some(first) => {
                    return Err(format!(
                        "one FILTER only (`{first}`, then `{filter}`): it selects suite::kernel names that contain it"
                    ))
                }
            },
        }
    }
    if r.json && r.base.is_some() {
        return Err("`--json` prints one side's identities: drop `--base`, or `--json`".into());
    }
    Ok(r)
}

/// The `kernelgate sass` command.
pub fn sass(args: &[String]) -> ExitCode {
    let request = match parse(args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return exit::code(exit::BAD_INPUT);
        }
    };
    let bad = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        exit::code(exit::BAD_INPUT)
    };
    let (config, archs) = match Config::from_env().and_then(|c| Ok((c, crate::config::archs()?))) {
        Ok(c) => c,
        Err(e) => return bad(&e),
    };
    let suites = match super::load_suites(&config, "kernelgate sass", "") {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Some(reason) = crate::device::nvrtc_missing() {
        return bad(&format!(
            "kernelgate sass compiles the kernels with NVRTC: {reason}"
        ));
    }
    let disassembler = if request.json {
        None
    } else {
        match Disassembler::find() {
            Ok(d) => Some(d),
            Err(e) => return bad(&e),
        }
    };
    let base = match &request.base {
        None => None,
        Some(rev) => match crate::paired::load(rev, &config.suites, &config.base_dir(), &suites) {
            Ok(b) => Some(b),
            Err(e) => return bad(&e),
        },
    };
    let toolchain = Toolchain::here();
    let mut run = Run {
        config: &config,
        toolchain: &toolchain,
        filter: request.filter.as_deref(),
        disassembler,
        listings: HashMap::new(),
        worst: exit::SUCCESS,
        identifying: Duration::ZERO,
    };
    let start = Instant::now();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = (|| -> std::io::Result<usize> {
        let mut json = Vec::new();
        for arch in &archs {
            let head = run.build(&suites, arch);
            match &base {
                Some(base) => {
                    let then = run.build(&base.suites, arch);
                    compare::print(&mut run, &mut out, (&then, &head), arch, &base.short())?;
                }
                None if request.json => json.extend(run.json(&head.built, arch)),
                None => run.print(&mut out, &head.built, arch)?,
            }
        }
        if request.json {
            let all = serde_json::json!({ "toolchain": toolchain, "kernels": json });
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&all).unwrap_or_default()
            )?;
        }
        out.flush()?;
        Ok(json.len())
    })();
    match written {
        Ok(kernels) if request.json => {
            let (compiled, cached) = crate::device::compile::counts();
            eprintln!(
                "kernelgate sass: {kernels} kernel(s) for {}: identities in {:.1} ms, {:.1} ms in all; {compiled} source(s) compiled, {cached} from the cache",
                archs.join(", "),
                run.identifying.as_secs_f64() * 1e3,
                start.elapsed().as_secs_f64() * 1e3,
            );
        }
        Ok(_) => {}
        // `kernelgate sass | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return bad(&format!("cannot write the output: {e}")),
    }
    exit::code(run.worst)
}

/// One side (the working tree, or the base) built for one architecture.
pub(super) struct Side<'s> {
    /// The suites that compiled and were identified.
    built: Vec<Built<'s>>,
    /// The suites that did not (already reported): their kernels are not compared.
    failed: Vec<String>,
}

/// One suite compiled for one architecture, with its selected kernels' code.
pub(super) struct Built<'s> {
    suite: &'s Suite,
    compiled: Vec<(usize, Compiled)>,
    /// `(kernel index in the suite, its code)`, for the kernels FILTER selects.
    code: Vec<(usize, KernelCode)>,
}

impl Built<'_> {
    /// `suite::kernel` of the `i`-th entry of `code`.
    fn name(&self, i: usize) -> String {
        format!("{}::{}", self.suite.name, self.code[i].1.kernel)
    }
}

/// The state of one `kernelgate sass`: what it was given, and the worst exit code so far.
pub(super) struct Run<'c> {
    config: &'c Config,
    toolchain: &'c Toolchain,
    filter: Option<&'c str>,
    disassembler: Option<Disassembler>,
    /// Disassembled modules, by their bytes.
    listings: HashMap<Vec<u8>, Listing>,
    worst: u8,
    identifying: Duration,
}

impl Run<'_> {
    fn fail(&mut self, code: u8, message: &str) {
        eprintln!("error: {message}");
        // 2 (bad input) outranks 1 (a kernel that does not compile).
        if self.worst != exit::BAD_INPUT {
            self.worst = code;
        }
    }

    /// Compiles (through the cache) every suite with a selected kernel, and identifies those
    /// kernels; a suite that does not compile, or whose module cannot be read, is reported and
    /// named in `Side::failed`.
    fn build<'s>(&mut self, suites: &'s [Suite], arch: &str) -> Side<'s> {
        let mut out = Side {
            built: Vec::new(),
            failed: Vec::new(),
        };
        for suite in suites {
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
            let compiled = match crate::worker::compile_suite(suite, arch, Some(&self.config.cache))
            {
                Ok(c) => c,
                Err((_, message)) => {
                    self.fail(exit::COMPILE_ERROR, &message);
                    out.failed.push(suite.name.clone());
                    continue;
                }
            };
            let start = Instant::now();
            let code = crate::sass::identities(suite, &compiled, arch, self.toolchain);
            self.identifying += start.elapsed();
            match code {
                Ok(code) => out.built.push(Built {
                    suite,
                    code: code
                        .into_iter()
                        .enumerate()
                        .filter(|(k, _)| selected.contains(k))
                        .collect(),
                    compiled,
                }),
                Err(e) => {
                    self.fail(exit::BAD_INPUT, &e.to_string());
                    out.failed.push(suite.name.clone());
                }
            }
        }
        out
    }

    /// The SASS of one entry of a built kernel: `None` for PTX (the driver compiles it).
    fn entry_sass(
        &mut self,
        built: &Built,
        kernel: usize,
        id: &KernelIdentity,
        arch: &str,
    ) -> Result<Option<Vec<String>>, SassError> {
        let source = built.suite.kernels[kernel].source;
        let Some((_, compiled)) = built.compiled.iter().find(|(si, _)| *si == source) else {
            return Err(SassError::NotCompiled);
        };
        let module = Module::of(built.suite.sources[source].kind(), compiled, arch)?;
        let Module::Cubin(cubin) = module else {
            return Ok(None);
        };
        let Some(disassembler) = &self.disassembler else {
            return Ok(None);
        };
        if !self.listings.contains_key(&*cubin) {
            let listing = disassembler.listing(&cubin)?;
            self.listings.insert(cubin.to_vec(), listing);
        }
        let elf = CudaElf::parse(&cubin)?;
        Ok(Some(self.listings[&*cubin].kernel(&elf, &id.name)?))
    }

    /// Writes every selected kernel's SASS to `out`.
    fn print(&mut self, out: &mut dyn Write, built: &[Built], arch: &str) -> std::io::Result<()> {
        let mut kernels = 0;
        for b in built {
            for (i, (k, code)) in b.code.iter().enumerate() {
                kernels += 1;
                writeln!(out, "{} ({arch})", b.name(i))?;
                for id in &code.entries {
                    let short = &id.hash[..12];
                    match self.entry_sass(b, *k, id, arch) {
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
    fn json(&self, built: &[Built], arch: &str) -> Vec<serde_json::Value> {
        #[derive(Serialize)]
        struct Record<'a> {
            name: String,
            arch: &'a str,
            entries: &'a [KernelIdentity],
        }
        built
            .iter()
            .flat_map(|b| {
                (0..b.code.len()).map(move |i| {
                    serde_json::to_value(Record {
                        name: b.name(i),
                        arch,
                        entries: &b.code[i].1.entries,
                    })
                    .unwrap_or_default()
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments() {
        assert_eq!(parse(&args(&[])), Ok(Request::default()));
        assert_eq!(
            parse(&args(&["--base", "HEAD~1", "saxpy"])),
            Ok(Request {
                base: Some("HEAD~1".into()),
                json: false,
                filter: Some("saxpy".into()),
            })
        );
        assert_eq!(
            parse(&args(&["--base"])).unwrap_err(),
            "`--base` needs a git revision or a folder of the base's suites"
        );
        assert_eq!(
            parse(&args(&["a", "b"])).unwrap_err(),
            "one FILTER only (`a`, then `b`): it selects suite::kernel names that contain it"
        );
        assert_eq!(
            parse(&args(&["--jsn"])).unwrap_err(),
            "unknown option `--jsn`"
        );
        assert!(parse(&args(&["--json", "--base", "x"])).is_err());
    }
}
