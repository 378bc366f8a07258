//! `verify`: runs a kernel and the reference on `trials` sets of fresh seeded inputs and
//! compares them output by output. Outputs are poisoned (every byte 0xFF) before every run,
//! so an element nothing wrote is NaN (floats) or all ones (integers) and fails; inputs are
//! read back after every run and must be unchanged.

use super::compare::compare;
use super::input_set::InputSet;
use super::kernels::Kernels;
use super::reference::References;
use crate::device::{DeviceBuffer, DeviceError, Function, Gpu, KernelArg, LaunchDims};
use crate::dtype::HostData;
use crate::npy;
use crate::suite::{ArgValue, Launch, Role, Suite};

/// Why a trial failed.
#[derive(Debug)]
pub enum Failure {
    /// The kernel computed something wrong.
    Wrong(String),
    /// Any other failure, already typed where it happened.
    Trial(crate::failure::TrialFailure),
    /// A CUDA call failed.
    Device(DeviceError),
}

impl Failure {
    /// The typed failure the worker reports: driver errors by their code.
    pub fn into_trial(self) -> crate::failure::TrialFailure {
        use crate::device::ErrorKind;
        use crate::failure::TrialFailure as T;
        match self {
            Failure::Wrong(m) => T::WrongOutput(m),
            Failure::Trial(t) => t,
            Failure::Device(e) => match e.kind() {
                ErrorKind::OutOfMemory => T::OutOfMemory(e.to_string()),
                ErrorKind::ResourceLimit => T::ResourceLimit(e.to_string()),
                ErrorKind::Other => T::Fault(e.fault()),
            },
        }
    }
}

impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        Failure::Device(e)
    }
}

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

/// Runs kernel `k` once on `inputs` (written by the device's generator where it can, see
/// `InputSet`), checks its inputs unchanged, and returns what it left in every output buffer.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_once(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    inputs: &InputSet,
    kernels: Option<&Kernels>,
) -> Result<Vec<Option<HostData>>, Failure> {
    run_checked(gpu, suite, case, k, funcs, bufs, inputs, kernels)?;
    download_outputs(gpu, suite, bufs)
}

