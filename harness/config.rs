//! `Config`: the harness's options. libtest-mimic rejects unknown flags, so every option is a
//! `KERNELGATE_*` environment variable; the README lists them all.

use std::path::PathBuf;
use std::time::Duration;

/// A `KERNELGATE_*` variable (or the suites folder it names) the run cannot use: each names the
/// variable and its value and says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A `KERNELGATE_*` name kernelgate does not read (a typo would be ignored otherwise).
    #[error("unknown variable `{name}`: {suggestion} (kernelgate reads only the KERNELGATE_* variables listed in the README; `kernelgate help run` lists them)")]
    Unknown {
        /// The variable.
        name: String,
        /// `did you mean `KERNELGATE_X`?`, or that it is none kernelgate reads.
        suggestion: String,
    },
    /// A value that does not fit the variable.
    #[error("`{name}={value}` {problem}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong, and what to write instead.
        problem: String,
    },
    /// No suite in the suites folder.
    #[error("no suite found in `{}` (set KERNELGATE_SUITES to the folder of suite files, or KERNELGATE_ALLOW_EMPTY=1 if an empty folder is meant)", .dir.display())]
    NoSuites {
        /// The folder.
        dir: PathBuf,
    },
    /// The project file (`kernelgate.toml`) cannot be used: its path, place and problem.
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
}

fn invalid(name: &'static str, value: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name,
        value: value.to_string(),
        problem: problem.into(),
    }
}

/// What a run does with its measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Judge every trial against its stored baseline.
    Gate,
    /// Record every trial that ran and passed as its new baseline (`KERNELGATE_BLESS=1`).
    Bless,
}

/// What blessing does to an existing baseline entry (`KERNELGATE_BLESS=1` or `=add`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Blessing {
    /// `KERNELGATE_BLESS=1`: this run's samples replace the entry.
    #[default]
    Replace,
    /// `KERNELGATE_BLESS=add`: this run is added to the entry's runs (from another process,
    /// GPU or host), keeping their between-run spread, which the gate then allows for.
    Add,
}

/// `KERNELGATE_BLESS`'s value: whether to bless, and how.
fn blessing(value: Option<&str>) -> Result<Option<Blessing>, ConfigError> {
    match value {
        None | Some("0") | Some("false") => Ok(None),
        Some("1") | Some("true") => Ok(Some(Blessing::Replace)),
        Some("add") => Ok(Some(Blessing::Add)),
        Some(other) => Err(invalid(
            "KERNELGATE_BLESS",
            other,
            "is not 1, add or 0 (1 replaces the baselines, add adds this run to them)",
        )),
    }
}

/// When trials read hardware counters (`KERNELGATE_COUNTERS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CounterPolicy {
    /// `auto` (the default): where a verdict or a record needs them — every trial of a bless,
    /// every re-measured trial (a time change to explain or attribute), every trial of a suite
    /// with a counter gate. Counters are exact functions of the code, launch and inputs, so a
    /// trial with none of these would only read what the baseline already holds.
    #[default]
    Auto,
    /// `all` (or `1`): every trial.
    All,
    /// `0` (or `off`): none; counter gates say "not applied".
    Off,
}

/// `KERNELGATE_COUNTERS`'s value.
fn counter_policy(value: Option<&str>) -> Result<CounterPolicy, ConfigError> {
    match value {
        None | Some("auto") => Ok(CounterPolicy::Auto),
        Some("1") | Some("all") => Ok(CounterPolicy::All),
        Some("0") | Some("off") => Ok(CounterPolicy::Off),
        Some(other) => Err(invalid(
            "KERNELGATE_COUNTERS",
            other,
            "is not auto, all or 0 (auto reads counters where a verdict needs them)",
        )),
    }
}

