//! `Splits`: where the time inside sampling goes — the GPU's share (prepare, L2 flush, the timed
//! launches) from extra event pairs, the host's (queueing, waiting, reading back, capturing
//! graphs) from its clock (`Timer::host_time`) — added to the process's [`crate::spent`]
//! registry as `sampling.*`, taken only under `KERNELGATE_PROFILE=1`, since the extra events
//! add work to the stream that a plain run does not do.

use crate::device::{elapsed_seconds, DeviceError, Event, Gpu};

/// The profile's extra events: for each sample slot, one before and one after its prepare.
pub(super) struct Splits {
    marks: Vec<(Event, Event)>,
}

impl Splits {
    /// Events for `slots` sample slots.
    pub fn new(gpu: &Gpu, slots: usize) -> Result<Splits, DeviceError> {
        let marks = (0..slots)
            .map(|_| Ok((gpu.event()?, gpu.event()?)))
            .collect::<Result<_, DeviceError>>()?;
        Ok(Splits { marks })
    }

    /// At least `slots` sample slots.
    pub fn grow(&mut self, gpu: &Gpu, slots: usize) -> Result<(), DeviceError> {
        while self.marks.len() < slots {
            self.marks.push((gpu.event()?, gpu.event()?));
        }
        Ok(())
    }

    /// Records slot `slot`'s mark before (`false`) or after (`true`) its prepare.
    pub fn mark(&self, gpu: &Gpu, slot: usize, after_prepare: bool) -> Result<(), DeviceError> {
        let (before, after) = &self.marks[slot];
        gpu.record(if after_prepare { after } else { before })
    }

    /// Adds slot `slot`'s GPU splits, once its sample (between `start` and `end`) has finished.
    pub fn read(&mut self, slot: usize, start: &Event, end: &Event) -> Result<(), DeviceError> {
        let (before, after) = &self.marks[slot];
        let seconds = elapsed_seconds;
        crate::spent::add("sampling.prepare", seconds(before, after)?);
        crate::spent::add("sampling.flush", seconds(after, start)?);
        crate::spent::add("sampling.launch", seconds(start, end)?);
        crate::spent::add("sampling.samples", 1.0);
        Ok(())
    }
}
