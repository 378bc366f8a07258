//! `bless`: with `KERNELGATE_BLESS=1`, the trials that ran and passed correctness become the
//! stored baselines for this device; with `KERNELGATE_BLESS=add`, each is added as one more
//! run to its entry (see `baseline::Run`). Entries of trials that did not run are kept as they
//! were.

use super::trial::Trial;
use super::{Planned, Runner};
use crate::baseline::{
    self, BaselineError, BaselineFile, BaselineStore, Entry, Origin, Run, Stored,
    MAX_STORED_SAMPLES,
};
use crate::code::TrialCode;
use crate::config::Blessing;
use crate::gate::percent;
use crate::report::duration;
use crate::suite::Suite;
use std::collections::BTreeMap;
use std::path::Path;

/// The runs of a measured trial, measured at `origin`: one per allocation (unit) it was
/// sampled on; one run of all samples when it recorded no units.
fn runs(samples: &crate::measure::Samples, origin: &Origin) -> Vec<Run> {
    let ratios = samples.ratios();
    if samples.units.is_empty() {
        return Run::new(origin.clone(), &samples.kernel, &ratios)
            .into_iter()
            .collect();
    }
    let (mut at, mut at_ratio) = (0, 0);
    let mut out = Vec::new();
    for unit in &samples.units {
        let end = (at + unit.kernel_samples).min(samples.kernel.len());
        let ratio_end =
            (at_ratio + unit.reference_samples.min(unit.kernel_samples)).min(ratios.len());
        out.extend(Run::new(
            origin.clone(),
            &samples.kernel[at..end],
            &ratios[at_ratio..ratio_end],
        ));
        (at, at_ratio) = (end, ratio_end);
    }
    out
}

/// A baseline entry for a measured trial of `code`: its runs ([`runs`]), measured at `origin`.
fn entry(
    suite: &Suite,
    trial: &Planned,
    measured: &super::Measured,
    origin: Origin,
    code: Option<TrialCode>,
) -> Option<Entry> {
    let (case, kernel) = trial.case_kernel()?;
    let (samples, footprint) = (&measured.samples, &measured.footprint);
    let time = samples.kernel_summary()?;
    let ratios = samples.ratios();
    Some(Entry {
        kernel: suite.kernels[kernel].name.clone(),
        case: suite.cases[case].label.clone(),
        regime: samples.regime,
        time: Stored::from(time),
        time_samples: baseline::thin(&samples.kernel, MAX_STORED_SAMPLES),
        speedup: samples.speedup().map(Stored::from),
        speedup_samples: baseline::thin(&ratios, MAX_STORED_SAMPLES),
        footprint: Some(footprint.clone()),
        reference: suite.kernels[suite.reference].name.clone(),
        kernelgate: env!("CARGO_PKG_VERSION").to_string(),
        date: baseline::today(),
        runs: runs(samples, &origin),
        counters: measured
            .counters
            .as_ref()
            .map(|c| c.allocations().iter().map(|a| a.kernel.clone()).collect())
            .unwrap_or_default(),
        code,
        trial_seconds: Some(measured.seconds),
        counter_set: crate::measure::counters::COUNTER_SET,
    })
}