/// Runs kernel `k` once on `inputs` and checks its inputs unchanged; its outputs stay on the
/// device.
#[allow(clippy::too_many_arguments)]
fn run_checked(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    inputs: &InputSet,
    kernels: Option<&Kernels>,
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
fn download_outputs(
    gpu: &Gpu,
    suite: &Suite,
    bufs: &[DeviceBuffer],
) -> Result<Vec<Option<HostData>>, Failure> {
    let mut outputs = Vec::new();
    for (i, b) in suite.buffers.iter().enumerate() {
        if b.role == Role::Input {
            outputs.push(None);
            continue;
        }
        let bytes = gpu.download(&bufs[i])?;
        outputs.push(Some(HostData {
            dtype: b.dtype,
            bytes,
        }));
    }
    Ok(outputs)
}

/// Whether every output in `bufs` passes against the reference's outputs `want`, compared on
/// the device (with the same rules as `compare`).
fn same_on_device(
    gpu: &Gpu,
    kernels: &Kernels,
    suite: &Suite,
    bufs: &[DeviceBuffer],
    want: &[Option<DeviceBuffer>],
) -> Result<bool, Failure> {
    for (i, b) in suite.buffers.iter().enumerate() {
        let Some(w) = &want[i] else { continue };
        let n = w.bytes / b.dtype.size();
        let tol = suite.check.tolerances[&i];
        if kernels.compare(gpu, (&bufs[i], w), b.dtype, n, tol)?.count > 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first sets of inputs of a trial, which the caller has already generated (the input
/// sets timing rotates over, so that they are generated once).
pub struct FirstInputs<'a> {
    /// The first set's seed; set `t` uses `seed + t`.
    pub seed: u64,
    /// The first sets; later ones are made here.
    pub sets: &'a [InputSet],
    /// The check kernels (device generation and comparison), where loaded.
    pub kernels: Option<&'a Kernels>,
}

/// Checks kernel `k` of `case` against the suite's reference (and, for the reference itself,
/// against golden files and for unwritten elements), on `first` and then freshly generated
/// sets. The reference's outputs come from `references` (run once per case and seed in a
/// worker). Leaves the buffers holding the last input set.
#[allow(clippy::too_many_arguments)]
pub fn verify(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    first: FirstInputs,
    references: &mut References,
) -> Result<(), Failure> {
    let r = suite.reference;
    let label = &suite.cases[case].label;
    let in_case = if label.is_empty() {
        String::new()
    } else {
        format!(" for {label}")
    };
    let trials = suite.check.trials;
    for t in 0..trials {
        let seed = first.seed.wrapping_add(t as u64);
        let later;
        let inputs = if let Some(set) = first.sets.get(t as usize) {
            set
        } else {
            later = InputSet::new(case, seed);
            &later
        };
        let kernels = first.kernels;
        let expected = references.outputs(gpu, suite, (inputs, kernels), funcs, bufs)?;
        let where_ = format!("{in_case} with inputs from seed {seed} (set {} of {trials}; rerun with KERNELGATE_SEED={seed})", t + 1);
        if k == r {
            for (i, out) in expected.iter().enumerate() {
                let Some(out) = out else { continue };
                let tol = suite.check.tolerances[&i];
                let name = &suite.buffers[i].name;
                if let Err(m) = compare(out, out, tol) {
                    return Err(Failure::Wrong(format!(
                        "reference kernel `{}` left {} of {} elements of `{name}` NaN{where_}, first bad at index {} (outputs are poisoned with 0xFF before each run, so an element nothing wrote reads NaN; set `allow_nan` if NaN is a real result)",
                        suite.kernels[r].name, m.count, m.total, m.worst
                    )));
                }
                if let (0, Some(path)) = (t, suite.check.golden.get(&i)) {
                    let golden = npy::read(path)
                        .map_err(|e| Failure::Wrong(format!("golden `{}`: {e}", path.display())))?;
                    if golden.data.len() != out.len() {
                        return Err(Failure::Wrong(format!(
                            "golden `{}` changed since the suite was loaded",
                            path.display()
                        )));
                    }
                    if let Err(m) = compare(out, &golden.data, tol) {
                        return Err(Failure::Wrong(format!(
                            "output `{name}` of reference kernel `{}` differs from golden `{}`{in_case}: {m}",
                            suite.kernels[r].name,
                            path.display()
                        )));
                    }
                }
            }
            continue;
        }
        // Compared on the device where the reference's outputs are kept there: a passing run
        // transfers nothing.
        let on_device = match (kernels, references.on_device(suite, inputs)) {
            (Some(kernels), Some(want)) => {
                run_checked(gpu, suite, case, k, funcs, bufs, inputs, Some(kernels))?;
                if same_on_device(gpu, kernels, suite, bufs, want)? {
                    continue;
                }
                true
            }
            _ => {
                run_checked(gpu, suite, case, k, funcs, bufs, inputs, kernels)?;
                false
            }
        };
        // On the host: the message (and the dump) of a difference.
        let actual = download_outputs(gpu, suite, bufs)?;
        for (i, (a, e)) in actual.iter().zip(expected.iter()).enumerate() {
            let (Some(a), Some(e)) = (a, e) else { continue };
            if let Err(m) = compare(a, e, suite.check.tolerances[&i]) {
                let dumped = super::dump::note(
                    suite,
                    &super::dump::Failing {
                        kernel: k,
                        case,
                        seed,
                        inputs: inputs.host(suite)?,
                        expected: &expected,
                        actual: &actual,
                    },
                );
                return Err(Failure::Wrong(format!(
                    "output `{}` of `{}` differs from the reference `{}`{where_}: {m}{dumped}",
                    suite.buffers[i].name, suite.kernels[k].name, suite.kernels[r].name
                )));
            }
        }
        if on_device {
            return Err(Failure::Trial(crate::failure::TrialFailure::Harness(format!(
                "the device comparison found a difference in the outputs of `{}`{where_} that the host comparison does not see",
                suite.kernels[k].name
            ))));
        }
    }
    Ok(())
}
