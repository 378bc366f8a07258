//! `Worker`: the harness's handle on its GPU worker process. It starts the worker on first
//! use, sends one request at a time, and restarts it after a fault, a crash or a time-out, so
//! one bad kernel fails its own trials and nothing else.

use super::protocol::{
    encode_request, Request, Response, SuiteRef, TrialRequest, TrialResult, PREFIX,
};
use crate::device::DeviceInfo;
use crate::failure::TrialFailure;
use crate::suite::Suite;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Environment variable that turns the perf binary into a worker.
pub const WORKER_ENV: &str = "KERNELGATE_WORKER";

/// The program to start as the GPU worker instead of this one (with [`WORKER_ENV`] set, the
/// protocol on its standard input and output): the tests' scripted worker, which needs no GPU.
pub const PROGRAM_ENV: &str = "KERNELGATE_WORKER_PROGRAM";

/// A live worker process.
struct Live {
    child: Child,
    stdin: ChildStdin,
    /// Protocol lines, each with the moment it arrived.
    lines: Receiver<(Instant, String)>,
}

/// How long a new worker may take to open its device.
const HELLO_TIMEOUT: Duration = Duration::from_secs(120);

/// Why there is no device to run on.
#[derive(Debug, Clone)]
pub enum NoDevice {
    /// The worker ran and the driver said there is no usable device: trials are ignored.
    Absent(String),
    /// The worker itself failed (crashed, hung, could not start): trials fail.
    Broken(String),
}

/// The harness's side of the worker.
#[derive(Default)]
pub struct Worker {
    ordinal: i32,
    live: Option<Live>,
    // stringly: the worker's `Hello` answer as it came over the pipe (see `Response::Hello`).
    device: Option<Result<DeviceInfo, String>>,
    /// The suites the live worker has been sent; empty again after a restart.
    sent: HashSet<SuiteRef>,
    /// How many times a worker was started.
    pub starts: usize,
    /// Whether the live worker has read hardware counters: it must time nothing more (a
    /// process that has profiled times some kernels slower), so a timed request restarts it.
    pub profiled: bool,
    /// When the live worker was started, while its answer to `Hello` is still to be read.
    hello_due: Option<Instant>,
    /// Seconds from starting each worker until it had opened its device, summed.
    pub start_seconds: f64,
    /// Of those, how long callers waited for it.
    pub waited_seconds: f64,
}

impl Worker {
    /// A worker for device `ordinal`, started on first use.
    pub fn new(ordinal: i32) -> Worker {
        // Not `..Worker::default()`: a type with `Drop` cannot be taken apart.
        let mut worker = Worker::default();
        worker.ordinal = ordinal;
        worker
    }

    /// Starts the worker process and asks it to open its device, without waiting for the
    /// answer: the run goes on reading and compiling suites meanwhile. A worker that cannot
    /// start is met again, and reported, by the first call that needs the device.
    pub fn start_early(&mut self) {
        if self.live.is_none() && self.device.is_none() {
            let _ = self.spawn();
        }
    }

    /// The GPU ordinal this worker runs on.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// The device, opening it (starting a worker) if needed. A device the driver refused is
    /// not tried again; a worker that broke is.
    pub fn device(&mut self) -> Result<DeviceInfo, NoDevice> {
        if self.device.is_none() {
            if let (Err(e), None) = (self.start(), &self.device) {
                return Err(e);
            }
        }
        match self.device.clone() {
            Some(Ok(info)) => Ok(info),
            Some(Err(reason)) => Err(NoDevice::Absent(reason)),
            None => Err(NoDevice::Broken("the GPU worker did not start".into())),
        }
    }

    /// Runs one trial; `suites` are the ones it needs (its own, and in paired
    /// mode its base's), each sent first if this worker has not seen it. A fatal result stops
    /// the worker, so the next trial gets a fresh one.
    pub fn trial(
        &mut self,
        suites: &[(SuiteRef, &Suite)],
        request: TrialRequest,
        timeout: Duration,
    ) -> Result<TrialResult, TrialFailure> {
        match self.request(suites, &Request::Trial(Box::new(request)), timeout)? {
            Response::Trial(result) => Ok(self.reaped_if_stopped(vec![*result]).remove(0)),
            _ => Err(self.out_of_turn()),
        }
    }

    /// Reads the counters of several trials in one exchange (`Request::Counters`): one
    /// result per request, in order; `suites` as for [`Worker::trial`].
    pub fn counters(
        &mut self,
        suites: &[(SuiteRef, &Suite)],
        requests: Vec<TrialRequest>,
        timeout: Duration,
    ) -> Result<Vec<TrialResult>, TrialFailure> {
        let asked = requests.len();
        match self.request(suites, &Request::Counters(requests), timeout)? {
            Response::Counters(results) if results.len() == asked => {
                Ok(self.reaped_if_stopped(results))
            }
            _ => Err(self.out_of_turn()),
        }
    }

