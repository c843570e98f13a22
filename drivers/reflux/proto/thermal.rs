// SPDX-License-Identifier: GPL-2.0

//! The device's thermal model, in integer fixed point.
//!
//! The software CXL SSD has no thermistor; it runs this first-order model instead and publishes
//! the result in its telemetry registers (`TEMP_MILLI_C`, `THROTTLED`). The paper's observation
//! is that device-side compute heats a CSD until it throttles (§3.1: the OCP datacenter NVMe
//! specification mandates throttling above 77 °C, and throughput then drops by half or more); the
//! model reproduces that cliff so that the scheduler has something to escape from.
//!
//! # The model
//!
//! The controller's temperature `T` relaxes toward ambient `A` with time constant `τ` and is
//! heated by the engine's work:
//!
//! `dT/dt = R · u(t) · s / τ − (T − A) / τ`
//!
//! where `u` is the engine utilisation (busy core time over available core time), `R` the
//! steady-state rise above ambient of a fully busy engine ([`ThermalParams::full_load_rise_milli_c`])
//! and `s` the power factor: 1, or [`ThermalParams::throttled_speed_permille`] while throttled
//! (halving the clock halves the dynamic power). So the heat added in a tick is proportional to
//! the busy core-microseconds of the tick, the "device work done".
//!
//! A tick of `dt` integrates this with the implicit (backward) Euler step
//! `T' − A = ((T − A) · τ + R · s · busy / cores) / (τ + dt)`, which is stable and monotone for any
//! `dt` (a tick of an hour is as valid as one of a microsecond) and has exactly the steady state of
//! the equation, `A + R · u · s`. The temperature is kept in micro-°C so that 10 µs ticks still
//! resolve their heat; the registers report milli-°C.
//!
//! Throttling has hysteresis: the device throttles when `T >= throttle_milli_c` and unthrottles
//! only when `T < unthrottle_milli_c`, so a temperature hovering at the threshold does not flap.
//!
//! # Defaults
//!
//! [`ThermalParams::DEFAULT`]: ambient 35 °C, throttle at 77 °C, unthrottle below 72 °C, a full
//! load rise of 60 °C, `τ` = 2 s, 4 cores, half speed while throttled. Then a fully busy device
//! heats toward 95 °C and throttles after `τ · ln(60 / 18)` ≈ 2.4 s; throttled, it heads for
//! 65 °C and drops below 72 °C after `τ · ln(12 / 7)` ≈ 1.1 s, so a sustained full load cycles
//! with a period of about 1.6 s, throttled two thirds of the time. Idle, it cools from 77 °C to
//! 72 °C in 0.25 s and to 40 °C in `τ · ln(42 / 5)` ≈ 4.3 s.

use core::fmt;

/// The OCP datacenter NVMe SSD specification's throttling threshold, in milli-°C.
pub const OCP_THROTTLE_MILLI_C: u32 = 77_000;

/// The hottest temperature the model represents, in milli-°C: every parameter must be at most
/// this, and the temperature never exceeds it. It bounds the fixed-point arithmetic.
pub const MAX_MILLI_C: u32 = 200_000;

/// The parameters of the model. Every one is a module parameter of the software device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThermalParams {
    /// The temperature the device cools toward, in milli-°C.
    pub ambient_milli_c: u32,
    /// Throttle at or above this temperature, in milli-°C.
    pub throttle_milli_c: u32,
    /// Unthrottle below this temperature, in milli-°C; below `throttle_milli_c` (hysteresis).
    pub unthrottle_milli_c: u32,
    /// Steady-state rise above ambient of an engine whose cores are all busy, unthrottled, in
    /// milli-°C. This is the heating coefficient: a busy core-microsecond adds
    /// `full_load_rise_milli_c / (cores · tau_us)` milli-°C.
    pub full_load_rise_milli_c: u32,
    /// The time constant of cooling toward ambient, in microseconds (at least 1).
    pub tau_us: u32,
    /// Engine cores: the busy time of a tick is at most `cores · dt` (at least 1).
    pub cores: u32,
    /// Engine speed while throttled, in permille of the normal speed (`1..=1000`); the power,
    /// hence the heating, scales the same way.
    pub throttled_speed_permille: u32,
}

