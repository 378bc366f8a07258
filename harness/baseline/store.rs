//! `BaselineStore`: the stored baselines of one run's suites on one device, read once per run
//! and handed to the regime lookup, the judge and bless.

use super::entry::{BaselineFile, Entry};
use super::file::{load, path, recorded_elsewhere, BaselineError};
use super::fingerprint::Fingerprint;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One suite's baseline file on this device, as read at the start of the run.
#[derive(Debug, Clone)]
pub struct SuiteBaseline {
    /// Where it lives (whether or not it exists).
    pub path: PathBuf,
    /// Its contents: `Ok(None)` when there is none.
    pub file: Result<Option<BaselineFile>, BaselineError>,
    /// When there is none: the devices that have a baseline of this suite.
    pub elsewhere: Vec<Fingerprint>,
}

/// The baselines of a run, by suite name.
#[derive(Debug, Clone)]
pub struct BaselineStore {
    /// The device they are for.
    pub device: Fingerprint,
    suites: BTreeMap<String, SuiteBaseline>,
}

impl BaselineStore {
    /// Reads the baseline of each suite in `suites` for `device` under `dir`, once.
    pub fn open<'a>(
        dir: &Path,
        device: &Fingerprint,
        suites: impl IntoIterator<Item = &'a str>,
    ) -> BaselineStore {
        let slug = device.slug();
        let suites = suites
            .into_iter()
            .map(|name| {
                let path = path(dir, device, name);
                let file = load(&path);
                let elsewhere = match &file {
                    Ok(None) => recorded_elsewhere(dir, name, &slug),
                    _ => Vec::new(),
                };
                (
                    name.to_string(),
                    SuiteBaseline {
                        path,
                        file,
                        elsewhere,
                    },
                )
            })
            .collect();
        BaselineStore {
            device: device.clone(),
            suites,
        }
    }

    /// A suite's baseline, if the suite was opened.
    pub fn suite(&self, suite: &str) -> Option<&SuiteBaseline> {
        self.suites.get(suite)
    }

    /// A trial's stored entry, if its suite's file is usable and holds one.
    pub fn entry(&self, suite: &str, trial: &str) -> Option<&Entry> {
        match &self.suites.get(suite)?.file {
            Ok(Some(f)) => f.trials.get(trial),
            _ => None,
        }
    }
}
