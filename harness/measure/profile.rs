//! `SamplingProfile`: where the time inside sampling goes — the GPU's share (prepare, L2 flush,
//! the timed launches) from extra event pairs, the host's (queueing, waiting, reading back,
//! capturing graphs) from its clock — taken only under `KERNELGATE_PROFILE=1`, since the extra
//! events add work to the stream that a plain run does not do.

use crate::device::{elapsed_ms, DeviceError, Event, Gpu};
use serde::{Deserialize, Serialize};

/// Where sampling's time went, summed over samples (seconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingProfile {
    /// Samples whose GPU splits were read.
    pub samples: usize,
    /// GPU: putting a sample's copies back into the checked starting state (outputs poisoned,
    /// in-out buffers restored), between an event before it and one after it.
    pub prepare: f64,
    /// GPU: the L2 flush, from the event after the prepare to the sample's start event.
    pub flush: f64,
    /// GPU: between each sample's own events — the timed launches or graph replays.
    pub launch: f64,
    /// Host: queueing the rounds (the API calls for prepares, flushes, events and launches).
    pub submit: f64,
    /// Host: waiting for the GPU to finish the queued rounds and the clock probe, then the
    /// host's round trip to the idle GPU (`measure::contention`).
    pub sync: f64,
    /// Host: reading the events and deciding whether to stop.
    pub readback: f64,
    /// Host: capturing and instantiating CUDA graphs (graph regime only).
    pub capture: f64,
    /// Host: after the stopping rule, the kernel's last (checked, not kept) launches queued
    /// and waited for.
    #[serde(default)]
    pub finish: f64,
    /// Host: NVML's query for other processes on the GPU (`measure::contention`), once per
    /// trial.
    #[serde(default)]
    pub contention: f64,
}

impl SamplingProfile {
    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &SamplingProfile) {
        self.samples += other.samples;
        self.prepare += other.prepare;
        self.flush += other.flush;
        self.launch += other.launch;
        self.submit += other.submit;
        self.sync += other.sync;
        self.readback += other.readback;
        self.capture += other.capture;
        self.finish += other.finish;
        self.contention += other.contention;
    }

    /// The profile as one closing line's worth of words.
    pub fn describe(&self) -> String {
        format!(
            "{} sample(s): GPU prepare {:.3} s, L2 flush {:.3} s, timed launches {:.3} s; host submit {:.3} s, sync wait {:.3} s, readback {:.3} s, graph capture {:.3} s, last launches {:.3} s, other-process query {:.3} s",
            self.samples,
            self.prepare,
            self.flush,
            self.launch,
            self.submit,
            self.sync,
            self.readback,
            self.capture,
            self.finish,
            self.contention
        )
    }
}

/// The extra events of a profiled sampling: per sample slot, one recorded before the sample's
/// prepare and one after it (before the L2 flush); the sample's own start and end events close
/// the flush and the launch.
pub(super) struct Splits {
    marks: Vec<(Event, Event)>,
    /// What has been read so far.
    pub totals: SamplingProfile,
}

impl Splits {
    /// Events for `slots` sample slots.
    pub fn new(gpu: &Gpu, slots: usize) -> Result<Splits, DeviceError> {
        let marks = (0..slots)
            .map(|_| Ok((gpu.event()?, gpu.event()?)))
            .collect::<Result<_, DeviceError>>()?;
        Ok(Splits {
            marks,
            totals: SamplingProfile::default(),
        })
    }

    /// Records slot `slot`'s mark before (`false`) or after (`true`) its prepare.
    pub fn mark(&self, gpu: &Gpu, slot: usize, after_prepare: bool) -> Result<(), DeviceError> {
        let (before, after) = &self.marks[slot];
        gpu.record(if after_prepare { after } else { before })
    }

    /// Adds slot `slot`'s GPU splits, once its sample (between `start` and `end`) has finished.
    pub fn read(&mut self, slot: usize, start: &Event, end: &Event) -> Result<(), DeviceError> {
        let (before, after) = &self.marks[slot];
        let seconds = |a: &Event, b: &Event| -> Result<f64, DeviceError> {
            Ok(elapsed_ms(a, b)? as f64 / 1e3)
        };
        self.totals.prepare += seconds(before, after)?;
        self.totals.flush += seconds(after, start)?;
        self.totals.launch += seconds(start, end)?;
        self.totals.samples += 1;
        Ok(())
    }
}

/// Adds `other` into `total`, where there is anything to add.
pub fn add_into(total: &mut Option<SamplingProfile>, other: Option<&SamplingProfile>) {
    if let Some(o) = other {
        total.get_or_insert_with(SamplingProfile::default).add(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_add_up_and_absent_ones_add_nothing() {
        let one = SamplingProfile {
            samples: 16,
            prepare: 0.001,
            flush: 0.004,
            launch: 0.010,
            submit: 0.002,
            sync: 0.012,
            readback: 0.0005,
            capture: 0.0,
            finish: 0.003,
            contention: 0.001,
        };
        let mut total = None;
        add_into(&mut total, None);
        assert_eq!(total, None, "nothing profiled stays absent");
        add_into(&mut total, Some(&one));
        add_into(&mut total, Some(&one));
        let t = total.unwrap();
        assert_eq!(t.samples, 32);
        assert!((t.flush - 0.008).abs() < 1e-12 && (t.sync - 0.024).abs() < 1e-12);
        assert_eq!(
            t.describe(),
            "32 sample(s): GPU prepare 0.002 s, L2 flush 0.008 s, timed launches 0.020 s; host submit 0.004 s, sync wait 0.024 s, readback 0.001 s, graph capture 0.000 s, last launches 0.006 s, other-process query 0.002 s"
        );
    }
}
