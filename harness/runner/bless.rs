//! `bless`: with `KERNELGATE_BLESS=1`, the trials that ran and passed correctness become the
//! stored baselines for this device. Entries of trials that did not run are kept as they were.

use super::{Outcome, Planned, Run};
use crate::baseline::{self, BaselineFile, Entry, Fingerprint, Stored, MAX_STORED_SAMPLES};
use crate::device::DeviceInfo;
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
        regime: samples.regime.clone(),
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

/// Writes the baselines of every measured trial; returns one line per trial (or per problem).
pub(super) fn bless(
    run: &Run,
    suites: &[Suite],
    plan: &[Planned],
    outcomes: &[Option<Outcome>],
    device: &DeviceInfo,
) -> Vec<String> {
    let fingerprint = Fingerprint::of(device);
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
        let path = baseline::path(&run.config.baselines, &fingerprint, &suite.name);
        let mut file = match baseline::load(&path) {
            Ok(Some(f)) => f,
            Ok(None) => BaselineFile {
                format: baseline::FORMAT,
                suite: suite.name.clone(),
                device: fingerprint.clone(),
                trials: BTreeMap::new(),
            },
            Err(e)
                if baseline::stored_format(&path).is_some_and(|f| f < baseline::FORMAT as u64) =>
            {
                lines.push(format!("replacing an older-format baseline: {e}"));
                BaselineFile {
                    format: baseline::FORMAT,
                    suite: suite.name.clone(),
                    device: fingerprint.clone(),
                    trials: BTreeMap::new(),
                }
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