/// `new` added to `old` as one more run, when they are comparable (same regime and
/// reference); otherwise `new` alone, with why.
fn add(old: &Entry, new: Entry) -> (Entry, Option<&'static str>) {
    let codes = old.code.as_ref().zip(new.code.as_ref());
    let replaced = if old.regime != new.regime {
        Some("the old runs were timed in another regime")
    } else if old.reference != new.reference {
        Some("the old runs had another reference kernel")
    } else if codes.is_some_and(|(a, b)| a.version != b.version) {
        Some("the old runs' trial identity is of another version: whether they ran the same code is unknown")
    } else if codes.is_some_and(|(a, b)| a.identity != b.identity) {
        Some("the old runs ran other code (another trial identity)")
    } else {
        None
    };
    if replaced.is_some() {
        return (new, replaced);
    }
    let mut pooled = old.clone();
    for run in new.runs {
        pooled.add_run(run);
    }
    pooled.footprint = new.footprint;
    pooled.code = new.code.or(pooled.code);
    pooled.trial_seconds = new.trial_seconds.or(pooled.trial_seconds);
    // Reads of another counter set count some counters differently: the new ones only (a
    // bless that read none keeps the old reads and their set).
    if pooled.counter_set != new.counter_set && !new.counters.is_empty() {
        pooled.counters.clear();
        pooled.counter_set = new.counter_set;
    }
    pooled.counters.extend(new.counters);
    let extra = pooled
        .counters
        .len()
        .saturating_sub(baseline::MAX_COUNTER_READS);
    pooled.counters.drain(..extra);
    pooled.kernelgate = new.kernelgate;
    pooled.date = new.date;
    (pooled, None)
}

/// The new entry of every measured trial whose clocks held, by suite index.
fn entries_by_suite(
    run: &Runner,
    plan: &[Planned],
    trials: &[Trial],
) -> BTreeMap<usize, Vec<(String, Entry)>> {
    let device = run.executor.device();
    let mut by_suite: BTreeMap<usize, Vec<(String, Entry)>> = BTreeMap::new();
    for (i, trial) in plan.iter().enumerate() {
        // Only a trial whose clocks held.
        let held = trials[i]
            .measured()
            .filter(|m| !m.samples.clocks.unreliable);
        let Some(m) = held else { continue };
        let origin = Origin::measured_on(device.as_ref(), m.ordinal);
        let suite = &run.suites[trial.suite];
        let code = trials[i].code.code.clone();
        if let Some(e) = entry(suite, trial, m, origin, code) {
            by_suite
                .entry(trial.suite)
                .or_default()
                .push((trial.name.clone(), e));
        }
    }
    by_suite
}

/// The entry to store for a trial that had `old` and measured `new`, as `blessing` says, and
/// the line that tells what changed.
fn merge(old: Option<&Entry>, new: Entry, blessing: Blessing) -> (Entry, String) {
    match (old, blessing) {
        (Some(old), Blessing::Add) => {
            let this_run = new.time.median;
            let (pooled, replaced) = add(old, new);
            let change = match replaced {
                Some(why) => format!(
                    "{} → {} (replaced, not added: {why})",
                    duration(old.time.median),
                    duration(pooled.time.median)
                ),
                None => format!(
                    "added a run of {} → {} runs, pooled {} → {}, between-run spread {}",
                    duration(this_run),
                    pooled.runs.len(),
                    duration(old.time.median),
                    duration(pooled.time.median),
                    percent(pooled.spread())
                ),
            };
            (pooled, change)
        }
        (Some(old), Blessing::Replace) => {
            let change = format!(
                "{} → {} ({})",
                duration(old.time.median),
                duration(new.time.median),
                percent(new.time.median / old.time.median)
            );
            (new, change)
        }
        (None, _) => {
            let change = format!("{} (new)", duration(new.time.median));
            (new, change)
        }
    }
}

/// Writes the baselines of every measured trial into their suites' files on `store`'s device:
/// each file is read, merged and written inside the lock of its folder (`crate::lock`), so
/// concurrent blesses — other processes, other hosts sharing the folder — lose no run. Returns
/// one line per trial (or per problem).
pub(super) fn bless(
    run: &Runner,
    plan: &[Planned],
    trials: &[Trial],
    store: &BaselineStore,
) -> Vec<String> {
    let suites = run.suites;
    let mut lines = Vec::new();
    for (s, entries) in entries_by_suite(run, plan, trials) {
        let suite = &suites[s];
        let Some(stored) = store.suite(&suite.name) else {
            continue;
        };
        let path = stored.path.clone();
        match write_merged(run, suite, &store.device, &path, entries) {
            Ok(changes) => {
                lines.extend(changes);
                lines.push(format!("wrote {}", path.display()));
            }
            Err(e) => lines.push(format!("not blessed, suite `{}`: {e}", suite.name)),
        }
    }
    lines
}

