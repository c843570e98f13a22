// SPDX-License-Identifier: GPL-2.0

//! The read/write mix: which operations of a stream are reads, so that any window of it has the
//! requested ratio as closely as whole operations allow (an error diffusion, not a coin toss:
//! a run's ratio is exact, and reads and writes interleave rather than come in phases).

/// Decides read or write, operation by operation.
///
/// # Invariants
///
/// `percent <= 100`; `acc < 100`.
#[derive(Clone, Debug)]
pub struct Mix {
    percent: u32,
    acc: u32,
}

impl Mix {
    /// A mix with `percent` reads (above 100 counts as 100), starting at `phase` (any value;
    /// threads use different phases so they do not switch direction in lockstep).
    pub fn new(percent: u32, phase: u32) -> Self {
        // INVARIANT: both reduced into range.
        Self {
            percent: percent.min(100),
            acc: phase % 100,
        }
    }

    /// Whether the next operation is a read.
    pub fn next_is_read(&mut self) -> bool {
        self.acc += self.percent;
        if self.acc >= 100 {
            self.acc -= 100;
            true
        } else {
            false
        }
    }
}
