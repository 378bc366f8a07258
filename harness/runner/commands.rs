//! `commands`: the commands a report prints for one trial — re-run it, profile its kernel with
//! Nsight Compute, re-bless it — each repeating this run's experiment: its mode (the paired
//! base), folders and seed, with the binary the run used.

use super::Planned;
use crate::config::Config;
use crate::report::results::Commands;
use crate::suite::Suite;
use std::path::Path;

/// The variables that change what a trial's run decides or how it runs, repeated as the run
/// had them (besides the base, folders and seed, which come from the run itself).
const REPEATED: &[&str] = &[
    "KERNELGATE_ARCH",
    "KERNELGATE_COUNTERS",
    "KERNELGATE_CUDA_INCLUDE",
    "KERNELGATE_DEVICE",
    "KERNELGATE_REQUIRE_BASELINE",
    "KERNELGATE_REQUIRE_COUNTERS",
    "KERNELGATE_REQUIRE_GPU",
    "KERNELGATE_REQUIRE_NVRTC",
    "KERNELGATE_STRICT",
    "KERNELGATE_STRICT_TIME",
    "KERNELGATE_TIME_IDENTICAL",
    "KERNELGATE_TIMEOUT",
];

/// What a command that repeats one of this run's experiments is made of: the variables that
/// make it the same experiment, each one shell word, and the launcher.
pub struct Invocation {
    /// `NAME=value` words: the paired base (its commit, so a later rerun compares with the same
    /// code), a suites or baselines folder other than the default, the seed, and the
    /// [`REPEATED`] variables the run was given.
    pub vars: Vec<String>,
    /// How the run was started (`./kernelgate run`, `cargo test --test perf --`).
    pub launcher: String,
}

impl Invocation {
    /// The variables, then the launcher: a command line.
    fn line(&self) -> String {
        let mut words = self.vars.clone();
        words.push(self.launcher.clone());
        words.join(" ")
    }
}

/// This run's [`Invocation`]; `base` is the paired base's commit (or its folder).
pub fn invocation(config: &Config, base: Option<&str>) -> Invocation {
    let word = crate::shell::shell_word;
    let mut vars = Vec::from_iter(base.map(|b| format!("KERNELGATE_BASE={}", word(b))));
    let path = |p: &Path| word(&p.display().to_string());
    if config.suites != Path::new("suites") {
        vars.push(format!("KERNELGATE_SUITES={}", path(&config.suites)));
    }
    if config.baselines != Path::new("baselines") && base.is_none() {
        vars.push(format!("KERNELGATE_BASELINES={}", path(&config.baselines)));
    }
    vars.extend(config.seed.map(|seed| format!("KERNELGATE_SEED={seed}")));
    let set = |name: &str| Some(format!("{name}={}", word(&std::env::var(name).ok()?)));
    vars.extend(REPEATED.iter().copied().filter_map(set));
    Invocation {
        vars,
        launcher: config.launcher.clone(),
    }
}

/// The Nsight Compute command that profiles the first `launches` launches its `filter` matches
/// (`-k …`), run as `how` runs the trials, then `exact`: the variables first (`ncu` runs the
/// command after it as it is), the profiler's own time-out in place of the run's.
fn profile(how: &Invocation, filter: &str, launches: usize, exact: &str) -> String {
    let vars = how.vars.iter().map(String::as_str);
    let ncu = format!(
        "ncu --target-processes all {filter} -c {launches} {}",
        how.launcher
    );
    let words: Vec<&str> = (vars.filter(|v| !v.starts_with("KERNELGATE_TIMEOUT=")))
        .chain(["KERNELGATE_TIMEOUT=600", &ncu, exact])
        .collect();
    words.join(" ")
}

/// The commands that re-run one trial as this run ran it (its mode — the paired base's
/// commit —, folders, seed and settings, with its launcher: [`invocation`]), profile its kernel
/// with Nsight Compute, and re-bless it (not in paired mode, where bless is refused).
pub fn commands(
    name: &str,
    suite: &Suite,
    trial: &Planned,
    config: &Config,
    base: Option<&str>,
) -> Commands {
    let how = invocation(config, base);
    let exact = format!("--exact {}", crate::shell::quoted(name));
    let rerun = format!("{} {exact}", how.line());
    let kernel = trial
        .case_kernel()
        .map(|(_, kernel)| &suite.kernels[kernel]);
    Commands {
        profile: kernel.map(|k| {
            let (filter, launches) = filter(suite, k);
            profile(&how, &filter, launches, &exact)
        }),
        rebless: kernel
            .filter(|_| base.is_none())
            .map(|_| format!("KERNELGATE_BLESS=1 {rerun}")),
        rerun,
        invocation: Some(how.line()),
    }
}

