// SPDX-License-Identifier: GPL-2.0

//! The statistics the benchmark report tools share: a deterministic generator, quantiles, and
//! 95 % bootstrap intervals of a statistic of one sample ([`bootstrap`]) and of the ratio of two
//! paired samples ([`ratio`]).
//!
//! Both tools judge runs of an emulator whose speed drifts from boot to boot, so a figure is
//! only worth reporting with its interval; one implementation keeps their intervals comparable.

pub mod bootstrap;
pub mod ratio;

pub use bootstrap::{interval, percentile, Ci, XorShift, RESAMPLES};
pub use ratio::{paired, RatioCi};