/// Options read from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `KERNELGATE_SUITES`: the folder of suite files (default `suites`).
    pub suites: PathBuf,
    /// `KERNELGATE_BASELINES`: the folder of stored baselines (default `baselines`).
    pub baselines: PathBuf,
    /// `KERNELGATE_DEVICE`: the GPU ordinals to use, e.g. `0` (the default) or `0,1`; trials
    /// spread over them, one worker per GPU.
    pub devices: Vec<i32>,
    /// `KERNELGATE_SHARD=k/n`: run only the k-th (1-based) of n stable parts of the trials.
    pub shard: Option<(u64, u64)>,
    /// `KERNELGATE_REQUIRE_GPU=1`: no usable GPU fails the run instead of ignoring its trials.
    pub require_gpu: bool,
    /// `KERNELGATE_REQUIRE_NVRTC=1`: no NVRTC fails the compile trials instead of ignoring them.
    pub require_nvrtc: bool,
    /// `KERNELGATE_TIMEOUT`: seconds one trial may take before its worker is stopped (default 120).
    pub timeout: Duration,
    /// `KERNELGATE_ARCH`: NVRTC target when no GPU says which (default `sm_90`).
    pub arch: String,
    /// `KERNELGATE_CACHE`: the compile cache folder (default `target/kernelgate-cache`, under
    /// `CARGO_TARGET_DIR` when that is set).
    pub cache: PathBuf,
    /// `KERNELGATE_SEED`: overrides every suite's first input seed (to reproduce a failure).
    pub seed: Option<u64>,
    /// `KERNELGATE_BLESS=1`: bless (record the trials that ran and passed as the new
    /// baselines) instead of gating; chosen once for the whole run.
    pub mode: Mode,
    /// `KERNELGATE_BASE=<git rev | folder>`: paired A/B mode — time every trial against the
    /// same trial at that revision, interleaved in one process, instead of stored baselines.
    pub base: Option<String>,
    /// `KERNELGATE_STRICT=1`: a trial still inconclusive after re-measuring fails.
    pub strict: bool,
    /// `KERNELGATE_TIME_IDENTICAL=1`: in paired mode, time the trials whose code is identical
    /// at the base anyway (an A/A test whose largest change the run prints as its noise),
    /// instead of skipping them.
    pub time_identical: bool,
    /// `KERNELGATE_REQUIRE_BASELINE=1`: a trial without a comparable baseline fails.
    pub require_baseline: bool,
    /// `KERNELGATE_STRICT_TIME=1`: a time change attributed to the machine
    /// (`machine-slower`) fails like a regression.
    pub strict_time: bool,
    /// `KERNELGATE_COUNTERS`: which trials read hardware counters.
    pub counters: CounterPolicy,
    /// `KERNELGATE_REQUIRE_COUNTERS=1`: counters that cannot be read (no CUPTI, no
    /// permission) are a harness error (exit 2) instead of a note.
    pub require_counters: bool,
    /// When blessing: replace each entry (`KERNELGATE_BLESS=1`) or add this run to it
    /// (`KERNELGATE_BLESS=add`).
    pub blessing: Blessing,
    /// `KERNELGATE_RESULTS`: write the whole run to this JSON file.
    pub results: Option<PathBuf>,
    /// `KERNELGATE_JUNIT`: write JUnit XML here.
    pub junit: Option<PathBuf>,
    /// `KERNELGATE_MARKDOWN`: write the Markdown summary here.
    pub markdown: Option<PathBuf>,
    /// `KERNELGATE_HTML`: write the HTML report (plots, every trial) here.
    pub html: Option<PathBuf>,
    /// `KERNELGATE_HISTORY`: append the run to this SQLite history.
    pub history: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: append the Markdown summary to it (set by GitHub Actions).
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_ACTIONS=true` or `KERNELGATE_ANNOTATIONS=1`: print `::error` annotations.
    pub annotations: bool,
    /// `KERNELGATE_ALLOW_EMPTY=1`: a suites folder with no suite passes instead of exit 2.
    pub allow_empty: bool,
    /// `KERNELGATE_PROFILE=1`: profile inside sampling (prepare, flush, launch, sync,
    /// readback), with events a plain run does not record.
    pub profile: bool,
    /// `KERNELGATE_LOCK_DIR`: where the per-GPU locks live (default: the system's temporary
    /// folder); containers sharing a GPU must share it (`crate::lock`).
    pub lock_dir: PathBuf,
    /// How this run was started (`./kernelgate run`): reports' commands run it (`runner::commands`).
    pub launcher: String,
}

pub use crate::variables::KNOWN;

/// The first unknown `KERNELGATE_*` name among `names`, as an error naming the closest known
/// one.
pub fn unknown_variable<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), ConfigError> {
    let mut unknown: Vec<&str> = names
        .into_iter()
        .filter(|n| n.starts_with("KERNELGATE_") && !KNOWN.contains(n))
        .collect();
    unknown.sort();
    let Some(name) = unknown.first() else {
        return Ok(());
    };
    // Compared without the prefix they all share, which would make every name look close.
    let bare = |n: &'static str| n.trim_start_matches("KERNELGATE_");
    let known = KNOWN.iter().map(|k| bare(k));
    let suggestion = match crate::suggest::closest(name.trim_start_matches("KERNELGATE_"), known) {
        Some(k) => format!("did you mean `KERNELGATE_{k}`?"),
        None => "it is not one".into(),
    };
    Err(ConfigError::Unknown {
        name: name.to_string(),
        suggestion,
    })
}

/// Whether `arch` names a real GPU architecture: `sm_` and two or three digits, optionally
/// `a` or `f` (`sm_90`, `sm_90a`, `sm_100f`).
pub fn valid_arch(arch: &str) -> bool {
    let Some(rest) = arch.strip_prefix("sm_") else {
        return false;
    };
    let rest = rest
        .strip_suffix('a')
        .or_else(|| rest.strip_suffix('f'))
        .unwrap_or(rest);
    (2..=3).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_digit())
}

/// `KERNELGATE_ARCH`'s targets: one (`sm_90`, the default) or a list (`sm_90,sm_100`), which
/// `kernelgate sass` reads whole; the other commands use the first.
pub fn archs() -> Result<Vec<String>, ConfigError> {
    archs_of(var("KERNELGATE_ARCH").as_deref().unwrap_or("sm_90"))
}

/// The targets `text` names, each checked up front — so a wrong target is a bad variable
/// (exit 2), not every compile trial failing — against NVRTC's list where NVRTC loads.
fn archs_of(text: &str) -> Result<Vec<String>, ConfigError> {
    let supported = crate::device::nvrtc_missing()
        .is_none()
        .then(crate::device::compile::supported_archs)
        .and_then(Result::ok);
    let mut out: Vec<String> = Vec::new();
    for arch in text.split(',').map(str::trim) {
        // `is ...` for one target, `names `sm_9x`, which is ...` in a list.
        let which = if arch == text {
            "is".to_string()
        } else {
            format!("names `{arch}`, which is")
        };
        if !valid_arch(arch) {
            return Err(invalid(
                "KERNELGATE_ARCH",
                text,
                format!("{which} not a GPU architecture (write e.g. sm_80, sm_90 or sm_90a, or a list: sm_90,sm_100)"),
            ));
        }
        if let Some(supported) = &supported {
            let number = crate::device::binary::arch_number(arch).unwrap_or(0) as i32;
            if !supported.contains(&number) {
                let list: Vec<String> = supported.iter().map(|a| format!("sm_{a}")).collect();
                return Err(invalid(
                    "KERNELGATE_ARCH",
                    text,
                    format!(
                        "{which} not a target of this NVRTC (it compiles for {})",
                        list.join(", ")
                    ),
                ));
            }
        }
        if !out.iter().any(|a| a == arch) {
            out.push(arch.to_string());
        }
    }
    Ok(out)
}

pub use crate::project::var;

fn flag(name: &'static str) -> Result<bool, ConfigError> {
    match var(name).as_deref() {
        None | Some("0") | Some("false") => Ok(false),
        Some("1") | Some("true") => Ok(true),
        Some(other) => Err(invalid(name, other, "is not a flag (write 1 or 0)")),
    }
}

/// `KERNELGATE_CACHE`, or `kernelgate-cache` in the target folder: where compiles are cached.
pub fn cache_dir() -> PathBuf {
    var("KERNELGATE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            var("CARGO_TARGET_DIR")
                .map_or_else(|| PathBuf::from("target"), PathBuf::from)
                .join("kernelgate-cache")
        })
}

impl Config {
    /// What fails the run besides a regression (`KERNELGATE_STRICT`, `KERNELGATE_STRICT_TIME`).
    pub fn strictness(&self) -> crate::gate::Strictness {
        crate::gate::Strictness {
            inconclusive: self.strict,
            machine_time: self.strict_time,
        }
    }

    /// Reads every `KERNELGATE_*` variable; a malformed one is an error naming it.
    pub fn from_env() -> Result<Config, ConfigError> {
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        unknown_variable(names.iter().map(String::as_str))?;
        let project = crate::project::current().map_err(ConfigError::Project)?;
        let arch = archs()?.swap_remove(0);
        let timeout = timeout(var("KERNELGATE_TIMEOUT").as_deref())?;
        let seed = (var("KERNELGATE_SEED").map(|v| {
            parse_seed(&v)
                .ok_or_else(|| invalid("KERNELGATE_SEED", &v, "is not a seed (decimal or 0x hex)"))
        }))
        .transpose()?;
        let bless = blessing(var("KERNELGATE_BLESS").as_deref())?;
        // Read by `report::provenance` when the run's results are written; checked here so a
        // typo is a bad variable before anything runs.
        flag("KERNELGATE_DIRTY")?;
        flag("KERNELGATE_BLESS_IN_CI")?;
        Ok(Config {
            suites: var("KERNELGATE_SUITES")
                .map(PathBuf::from)
                .or_else(|| project.map(|p| p.suites.clone()))
                .unwrap_or_else(|| "suites".into()),
            baselines: var("KERNELGATE_BASELINES")
                .map(PathBuf::from)
                .or_else(|| project.map(|p| p.baselines.clone()))
                .unwrap_or_else(|| "baselines".into()),
            devices: devices(var("KERNELGATE_DEVICE").as_deref().unwrap_or("0"))?,
            shard: match var("KERNELGATE_SHARD") {
                Some(v) => Some(shard(&v)?),
                None => ci_shard(var)?,
            },
            require_gpu: flag("KERNELGATE_REQUIRE_GPU")?,
            require_nvrtc: flag("KERNELGATE_REQUIRE_NVRTC")?,
            timeout,
            arch,
            cache: cache_dir(),
            seed,
            mode: bless.map_or(Mode::Gate, |_| Mode::Bless),
            base: var("KERNELGATE_BASE"),
            strict: flag("KERNELGATE_STRICT")?,
            time_identical: flag("KERNELGATE_TIME_IDENTICAL")?,
            require_baseline: flag("KERNELGATE_REQUIRE_BASELINE")?,
            strict_time: flag("KERNELGATE_STRICT_TIME")?,
            counters: counter_policy(var("KERNELGATE_COUNTERS").as_deref())?,
            require_counters: flag("KERNELGATE_REQUIRE_COUNTERS")?,
            blessing: bless.unwrap_or_default(),
            results: var("KERNELGATE_RESULTS").map(PathBuf::from),
            junit: var("KERNELGATE_JUNIT").map(PathBuf::from),
            markdown: var("KERNELGATE_MARKDOWN").map(PathBuf::from),
            html: var("KERNELGATE_HTML").map(PathBuf::from),
            history: var("KERNELGATE_HISTORY").map(PathBuf::from),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            annotations: var("GITHUB_ACTIONS").as_deref() == Some("true")
                || flag("KERNELGATE_ANNOTATIONS")?,
            allow_empty: flag("KERNELGATE_ALLOW_EMPTY")?,
            launcher: crate::shell::DEFAULT_LAUNCHER.into(),
            profile: flag("KERNELGATE_PROFILE")?,
            lock_dir: crate::lock::lock_dir(),
        })
    }

    /// Where paired mode and `kernelgate sass --base` extract the base revision's suites:
    /// `kernelgate-base` beside the compile cache.
    pub fn base_dir(&self) -> PathBuf {
        self.cache.with_file_name("kernelgate-base")
    }

    /// An error when no suite was found, unless `KERNELGATE_ALLOW_EMPTY=1`: a run that checks
    /// nothing (a wrong `KERNELGATE_SUITES`, a checkout without the suites) must not pass.
    pub fn check_found(&self, suites: usize) -> Result<(), ConfigError> {
        if suites > 0 || self.allow_empty {
            return Ok(());
        }
        Err(ConfigError::NoSuites {
            dir: self.suites.clone(),
        })
    }
}

/// `KERNELGATE_BLESS_IN_CI=1`: a CI job made to bless (started by hand, its baselines reviewed)
/// may bless though `CI` is set. Checked in [`Config::from_env`].
pub fn bless_in_ci() -> bool {
    flag("KERNELGATE_BLESS_IN_CI") == Ok(true)
}

/// Whether this looks like a CI run (`CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    var("CI").is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// The longest `KERNELGATE_TIMEOUT`: a day. Times are multiplied by re-measure efforts and
/// trial counts; a bound keeps every product far from overflowing (seen: 10^17 s panicked).
pub const MAX_TIMEOUT_SECONDS: u64 = 86_400;

