// SPDX-License-Identifier: GPL-2.0

//! The scheduler's parameters and why they are refused.

use core::fmt;

use super::super::thermal::{MAX_MILLI_C, OCP_THROTTLE_MILLI_C};
use super::{MAX_BACKOFF_MS, MAX_DWELL_MS, MAX_EPOCH_MS};

/// The parameters of the scheduler; module parameters of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedParams {
    /// The scheduling epoch: the driver calls [`Scheduler::step`](super::Scheduler::step) this
    /// often, in milliseconds (`1..=MAX_EPOCH_MS`). The throttle halves or doubles once per epoch.
    pub epoch_ms: u32,
    /// `α`, the weight of the device temperature, in permille.
    pub alpha_permille: u32,
    /// `β`, the weight of the host CPU utilisation, in permille.
    pub beta_permille: u32,
    /// `γ`, the weight of the actor's device queue depth, in permille. `α + β + γ = 1000`.
    pub gamma_permille: u32,
    /// The temperature at which `T_dev` is 0, in milli-°C.
    pub ambient_milli_c: u32,
    /// The temperature at which `T_dev` is 1000, in milli-°C; above `ambient_milli_c`, at most
    /// [`MAX_MILLI_C`].
    pub throttle_milli_c: u32,
    /// The device queue depth, in requests, at which `Q_dev` is 1000 (at least 1).
    pub q_full: u32,
    /// `θ`: upload a device-placed actor whose score is above this, in permille (at most 1000).
    pub theta_permille: u32,
    /// `θ_low`: offload a host-placed actor whose score is below this, in permille; below
    /// `theta_permille`.
    pub theta_low_permille: u32,
    /// The host is saturated, and takes no upload, at or above this CPU utilisation, in permille
    /// (`1..=1000`).
    pub host_saturated_permille: u32,
    /// The device has headroom for an offload below this `T_dev`, in permille (`1..=1000`).
    pub headroom_temp_permille: u32,
    /// The device has headroom for an offload below this engine utilisation, in permille
    /// (`1..=1000`).
    pub headroom_util_permille: u32,
    /// The least time between two migrations of one actor, in milliseconds (at most
    /// [`MAX_DWELL_MS`]).
    pub dwell_ms: u32,
    /// The throttle's floor: the least in-flight fraction, in permille (`1..=1000`).
    pub min_inflight_permille: u32,
    /// The flap back-off (ours; see the module documentation): an upload soon after the actor's
    /// offload lengthens the time before it may be offloaded again. Off: the dwell alone, as in
    /// the paper.
    pub flap_backoff: bool,
    /// With `flap_backoff`, an upload this soon after the actor's offload is a flap, in
    /// milliseconds (at most [`MAX_DWELL_MS`]; 0: none is).
    pub flap_window_ms: u32,
    /// With `flap_backoff`, the longest offload hold a flap sets, in milliseconds (at most
    /// [`MAX_BACKOFF_MS`]).
    pub max_backoff_ms: u32,
    /// The thermal lookahead (ours; see the module documentation): a device-placed actor is
    /// scored at the temperature projected for when its upload would be done. Off: at the
    /// temperature now, as in the paper.
    pub lookahead: bool,
    /// With `lookahead`, the longest horizon of the projection, in milliseconds (at most
    /// [`MAX_DWELL_MS`]; 0: none).
    pub lookahead_max_ms: u32,
    /// Engine-share weighting (ours; see the module documentation): `Q_dev(a)` counts the actor's
    /// device queue weighted by its share of the device engine's time
    /// ([`ActorView::engine_share_permille`](super::ActorView::engine_share_permille)). Off: the
    /// queue depth itself, as in the paper.
    pub engine_share: bool,
    /// ReFlux-only host load (ours; see the module documentation): `U_host` is the CPU time of
    /// ReFlux's own host-placed stages
    /// ([`Sample::reflux_util_permille`](super::Sample::reflux_util_permille)). Off: the busy
    /// fraction of the host's CPUs
    /// ([`Sample::host_util_permille`](super::Sample::host_util_permille)), as in the paper.
    pub u_reflux_only: bool,
}