impl ThermalParams {
    /// The documented defaults (see the module documentation).
    pub const DEFAULT: Self = Self {
        ambient_milli_c: 35_000,
        throttle_milli_c: OCP_THROTTLE_MILLI_C,
        unthrottle_milli_c: 72_000,
        full_load_rise_milli_c: 60_000,
        tau_us: 2_000_000,
        cores: 4,
        throttled_speed_permille: 500,
    };

    /// Checks the parameters.
    pub const fn validate(&self) -> Result<(), ThermalError> {
        if !(self.ambient_milli_c < self.unthrottle_milli_c
            && self.unthrottle_milli_c < self.throttle_milli_c
            && self.throttle_milli_c <= MAX_MILLI_C)
        {
            return Err(ThermalError::Thresholds);
        }
        if self.full_load_rise_milli_c > MAX_MILLI_C {
            return Err(ThermalError::Rise);
        }
        if self.tau_us == 0 {
            return Err(ThermalError::Tau);
        }
        if self.cores == 0 {
            return Err(ThermalError::Cores);
        }
        if self.throttled_speed_permille == 0 || self.throttled_speed_permille > 1000 {
            return Err(ThermalError::ThrottledSpeed);
        }
        Ok(())
    }
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why thermal parameters are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThermalError {
    /// Not `ambient < unthrottle < throttle <= MAX_MILLI_C`.
    Thresholds,
    /// The full-load rise exceeds [`MAX_MILLI_C`].
    Rise,
    /// A zero time constant.
    Tau,
    /// Zero cores.
    Cores,
    /// A throttled speed outside `1..=1000`.
    ThrottledSpeed,
}

impl fmt::Display for ThermalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::Thresholds => "thermal thresholds must satisfy ambient < unthrottle < throttle",
            Self::Rise => "full-load temperature rise is too large",
            Self::Tau => "thermal time constant is zero",
            Self::Cores => "thermal model needs at least one core",
            Self::ThrottledSpeed => "throttled speed must be in 1..=1000 permille",
        };
        f.write_str(msg)
    }
}

/// A change of the throttling state, reported by [`Thermal::tick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThrottleChange {
    /// The temperature reached the throttle threshold.
    Throttled,
    /// The temperature fell below the unthrottle threshold.
    Unthrottled,
}

/// `a · b / c`, for `b <= c`, without overflow: exact while `a · b` fits in 64 bits, otherwise
/// with `b` and `c` shifted right together just enough (a relative error below 2^-(64 - bits(a))).
/// The result is at most `a`.
const fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let (p, c) = match a.checked_mul(b) {
        Some(p) => (p, c),
        None => {
            // bits(a) + bits(b) > 64 here, so the shift is in 1..=64, and `a · (b >> shift)` has
            // at most 64 bits. A shift of 64 (both operands full width) leaves nothing.
            let shift = (128 - a.leading_zeros() - b.leading_zeros()) - 64;
            match (b.checked_shr(shift), c.checked_shr(shift)) {
                (Some(b), Some(c)) => (a.saturating_mul(b), c),
                _ => return 0,
            }
        }
    };
    // A zero divisor only comes with a zero dividend (`b <= c`): nothing.
    match p.checked_div(c) {
        Some(q) => q,
        None => 0,
    }
}

/// The thermal state of a device.
///
/// # Invariants
///
/// `params` is valid; `ambient + excess_micro_c / 1000 <= MAX_MILLI_C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Thermal {
    params: ThermalParams,
    excess_micro_c: u64,
    throttled: bool,
    throttle_events: u64,
    util_permille: u32,
}

