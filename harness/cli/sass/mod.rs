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

/// What `kernelgate sass` was asked.
#[derive(Debug, Default, PartialEq, Eq, clap::Args)]
pub struct Request {
    /// Compare with a git revision, or a folder of the base's suites: list the kernels whose
    /// code differs, with a diff
    #[arg(long, value_name = "REV|FOLDER", conflicts_with = "json")]
    base: Option<String>,
    /// The code identities as JSON instead of the SASS (no nvdisasm needed)
    #[arg(long)]
    json: bool,
    /// Only kernels whose suite::kernel name contains it
    filter: Option<String>,
}

/// The `kernelgate sass` command.
pub fn sass(request: &Request) -> ExitCode {
    sass_or_exit(request).unwrap_or_else(|code| code)
}

/// [`sass`]; `Err` is an exit before anything is built (bad input, printed).
fn sass_or_exit(request: &Request) -> Result<ExitCode, ExitCode> {
    let config = Config::from_env().map_err(exit::bad_input)?;
    let archs = crate::config::archs().map_err(exit::bad_input)?;
    let suites = super::suites::load_suites(&config, "kernelgate sass", "")?;
    if let Some(reason) = crate::device::nvrtc_missing() {
        return Err(exit::bad_input(format!(
            "kernelgate sass compiles the kernels with NVRTC: {reason}"
        )));
    }
    let disassembler = (!request.json)
        .then(Disassembler::find)
        .transpose()
        .map_err(exit::bad_input)?;
    let load = |rev| crate::paired::load(rev, &config.suites, &config.base_dir(), &suites);
    let base = (request.base.as_deref().map(load).transpose()).map_err(exit::bad_input)?;
    let toolchain = Toolchain::here();
    let mut run = Run {
        config: &config,
        toolchain: &toolchain,
        filter: request.filter.as_deref(),
        listings: crate::sass::listings::Listings::new(disassembler).kept_in(&config.cache),
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
        Err(e) => return Err(exit::bad_input(format!("cannot write the output: {e}"))),
    }
    Ok(exit::code(run.worst))
}
