//! `verify`: correctness of one trial — fresh seeded inputs, poisoned outputs, comparison with
//! the reference kernel (and golden files), inputs checked unchanged.

pub mod compare;
pub mod copies;
pub mod counter;
pub mod device_fill;
pub mod dump;
pub mod failure;
pub mod input_set;
pub mod inputs;
pub mod kernels;
pub mod narrow;
pub mod plausible;
pub mod poison;
pub mod reference;
pub mod reference_outputs;
pub mod run;
mod timed_check;
pub mod vacuous;
pub mod vacuous_device;
pub mod vacuous_kernels;
pub mod verify;
