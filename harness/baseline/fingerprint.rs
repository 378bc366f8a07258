//! `Fingerprint`: what identifies a device for comparing timings — two devices with the same
//! fingerprint share baselines — and its folder name.

use crate::device::DeviceInfo;
use serde::{Deserialize, Serialize};

/// What identifies a device for comparing timings: two devices with the same fingerprint
/// share baselines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// GPU name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability, e.g. `9.0`.
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Device memory, GiB (rounded).
    pub memory_gib: u64,
    /// Kernel driver release, e.g. `580.159.04`.
    pub driver: String,
    /// CUDA version the driver supports, e.g. `13.0`.
    pub cuda: String,
}

impl Fingerprint {
    /// The fingerprint of a device.
    pub fn of(info: &DeviceInfo) -> Fingerprint {
        Fingerprint {
            name: info.name.clone(),
            compute_capability: format!(
                "{}.{}",
                info.compute_capability.0, info.compute_capability.1
            ),
            sm_count: info.sm_count,
            memory_gib: ((info.total_memory as f64) / (1u64 << 30) as f64).round() as u64,
            driver: info.driver_release.clone(),
            cuda: crate::sass::driver_version(info.driver_version),
        }
    }

    /// A readable folder name: `nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0`.
    pub fn slug(&self) -> String {
        let mut name = String::new();
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() {
                name.push(c.to_ascii_lowercase());
            } else if !name.ends_with('-') {
                name.push('-');
            }
        }
        let clean = |s: &str| s.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "");
        format!(
            "{}-sm{}-{}sm-{}gib-drv{}-cuda{}",
            name.trim_matches('-'),
            clean(&self.compute_capability).replace('.', ""),
            self.sm_count,
            self.memory_gib,
            clean(&self.driver),
            clean(&self.cuda)
        )
    }

    /// One line for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} (sm_{}, {} SMs, {} GiB, driver {}, CUDA {})",
            self.name,
            self.compute_capability.replace('.', ""),
            self.sm_count,
            self.memory_gib,
            self.driver,
            self.cuda
        )
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// An H200's fingerprint.
    pub(crate) fn device() -> Fingerprint {
        Fingerprint {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            memory_gib: 140,
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
        }
    }

    #[test]
    fn slug_is_readable() {
        assert_eq!(
            device().slug(),
            "nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0"
        );
        let odd = Fingerprint {
            name: "NVIDIA H100 80GB HBM3".into(),
            driver: "../../x".into(),
            ..device()
        };
        assert_eq!(
            odd.slug(),
            "nvidia-h100-80gb-hbm3-sm90-132sm-140gib-drv....x-cuda13.0"
        );
        assert!(!odd.slug().contains('/'));
    }
}