/// `KERNELGATE_TIMEOUT`'s value: whole seconds from 1 to [`MAX_TIMEOUT_SECONDS`] (default 120).
fn timeout(value: Option<&str>) -> Result<Duration, ConfigError> {
    let Some(v) = value else {
        return Ok(Duration::from_secs(120));
    };
    let what = format!("a number of seconds from 1 to {MAX_TIMEOUT_SECONDS} (a day)");
    match v.trim().parse::<u64>() {
        Ok(s) if (1..=MAX_TIMEOUT_SECONDS).contains(&s) => Ok(Duration::from_secs(s)),
        Ok(0) => Err(invalid(
            "KERNELGATE_TIMEOUT",
            v,
            "leaves no time for any trial",
        )),
        _ => Err(invalid("KERNELGATE_TIMEOUT", v, format!("is not {what}"))),
    }
}

fn devices(text: &str) -> Result<Vec<i32>, ConfigError> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let d: i32 = part
            .trim()
            .parse()
            .ok()
            .filter(|d| *d >= 0)
            .ok_or_else(|| {
                invalid(
                    "KERNELGATE_DEVICE",
                    text,
                    "is not a device ordinal or a list of them (write 0, or 0,1)",
                )
            })?;
        if out.contains(&d) {
            return Err(invalid(
                "KERNELGATE_DEVICE",
                text,
                format!("names GPU {d} twice"),
            ));
        }
        out.push(d);
    }
    Ok(out)
}

