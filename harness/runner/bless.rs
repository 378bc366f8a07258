//! `bless`: with `KERNELGATE_BLESS=1`, the trials that ran and passed correctness become the
//! stored baselines for this device. Entries of trials that did not run are kept as they were.

use super::{Outcome, Planned, Runner};
use crate::baseline::{
    self, BaselineError, BaselineFile, BaselineStore, Entry, Stored, MAX_STORED_SAMPLES,
};
use crate::gate::percent;
use crate::report::duration;
use crate::suite::Suite;
use std::collections::BTreeMap;

/// A baseline entry for a measured trial.
fn entry(
    suite: &Suite,
    trial: &Planned,
    samples: &crate::measure::Samples,
    footprint: &crate::measure::Footprint,
) -> Option<Entry> {
    let (case, kernel) = trial.case_kernel()?;
    let time = samples.kernel_summary()?;
    Some(Entry {
        kernel: suite.kernels[kernel].name.clone(),
        case: suite.cases[case].label.clone(),
        regime: samples.regime,
        time: Stored::from(time),
        time_samples: baseline::thin(&samples.kernel, MAX_STORED_SAMPLES),
        speedup: samples.speedup().map(Stored::from),
        speedup_samples: baseline::thin(&samples.ratios(), MAX_STORED_SAMPLES),
        footprint: Some(footprint.clone()),
        reference: suite.kernels[suite.reference].name.clone(),
        kernelgate: env!("CARGO_PKG_VERSION").to_string(),
        date: baseline::today(),
    })
}

/// Writes the baselines of every measured trial into the files `store` read at the start of
/// the run; returns one line per trial (or per problem).
pub(super) fn bless(
    run: &Runner,
    plan: &[Planned],
    outcomes: &[Option<Outcome>],
    store: &BaselineStore,
) -> Vec<String> {
    let suites = run.suites;
    let fingerprint = store.device.clone();
    let mut by_suite: BTreeMap<usize, Vec<(String, Entry)>> = BTreeMap::new();
    for (i, trial) in plan.iter().enumerate() {
        if let Some(Outcome::Measured(m)) = &outcomes[i] {
            if m.samples.clocks.unreliable {
                continue;
            }
            if let Some(e) = entry(&suites[trial.suite], trial, &m.samples, &m.footprint) {
                by_suite
                    .entry(trial.suite)
                    .or_default()
                    .push((trial.name.clone(), e));
            }
        }
    }
    let mut lines = Vec::new();
    for (s, entries) in by_suite {
        let suite = &suites[s];
        let Some(stored) = store.suite(&suite.name) else {
            continue;
        };
        let path = stored.path.clone();
        let fresh = || BaselineFile {
            format: baseline::FORMAT,
            suite: suite.name.clone(),
            device: fingerprint.clone(),
            trials: BTreeMap::new(),
        };
        let mut file = match &stored.file {
            Ok(Some(f)) => f.clone(),
            Ok(None) => fresh(),
            Err(e @ BaselineError::Older { .. }) => {
                lines.push(format!("replacing an older-format baseline: {e}"));
                fresh()
            }
            Err(e) => {
                lines.push(format!("not blessed, suite `{}`: {e}", suite.name));
                continue;
            }
        };
        file.format = baseline::FORMAT;
        file.device = fingerprint.clone();
        let mut changes = Vec::new();
        for (name, new) in entries {
            let change = match file.trials.get(&name) {
                Some(old) => format!(
                    "{} → {} ({})",
                    duration(old.time.median),
                    duration(new.time.median),
                    percent(new.time.median / old.time.median)
                ),
                None => format!("{} (new)", duration(new.time.median)),
            };
            changes.push(format!("blessed {name}: {change}"));
            file.trials.insert(name, new);
        }
        match baseline::save(&path, &file) {
            Ok(()) => {
                lines.extend(changes);
                lines.push(format!("wrote {}", path.display()));
            }
            Err(e) => lines.push(format!("not blessed, suite `{}`: {e}", suite.name)),
        }
    }
    lines
}
