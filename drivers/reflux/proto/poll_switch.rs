// SPDX-License-Identifier: GPL-2.0

//! The completion wait's switch between sleeping and polling (paper §4.3, §6.4.1).
//!
//! A host thread waiting for a completion can sleep until the device's completion interrupt
//! (MWAIT on the completion entry, in the paper) or poll the CQ tail. Sleeping saves the CPU at
//! low queue depths, where completions are far apart; polling wins at high queue depths, where
//! the next completion arrives before a sleeping thread would even be woken: "the runtime
//! transitions from MWAIT to polling as inter-completion gaps shrink".
//!
//! [`PollSwitch`] keeps an exponentially weighted moving average (EWMA) of the gaps between
//! consecutive completions and chooses [`WaitMode::Poll`] when the average falls below
//! `poll_below_ns`, [`WaitMode::Sleep`] when it rises above `sleep_above_ns`, and keeps its
//! current mode in between. The band between the two thresholds is the hysteresis that keeps a
//! workload whose gaps hover around one value from flapping between the modes (each switch costs:
//! enabling or disabling the interrupt is a register write). The average starts at the sleep
//! threshold, so a fresh queue sleeps and needs a run of short gaps, not one burst, to poll; gaps
//! are clamped so that one long stall cannot by itself push a polling queue to sleep.

use core::fmt;

/// Gaps are clamped to at most this (about 18 minutes), which bounds the EWMA's arithmetic.
pub const MAX_GAP_LIMIT_NS: u64 = 1 << 40;
/// The largest EWMA weight shift (a weight of 1/65536).
pub const MAX_WEIGHT_SHIFT: u32 = 16;

/// The parameters of the switch; module parameters of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PollSwitchParams {
    /// Switch to polling when the gap EWMA falls below this.
    pub poll_below_ns: u64,
    /// Switch to sleeping when the gap EWMA rises above this; greater than `poll_below_ns`.
    pub sleep_above_ns: u64,
    /// The EWMA gives each new gap a weight of `1 / 2^weight_shift` (`1..=MAX_WEIGHT_SHIFT`).
    pub weight_shift: u32,
    /// Gaps above this are counted as this, so that one stall moves the average by at most
    /// `max_gap_ns / 2^weight_shift` and one idle period does not keep the switch asleep for
    /// long after the load returns; at least `sleep_above_ns`, at most [`MAX_GAP_LIMIT_NS`].
    pub max_gap_ns: u64,
}

impl PollSwitchParams {
    /// Defaults: poll below a 20 µs average gap, sleep above 50 µs, weight 1/8, gaps clamped to
    /// 200 µs. An interrupt wake-up costs tens of microseconds (the paper measures about 200 µs
    /// for interrupt notification), so gaps below 20 µs are not worth sleeping through. With the
    /// clamp, one stall moves the average by at most 25 µs: a polling queue goes to sleep after
    /// two long gaps in a row, not after one.
    pub const DEFAULT: Self = Self {
        poll_below_ns: 20_000,
        sleep_above_ns: 50_000,
        weight_shift: 3,
        max_gap_ns: 200_000,
    };

    /// Checks the parameters.
    pub const fn validate(&self) -> Result<(), PollSwitchError> {
        if self.poll_below_ns >= self.sleep_above_ns {
            return Err(PollSwitchError::Thresholds);
        }
        if self.weight_shift == 0 || self.weight_shift > MAX_WEIGHT_SHIFT {
            return Err(PollSwitchError::WeightShift);
        }
        if self.max_gap_ns < self.sleep_above_ns || self.max_gap_ns > MAX_GAP_LIMIT_NS {
            return Err(PollSwitchError::MaxGap);
        }
        Ok(())
    }
}

