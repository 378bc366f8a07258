//! `commands`: the commands a report prints for one trial — re-run it, profile its kernel with
//! Nsight Compute, re-bless it — each repeating this run's experiment: its mode (the paired
//! base), folders and seed, with the binary the run used.

use super::Planned;
use crate::config::Config;
use crate::report::results::Commands;
use crate::suite::Suite;
use std::path::Path;

/// What a command that repeats one of this run's experiments starts with: the variables
/// that make it the same experiment (the paired `base`, a suites or baselines folder other
/// than the default, the seed), then the launcher: `KERNELGATE_BASE=origin/main ./kernelgate
/// run`. Libtest's filter follows it.
pub fn prefix(config: &Config, base: Option<&str>) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(base) = base {
        words.push(format!(
            "KERNELGATE_BASE={}",
            crate::shell::shell_word(base)
        ));
    }
    let path = |p: &Path| crate::shell::shell_word(&p.display().to_string());
    if config.suites != Path::new("suites") {
        words.push(format!("KERNELGATE_SUITES={}", path(&config.suites)));
    }
    if config.baselines != Path::new("baselines") && base.is_none() {
        words.push(format!("KERNELGATE_BASELINES={}", path(&config.baselines)));
    }
    if let Some(seed) = config.seed {
        words.push(format!("KERNELGATE_SEED={seed}"));
    }
    words.push(config.launcher.clone());
    words.join(" ")
}

/// The commands that re-run one trial as this run ran it (its mode — the paired `base` as
/// given —, folders and seed, with its launcher: [`prefix`]), profile its kernel with Nsight Compute, and
/// re-bless it (not in paired mode, where bless is refused).
pub fn commands(
    name: &str,
    suite: &Suite,
    trial: &Planned,
    config: &Config,
    base: Option<&str>,
) -> Commands {
    let invocation = prefix(config, base);
    let rerun = format!("{invocation} --exact '{name}'");
    let kernel = trial
        .case_kernel()
        .map(|(_, kernel)| &suite.kernels[kernel]);
    Commands {
        profile: kernel.map(|k| {
            let names: Vec<&str> = k
                .entries
                .iter()
                .map(|e| e.split('<').next().unwrap_or(e))
                .collect();
            // The variables go first: `ncu` runs the command after it as it is.
            let (vars, command) = crate::shell::split_variables(&rerun);
            format!(
                "{vars}KERNELGATE_TIMEOUT=600 ncu --target-processes all -k regex:'^({})' -c {} {command}",
                names.join("|"),
                k.entries.len()
            )
        }),
        rebless: kernel
            .filter(|_| base.is_none())
            .map(|_| format!("KERNELGATE_BLESS=1 {rerun}")),
        rerun,
        invocation: Some(invocation),
    }
}
