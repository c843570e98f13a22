// SPDX-License-Identifier: GPL-2.0

//! The engine speed factor: how much longer the software device takes than the host CPU it runs
//! on.
//!
//! The software CXL SSD runs device-placed stages on host CPUs, which are as fast as the host's
//! own. A real CSD's embedded cores are slower (and slower still when throttled: §3.1), and that
//! difference is what makes placement matter. The device therefore measures how long a stage took
//! it (or models it from a per-byte cost) and then waits the difference to the modelled speed:
//! at `speed_permille` = 500 the engine is half as fast as the host, so every microsecond of work
//! costs another microsecond of delay. Throttling multiplies the speed by the thermal model's
//! factor (half by default).
//!
//! Waits much shorter than a timer tick cannot be slept precisely, so [`Pacer`] accumulates the
//! delay owed and asks for a sleep only once it is worth one; oversleeping is credited against
//! later delays, so the long-run speed is right.

use core::fmt;

/// The host's own speed, in permille: an engine this fast needs no extra delay.
pub const HOST_SPEED_PERMILLE: u32 = 1000;

/// Combines the configured engine speed with the thermal factor (both in permille), never below
/// 1 permille so that a speed is always usable as a divisor.
pub const fn effective_speed_permille(base_permille: u32, thermal_permille: u32) -> u32 {
    let s = base_permille as u64 * thermal_permille as u64 / 1000;
    if s == 0 {
        1
    } else if s > u32::MAX as u64 {
        u32::MAX
    } else {
        s as u32
    }
}

/// The time an engine of `speed_permille` needs for work that took the host `host_ns`
/// (saturating; a speed of 0 counts as 1 permille).
pub const fn device_ns(host_ns: u64, speed_permille: u32) -> u64 {
    let speed = if speed_permille == 0 {
        1
    } else {
        speed_permille as u64
    };
    // `host_ns / speed * 1000 + host_ns % speed * 1000 / speed`, without overflowing the
    // intermediate `host_ns * 1000`.
    let whole = (host_ns / speed).saturating_mul(1000);
    let part = host_ns % speed * 1000 / speed;
    whole.saturating_add(part)
}

/// The delay the device must add after work that took the host `host_ns`, to run at
/// `speed_permille`: 0 for an engine at least as fast as the host (it cannot go faster than the
/// CPU it runs on).
pub const fn extra_delay_ns(host_ns: u64, speed_permille: u32) -> u64 {
    device_ns(host_ns, speed_permille).saturating_sub(host_ns)
}

/// The host time of `bytes` of work at `ps_per_byte` picoseconds per byte (a cost model for
/// stages the device does not time itself), rounded up, saturating.
pub const fn host_ns_for_bytes(bytes: u64, ps_per_byte: u64) -> u64 {
    let ps = bytes.saturating_mul(ps_per_byte);
    ps / 1000 + if ps % 1000 != 0 { 1 } else { 0 }
}

/// The parameters of a [`Pacer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacerParams {
    /// Sleep only once at least this much delay is owed.
    pub min_sleep_ns: u64,
    /// Oversleep credited against later delays is capped at this, so that a long preemption
    /// does not let the engine run at host speed for long afterwards.
    pub max_credit_ns: u64,
}

impl PacerParams {
    /// Defaults: sleep in slices of at least 50 µs (the scale of `usleep_range`'s precision),
    /// carry at most 1 ms of credit.
    pub const DEFAULT: Self = Self {
        min_sleep_ns: 50_000,
        max_credit_ns: 1_000_000,
    };
}

impl Default for PacerParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why pacer parameters are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacerError {
    /// A zero minimum sleep (every charge would ask for a sleep).
    MinSleep,
}

impl fmt::Display for PacerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MinSleep => f.write_str("minimum sleep must be positive"),
        }
    }
}

/// Delay owed by one engine core, and oversleep credited to it.
///
/// # Invariants
///
/// At most one of `owed_ns` and `credit_ns` is nonzero; `credit_ns <= params.max_credit_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pacer {
    params: PacerParams,
    owed_ns: u64,
    credit_ns: u64,
}

impl Pacer {
    /// A pacer that owes nothing.
    pub const fn new(params: PacerParams) -> Result<Self, PacerError> {
        if params.min_sleep_ns == 0 {
            return Err(PacerError::MinSleep);
        }
        Ok(Self {
            params,
            owed_ns: 0,
            credit_ns: 0,
        })
    }

    /// Adds the delay for work that took the host `host_ns` on an engine of `speed_permille`,
    /// paid from the credit first. Returns how long to sleep now, if enough is owed.
    pub fn charge(&mut self, host_ns: u64, speed_permille: u32) -> Option<u64> {
        self.owe(extra_delay_ns(host_ns, speed_permille))
    }

    /// Adds `delay_ns` of delay (work the engine did without this core spending time on it:
    /// the whole modelled time is owed), paid from the credit first. Returns how long to sleep
    /// now, if enough is owed.
    pub fn owe(&mut self, delay_ns: u64) -> Option<u64> {
        let from_credit = delay_ns.min(self.credit_ns);
        self.credit_ns -= from_credit;
        self.owed_ns = self.owed_ns.saturating_add(delay_ns - from_credit);
        self.due()
    }

    /// How long to sleep now: everything owed, once it reaches the minimum sleep.
    pub const fn due(&self) -> Option<u64> {
        if self.owed_ns >= self.params.min_sleep_ns {
            Some(self.owed_ns)
        } else {
            None
        }
    }

    /// Records a sleep of `slept_ns` (measured): pays the debt, and credits any oversleep.
    pub fn paid(&mut self, slept_ns: u64) {
        if slept_ns >= self.owed_ns {
            let over = slept_ns - self.owed_ns;
            self.owed_ns = 0;
            self.credit_ns = self
                .credit_ns
                .saturating_add(over)
                .min(self.params.max_credit_ns);
        } else {
            self.owed_ns -= slept_ns;
        }
    }

    /// Delay owed and not yet slept.
    pub const fn owed_ns(&self) -> u64 {
        self.owed_ns
    }

    /// Oversleep not yet used up.
    pub const fn credit_ns(&self) -> u64 {
        self.credit_ns
    }
}