impl Default for PollSwitchParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why switch parameters are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PollSwitchError {
    /// `poll_below_ns >= sleep_above_ns`: no hysteresis band.
    Thresholds,
    /// A weight shift outside `1..=MAX_WEIGHT_SHIFT`.
    WeightShift,
    /// A gap clamp below `sleep_above_ns` (the switch could never sleep) or above
    /// [`MAX_GAP_LIMIT_NS`].
    MaxGap,
}

impl fmt::Display for PollSwitchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::Thresholds => "poll threshold must be below the sleep threshold",
            Self::WeightShift => "EWMA weight shift must be in 1..=16",
            Self::MaxGap => "gap clamp must be between the sleep threshold and 2^40 ns",
        };
        f.write_str(msg)
    }
}

/// How a waiter waits for its completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitMode {
    /// Enable the completion interrupt and sleep.
    Sleep,
    /// Disable the interrupt and poll the CQ tail.
    Poll,
}

/// The switch, for one queue.
///
/// # Invariants
///
/// `params` is valid; `acc` is the gap EWMA scaled by `2^weight_shift`, at most
/// `max_gap_ns << weight_shift` (so below 2^56).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PollSwitch {
    params: PollSwitchParams,
    acc: u64,
    mode: WaitMode,
    switches: u64,
}

impl PollSwitch {
    /// A switch that sleeps, its average at the sleep threshold, until it has seen enough
    /// short gaps to poll.
    pub const fn new(params: PollSwitchParams) -> Result<Self, PollSwitchError> {
        if let Err(e) = params.validate() {
            return Err(e);
        }
        // INVARIANT: `params` validated; `sleep_above_ns <= max_gap_ns`, so the initial `acc` is
        // within the bound.
        Ok(Self {
            params,
            acc: Self::initial_acc(&params),
            mode: WaitMode::Sleep,
            switches: 0,
        })
    }

    const fn initial_acc(params: &PollSwitchParams) -> u64 {
        params.sleep_above_ns << params.weight_shift
    }

    /// Records the gap between the last completion and this one, and returns the mode for the
    /// next wait.
    pub fn record_gap(&mut self, gap_ns: u64) -> WaitMode {
        let p = &self.params;
        let gap = gap_ns.min(p.max_gap_ns);
        // acc - acc / 2^k + gap stays at most `max_gap << k` when it was: the invariant.
        self.acc = self.acc - (self.acc >> p.weight_shift) + gap;
        let ewma = self.ewma_ns();
        let mode = if ewma < p.poll_below_ns {
            WaitMode::Poll
        } else if ewma > p.sleep_above_ns {
            WaitMode::Sleep
        } else {
            self.mode
        };
        if mode != self.mode {
            self.mode = mode;
            self.switches = self.switches.saturating_add(1);
        }
        mode
    }

    /// Forgets the history (e.g. when the queue went idle): back to sleeping, the average at
    /// the sleep threshold.
    pub fn reset(&mut self) {
        self.acc = Self::initial_acc(&self.params);
        self.mode = WaitMode::Sleep;
    }

    /// New parameters for a running switch (the administrator's): the average is kept,
    /// clamped to the new gap bound, and so is the mode until the next gap decides.
    pub fn set_params(&mut self, params: PollSwitchParams) -> Result<(), PollSwitchError> {
        params.validate()?;
        let ewma = self.ewma_ns().min(params.max_gap_ns);
        // INVARIANT: `params` validated; `ewma <= max_gap_ns`, so `acc` is within the bound.
        self.params = params;
        self.acc = ewma << params.weight_shift;
        Ok(())
    }

    /// The parameters.
    pub const fn params(&self) -> PollSwitchParams {
        self.params
    }

    /// The current mode.
    pub const fn mode(&self) -> WaitMode {
        self.mode
    }

    /// The gap EWMA, in nanoseconds.
    pub const fn ewma_ns(&self) -> u64 {
        self.acc >> self.params.weight_shift
    }

    /// Mode changes so far (a statistic: a high rate would mean flapping).
    pub const fn switches(&self) -> u64 {
        self.switches
    }
}