/// The lock of the folder that holds baseline `path`, waiting (and saying for whom) while
/// another process blesses into it.
fn lock_folder(run: &Runner, path: &Path) -> Result<crate::lock::Held, crate::lock::LockError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    // The folder's real path names the lock: make it first, so every process sees the same.
    let _ = std::fs::create_dir_all(folder);
    let lock = crate::lock::folder_lock_path(&run.config.lock_dir, folder);
    let what = format!("the baselines in `{}`", folder.display());
    crate::lock::acquire(&lock, &what, BLESS_WAIT, &mut |holder, _| {
        eprintln!("kernelgate: {what} are being written by {holder}; waiting for it")
    })
}

/// How long a bless waits for another process writing the same baselines folder (a write
/// takes milliseconds; this is for one stuck in between).
const BLESS_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Why a suite's baseline was not written.
#[derive(Debug, thiserror::Error)]
enum NotBlessed {
    /// The file there cannot be used (and is not of an older format, which is replaced).
    #[error(transparent)]
    Unusable(#[from] BaselineError),
    /// It could not be written.
    #[error(transparent)]
    Write(#[from] crate::baseline::WriteError),
    /// Its folder's lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}

/// Takes the lock of `path`'s folder, reads the baseline at `path` (as it is now), merges
/// `entries` into it as the run's blessing says and writes it; the lines that say what changed.
fn write_merged(
    run: &Runner,
    suite: &Suite,
    device: &crate::baseline::Fingerprint,
    path: &Path,
    entries: Vec<(String, Entry)>,
) -> Result<Vec<String>, NotBlessed> {
    let _held = lock_folder(run, path)?;
    // Read again inside the lock: what another process blessed since this run started.
    let mut changes = Vec::new();
    let fresh = || BaselineFile {
        format: baseline::FORMAT,
        suite: suite.name.clone(),
        device: device.clone(),
        trials: BTreeMap::new(),
    };
    let mut file = match baseline::load(path) {
        Ok(Some(f)) => f,
        Ok(None) => fresh(),
        Err(e @ BaselineError::Older { .. }) => {
            changes.push(format!("replacing an older-format baseline: {e}"));
            fresh()
        }
        Err(e) => return Err(e.into()),
    };
    file.format = baseline::FORMAT;
    file.device = device.clone();
    for (name, new) in entries {
        let (new, change) = merge(file.trials.get(&name), new, run.config.blessing);
        changes.push(format!("blessed {name}: {change}"));
        file.trials.insert(name, new);
    }
    baseline::save(path, &file)?;
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::counters::{Counter, CounterValues, COUNTER_SET};

    #[test]
    fn reads_of_another_counter_set_are_replaced_not_pooled() {
        let read = |loads: f64| -> CounterValues {
            [(Counter::Instructions, 10.0), (Counter::GlobalLoads, loads)]
                .into_iter()
                .collect()
        };
        let mut old = super::super::tests::entry("vec4", 1e-5, 0);
        old.counters = vec![read(4.0), read(4.0)];
        old.counter_set = 1;
        let mut new = super::super::tests::entry("vec4", 1e-5, 0);
        new.counters = vec![read(5.0)];
        let (pooled, why) = add(&old, new.clone());
        assert_eq!(why, None);
        assert_eq!(pooled.counter_set, COUNTER_SET);
        assert_eq!(pooled.counters, vec![read(5.0)]);
        // The same set: pooled.
        let (pooled, _) = add(&pooled, new);
        assert_eq!(pooled.counters, vec![read(5.0), read(5.0)]);
        // A bless that read no counters keeps the old reads and their set.
        let mut none = super::super::tests::entry("vec4", 1e-5, 0);
        none.counters.clear();
        let (kept, _) = add(&old, none);
        assert_eq!((kept.counter_set, kept.counters.len()), (1, 2));
    }
}
