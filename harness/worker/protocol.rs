//! `Request` and `Response`: what the harness and its GPU worker process say to each other,
//! one JSON message per line. Worker lines carry a prefix so that anything else a kernel
//! prints (`printf` goes to the same stdout) is passed through, not parsed.

use crate::device::DeviceInfo;
use crate::failure::TrialFailure;
use crate::measure::{Footprint, Samples};
use crate::suite::Suite;
use serde::{Deserialize, Serialize};

/// Marks a protocol line on the worker's stdout.
pub const PREFIX: &str = "\u{1}kernelgate-worker ";

/// Harness → worker.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Open a device and describe it.
    Hello {
        /// Device ordinal, as the run names it.
        ordinal: i32,
        /// Whether the worker sees only that GPU (`CUDA_VISIBLE_DEVICES`, set by the client):
        /// it opens its only device, 0, and reports `ordinal`.
        #[serde(default)]
        alone: bool,
    },
    /// A suite, sent once per worker process before its first trial; trials refer to it by
    /// `at`. Not answered.
    Suite {
        /// Which suite of the run: this revision's, or the paired base's.
        at: SuiteRef,
        /// The whole suite, as loaded and validated by the harness.
        suite: Box<Suite>,
    },
    /// Check and time one trial.
    Trial(Box<TrialRequest>),
    /// Read the hardware counters of several trials (each a counters-only request), profiled
    /// together: CUPTI's start and stop cost ~24 ms per configuration (seen on an H100), so a
    /// batch shares them. Answered with [`Response::Counters`], one result per request, in
    /// order.
    Counters(Vec<TrialRequest>),
}

/// Which of a run's suites: this revision's (`Head`) or, in paired mode, the base revision's
/// (`Base`), by its index among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SuiteRef {
    /// The run's own suite at this index.
    Head(usize),
    /// The base revision's suite at this index.
    Base(usize),
}

/// What the worker does with a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Work {
    /// Check correctness, then time: a trial's first measurement.
    CheckAndTime,
    /// Time only: a re-measure or a confirmation of a trial already checked.
    Time,
    /// Read the hardware counters of the kernel and its counterpart instead of timing them
    /// (`worker::counters`), after which the worker times nothing.
    Counters,
}

/// One trial to run.
#[derive(Debug, Serialize, Deserialize)]
pub struct TrialRequest {
    /// What to do with it.
    pub work: Work,
    /// The suite's index among the run's own (`SuiteRef::Head`), as sent in `Request::Suite`.
    pub suite: usize,
    /// Case index.
    pub case: usize,
    /// Kernel index.
    pub kernel: usize,
    /// Seed of the first input set.
    pub seed: u64,
    /// The regime to time in (the baseline's), or `None` to choose by the launch floor.
    pub regime: Option<crate::measure::Regime>,
    /// Paired mode: the base revision's kernel to time interleaved with this one (as the
    /// "reference" of the timing loop), on the same inputs. Correctness is checked as without.
    pub base: Option<BaseKernel>,
    /// How many allocations (fresh case buffers and timing copies) the samples are split
    /// over: the unit a timing mode comes with (`docs/measurement.md`). 0 reads as 1.
    #[serde(default)]
    pub units: u32,
    /// Sampling effort: 1 normally; more when re-measuring an inconclusive trial (samples and
    /// time cap multiplied, precision target divided).
    pub effort: u32,
    /// Profile inside sampling (`KERNELGATE_PROFILE=1`): extra events around each sample's
    /// prepare and flush, and the host's waits, in the result's `spent` (`sampling.*`).
    #[serde(default)]
    pub profile: bool,
    /// Other kernels of the case (variants of `kernel`) timed in the same rounds against one
    /// set of reference samples, each checked and answered in [`TrialData::with`], in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<usize>,
}

impl TrialRequest {
    /// The suite of the trial's kernel.
    pub fn head(&self) -> SuiteRef {
        SuiteRef::Head(self.suite)
    }

    /// The kernels it times: its own, then `with`.
    pub fn kernels(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.kernel).chain(self.with.iter().copied())
    }

    /// The suites the trial needs: its own, and in paired mode its base's.
    pub fn needs(&self) -> impl Iterator<Item = SuiteRef> {
        std::iter::once(self.head()).chain(self.base.map(|b| b.at()))
    }
}

/// The base revision's kernel a paired trial is timed against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseKernel {
    /// The base suite's index among the base's suites (`SuiteRef::Base`), as sent in
    /// `Request::Suite`.
    pub suite: usize,
    /// Its case.
    pub case: usize,
    /// Its kernel.
    pub kernel: usize,
}

impl BaseKernel {
    /// The base suite.
    pub fn at(&self) -> SuiteRef {
        SuiteRef::Base(self.suite)
    }
}

/// Worker → harness.
#[derive(Debug, Serialize, Deserialize)]
pub enum Response {
    /// The device, or why it could not be opened.
    // stringly: it crosses the process boundary as JSON; the worker renders its typed
    // `DeviceError`, and the harness only shows the reason (`NoDevice::Absent`).
    Hello(Result<DeviceInfo, String>),
    /// A trial's result (boxed: the samples make it large).
    Trial(Box<TrialResult>),
    /// The results of a [`Request::Counters`], one per request, in order.
    Counters(Vec<TrialResult>),
}