impl Thermal {
    /// A device at ambient temperature, not throttled.
    pub const fn new(params: ThermalParams) -> Result<Self, ThermalError> {
        if let Err(e) = params.validate() {
            return Err(e);
        }
        // INVARIANT: `params` validated; zero excess.
        Ok(Self {
            params,
            excess_micro_c: 0,
            throttled: false,
            throttle_events: 0,
            util_permille: 0,
        })
    }

    /// The parameters.
    pub const fn params(&self) -> ThermalParams {
        self.params
    }

    /// The largest excess over ambient the model represents, in micro-°C.
    const fn max_excess_micro_c(&self) -> u64 {
        (MAX_MILLI_C - self.params.ambient_milli_c) as u64 * 1000
    }

    /// Advances the model by `dt_us` microseconds during which the engine was busy for
    /// `busy_core_us` core-microseconds (summed over its cores; more than `cores · dt_us` counts
    /// as fully busy). Returns the change of throttling state, if any.
    ///
    /// Any inputs are valid, `u64::MAX` included; a tick of zero time changes nothing.
    pub fn tick(&mut self, dt_us: u64, busy_core_us: u64) -> Option<ThrottleChange> {
        if dt_us == 0 {
            return None;
        }
        let p = &self.params;
        let cores = u64::from(p.cores);
        let capacity = cores.saturating_mul(dt_us);
        let busy = busy_core_us.min(capacity);
        self.util_permille = mul_div(1000, busy, capacity) as u32;

        let tau = u64::from(p.tau_us);
        let span = tau.saturating_add(dt_us);
        let mut rise = u64::from(p.full_load_rise_milli_c) * 1000;
        if self.throttled {
            rise = rise * u64::from(p.throttled_speed_permille) / 1000;
        }
        // Backward Euler: excess' = excess · τ / (τ + dt) + R · s · busy / (cores · (τ + dt)).
        // `busy <= cores · dt <= cores · (τ + dt)`, so the second term is at most `R`, and the
        // sum at most `max(excess, R)`.
        let kept = mul_div(self.excess_micro_c, tau, span);
        let heat = mul_div(rise, busy, cores.saturating_mul(span));
        self.excess_micro_c = kept.saturating_add(heat).min(self.max_excess_micro_c());

        let temp = self.temp_milli_c();
        if !self.throttled && temp >= p.throttle_milli_c {
            self.throttled = true;
            self.throttle_events = self.throttle_events.saturating_add(1);
            Some(ThrottleChange::Throttled)
        } else if self.throttled && temp < p.unthrottle_milli_c {
            self.throttled = false;
            Some(ThrottleChange::Unthrottled)
        } else {
            None
        }
    }

    /// The temperature, in milli-°C (the `TEMP_MILLI_C` register).
    pub const fn temp_milli_c(&self) -> u32 {
        // At most `MAX_MILLI_C` by the type invariant.
        self.params.ambient_milli_c + (self.excess_micro_c / 1000) as u32
    }

    /// Sets the temperature (clamped to `ambient..=MAX_MILLI_C`), e.g. to start a test or an
    /// experiment hot. The throttling state follows at the next tick.
    pub fn set_temp_milli_c(&mut self, temp: u32) {
        let temp = temp.clamp(self.params.ambient_milli_c, MAX_MILLI_C);
        self.excess_micro_c = u64::from(temp - self.params.ambient_milli_c) * 1000;
    }

    /// Whether the device is throttled (the `THROTTLED` register).
    pub const fn throttled(&self) -> bool {
        self.throttled
    }

    /// The engine speed factor the thermal state allows, in permille: 1000, or
    /// [`ThermalParams::throttled_speed_permille`] while throttled.
    pub const fn speed_permille(&self) -> u32 {
        if self.throttled {
            self.params.throttled_speed_permille
        } else {
            1000
        }
    }

    /// Times the device entered throttling (the `THROTTLE_EVENTS` register).
    pub const fn throttle_events(&self) -> u64 {
        self.throttle_events
    }

    /// The engine utilisation of the last tick, in permille (the `CORE_UTIL_PERMILLE` register).
    pub const fn util_permille(&self) -> u32 {
        self.util_permille
    }
}
