//! `DEVICE_SOURCE`: the CUDA of the vacuous-tolerance test on the device
//! (`check::vacuous_device`), compiled with the other check kernels (`check::kernels::source`).

/// The kernels' CUDA source, compiled after `check::kernels::SOURCE` (it uses `kg_value` and
/// `kg_excess`). A block's partials are reduced in a fixed order over a grid that depends only
/// on the element count, so a sum is the same on every run.
pub const DEVICE_SOURCE: &str = include_str!("vacuous_kernels.cu");
