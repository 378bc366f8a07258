//! `run_op`, `run_checked`: a kernel's launches queued on a case's buffers (with its scratch
//! buffers), and one checked run — inputs uploaded, the kernel run, inputs checked unchanged —
//! whose outputs the check compares (on the device, or downloaded by `download_outputs`).

use super::failure::Failure;
use super::input_set::InputSet;
use super::kernels::Kernels;
use crate::device::{DeviceBuffer, DeviceError, Function, Gpu, KernelArg, LaunchDims};
use crate::dtype::HostData;
use crate::suite::{ArgValue, Launch, Role, Suite};

/// Queues one launch of `f` with the case's buffers and the kernel's scratch buffers.
fn launch(
    gpu: &Gpu,
    f: &Function,
    launch: &Launch,
    bufs: &[DeviceBuffer],
    scratch: &[DeviceBuffer],
) -> Result<(), DeviceError> {
    let args: Vec<KernelArg> = launch
        .args
        .iter()
        .map(|a| match a {
            ArgValue::Buffer(i) => KernelArg::Buffer(&bufs[*i]),
            ArgValue::Scratch(i) => KernelArg::Buffer(&scratch[*i]),
            ArgValue::Scalar(bytes) => KernelArg::Scalar(bytes),
        })
        .collect();
    let dims = LaunchDims {
        grid: launch.grid,
        block: launch.block,
        shared: launch.shared,
    };
    gpu.launch(f, dims, &args)
}

/// Queues one run of kernel `k` in `case`: its scratch buffers allocated on the stream, its
/// launches in order (`funcs` holds one function per launch), then the scratch freed on the
/// stream.
pub fn run_op(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Function],
    bufs: &[DeviceBuffer],
) -> Result<(), DeviceError> {
    let c = &suite.cases[case];
    let scratch: Vec<DeviceBuffer> = suite.kernels[k]
        .scratch
        .iter()
        .zip(&c.scratch_lens[k])
        .map(|(s, len)| gpu.alloc(len * s.dtype.size()))
        .collect::<Result<_, _>>()?;
    for (f, l) in funcs.iter().zip(&c.launches[k]) {
        launch(gpu, f, l, bufs, &scratch)?;
    }
    Ok(())
}

/// Runs kernel `k` once on `inputs` and checks its inputs unchanged; its outputs stay on the
/// device.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_checked(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    inputs: &InputSet,
    kernels: &Kernels,
) -> Result<(), Failure> {
    inputs.upload(gpu, kernels, suite, bufs)?;
    run_op(gpu, suite, case, k, &funcs[k], bufs)?;
    gpu.synchronize()?;
    if let Some(i) = inputs.changed(gpu, kernels, suite, bufs)? {
        let b = &suite.buffers[i];
        let now = HostData {
            dtype: b.dtype,
            bytes: gpu.download(&bufs[i])?,
        };
        let before = inputs.host(suite)?[i]
            .as_ref()
            .expect("inputs are initialized");
        if now.bytes == before.bytes {
            return Err(Failure::Trial(crate::failure::TrialFailure::Harness(
                format!(
                    "input `{}` compared changed on the device and unchanged on the host",
                    b.name
                ),
            )));
        }
        let differs = |j: &usize| now.bytes_of(*j) != before.bytes_of(*j);
        let first = (0..now.len()).find(differs).unwrap_or(0);
        let changed = (0..now.len()).filter(differs).count();
        return Err(Failure::Trial(crate::failure::TrialFailure::InputWritten(format!(
            "kernel `{}` changed input `{}`: {changed} of {} elements, first at index {first} ({} became {}); declare it `role = \"inout\"` if the kernel writes it",
            suite.kernels[k].name,
            b.name,
            now.len(),
            before.show(first),
            now.show(first)
        ))));
    }
    Ok(())
}

/// What `bufs` hold, for every buffer but the inputs.
pub(super) fn download_outputs(
    gpu: &Gpu,
    suite: &Suite,
    bufs: &[DeviceBuffer],
) -> Result<Vec<Option<HostData>>, Failure> {
    let download = |(i, b): (usize, &crate::suite::Buffer)| {
        let bytes = (b.role != Role::Input).then(|| gpu.download(&bufs[i]));
        Ok(bytes.transpose()?.map(|bytes| HostData {
            dtype: b.dtype,
            bytes,
        }))
    };
    suite.buffers.iter().enumerate().map(download).collect()
}
