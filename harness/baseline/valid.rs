//! `validate`: a parsed baseline file checked before anything uses it — the one check that
//! [`super::load`] applies where a run reads the file and `kernelgate lint` applies to every
//! file in the folder. Every value the gate computes with must be usable: each entry has runs,
//! each run at least one time sample, and every sample, median and interval end is a positive,
//! finite number; format 3's code is hashes of their length, its trial time and counter reads
//! are counts ([`crate::code::valid`], [`crate::measure::counters_valid`]). Seen before this: a
//! baseline with `"runs": []` loaded, and the gate panicked on its empty samples.

use super::entry::{BaselineFile, Entry};
use crate::measure::counters_valid::check_values;
use crate::problems::{key, Problem, Problems};
use std::path::Path;

/// Checks `file`, read from `path`: the first problem, with its place and what to write.
pub fn validate(path: &Path, file: &BaselineFile) -> Result<(), Problem> {
    let mut p = Problems::default();
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if file.suite != stem {
        p.add(
            "suite",
            format!(
                "is `{}`, but the file is `{stem}.json`: a suite's baseline is named after it (rename the file to `{}.json`)",
                file.suite, file.suite
            ),
        );
    }
    // A baseline is read from its device's folder only: one in another device's folder (an H100
    // file among the H200's) would never be compared with, or worse, read as that device's.
    // (A file elsewhere, outside any device's folder, is checked for the rest: `lint FILE`.)
    let folder = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let device_folder = folder.contains("-drv") && folder.contains("-cuda");
    if device_folder && folder != file.device.slug() {
        p.add(
            "device",
            format!(
                "is {}, but the file is in folder `{folder}`: a baseline lives in its device's folder (`{}/{}.json`; bless on that device, or move the file)",
                file.device.describe(),
                file.device.slug(),
                file.suite
            ),
        );
    }
    for (name, entry) in &file.trials {
        check_entry(&mut p, &format!("trials{}", key(name)), entry);
    }
    p.first().map_or(Ok(()), Err)
}

fn check_entry(p: &mut Problems, place: &str, e: &Entry) {
    p.stored(
        format!("{place}.time"),
        [e.time.median, e.time.low, e.time.high],
        true,
    );
    if let Some(s) = &e.speedup {
        p.stored(format!("{place}.speedup"), [s.median, s.low, s.high], false);
    }
    if e.runs.is_empty() {
        p.add(
            format!("{place}.runs"),
            "is empty: an entry holds the runs it was blessed from, at least one",
        );
    }
    // A kernel other than the reference is compared by its speedup too: every run has those
    // samples, or none does (the reference).
    let with_speedups = e.runs.iter().any(|r| !r.speedup_samples.is_empty());
    for (i, r) in e.runs.iter().enumerate() {
        let at = format!("{place}.runs[{i}]");
        p.seconds(format!("{at}.median"), r.median);
        if let Some(s) = r.speedup {
            p.positive(format!("{at}.speedup"), s);
        }
        p.seconds_samples(format!("{at}.time_samples"), &r.time_samples, 1);
        p.samples(
            format!("{at}.speedup_samples"),
            &r.speedup_samples,
            usize::from(with_speedups),
        );
    }
    // Format 1 kept the samples in the entry itself.
    p.seconds_samples(format!("{place}.time_samples"), &e.time_samples, 0);
    p.samples(format!("{place}.speedup_samples"), &e.speedup_samples, 0);
    // Format 3: the code it was blessed with, the time that took, its counter reads.
    if let Some(code) = &e.code {
        crate::code::valid::check(p, &format!("{place}.code"), code);
    }
    if let Some(s) = e.trial_seconds {
        p.non_negative(format!("{place}.trial_seconds"), s);
    }
    for (i, read) in e.counters.iter().enumerate() {
        check_values(p, &format!("{place}.counters[{i}]"), read);
    }
}
