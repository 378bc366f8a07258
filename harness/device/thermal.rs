//! `Thermal`: the GPU's temperature through NVML, loaded at run time (`libnvidia-ml.so.1`).
//! Where NVML cannot be loaded, readings are simply absent.

use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::Nvml;

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

    /// The GPU's core temperature, °C.
    pub fn celsius(&self) -> Option<f64> {
        let device = self.nvml.device_by_uuid(self.uuid.as_str()).ok()?;
        device
            .temperature(TemperatureSensor::Gpu)
            .ok()
            .map(f64::from)
    }
}