fn shard(text: &str) -> Result<(u64, u64), ConfigError> {
    let number = |t: &str| t.trim().parse::<u64>().ok();
    match text.split_once('/').map(|(k, n)| (number(k), number(n))) {
        Some((Some(k), Some(n))) if (1..=n).contains(&k) && n <= MAX_SHARDS => Ok((k, n)),
        _ => Err(invalid(
            "KERNELGATE_SHARD",
            text,
            "is not a shard (write k/n with 1 <= k <= n <= 10000, e.g. 1/2)",
        )),
    }
}

/// The CI's own parallel-job variables, where `KERNELGATE_SHARD` is not set (`get` reads
/// one): Buildkite's `BUILDKITE_PARALLEL_JOB` and `_COUNT`, CircleCI's `CIRCLE_NODE_INDEX` and
/// `_TOTAL` (counted from 0), GitLab's `CI_NODE_INDEX` and `_TOTAL` (from 1), Slurm's
/// `SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN` with `_COUNT`; `None` for a single job.
pub fn ci_shard(get: impl Fn(&str) -> Option<String>) -> Result<Option<(u64, u64)>, ConfigError> {
    // The index's first value: a number, or the variable that holds it.
    const JOBS: [(&str, &str, &str); 4] = [
        (
            "BUILDKITE_PARALLEL_JOB",
            "BUILDKITE_PARALLEL_JOB_COUNT",
            "0",
        ),
        ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", "0"),
        ("CI_NODE_INDEX", "CI_NODE_TOTAL", "1"),
        (
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
        ),
    ];
    for (index, count, first) in JOBS {
        let (Some(i), Some(c)) = (get(index), get(count)) else {
            continue;
        };
        let first = get(first).unwrap_or_else(|| first.to_string());
        let number = |t: &str| t.trim().parse::<u64>().ok();
        let k = number(&i).zip(number(&first));
        let k = k.and_then(|(i, f)| i.checked_sub(f)).map(|k| k + 1);
        return match (k, number(&c)) {
            (_, Some(1)) => Ok(None),
            (Some(k), Some(n)) if k <= n && n <= MAX_SHARDS => Ok(Some((k, n))),
            _ => Err(invalid(index, &i, format!("with {count}={c} is not a parallel job this run can be a shard of (set KERNELGATE_SHARD=k/n instead)"))),
        };
    }
    Ok(None)
}

/// The most shards a run may have (`KERNELGATE_SHARD=k/n`).
pub const MAX_SHARDS: u64 = 10_000;

/// Whether trial `name` belongs to shard `k` of `n`: a stable hash of the name (FNV-1a), so a
/// trial stays in its shard whatever else is added.
pub fn in_shard(name: &str, (k, n): (u64, u64)) -> bool {
    fnv1a(name) % n == k - 1
}

/// The 64-bit FNV-1a hash of `text`'s bytes: stable across runs and platforms.
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn parse_seed(v: &str) -> Option<u64> {
    (v.strip_prefix("0x")).map_or_else(|| v.parse().ok(), |hex| u64::from_str_radix(hex, 16).ok())
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
