//! `serve`: the GPU worker process. The perf binary re-executes itself with
//! `KERNELGATE_WORKER=1`; the worker owns the CUDA context, runs one trial per request, and
//! exits after a fault that poisons the context. The harness (`client`) never touches CUDA.

#![deny(clippy::too_many_lines)]

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

use protocol::{encode_response, Request, Response};
use session::Session;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Serves requests on stdin until it closes; returns the process exit code.
pub fn serve(cache_dir: Option<PathBuf>) -> i32 {
    let stdin = std::io::stdin();
    let mut session: Option<Session> = None;
    let reply = |r: &Response| {
        let mut out = std::io::stdout().lock();
        // One write per message, so kernel printf output cannot split it.
        let _ = out.write_all(encode_response(r).as_bytes());
        let _ = out.flush();
    };
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return 0 };
        let request: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("kernelgate worker: unreadable request: {e}");
                return 2;
            }
        };
        match request {
            Request::Hello { ordinal } => {
                let info = match &session {
                    Some(s) => Ok(s.gpu().info.clone()),
                    None => match Session::open(ordinal, cache_dir.clone()) {
                        Ok(s) => {
                            let info = s.gpu().info.clone();
                            session = Some(s);
                            Ok(info)
                        }
                        Err(e) => Err(e.to_string()),
                    },
                };
                reply(&Response::Hello(info));
            }
            Request::Suite { index, suite } => {
                let Some(s) = session.as_mut() else {
                    eprintln!("kernelgate worker: a suite came before Hello");
                    return 2;
                };
                s.add_suite(index, *suite);
            }
            Request::Trial(req) => {
                let Some(s) = session.as_mut() else {
                    eprintln!("kernelgate worker: a trial came before Hello");
                    return 2;
                };
                let result = s.run_trial(&req);
                let fatal = result
                    .outcome
                    .as_ref()
                    .is_err_and(crate::failure::TrialFailure::is_fatal);
                reply(&Response::Trial(Box::new(result)));
                if fatal {
                    return 3;
                }
            }
        }
    }
    0
}
