//! The scripted worker: a worker process that opens no GPU and answers kernelgate's real
//! protocol from a script — samples of a given median and spread, or a fault: a crash (the
//! process aborts), a hang (it never answers), a sticky driver fault (it answers, then exits as
//! a poisoned worker does). `tests/scripted.rs` is this program: `kernelgate run` starts it as
//! its GPU worker (`KERNELGATE_WORKER_PROGRAM`), with the script named by `SCRIPTED_WORKER`, so
//! the pool, the client, the multi-GPU scheduler (`KERNELGATE_DEVICE=0,1`), re-measures,
//! fresh-worker confirmations, signals and shards are tested end to end without a GPU.
//!
//! ```toml
//! gpu = "Scripted H200"            # the GPU's name it reports (a pool of models in one test)
//!
//! [default]                       # every kernel trial the script does not name
//! time_us = 10.0                  # the kernel's median, µs
//! against_us = 20.0               # what it is timed against (reference or base), µs
//! spread = 0.002                  # each sample within ±spread of the median
//!
//! [[trial]]
//! name = "saxpy::vec4::n=1048576" # a trial's name
//! answers = [{ time_us = 11.0 }, { fault = "crash" }]   # per request; the last repeats
//! ```
//!
//! A trial's requests are counted across worker processes in `FILE.calls/` (one file per
//! trial), so a restarted worker goes on with the next answer. Counters requests are answered
//! as unavailable.

use kernelgate::device::DeviceInfo;
use kernelgate::failure::{DriverFault, TrialFailure};
use kernelgate::measure::{Footprint, Regime, Resources, Samples};
use kernelgate::suite::Suite;
use kernelgate::worker::protocol::{
    Request, Response, SuiteRef, TrialData, TrialRequest, TrialResult,
};
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The variable naming the script.
pub const SCRIPT_ENV: &str = "SCRIPTED_WORKER";

/// Rounds of samples per allocation unit at effort 1.
const ROUNDS: usize = 16;

/// The script, as its file holds it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    /// The GPU's name the worker reports, `Scripted GPU (no device)` without it.
    gpu: Option<String>,
    /// The answer for every trial the script does not name.
    #[serde(default)]
    default: Answer,
    /// Named trials and their answers, one per request.
    #[serde(default)]
    trial: Vec<Trial>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Trial {
    name: String,
    answers: Vec<Answer>,
}

/// One answer: samples, or a fault.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    time_us: Option<f64>,
    against_us: Option<f64>,
    spread: Option<f64>,
    fault: Option<Fault>,
}

/// What a scripted worker does instead of answering with samples.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Fault {
    /// The process aborts (SIGABRT), as a worker killed by a kernel's crash.
    Crash,
    /// The process never answers: the trial's time-out.
    Hang,
    /// An illegal address: the trial fails with a sticky driver fault and the worker exits.
    IllegalAddress,
    /// A wrong output.
    Wrong,
}

/// Why a script cannot be used: each names the file.
#[derive(Debug, Clone, thiserror::Error)]
enum ScriptError {
    #[error("{SCRIPT_ENV}: cannot read {}: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{SCRIPT_ENV}: {}: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
}

/// Reads the script at `path`.
fn read(path: &Path) -> Result<Script, ScriptError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScriptError::Read {
        path: path.into(),
        reason: e.to_string(),
    })?;
    toml::from_str(&text).map_err(|e| ScriptError::Invalid {
        path: path.into(),
        reason: e.to_string(),
    })
}

/// Serves requests on stdin as the script says; returns the process exit code.
pub fn serve(path: PathBuf) -> i32 {
    use kernelgate::worker::protocol::reply;
    use std::io::BufRead;
    let script = read(&path);
    let mut suites: HashMap<SuiteRef, Suite> = HashMap::new();
    let mut gpu = String::from("gpu-none");
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return 0 };
        let Ok(request) = serde_json::from_str::<Request>(&line) else {
            eprintln!("kernelgate worker: unreadable request");
            return kernelgate::exit::WORKER_FAILED_INSIDE.into();
        };
        match (request, &script) {
            (Request::Hello { ordinal, .. }, Ok(s)) => {
                gpu = format!("gpu-{ordinal}");
                let name = s.gpu.as_deref().unwrap_or("Scripted GPU (no device)");
                reply(&Response::Hello(Ok(device(ordinal, name))));
            }
            (Request::Hello { .. }, Err(e)) => reply(&Response::Hello(Err(e.to_string()))),
            (Request::Suite { at, suite }, _) => {
                suites.insert(at, *suite);
            }
            (Request::Trial(req), Ok(script)) => {
                let Some(suite) = suites.get(&SuiteRef::Head(req.suite)) else {
                    return kernelgate::exit::WORKER_FAILED_INSIDE.into();
                };
                let against = req.base.is_some() || req.kernel != suite.reference;
                count(&path, &gpu);
                // A group (`with`): each kernel answers as its trial's script says, all
                // against the first's reference samples; the first fault fails the group.
                let mut results = req.kernels().map(|k| {
                    let name = suite.trial_name(req.case, k);
                    let (call, answer) = script.next(&path, &name);
                    answered(&name, call, &req, &answer, against)
                });
                let mut result = results.next().expect("the request's own kernel");
                for other in results {
                    match (&mut result.outcome, other.outcome) {
                        (Ok(lead), Ok(mut data)) => {
                            data.samples.reference = lead.samples.reference.clone();
                            lead.with.push(data);
                        }
                        (Ok(_), Err(e)) => result.outcome = Err(e),
                        (Err(_), _) => {}
                    }
                }
                let fatal = result.outcome.as_ref().is_err_and(TrialFailure::is_fatal);
                reply(&Response::Trial(Box::new(result)));
                if fatal {
                    return kernelgate::exit::WORKER_POISONED.into();
                }
            }
            (Request::Counters(reqs), Ok(_)) => reply(&Response::Counters(
                reqs.iter()
                    .map(|_| {
                        TrialResult::failed(TrialFailure::Unavailable(
                            "the scripted worker reads no counters".into(),
                        ))
                    })
                    .collect(),
            )),
            (_, Err(_)) => return kernelgate::exit::WORKER_FAILED_INSIDE.into(),
        }
    }
    0
}

