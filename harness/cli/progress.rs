//! `Progress`: what `lint` and `sass` say on stderr while they compile — on a terminal, each
//! suite as it starts (one line, rewritten); off one (a CI log), a line at least every
//! [`crate::runner::TICK_SECONDS`] saying how far they are, so a long compile is never silent.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Progress over `total` steps of a command.
pub struct Progress {
    command: &'static str,
    total: usize,
    terminal: bool,
    last: Instant,
}

impl Progress {
    /// Progress of `command` (`kernelgate lint`) over `total` suites.
    pub fn new(command: &'static str, total: usize) -> Progress {
        Progress {
            command,
            total,
            terminal: std::io::stderr().is_terminal(),
            last: Instant::now(),
        }
    }

    /// Step `done` (0-based) of the total starts, on `what`.
    pub fn step(&mut self, done: usize, what: &str) {
        let tick = Duration::from_secs(crate::runner::TICK_SECONDS);
        if self.terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2K{}: [{}/{}] {what}",
                self.command,
                done + 1,
                self.total
            );
            let _ = err.flush();
        } else if self.last.elapsed() >= tick {
            eprintln!(
                "{}: {done} of {} suite(s) done; now {what}",
                self.command, self.total
            );
            self.last = Instant::now();
        }
    }

    /// The work is done: clears the terminal's line.
    pub fn done(&self) {
        if self.terminal {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
