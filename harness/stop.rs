//! `Stop`: a run asked to end early — SIGTERM (a CI job's time limit, a cancelled job) or SIGINT
//! (Ctrl-C). The run then starts no trial, stops its GPU workers (so their GPU locks go with
//! them), prints and writes what finished, marks the results file incomplete and exits 2. A
//! second signal ends the process at once, as the signal's default action would.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Whether, and by which signal, a run was asked to stop.
#[derive(Debug, Default)]
pub struct Stop {
    signal: AtomicUsize,
}

impl Stop {
    /// A flag no signal sets (for tests, and runs that are not the process's own).
    pub const fn new() -> Stop {
        Stop {
            signal: AtomicUsize::new(0),
        }
    }

    /// The signal's name, once one arrived.
    pub fn requested(&self) -> Option<&'static str> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s if s == signal_hook::consts::SIGINT as usize => Some("SIGINT"),
            _ => Some("SIGTERM"),
        }
    }

    /// Asks the run to stop as if signal `signal` had arrived.
    pub fn request(&self, signal: i32) {
        self.signal.store(signal as usize, Ordering::SeqCst);
    }
}

/// The process's flag, set by SIGTERM and SIGINT once [`install`] has run.
pub fn process() -> &'static Stop {
    static PROCESS: Stop = Stop::new();
    &PROCESS
}

/// Installs the handlers: the first SIGTERM or SIGINT sets [`process`]'s flag; the second ends
/// the process with the signal's default action.
pub fn install() {
    static ARMED: AtomicBool = AtomicBool::new(false);
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        // The default action first: it runs only once the flag below is armed.
        let _ = signal_hook::flag::register_conditional_default(signal, &ARMED);
        let _ = signal_hook::flag::register_usize(signal, &process().signal, signal as usize);
        let _ = signal_hook::flag::register(signal, &ARMED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_says_which_signal() {
        let stop = Stop::new();
        assert_eq!(stop.requested(), None);
        stop.request(signal_hook::consts::SIGINT);
        assert_eq!(stop.requested(), Some("SIGINT"));
        stop.request(signal_hook::consts::SIGTERM);
        assert_eq!(stop.requested(), Some("SIGTERM"));
    }
}