    /// Starts the worker if needed, sends it `suites` it lacks, then `request`; its answer,
    /// waited for up to `timeout` (on a crash or time-out the worker is stopped, and the failure
    /// says what happened).
    fn request(
        &mut self,
        suites: &[(SuiteRef, &Suite)],
        request: &Request,
        timeout: Duration,
    ) -> Result<Response, TrialFailure> {
        if let Some(Err(e)) = &self.device {
            return Err(TrialFailure::Harness(e.clone()));
        }
        // A run asked to stop starts no worker and sends no work.
        if let Some(signal) = crate::stop::process().requested() {
            self.stop();
            return Err(TrialFailure::Harness(format!("stopped by {signal}")));
        }
        self.start().map_err(|e| match e {
            NoDevice::Absent(reason) | NoDevice::Broken(reason) => TrialFailure::Harness(reason),
        })?;
        self.send_suites(suites)?;
        self.send(request)?;
        self.receive(timeout).map(|(_, answer)| answer)
    }

    /// `results`, the worker reaped first when one of them ends it.
    fn reaped_if_stopped(&mut self, results: Vec<TrialResult>) -> Vec<TrialResult> {
        let stops = results
            .iter()
            .any(|r| r.worker_stops || r.outcome.as_ref().is_err_and(TrialFailure::is_fatal));
        if stops {
            let _ = self.reap();
        }
        results
    }

    /// An answer that does not fit the request: the worker is stopped.
    fn out_of_turn(&mut self) -> TrialFailure {
        self.stop();
        TrialFailure::Harness("the GPU worker answered out of turn".into())
    }

    /// Sends the running worker `suites` it has not been sent; it compiles and
    /// loads each as it arrives, so sending one ahead of its trials lets that overlap this
    /// process's own work.
    pub fn send_suites(&mut self, suites: &[(SuiteRef, &Suite)]) -> Result<(), TrialFailure> {
        for &(at, suite) in suites {
            if !self.sent.contains(&at) {
                self.send(&Request::Suite {
                    at,
                    suite: Box::new(suite.clone()),
                })?;
                self.sent.insert(at);
            }
        }
        Ok(())
    }

    /// Starts the worker process and opens the device, unless it is running; waits for the
    /// device where a worker started early has not said yet.
    fn start(&mut self) -> Result<(), NoDevice> {
        if self.live.is_none() {
            self.spawn()?;
        }
        self.hello()
    }