impl SchedParams {
    /// The documented defaults (see the module documentation).
    pub const DEFAULT: Self = Self {
        epoch_ms: 10,
        alpha_permille: 500,
        beta_permille: 300,
        gamma_permille: 200,
        ambient_milli_c: 35_000,
        throttle_milli_c: OCP_THROTTLE_MILLI_C,
        q_full: 32,
        theta_permille: 650,
        theta_low_permille: 400,
        host_saturated_permille: 950,
        headroom_temp_permille: 500,
        headroom_util_permille: 800,
        dwell_ms: 100,
        min_inflight_permille: 125,
        flap_backoff: false,
        flap_window_ms: 1_000,
        max_backoff_ms: 5_000,
        lookahead: false,
        lookahead_max_ms: 500,
        engine_share: false,
        u_reflux_only: false,
    };

    /// Checks the parameters.
    pub const fn validate(&self) -> Result<(), SchedError> {
        if self.epoch_ms == 0 || self.epoch_ms > MAX_EPOCH_MS {
            return Err(SchedError::Epoch);
        }
        let weights =
            self.alpha_permille as u64 + self.beta_permille as u64 + self.gamma_permille as u64;
        if weights != 1000 {
            return Err(SchedError::Weights);
        }
        if !(self.ambient_milli_c < self.throttle_milli_c && self.throttle_milli_c <= MAX_MILLI_C) {
            return Err(SchedError::Temperatures);
        }
        if self.q_full == 0 {
            return Err(SchedError::QueueFull);
        }
        if !(self.theta_low_permille < self.theta_permille && self.theta_permille <= 1000) {
            return Err(SchedError::Thresholds);
        }
        if !is_permille_nonzero(self.host_saturated_permille) {
            return Err(SchedError::HostSaturated);
        }
        if !is_permille_nonzero(self.headroom_temp_permille)
            || !is_permille_nonzero(self.headroom_util_permille)
        {
            return Err(SchedError::Headroom);
        }
        if self.dwell_ms > MAX_DWELL_MS {
            return Err(SchedError::Dwell);
        }
        if !is_permille_nonzero(self.min_inflight_permille) {
            return Err(SchedError::MinInflight);
        }
        if self.flap_window_ms > MAX_DWELL_MS || self.max_backoff_ms > MAX_BACKOFF_MS {
            return Err(SchedError::Backoff);
        }
        if self.lookahead_max_ms > MAX_DWELL_MS {
            return Err(SchedError::Lookahead);
        }
        Ok(())
    }
}

impl Default for SchedParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

const fn is_permille_nonzero(x: u32) -> bool {
    x >= 1 && x <= 1000
}

/// Why scheduler parameters are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedError {
    /// An epoch outside `1..=MAX_EPOCH_MS`.
    Epoch,
    /// Weights `α + β + γ` that do not sum to 1000.
    Weights,
    /// Not `ambient < throttle <= MAX_MILLI_C`.
    Temperatures,
    /// A zero full-queue depth.
    QueueFull,
    /// Not `θ_low < θ <= 1000`: no hysteresis band, or an upload threshold out of range.
    Thresholds,
    /// A host saturation threshold outside `1..=1000`.
    HostSaturated,
    /// A headroom temperature or utilisation outside `1..=1000`.
    Headroom,
    /// A dwell above [`MAX_DWELL_MS`].
    Dwell,
    /// A throttle floor outside `1..=1000`.
    MinInflight,
    /// A flap window above [`MAX_DWELL_MS`] or a back-off above [`MAX_BACKOFF_MS`].
    Backoff,
    /// A lookahead horizon above [`MAX_DWELL_MS`].
    Lookahead,
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::Epoch => "scheduling epoch must be in 1..=1000 ms",
            Self::Weights => "score weights alpha + beta + gamma must sum to 1000 permille",
            Self::Temperatures => "scheduler temperatures must satisfy ambient < throttle <= 200 C",
            Self::QueueFull => "full queue depth must be at least 1",
            Self::Thresholds => "thresholds must satisfy theta_low < theta <= 1000 permille",
            Self::HostSaturated => "host saturation threshold must be in 1..=1000 permille",
            Self::Headroom => "device headroom thresholds must be in 1..=1000 permille",
            Self::Dwell => "dwell must be at most 10000 ms",
            Self::MinInflight => "minimum in-flight fraction must be in 1..=1000 permille",
            Self::Backoff => "flap window must be at most 10000 ms and back-off at most 60000 ms",
            Self::Lookahead => "lookahead horizon must be at most 10000 ms",
        };
        f.write_str(msg)
    }
}
