//! `merge`: joins the results files of shards (`KERNELGATE_SHARD=k/n` on n runners) into one,
//! for reports and `kernelgate compare`.

use super::results::Results;

/// Merges `inputs`: one device fingerprint, no trial twice, trials in input order.
pub fn merge(inputs: &[Results]) -> Result<Results, String> {
    let first = inputs.first().ok_or("nothing to merge")?;
    let mut out = first.clone();
    out.trials.clear();
    for r in inputs {
        if let (Some(a), Some(b)) = (&out.device, &r.device) {
            if a != b {
                return Err(format!(
                    "the shards ran on different kinds of GPU ({} and {}): merge results of one kind",
                    a.describe(),
                    b.describe()
                ));
            }
        }
        if out.device.is_none() {
            out.device = r.device.clone();
            out.device_info = r.device_info.clone();
        }
        for t in &r.trials {
            if out.trials.iter().any(|x| x.name == t.name) {
                return Err(format!(
                    "trial `{}` is in two of the files (were two shards given the same k/n?)",
                    t.name
                ));
            }
            out.trials.push(t.clone());
        }
    }
    Ok(out)
}
