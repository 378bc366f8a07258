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
    /// `KERNELGATE_DEVICE`: the GPU ordinal (default 0).
    pub device: i32,
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
            device: number::<i32>("KERNELGATE_DEVICE", "a device ordinal")?.unwrap_or(0),
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
    fn seeds_in_decimal_or_hex() {
        assert_eq!(parse_seed("24303"), Some(24303));
        assert_eq!(parse_seed("0x5EED"), Some(0x5EED));
        assert_eq!(parse_seed("seed"), None);
    }
}