/// Counts one more call of `what` in the calls folder of the script at `path` (a trial's name,
/// its characters other than ASCII letters and digits made `_`; `gpu-N` for GPU `N`'s trials):
/// how many came before.
fn count(path: &Path, what: &str) -> usize {
    let calls = PathBuf::from(format!("{}.calls", path.display()));
    let file = calls.join(what);
    let n: usize = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let _ = std::fs::create_dir_all(&calls);
    let _ = std::fs::write(&file, (n + 1).to_string());
    n
}

impl Script {
    /// The next request for trial `name` (counted from 0 in the script's calls folder) and its
    /// answer.
    fn next(&self, path: &Path, name: &str) -> (usize, Answer) {
        let file: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let n = count(path, &file);
        let answer = match self.trial.iter().find(|t| t.name == name) {
            Some(t) => t.answers[n.min(t.answers.len().saturating_sub(1))].clone(),
            None => self.default.clone(),
        };
        (n, answer.or(&self.default))
    }
}

impl Answer {
    /// This answer, with what it leaves unsaid taken from `default`.
    fn or(self, default: &Answer) -> Answer {
        Answer {
            time_us: self.time_us.or(default.time_us),
            against_us: self.against_us.or(default.against_us),
            spread: self.spread.or(default.spread),
            fault: self.fault,
        }
    }
}

/// The result of request `req`, the `call`th for trial `name`, as `answer` says (its samples
/// the same in every run); `against`: it is timed against a reference or base. A crash or
/// hang does not return.
fn answered(
    name: &str,
    call: usize,
    req: &TrialRequest,
    answer: &Answer,
    against: bool,
) -> TrialResult {
    match answer.fault {
        Some(Fault::Crash) => std::process::abort(),
        Some(Fault::Hang) => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        Some(Fault::IllegalAddress) => {
            return TrialResult::failed(TrialFailure::Fault(DriverFault {
                call: "cuStreamSynchronize".into(),
                code: 700,
                name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
                description: "an illegal memory access was encountered (scripted)".into(),
                sticky: true,
            }))
        }
        Some(Fault::Wrong) => {
            return TrialResult::failed(TrialFailure::WrongOutput(format!(
                "{name}: output `y` differs from the reference (scripted)"
            )))
        }
        None => {}
    }
    let time = answer.time_us.unwrap_or(10.0) * 1e-6;
    let spread = answer.spread.unwrap_or(0.002);
    let seed = kernelgate::config::fnv1a(name) ^ call as u64;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut draw = |median: f64| median * (1.0 + spread * rng.random_range(-1.0..=1.0));
    let mut samples = Samples::none();
    samples.regime = req.regime.unwrap_or(Regime::Cold);
    samples.launch_floor = 5e-6;
    for _ in 0..req.units.max(1) {
        for _ in 0..ROUNDS * req.effort.max(1) as usize {
            samples.kernel.push(draw(time));
            if against {
                samples
                    .reference
                    .push(draw(answer.against_us.unwrap_or(20.0) * 1e-6));
            }
            samples.clocks.mhz.push(1980.0);
            samples.clocks.kept_rounds += 1;
        }
        samples.close_unit();
    }
    samples.wall_seconds = samples.kernel.iter().chain(&samples.reference).sum();
    let footprint = Footprint {
        launches: vec![Resources {
            entry: "scripted".into(),
            registers: 32,
            static_shared: 0,
            dynamic_shared: 0,
            local_bytes: 0,
            max_threads: 1024,
            block_threads: 256,
            blocks_per_sm: 8,
        }],
        ..Footprint::default()
    };
    TrialResult::of(Ok(TrialData {
        samples,
        base_footprint: req.base.map(|_| footprint.clone()),
        footprint,
        counters: None,
        with: Vec::new(),
    }))
}

/// The device a scripted worker reports: an H100 SXM's figures, its UUID naming the slot.
fn device(ordinal: i32, name: &str) -> DeviceInfo {
    DeviceInfo {
        ordinal,
        name: name.into(),
        compute_capability: (9, 0),
        sm_count: 132,
        sm_clock_khz: 1_980_000,
        memory_clock_khz: 2_619_000,
        bus_width_bits: 5120,
        l2_bytes: 52_428_800,
        max_threads_per_sm: 2048,
        total_memory: 85_000_000_000,
        driver_version: 13000,
        driver_release: "scripted".into(),
        uuid: Some(format!("GPU-scripted-{ordinal}")),
    }
}
