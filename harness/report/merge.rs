//! `merge`: joins the results files of shards (`KERNELGATE_SHARD=k/n` on n runners) into one,
//! for reports and `kernelgate compare`.

use super::results::{Results, ResultsError};

/// Merges `inputs`: one device fingerprint, no trial twice, trials in input order.
pub fn merge(inputs: &[Results]) -> Result<Results, ResultsError> {
    let first = inputs.first().ok_or(ResultsError::NothingToMerge)?;
    let mut out = first.clone();
    out.trials.clear();
    for r in inputs {
        if let (Some(a), Some(b)) = (&out.device, &r.device) {
            if a != b {
                return Err(ResultsError::OtherGpus(a.describe(), b.describe()));
            }
        }
        if out.device.is_none() {
            out.device = r.device.clone();
            out.device_info = r.device_info.clone();
        }
        for t in &r.trials {
            if out.trials.iter().any(|x| x.name == t.name) {
                return Err(ResultsError::TrialTwice(t.name.clone()));
            }
            out.trials.push(t.clone());
        }
    }
    Ok(out)
}
