//! `Config`: the harness's options. libtest-mimic rejects unknown flags, so every option is a
//! `KERNELGATE_*` environment variable; the README lists them all.

use std::path::PathBuf;
use std::time::Duration;

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
    /// `KERNELGATE_BLESS=1`: record the trials that ran and passed as the new baselines.
    pub bless: bool,
    /// `KERNELGATE_STRICT=1`: a trial still inconclusive after re-measuring fails.
    pub strict: bool,
    /// `KERNELGATE_REQUIRE_BASELINE=1`: a trial without a comparable baseline fails.
    pub require_baseline: bool,
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
}

/// Reads a variable; unset and empty are the same.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn flag(name: &str) -> Result<bool, String> {
    match var(name).as_deref() {
        None | Some("0") | Some("false") => Ok(false),
        Some("1") | Some("true") => Ok(true),
        Some(other) => Err(format!("`{name}={other}` is not a flag (write 1 or 0)")),
    }
}

fn number<T: std::str::FromStr>(name: &str, what: &str) -> Result<Option<T>, String> {
    var(name)
        .map(|v| {
            v.parse::<T>()
                .map_err(|_| format!("`{name}={v}` is not {what}"))
        })
        .transpose()
}

impl Config {
    /// Reads every `KERNELGATE_*` variable; a malformed one is an error naming it.
    pub fn from_env() -> Result<Config, String> {
        let target = var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("target"));
        let arch = var("KERNELGATE_ARCH").unwrap_or_else(|| "sm_90".into());
        if !arch.starts_with("sm_") || arch.len() < 5 {
            return Err(format!(
                "`KERNELGATE_ARCH={arch}` is not a real architecture (write e.g. sm_90)"
            ));
        }
        let timeout = number::<u64>("KERNELGATE_TIMEOUT", "a number of seconds")?.unwrap_or(120);
        if timeout == 0 {
            return Err("`KERNELGATE_TIMEOUT=0` leaves no time for any trial".into());
        }
        let seed = match var("KERNELGATE_SEED") {
            Some(v) => Some(parse_seed(&v).ok_or_else(|| {
                format!("`KERNELGATE_SEED={v}` is not a seed (decimal or 0x hex)")
            })?),
            None => None,
        };
        Ok(Config {
            suites: var("KERNELGATE_SUITES")
                .map(PathBuf::from)
                .unwrap_or_else(|| "suites".into()),
            baselines: var("KERNELGATE_BASELINES")
                .map(PathBuf::from)
                .unwrap_or_else(|| "baselines".into()),
            devices: devices(var("KERNELGATE_DEVICE").as_deref().unwrap_or("0"))?,
            shard: var("KERNELGATE_SHARD").map(|v| shard(&v)).transpose()?,
            require_gpu: flag("KERNELGATE_REQUIRE_GPU")?,
            require_nvrtc: flag("KERNELGATE_REQUIRE_NVRTC")?,
            timeout: Duration::from_secs(timeout),
            arch,
            cache: var("KERNELGATE_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| target.join("kernelgate-cache")),
            seed,
            bless: flag("KERNELGATE_BLESS")?,
            strict: flag("KERNELGATE_STRICT")?,
            require_baseline: flag("KERNELGATE_REQUIRE_BASELINE")?,
            results: var("KERNELGATE_RESULTS").map(PathBuf::from),
            junit: var("KERNELGATE_JUNIT").map(PathBuf::from),
            markdown: var("KERNELGATE_MARKDOWN").map(PathBuf::from),
            html: var("KERNELGATE_HTML").map(PathBuf::from),
            history: var("KERNELGATE_HISTORY").map(PathBuf::from),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            annotations: var("GITHUB_ACTIONS").as_deref() == Some("true")
                || flag("KERNELGATE_ANNOTATIONS")?,
        })
    }
}

/// Whether this looks like a CI run (`CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    var("CI").is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

fn devices(text: &str) -> Result<Vec<i32>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let d: i32 = part
            .trim()
            .parse()
            .ok()
            .filter(|d| *d >= 0)
            .ok_or_else(|| format!("`KERNELGATE_DEVICE={text}` is not a device ordinal or a list of them (write 0, or 0,1)"))?;
        if out.contains(&d) {
            return Err(format!("`KERNELGATE_DEVICE={text}` names GPU {d} twice"));
        }
        out.push(d);
    }
    Ok(out)
}

fn shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!("`KERNELGATE_SHARD={text}` is not a shard (write k/n with 1 <= k <= n, e.g. 1/2)")
    };
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (u64, u64) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Whether trial `name` belongs to shard `k` of `n`: a stable hash of the name (FNV-1a), so a
/// trial stays in its shard whatever else is added.
pub fn in_shard(name: &str, (k, n): (u64, u64)) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h % n == k - 1
}

fn parse_seed(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_shards() {
        assert_eq!(devices("0"), Ok(vec![0]));
        assert_eq!(devices("0, 1"), Ok(vec![0, 1]));
        assert!(devices("0,0").unwrap_err().contains("twice"));
        assert!(devices("first").is_err());
        assert!(devices("-1").is_err());
        assert_eq!(shard("1/2"), Ok((1, 2)));
        assert!(shard("0/2").is_err());
        assert!(shard("3/2").is_err());
        assert!(shard("half").is_err());
        // Every name lands in exactly one shard, and the shards are about even.
        let names: Vec<String> = (0..1000).map(|i| format!("suite::kernel::n={i}")).collect();
        let sizes: Vec<usize> = (1..=3)
            .map(|k| names.iter().filter(|n| in_shard(n, (k, 3))).count())
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 1000);
        assert!(sizes.iter().all(|s| (280..=390).contains(s)), "{sizes:?}");
    }

    #[test]
    fn seeds_in_decimal_or_hex() {
        assert_eq!(parse_seed("24303"), Some(24303));
        assert_eq!(parse_seed("0x5EED"), Some(0x5EED));
        assert_eq!(parse_seed("seed"), None);
    }
}
