//! `sass`: `kernelgate sass [FILTER]` prints the SASS of every kernel entry of the suites'
//! kernels whose `suite::kernel` name contains FILTER; `--json` prints their code identities;
//! `--base REV|FOLDER` lists the kernels whose code differs from the base's (`compare`). No GPU:
//! NVRTC compiles (through the compile cache, so a warm cache compiles nothing), `nvdisasm`
//! disassembles, `crate::sass` identifies. Every architecture of `KERNELGATE_ARCH` (a list is
//! allowed here) in turn.

mod compare;
mod run;

use run::Run;

use crate::config::Config;
use crate::exit;
use crate::sass::disasm::Disassembler;
use crate::sass::Toolchain;
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

// stringly: a usage message printed as it is, beside USAGE, like every hand-parsed command's;
// it goes when the command line moves to clap (the choice recorded in `cli/mod.rs`).
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
    let suites = match super::suites::load_suites(&config, "kernelgate sass", "") {
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
        listings: crate::sass::listings::Listings::new(disassembler),
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