/// What a trial that passed correctness measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialData {
    /// Timing samples.
    pub samples: Samples,
    /// Memory and resources of the kernel under test.
    pub footprint: Footprint,
    /// Paired mode: the base kernel's, on the same case.
    pub base_footprint: Option<Footprint>,
    /// The hardware counters, when the request asked for them.
    pub counters: Option<Box<crate::measure::counters::CounterReport>>,
    /// The request's `with` kernels' own, in order (their reference samples the same as
    /// these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<TrialData>,
}

/// A trial's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialResult {
    /// Measurements when the trial passed correctness and was timed, else why it failed (a
    /// fatal failure ends the worker after this answer).
    pub outcome: Result<TrialData, TrialFailure>,
    /// NVRTC compiles this trial needed, and how many came from the cache.
    pub compiled: usize,
    /// Modules loaded from the cache.
    pub cached: usize,
    /// Where the worker's time went since its last answer ([`crate::spent`]): this trial's
    /// setup, check and timing phases, with what it did ahead of the request (opening the
    /// device, loading the suite, the launch-floor probe).
    #[serde(default)]
    pub spent: crate::spent::Spent,
    /// The worker ends after this answer (it failed inside): the harness starts a fresh one.
    #[serde(default)]
    pub worker_stops: bool,
    /// Not run: another trial of the same request faulted the GPU first (a sticky error ends
    /// the worker's context); the harness sends it again to a fresh worker.
    #[serde(default)]
    pub again: bool,
}

/// Encodes a request as one line; a value JSON cannot hold (a path that is not UTF-8) is an
/// error, not a panic.
pub fn encode_request(request: &Request) -> Result<String, serde_json::Error> {
    Ok(format!("{}\n", serde_json::to_string(request)?))
}

/// Encodes a response as one prefixed line. A response JSON cannot hold is answered with a
/// harness failure that says why, so the harness always gets an answer it can read.
pub fn encode_response(response: &Response) -> String {
    let json = serde_json::to_string(response).or_else(|e| {
        let why = format!("the GPU worker could not encode its answer: {e}");
        let failed = || TrialResult::failed(TrialFailure::Harness(why.clone()));
        serde_json::to_string(&match response {
            Response::Hello(_) => Response::Hello(Err(why.clone())),
            Response::Trial(_) => Response::Trial(Box::new(failed())),
            Response::Counters(results) => {
                Response::Counters(results.iter().map(|_| failed()).collect())
            }
        })
    });
    // Both fallbacks hold only strings, which always encode.
    format!("{PREFIX}{}\n", json.unwrap_or_default())
}

/// Writes `response` to stdout, the worker's side of the pipe: one write per message, so
/// kernel printf output cannot split it.
pub fn reply(response: &Response) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(encode_response(response).as_bytes());
    let _ = out.flush();
}

impl TrialResult {
    /// A trial's `outcome`, with nothing compiled, nothing spent and the worker going on.
    pub fn of(outcome: Result<TrialData, TrialFailure>) -> TrialResult {
        TrialResult {
            outcome,
            compiled: 0,
            cached: 0,
            spent: Default::default(),
            worker_stops: false,
            again: false,
        }
    }

    /// A trial that failed before anything was compiled or measured.
    pub fn failed(failure: TrialFailure) -> TrialResult {
        TrialResult::of(Err(failure))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let line = encode_request(&Request::Hello {
            ordinal: 3,
            alone: true,
        })
        .unwrap();
        assert!(line.ends_with('\n') && !line.trim_end().contains('\n'));
        match serde_json::from_str(line.trim_end()).unwrap() {
            Request::Hello { ordinal, alone } => assert!(ordinal == 3 && alone),
            other => panic!("{other:?}"),
        }
        let req = TrialRequest {
            work: Work::Counters,
            suite: 1,
            case: 2,
            kernel: 3,
            seed: 4,
            regime: None,
            base: None,
            units: 2,
            effort: 1,
            profile: false,
            with: Vec::new(),
        };
        let line = encode_request(&Request::Counters(vec![req])).unwrap();
        match serde_json::from_str(line.trim_end()).unwrap() {
            Request::Counters(reqs) => {
                assert_eq!(reqs.len(), 1);
                assert!(reqs[0].work == Work::Counters && reqs[0].kernel == 3);
            }
            other => panic!("{other:?}"),
        }
        let failed = TrialResult::failed(TrialFailure::Harness("x".into()));
        let line = encode_response(&Response::Counters(vec![failed.clone(), failed]));
        let body = line.strip_prefix(PREFIX).unwrap();
        match serde_json::from_str(body.trim_end()).unwrap() {
            Response::Counters(results) => assert_eq!(results.len(), 2),
            other => panic!("{other:?}"),
        }
        let line = encode_response(&Response::Hello(Err("no device".into())));
        let body = line.strip_prefix(PREFIX).unwrap();
        match serde_json::from_str(body.trim_end()).unwrap() {
            Response::Hello(Err(m)) => assert_eq!(m, "no device"),
            other => panic!("{other:?}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_an_error_not_a_panic() {
        use std::os::unix::ffi::OsStrExt;
        let mut suite = crate::suite::load_dir(std::path::Path::new("suites"))
            .unwrap()
            .remove(0);
        suite.path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"suites/\xff.toml"));
        let e = encode_request(&Request::Suite {
            at: SuiteRef::Head(0),
            suite: Box::new(suite),
        })
        .unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }
}
