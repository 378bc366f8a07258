//! `Thermal`: the GPU's temperature through NVML, loaded at run time (`libnvidia-ml.so.1`).
//! Where NVML cannot be loaded, readings are simply absent.

use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::Nvml;

/// A process NVML saw using the GPU's SMs: its pid, its name when known, its SM utilization (%).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Active {
    /// Process id, as NVML reports it (the host's, inside a container).
    pub pid: u32,
    /// Its name, where NVML or `/proc` says.
    pub name: Option<String>,
    /// SM utilization in its samples, percent.
    pub sm_util: u32,
}

/// NVML, and the UUID of the GPU to read (NVML and CUDA may number devices differently).
pub struct Thermal {
    nvml: Nvml,
    uuid: String,
}

impl Thermal {
    /// NVML for the GPU with CUDA UUID `uuid` (`GPU-…`), or `None` where NVML is not there.
    pub fn open(uuid: &str) -> Option<Thermal> {
        let nvml = Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
            .init()
            .or_else(|_| Nvml::init())
            .ok()?;
        nvml.device_by_uuid(uuid).ok()?;
        Some(Thermal {
            nvml,
            uuid: uuid.to_string(),
        })
    }

    /// The processes that used this GPU's SMs since `since_us` (CPU time, microseconds since
    /// the Unix epoch), with their names where NVML or `/proc` says — except process `own`
    /// (the caller), never named; `None` where NVML does not report per-process utilization
    /// (some GPUs, some containers).
    pub fn active_processes(&self, since_us: u64, own: u32) -> Option<Vec<Active>> {
        let device = self.nvml.device_by_uuid(self.uuid.as_str()).ok()?;
        let samples = match device.process_utilization_stats(since_us) {
            Ok(s) => s,
            // No sample since then: nobody, this worker included, was seen.
            Err(nvml_wrapper::error::NvmlError::NotFound) => Vec::new(),
            Err(_) => return None,
        };
        let by_pid = crate::order::grouped(samples.iter().map(|s| (s.pid, s.sm_util)));
        let active = by_pid.into_iter().map(|(pid, utils)| Active {
            pid,
            name: (pid != own).then(|| self.name_of(pid)).flatten(),
            sm_util: utils.into_iter().max().unwrap_or_default(),
        });
        Some(active.collect())
    }

    /// Process `pid`'s name, where NVML or `/proc` says.
    fn name_of(&self, pid: u32) -> Option<String> {
        self.nvml
            .sys_process_name(pid, 64)
            .ok()
            .or_else(|| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok())
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
    }

    /// The GPU's core temperature, °C.
    pub fn celsius(&self) -> Option<f64> {
        let device = self.nvml.device_by_uuid(self.uuid.as_str()).ok()?;
        device
            .temperature(TemperatureSensor::Gpu)
            .ok()
            .map(f64::from)
    }
}