    /// Starts the worker process and sends it `Hello`; the answer is read by [`Worker::hello`].
    fn spawn(&mut self) -> Result<(), NoDevice> {
        let broken =
            |what: &str, e: &dyn std::fmt::Display| NoDevice::Broken(format!("{what}: {e}"));
        let exe = match std::env::var_os(PROGRAM_ENV) {
            Some(program) => program.into(),
            None => std::env::current_exe()
                .map_err(|e| broken("cannot find the perf binary to start a worker", &e))?,
        };
        let mut command = Command::new(exe);
        // The worker sees only its GPU: a context is made faster where the driver initializes
        // one device (0.21-0.24 s against 0.35-0.58 s on an H200 of two, docs/architecture.md).
        let alone = only_gpu(self.ordinal, std::env::var("CUDA_VISIBLE_DEVICES").ok());
        if let Some(gpu) = &alone {
            command.env("CUDA_VISIBLE_DEVICES", gpu);
        }
        let mut child = command
            .env(WORKER_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| broken("cannot start the GPU worker process", &e))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix(PREFIX) {
                    Some(message) => {
                        if tx.send((Instant::now(), message.to_string())).is_err() {
                            break;
                        }
                    }
                    // Kernel printf output and the like: pass it on, out of the way.
                    None => eprintln!("{line}"),
                }
            }
        });
        self.starts += 1;
        self.live = Some(Live {
            child,
            stdin,
            lines,
        });
        self.sent.clear();
        self.hello_due = Some(Instant::now());
        let hello = Request::Hello {
            ordinal: self.ordinal,
            alone: alone.is_some(),
        };
        if let Err(e) = self.send(&hello) {
            self.hello_due = None;
            return Err(NoDevice::Broken(e.to_string()));
        }
        Ok(())
    }

    /// Reads the started worker's answer to `Hello`, when it is due: the device, or why not.
    fn hello(&mut self) -> Result<(), NoDevice> {
        let Some(started) = self.hello_due.take() else {
            return Ok(());
        };
        let waiting = Instant::now();
        let hello = self.receive(HELLO_TIMEOUT);
        self.waited_seconds += waiting.elapsed().as_secs_f64();
        let hello = hello.map(|(at, answer)| {
            self.start_seconds += at.duration_since(started).as_secs_f64();
            answer
        });
        let info = match hello {
            Ok(Response::Hello(info)) => info,
            Ok(_) => return Err(NoDevice::Broken(self.out_of_turn().to_string())),
            Err(e) => return Err(NoDevice::Broken(e.to_string())),
        };
        if info.is_err() {
            self.stop();
        }
        self.device = Some(info.clone());
        info.map(drop).map_err(NoDevice::Absent)
    }

    /// Ends the worker (if any); the next request starts a fresh one.
    pub fn stop(&mut self) {
        self.profiled = false;
        self.hello_due = None;
        if let Some(mut live) = self.live.take() {
            let _ = live.child.kill();
            let _ = live.child.wait();
        }
    }

    /// Writes `request` to the running worker; a worker that has gone is reaped.
    fn send(&mut self, request: &Request) -> Result<(), TrialFailure> {
        let line = encode_request(request).map_err(|e| {
            TrialFailure::Harness(format!(
                "cannot send the suite to the GPU worker: {e} (kernelgate passes paths as UTF-8 text: rename the folder or file)"
            ))
        })?;
        let live = live(&mut self.live)?;
        if live
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| live.stdin.flush())
            .is_err()
        {
            let ended = self.reap();
            return Err(ended.failure("it exited before taking the request: "));
        }
        Ok(())
    }

    /// Waits up to `timeout` for the running worker's next answer, with when it arrived.
    fn receive(&mut self, timeout: Duration) -> Result<(Instant, Response), TrialFailure> {
        let live = live(&mut self.live)?;
        // In slices, so a run asked to stop (SIGTERM, SIGINT) stops its worker at once.
        let until = Instant::now() + timeout;
        let slice = Duration::from_millis(100);
        let received = loop {
            if let Some(signal) = crate::stop::process().requested() {
                self.stop();
                return Err(TrialFailure::Harness(format!("stopped by {signal}")));
            }
            let left = until.saturating_duration_since(Instant::now());
            match live.lines.recv_timeout(left.min(slice)) {
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => continue,
                other => break other,
            }
        };
        match received {
            Ok((at, line)) => serde_json::from_str(&line).map(|r| (at, r)).map_err(|e| {
                self.stop();
                TrialFailure::Harness(format!("the GPU worker sent an unreadable answer: {e}"))
            }),
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(TrialFailure::Timeout {
                    seconds: timeout.as_secs(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.reap().failure("")),
        }
    }

    /// Waits for a worker that has gone, and says how it ended.
    fn reap(&mut self) -> Ended {
        let Some(mut live) = self.live.take() else {
            return Ended::Unknown("not running".into());
        };
        // It may not have exited yet if only stdout closed: give it a moment, then kill.
        for _ in 0..50 {
            if let Ok(Some(status)) = live.child.try_wait() {
                return Ended::Exited(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = live.child.kill();
        match live.child.wait() {
            Ok(status) => Ended::Exited(status),
            Err(e) => Ended::Unknown(e.to_string()),
        }
    }
}

/// The running worker, or the failure that it is not running.
fn live(live: &mut Option<Live>) -> Result<&mut Live, TrialFailure> {
    live.as_mut()
        .ok_or_else(|| TrialFailure::Harness("the GPU worker is not running".into()))
}

/// How a worker process ended.
enum Ended {
    /// It exited, with this status.
    Exited(std::process::ExitStatus),
    /// The OS could not say.
    Unknown(String),
}

impl Ended {
    /// The trial's failure: the worker's own internal error ([`crate::exit::WORKER_FAILED_INSIDE`], its
    /// message printed above by the worker) is the harness's, anything else a crash.
    fn failure(&self, context: &str) -> TrialFailure {
        match self {
            Ended::Exited(s) if s.code() == Some(i32::from(crate::exit::WORKER_FAILED_INSIDE)) => {
                TrialFailure::Harness(format!(
                    "{context}the GPU worker stopped on an internal error (its message is above); it will restart for the next trial"
                ))
            }
            Ended::Exited(s) => TrialFailure::Crashed {
                status: format!("{context}{s}"),
            },
            Ended::Unknown(why) => TrialFailure::Crashed {
                status: format!("{context}{why}"),
            },
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What `CUDA_VISIBLE_DEVICES` shows a worker of GPU `ordinal` only that GPU: the ordinal
/// itself, or the entry at it where this process's own `CUDA_VISIBLE_DEVICES` lists the GPUs
/// (ordinals count in that list); `None` where the list has no such entry (the worker then
/// sees what this process sees, and reports the missing device).
fn only_gpu(ordinal: i32, visible: Option<String>) -> Option<String> {
    let at = usize::try_from(ordinal).ok()?;
    visible.map_or(Some(ordinal.to_string()), |list| {
        list.split(',').nth(at).map(|g| g.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_worker_sees_only_its_gpu_as_this_process_names_it() {
        assert_eq!(super::only_gpu(1, None).as_deref(), Some("1"));
        let listed = Some("GPU-3f6f12c7, 4".to_string());
        assert_eq!(super::only_gpu(1, listed.clone()).as_deref(), Some("4"));
        assert_eq!(
            super::only_gpu(0, listed.clone()).as_deref(),
            Some("GPU-3f6f12c7")
        );
        assert_eq!(super::only_gpu(2, listed), None);
        assert_eq!(super::only_gpu(-1, None), None);
    }
}
