//! `serve`: the GPU worker process. The perf binary re-executes itself with
//! `KERNELGATE_WORKER=1`; the worker owns the CUDA context, runs one trial per request, and
//! exits after a fault that poisons the context. The harness (`client`) never touches CUDA.

#![deny(clippy::too_many_lines)]

mod batch;
pub mod client;
mod counters;
mod footprint;
mod loaded;
mod op;
pub mod pool;
mod probes;
pub mod protocol;
mod session;
mod trial;
mod units;

pub use batch::MAX_RANGES;
pub use units::COUNTER_UNITS;

use protocol::{reply, Request, Response};
use session::Session;
use std::io::BufRead;
use std::path::PathBuf;

use crate::exit::{WORKER_FAILED_INSIDE, WORKER_POISONED};

/// Runs `work` (`asked` trials) on the session and replies with `wrap` of its results: never
/// panics — a panic inside is answered with a harness failure per trial. Returns the exit code
/// when the worker must end (no session, a panic, a fatal failure).
fn answer(
    session: Option<&mut Session>,
    asked: usize,
    work: impl FnOnce(&mut Session) -> Vec<protocol::TrialResult>,
    wrap: impl Fn(Vec<protocol::TrialResult>) -> Response,
) -> Option<i32> {
    let Some(s) = session else {
        eprintln!("kernelgate worker: a trial came before Hello");
        return Some(WORKER_FAILED_INSIDE.into());
    };
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(s)));
    let results = match run {
        Ok(results) => results,
        Err(payload) => {
            let why = crate::exit::panic_message(payload.as_ref());
            let failed = (0..asked.max(1))
                .map(|_| protocol::TrialResult {
                    worker_stops: true,
                    ..protocol::TrialResult::failed(crate::failure::TrialFailure::Harness(
                        format!("the GPU worker failed inside ({why}): a harness error, not the kernel's; please report it"),
                    ))
                })
                .collect();
            reply(&wrap(failed));
            return Some(WORKER_FAILED_INSIDE.into());
        }
    };
    let fatal = results.iter().any(|r| {
        r.outcome
            .as_ref()
            .is_err_and(crate::failure::TrialFailure::is_fatal)
    });
    reply(&wrap(results));
    fatal.then_some(WORKER_POISONED.into())
}

/// Serves requests on stdin until it closes; returns the process exit code. A panic while
/// handling a request is answered — a trial with a harness failure naming the panic — and ends
/// the worker with [`WORKER_FAILED_INSIDE`]; the harness starts a fresh one for the next trial.
pub fn serve(cache_dir: Option<PathBuf>) -> i32 {
    crate::exit::install_panic_hook();
    let stdin = std::io::stdin();
    let mut session: Option<Session> = None;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return 0 };
        let request: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("kernelgate worker: unreadable request: {e}");
                return WORKER_FAILED_INSIDE.into();
            }
        };
        match request {
            Request::Hello { ordinal, alone } => {
                let opened = match session.take() {
                    Some(s) => Ok(s),
                    None => Session::open((ordinal, alone), cache_dir.clone()),
                };
                let info = (opened.as_ref())
                    .map(|s| s.gpu().info.clone())
                    .map_err(|e| e.to_string());
                session = opened.ok();
                reply(&Response::Hello(info));
                // The probe and the check kernels, while the harness loads and compiles suites
                // (a request that comes meanwhile waits in the pipe).
                if let Some(s) = session.as_mut() {
                    s.warm_up();
                }
            }
            Request::Suite { at, suite } => {
                let Some(s) = session.as_mut() else {
                    eprintln!("kernelgate worker: a suite came before Hello");
                    return WORKER_FAILED_INSIDE.into();
                };
                s.add_suite(at, *suite);
            }
            Request::Trial(req) => {
                let wrap =
                    |mut r: Vec<protocol::TrialResult>| Response::Trial(Box::new(r.swap_remove(0)));
                let work = |s: &mut Session| vec![s.run_trial(&req)];
                if let Some(code) = answer(session.as_mut(), 1, work, wrap) {
                    return code;
                }
            }
            Request::Counters(reqs) => {
                let work = |s: &mut Session| s.run_counters(&reqs);
                if let Some(code) = answer(session.as_mut(), reqs.len(), work, Response::Counters) {
                    return code;
                }
            }
        }
    }
    0
}