/// Nsight Compute's kernel filter for kernel `k`'s launches, and how many a run of it makes:
/// each entry matched whole (`vec` is not `vec4`). cuBLASLt's kernels are known only as it
/// launches them (`sm80_xmma_gemm_…`, `cutlass::Kernel2<cutlass_80_simt_sgemm_…>`, one or two a
/// call): every kernel but kernelgate's own and the suite's (whose names may hold `gemm` too).
fn filter(suite: &Suite, k: &crate::suite::Kernel) -> (String, usize) {
    let names = |k: &crate::suite::Kernel| -> Vec<String> {
        let base = |e: &String| e.split('<').next().unwrap_or(e).to_string();
        k.entries.iter().map(base).collect()
    };
    if suite.sources[k.source].library.is_some() {
        let own: Vec<String> = (suite.kernels.iter())
            .filter(|k| suite.sources[k.source].library.is_none())
            .flat_map(names)
            .collect();
        let own = own.join("|");
        let filter = format!(
            "--kernel-name-base demangled -k regex:'^(?!(void )?(({own})($|[<(])|kernelgate_))'"
        );
        return (filter, 2);
    }
    let names = names(k);
    (
        format!("-k regex:'^({})($|[<(])'", names.join("|")),
        names.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every printed command is one a shell takes as it is: folders with spaces, a base with a
    /// `~`, the profile's variables before `ncu` (checked with `bash -n`).
    #[test]
    fn printed_commands_paste_into_a_shell() {
        let config = Config {
            suites: "my suites/kernels".into(),
            baselines: "it's baselines".into(),
            seed: Some(7),
            launcher: "'./my kernelgate' run".into(),
            ..Config::from_env().unwrap()
        };
        for base in [None, Some("HEAD~1")] {
            let how = invocation(&config, base);
            let exact = format!("--exact {}", crate::shell::quoted("s::k::n=1"));
            let rerun = format!("{} {exact}", how.line());
            let profile = profile(&how, "-k regex:'^(k|k_vec4)($|[<(])'", 2, &exact);
            for command in [&rerun, &profile] {
                let ok = std::process::Command::new("bash")
                    .args(["-n", "-c", command])
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "bash does not take `{command}`");
            }
            assert!(
                profile.contains(" KERNELGATE_TIMEOUT=600 ncu --target-processes all -k regex:'^(k|k_vec4)($|[<(])' -c 2 './my kernelgate' run --exact 's::k::n=1'"),
                "{profile}"
            );
            assert!(rerun.starts_with(match base {
                Some(_) => "KERNELGATE_BASE='HEAD~1' KERNELGATE_SUITES='my suites/kernels' KERNELGATE_SEED=7",
                None => "KERNELGATE_SUITES='my suites/kernels' KERNELGATE_BASELINES='it'\\''s baselines' KERNELGATE_SEED=7",
            }), "{rerun}");
        }
    }

    /// A library call's kernels are matched by what cuBLASLt names them, not by its entry
    /// (`^(gemm)` matched none of them on an H100).
    #[test]
    fn a_library_call_is_profiled_by_its_kernels_names() {
        let suite = crate::suite::load_file(Path::new("suites/gemm.toml")).unwrap();
        let of = |name: &str| {
            filter(
                &suite,
                suite.kernels.iter().find(|k| k.name == name).unwrap(),
            )
        };
        let cublas = of("cublas");
        assert_eq!(
            cublas,
            (
                "--kernel-name-base demangled -k regex:'^(?!(void )?((gemm_naive|gemm_tiled|gemm_wmma_tf32)($|[<(])|kernelgate_))'".into(),
                2
            )
        );
        assert_eq!(of("naive"), ("-k regex:'^(gemm_naive)($|[<(])'".into(), 1));
    }
}
