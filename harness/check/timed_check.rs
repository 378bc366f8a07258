//! `Copies::check`: after sampling, every copy the kernel was timed on is compared with the
//! reference's outputs for its input set, and its inputs checked unchanged ("timed work is
//! checked work", issue 11) — on the device with `check::kernels`, then, for a copy that
//! fails, on the host, which writes the message and the dump.

use super::compare::compare;
use super::copies::Copies;
use super::failure::Failure;
use super::kernels::{Comparison, Kernels};
use super::reference::Outputs;
use crate::device::{DeviceBuffer, Gpu};
use crate::dtype::HostData;
use crate::suite::{Role, Suite};

impl Copies {
    /// Compares what kernel `k`'s last timed-like launches left in copies `0..used` with
    /// `expected` (the reference's outputs per input set, from `seeds`), and checks their
    /// inputs unchanged. The comparison runs on the device and only a failing copy is
    /// downloaded, for the host to say what differs (all of them where the device has no room
    /// for the expected values).
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        (case, k): (usize, usize),
        used: usize,
        expected: &[Outputs],
        seeds: &[u64],
    ) -> Result<(), Failure> {
        let used = used.min(self.copies.len());
        match self.first_bad_copy(gpu, kernels, suite, used, expected)? {
            Some(None) => return Ok(()),
            Some(Some(c)) => {
                self.check_on_host(gpu, suite, (case, k), (c, used), expected, seeds)?;
                return Err(Failure::Trial(crate::failure::TrialFailure::Harness(format!(
                    "the device comparison found a difference in input copy {} of {used} that the host comparison does not see (kernel `{}`)",
                    c + 1,
                    suite.kernels[k].name
                ))));
            }
            None => {}
        }
        for c in 0..used {
            self.check_on_host(gpu, suite, (case, k), (c, used), expected, seeds)?;
        }
        Ok(())
    }

    /// The first copy in `0..used` whose inputs changed or whose outputs differ from the
    /// reference's, compared on the device; `None` when the expected values do not fit on it.
    fn first_bad_copy(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        suite: &Suite,
        used: usize,
        expected: &[Outputs],
    ) -> Result<Option<Option<usize>>, Failure> {
        // Per set and buffer, on the device: an output's answer (the reference's copy kept
        // there, or uploaded where there is none), an input's initial bytes (regenerated, on
        // the device where it can), the latter two in reused scratch memory.
        let sets = self.sets();
        let mut made: Vec<Vec<Option<usize>>> = vec![vec![None; self.roles.len()]; sets];
        let mut sizes = Vec::new();
        for (set, row) in made.iter_mut().enumerate() {
            for (i, role) in self.roles.iter().enumerate() {
                // Without a device copy the outputs are on the host already (no download).
                let uploaded =
                    || -> Result<bool, Failure> { Ok(expected[set].host(gpu)?[i].is_some()) };
                if *role == Role::Input || (expected[set].device().is_none() && uploaded()?) {
                    row[i] = Some(sizes.len());
                    sizes.push(self.copies[0][i].bytes);
                }
            }
        }
        let scratch = match kernels.scratch(gpu, &sizes) {
            Ok(s) => s,
            Err(e) if e.kind() == crate::device::ErrorKind::OutOfMemory => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        for (set, row) in made.iter().enumerate() {
            for (i, part) in row.iter().enumerate() {
                let Some(part) = part else { continue };
                let b = scratch.part(*part);
                if self.roles[i] == Role::Input {
                    self.sets[set].write(gpu, kernels, suite, i, b)?;
                } else if let Some(d) = &expected[set].host(gpu)?[i] {
                    gpu.upload(b, &d.bytes)?;
                }
            }
        }
        let want = |set: usize, i: usize| -> Option<&DeviceBuffer> {
            match made[set][i] {
                Some(part) => Some(scratch.part(part)),
                None => expected[set].device()?[i].as_ref(),
            }
        };
        // Every comparison queued at once, read back with one wait.
        let mut items = Vec::new();
        let mut owner = Vec::new();
        for c in 0..used {
            for (i, b) in suite.buffers.iter().enumerate() {
                let Some(w) = want(c % sets, i) else {
                    continue;
                };
                let (dtype, n, tol) = if b.role == Role::Input {
                    // Byte for byte, as the host compares them.
                    (crate::dtype::DType::U8, w.bytes, super::compare::EXACT)
                } else {
                    let n = w.bytes / b.dtype.size();
                    (b.dtype, n, suite.check.tolerances[&i])
                };
                items.push(Comparison {
                    actual: &self.copies[c][i],
                    expected: w,
                    dtype,
                    n,
                    tol,
                });
                owner.push(c);
            }
        }
        let found = kernels.compare_all(gpu, &items)?;
        let bad = found.iter().position(|f| f.count > 0);
        Ok(Some(bad.map(|j| owner[j])))
    }

    /// The host's comparison of copy `c` (of `used`), downloaded whole.
    fn check_on_host(
        &self,
        gpu: &Gpu,
        suite: &Suite,
        (case, k): (usize, usize),
        (c, used): (usize, usize),
        expected: &[Outputs],
        seeds: &[u64],
    ) -> Result<(), Failure> {
        gpu.synchronize()?;
        let name = &suite.kernels[k].name;
        let wrong = "the timed launches computed something else than the checked ones";
        let set = c % self.sets();
        let at = format!(
            "input copy {} of {used}, inputs from seed {}",
            c + 1,
            seeds[set]
        );
        let mut actual = Vec::new();
        for (i, b) in suite.buffers.iter().enumerate() {
            let now = HostData {
                dtype: b.dtype,
                bytes: gpu.download(&self.copies[c][i])?,
            };
            if b.role == Role::Input {
                let before = self.sets[set].host(suite)?[i]
                    .as_ref()
                    .expect("inputs are initialized");
                if now.bytes != before.bytes {
                    return Err(Failure::Wrong(format!(
                        "{wrong}: kernel `{name}` changed input `{}` while it was timed ({at})",
                        b.name
                    )));
                }
                actual.push(None);
            } else {
                actual.push(Some(now));
            }
        }
        let expected = expected[set].host(gpu)?;
        for (i, b) in suite.buffers.iter().enumerate() {
            let (Some(now), Some(want)) = (&actual[i], &expected[i]) else {
                continue;
            };
            if let Err(m) = compare(now, want, suite.check.tolerances[&i]) {
                let dumped = super::dump::note(
                    suite,
                    &super::dump::Failing {
                        kernel: k,
                        case,
                        seed: seeds[set],
                        inputs: self.sets[set].host(suite)?,
                        expected,
                        actual: &actual,
                    },
                );
                return Err(Failure::Wrong(format!(
                    "{wrong}: output `{}` of `{name}` after timing differs from the reference ({at}): {m} (a kernel must do its full work on every launch; outputs are poisoned before each timed launch as before each checked one){dumped}",
                    b.name
                )));
            }
        }
        Ok(())
    }
}
