// SPDX-License-Identifier: GPL-2.0

//! The thermal-aware per-stage scheduler's decisions (paper §4.4), in integer fixed point.
//!
//! Device-side compute heats a CSD until it throttles (see [`super::thermal`]); ReFlux escapes the
//! cliff by moving individual pipeline stages, not whole requests, between the device and the
//! host. Drain-and-switch migration costs under 50 µs, so a threshold scheme run every scheduling
//! epoch (10 ms) suffices; this module is that scheme, without the clock, the telemetry reads or
//! the migration itself, which the driver owns.
//!
//! # The score
//!
//! Every epoch the driver samples the host (CPU utilisation) and the device (controller
//! temperature, engine core utilisation, the queue depth of each actor) into a [`Sample`] and one
//! [`ActorView`] per actor, and [`Scheduler::step`] computes for each actor `a`
//!
//! `S(a) = α · T_dev + β · U_host + γ · Q_dev(a)`
//!
//! with every quantity in permille (`0..=1000`, 1000 = 1):
//!
//! - `T_dev = (temp − ambient) / (throttle − ambient)`, clamped to `0..=1000`: the normalised
//!   device temperature, 0 at ambient and 1000 at the OCP throttling threshold (77 °C);
//! - `U_host`: the host CPU utilisation, the busy fraction of the host's CPUs over the epoch
//!   ([`Sample::host_util_permille`], [`busy_permille`]), scaled by the host's frequency where
//!   the platform exposes it ([`Sample::host_freq_permille`]): the same work at half the
//!   maximum frequency uses twice the share of what the CPUs could do (`U_host · 1000 / f`, at
//!   most 1000);
//! - `Q_dev(a) = min(queue_depth(a) / q_full, 1)`: the actor's device-side queue depth, full at
//!   `q_full` requests ([`queue_depth`]: weighted by the actor's engine share with
//!   [`SchedParams::engine_share`], below);
//! - `α`, `β`, `γ`: weights in permille that sum to 1000, so that `S` is in `0..=1000` too. The
//!   paper's 0.5, 0.3, 0.2 come from an offline grid search minimising P99 latency.
//!
//! Every division rounds down. As in the paper, `S` is one pressure index: host utilisation raises
//! it as well, and it is the host saturation test below, not the score, that keeps uploads off a
//! saturated host.
//!
//! # The decision
//!
//! - **Upload** (device → host) a device-placed actor when `S > θ` and the host is not saturated
//!   (`U_host < host_saturated`).
//! - **Offload** (host → device) a host-placed actor when `S < θ_low` and the device has headroom:
//!   `T_dev < headroom_temp` and engine utilisation `< headroom_util`.
//! - The band `θ_low..=θ` is the hysteresis that keeps an actor whose score hovers near one
//!   threshold from flapping, and the headroom test keeps an actor from being sent back to a device
//!   that is still warm.
//! - An actor moves again only `dwell_ms` after its last migration ([`ActorView::last_move_ns`]),
//!   and at most one actor moves per epoch: the upload candidate with the highest score, or, if
//!   no actor is to be uploaded, the offload candidate with the lowest score (ties go to the
//!   actor that comes first in the slice). One move at a time lets the next epoch's telemetry
//!   show its effect before anything else moves.
//! - Pinned (compute-dominated, [`crate::abi::ACTOR_CLASS_COMPUTE`]) actors never move; their
//!   scores are computed and logged all the same.
//!
//! # Extensions
//!
//! Four extensions of the paper's scheme, each a named switch of [`SchedParams`], off by
//! default: with all of them off the scheme is the paper's.
//!
//! ## Flap back-off (`flap_backoff`; ours, the paper has only the dwell)
//!
//! An actor offloaded because the device had cooled may heat it past `θ` again within a fraction
//! of a second: then the device cannot sustain that stage, and sending it back whenever the
//! device cools below the headroom only repeats the cycle, each round paying a drain and two
//! hand-overs and heating the device close to the throttle point. So an upload that comes less
//! than `flap_window_ms` after the actor's offload is a *flap*: the actor's offload hold (the
//! least time before it may be offloaded again) doubles, from twice the dwell, up to
//! `max_backoff_ms`. An upload after a longer stay on the device resets the hold to the dwell.
//! The hold applies to offloads only; uploads always take the plain dwell, so that a hot device
//! is relieved as fast as before. With `flap_window_ms = 0` no upload is a flap.
//!
//! ## Thermal lookahead (`lookahead`; ours, the paper assumes a migration is instant)
//!
//! The threshold test looks at the temperature now, but an upload takes the stage off the
//! device only once the device has drained the requests it holds, and the device keeps heating
//! meanwhile. Where a drain takes milliseconds and the temperature moves over seconds (the
//! paper's regime) that does not matter; where a drain is a good fraction of the thermal time
//! constant (a slow device at depth 32, a fast-heating one), the device passes the throttle
//! threshold during the drain of an upload decided just below it. So the scheduler scores a
//! device-placed actor at the temperature the device is projected to reach when an upload
//! decided now would be done: `T + max(dT/dt, 0) · h`, where `dT/dt` is the temperature's rate
//! of change (a moving average over epochs: `(3 · old + new) / 4`) and the horizon `h` is a
//! generous estimate of the time an upload takes: the same moving average of the times the
//! driver reports with [`Scheduler::learn_upload_ns`], plus four times the moving average of
//! their deviation from it, at most `lookahead_max_ms`. That is the estimator of TCP's
//! retransmission timeout (RFC 6298), for the same reason: a drain takes as long as the
//! requests the device holds, which vary tenfold from one upload to the next, and a horizon
//! that is only right on average lets every longer drain overshoot. The horizon of one actor is
//! at least the drain it would have now: the requests it would wait for ([`ActorView::inflight`])
//! times the time a request takes to finish (Little's law; measured over windows of
//! [`RATE_WINDOW_MS`]), before any upload of it was measured too. The projection is linear, which
//! overestimates a first-order thermal system approaching its steady state: it errs toward
//! uploading early. Offloads keep the measured temperature (a cooling device needs no
//! lookahead to be judged cool). The throttle test takes the projected score too: a device
//! projected to overheat while the host is saturated is saturated as well. Before the first
//! reported upload the horizon is the cap itself: the first upload errs early, not late. With
//! `lookahead_max_ms = 0` the horizon is 0, as without the switch. On a device whose
//! temperature moves by a degree a second the projection adds half a degree at most.
//!
//! ## Engine-share weighting (`engine_share`; ours, the paper has the queue depth alone)
//!
//! The stages of one pipeline see the same requests, so their device queues are alike and so
//! are their scores: the paper's `Q_dev(a)` does not tell the stage that heats the device (LZ4)
//! from a light one behind it (crc32c, whose queue also holds the requests still to pass LZ4),
//! and the light one, scoring at least as high, may move first, the heavy one an epoch later.
//! With the switch, an actor's queue counts in proportion to its share of the
//! device engine's time over the epoch ([`ActorView::engine_share_permille`], which the device
//! reports per actor): `queue · share / 1000`, so that only the compute-heavy stage reaches `θ`.
//!
//! ## ReFlux-only host load (`u_reflux_only`; ours, the paper has the host's utilisation)
//!
//! Where the device is emulated by threads on the host's own CPUs (the software device in a
//! VM), the host's utilisation counts the device's work too, and the host looks busy exactly
//! when the device works. With the switch `U_host` is the CPU time ReFlux's host-placed stages
//! used over the epoch and the CPUs ([`Sample::reflux_util_permille`]) instead: the load an
//! upload adds to, not what else runs.
//!
//! # Throttling
//!
//! When both sides are saturated (a device-placed actor scores above `θ`, but the host is
//! saturated), migrating would only move the overload; the scheduler throttles the request rate
//! instead. The [`Scheduler`] keeps a permitted in-flight fraction, in permille of the queue's
//! in-flight limit: it halves every epoch in which the condition holds, down to
//! `min_inflight_permille`, and doubles back toward 1000 every epoch after it clears. A pinned
//! actor counts here: it cannot move, so throttling is the only relief it has. With the defaults
//! the fraction falls 1000 → 500 → 250 → 125 in three epochs (30 ms) and recovers as fast, so a
//! short saturation costs little and a long one is contained within a few epochs. The throttle
//! level and a migration are independent outputs: the driver applies both.
//!
//! # Defaults
//!
//! [`SchedParams::DEFAULT`] is the paper's scheme: a 10 ms epoch; `α`, `β`, `γ` = 500, 300, 200;
//! a 100 ms dwell; none of the extensions above (the temperature now, the dwell alone, the
//! actor's own queue depth, the host's utilisation). What the paper does not give is ours:
//! ambient 35 °C, throttle 77 °C, a full queue of 32 requests; `θ` = 650, `θ_low` = 400; the
//! host is saturated at 950; the device has headroom below `T_dev` 500 (56 °C) and 800 engine
//! utilisation; throttling down to 125. The extensions' own values, used only when they are
//! switched on: a flap is an upload within 1 s of the offload and the offload hold grows to at
//! most 5 s; the lookahead's horizon is at most 500 ms.
//!
//! Then, with the host 30 % busy, a device-placed actor with a full queue is uploaded from
//! 65.324 °C on (`T_dev` ≥ 722), well before the device throttles at 77 °C; with a half-full
//! queue from 73.724 °C (`T_dev` ≥ 922); an actor with an empty queue is not uploaded at all
//! (`S` ≤ 500 + 90). Back on the host (empty device queue), it is offloaded again once the
//! device cools below 56 °C (the headroom): 0.74 s of idling from 65.324 °C with the thermal
//! model's defaults (`τ · ln(30.3 / 21)`), the gap between 65 °C and 56 °C is what keeps it
//! from flapping. With a saturated host (95 %) and a full queue, the throttle engages from
//! 48.944 °C (`T_dev` ≥ 332). The host test `the_defaults_worked_example` computes these.

use core::fmt;

use super::pipeline::Side;
use super::thermal::{MAX_MILLI_C, OCP_THROTTLE_MILLI_C};

/// The most actor scores a [`Decision`] records for the log; the decision itself considers every
/// actor.
pub const MAX_LOGGED: usize = 8;

/// The longest scheduling epoch, in milliseconds.
pub const MAX_EPOCH_MS: u32 = 1_000;

/// The longest dwell, in milliseconds.
pub const MAX_DWELL_MS: u32 = 10_000;

/// The longest offload hold the flap back-off sets, in milliseconds.
pub const MAX_BACKOFF_MS: u32 = 60_000;

/// The fastest temperature change the lookahead believes, in milli-°C per second (200 °C per
/// millisecond, far beyond any device): bounds the projection's arithmetic.
pub const MAX_SLOPE_MILLI_C_PER_S: i64 = MAX_MILLI_C as i64 * 1000;

/// The window over which the time between finished requests is measured, for the drain
/// estimate.
pub const RATE_WINDOW_MS: u64 = 100;

/// Actors whose flaps the scheduler tracks: ids `0..MAX_TRACKED` (the driver's actor table has as
/// many slots). An actor with a larger id gets no back-off.
pub const MAX_TRACKED: usize = 16;

const NS_PER_MS: u64 = 1_000_000;

/// The parameters of the scheduler; module parameters of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedParams {
    /// The scheduling epoch: the driver calls [`Scheduler::step`] this often, in milliseconds
    /// (`1..=MAX_EPOCH_MS`). The throttle halves or doubles once per epoch.
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
    /// Engine-share weighting (ours; see the module documentation): `Q_dev(a)` counts the
    /// actor's device queue weighted by its share of the device engine's time
    /// ([`ActorView::engine_share_permille`]). Off: the queue depth itself, as in the paper.
    pub engine_share: bool,
    /// ReFlux-only host load (ours; see the module documentation): `U_host` is the CPU time of
    /// ReFlux's own host-placed stages ([`Sample::reflux_util_permille`]). Off: the busy
    /// fraction of the host's CPUs ([`Sample::host_util_permille`]), as in the paper.
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

/// What the driver measured at the start of an epoch. Utilisations above 1000 count as 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sample {
    /// The time of the sample (a monotonic clock), in nanoseconds.
    pub now_ns: u64,
    /// The device's controller temperature, in milli-°C (the `TEMP_MILLI_C` register).
    pub temp_milli_c: u32,
    /// The device's engine core utilisation, in permille (the `CORE_UTIL_PERMILLE` register).
    pub dev_util_permille: u32,
    /// The host CPU utilisation: the busy fraction of the host's CPUs over the epoch, in
    /// permille.
    pub host_util_permille: u32,
    /// The CPU time ReFlux's host-placed stages used over the epoch, in permille of the epoch
    /// times the CPUs: `U_host` with [`SchedParams::u_reflux_only`].
    pub reflux_util_permille: u32,
    /// The host CPUs' current frequency in permille of their maximum (cpufreq), where the
    /// platform exposes it; `None` (or 0) where it does not, and `U_host` is taken as it is.
    pub host_freq_permille: Option<u32>,
    /// Requests the device's queue finished so far (a counter that only grows), for the pace of
    /// a drain.
    pub finished: u64,
}

/// One actor, as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActorView {
    /// The actor's id (its slot).
    pub id: u8,
    /// Where the actor runs now.
    pub side: Side,
    /// A compute-dominated actor ([`crate::abi::ACTOR_CLASS_COMPUTE`]): never migrated.
    pub pinned: bool,
    /// The actor's device-side queue depth, in requests.
    pub dev_queue: u32,
    /// The actor's share of the device engine's time over the epoch, in permille (1000 when the
    /// engine did no work: no actor is told from another). Weighs `dev_queue` with
    /// [`SchedParams::engine_share`]; ignored otherwise.
    pub engine_share_permille: u32,
    /// The requests a drain of the actor would wait for: those that need it and are in runs
    /// already started (a source refuses the runs it has not started; the driver counts at most
    /// one per engine core for a device-placed actor).
    pub inflight: u32,
    /// When the actor last migrated, on the clock of [`Sample::now_ns`]; `None` if it never did.
    /// A time after `now_ns` counts as "just now".
    pub last_move_ns: Option<u64>,
}

/// One actor's score, recorded for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActorScore {
    /// The actor's id.
    pub id: u8,
    /// Where the actor ran when scored.
    pub side: Side,
    /// Its score `S`, in permille.
    pub score: u32,
}

impl ActorScore {
    const NONE: Self = Self {
        id: 0,
        side: Side::Host,
        score: 0,
    };
}

/// A migration the scheduler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The actor to migrate.
    pub actor: u8,
    /// The side to migrate it to: [`Side::Host`] for an upload, [`Side::Device`] for an offload.
    pub to: Side,
    /// The actor's score, in permille.
    pub score: u32,
}

/// The outcome of one epoch. Its [`Display`](fmt::Display) form is one log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The migration to perform, if any (at most one per epoch).
    pub migrate: Option<Move>,
    /// The upload in `migrate` is a flap: the actor may not be offloaded again for this many
    /// milliseconds.
    pub hold_ms: Option<u32>,
    /// Both sides were saturated this epoch: the in-flight fraction was halved.
    pub throttle: bool,
    /// The permitted in-flight fraction from now on, in permille (1000: unthrottled).
    pub inflight_permille: u32,
    /// The normalised device temperature `T_dev`, in permille.
    pub t_dev_permille: u32,
    /// The highest `T_dev` a device-placed actor was scored at, projected (see the thermal
    /// lookahead), in permille; `t_dev_permille` without a lookahead.
    pub t_proj_permille: u32,
    /// The host CPU utilisation `U_host`, in permille (scaled by the frequency, clamped).
    pub u_host_permille: u32,
    /// The host frequency the sample gave, in permille of the maximum.
    pub host_freq_permille: Option<u32>,
    /// The device engine utilisation, in permille (clamped).
    pub dev_util_permille: u32,
    /// The number of actors considered.
    pub actors: usize,
    scores: [ActorScore; MAX_LOGGED],
    logged: usize,
}

impl Decision {
    /// The scores of the first [`MAX_LOGGED`] actors, in the order they were given.
    pub fn scores(&self) -> &[ActorScore] {
        self.scores.get(..self.logged).unwrap_or(&[])
    }
}

const fn side_name(side: Side) -> &'static str {
    match side {
        Side::Host => "host",
        Side::Device => "dev",
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}->{}(s={})",
            self.actor,
            side_name(self.to.other()),
            side_name(self.to),
            self.score
        )
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t_dev={} u_host={}",
            self.t_dev_permille, self.u_host_permille
        )?;
        if self.t_proj_permille != self.t_dev_permille {
            write!(f, " t_proj={}", self.t_proj_permille)?;
        }
        if let Some(freq) = self.host_freq_permille {
            write!(f, " host_freq={freq}")?;
        }
        write!(
            f,
            " dev_util={} inflight={} throttle={} move=",
            self.dev_util_permille,
            self.inflight_permille,
            if self.throttle { "yes" } else { "no" },
        )?;
        match &self.migrate {
            Some(m) => write!(f, "{m}")?,
            None => f.write_str("none")?,
        }
        if let Some(hold) = self.hold_ms {
            write!(f, " flap hold={hold}ms")?;
        }
        f.write_str(" scores=[")?;
        for (i, s) in self.scores().iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{}@{}:{}", s.id, side_name(s.side), s.score)?;
        }
        f.write_str("]")?;
        let more = self.actors.saturating_sub(self.logged);
        if more > 0 {
            write!(f, " +{more}")?;
        }
        Ok(())
    }
}

/// `T_dev`: the normalised device temperature at `temp_milli_c`, in permille, clamped to
/// `0..=1000`. Any parameters are safe; a degenerate span (`throttle <= ambient`) gives 0.
pub const fn t_dev_permille(params: &SchedParams, temp_milli_c: u32) -> u32 {
    let span = params
        .throttle_milli_c
        .saturating_sub(params.ambient_milli_c) as u64;
    let excess = temp_milli_c.saturating_sub(params.ambient_milli_c) as u64;
    let excess = if excess > span { span } else { excess };
    // `excess <= span`, so the quotient is at most 1000.
    match (excess * 1000).checked_div(span) {
        Some(t) => t as u32,
        None => 0,
    }
}

/// `Q_dev`: the device queue depth `dev_queue` as a fraction of a full queue, in permille,
/// clamped to `0..=1000`. A zero `q_full` (invalid) counts any queued request as full.
pub const fn q_dev_permille(params: &SchedParams, dev_queue: u32) -> u32 {
    let full = params.q_full as u64;
    let q = dev_queue as u64;
    let q = if q > full { full } else { q };
    match (q * 1000).checked_div(full) {
        Some(x) => x as u32,
        None if dev_queue > 0 => 1000,
        None => 0,
    }
}

/// The queue depth `Q_dev` counts for `actor`: its device queue, weighted by its share of the
/// device engine's time with [`SchedParams::engine_share`] (a share above 1000 counts as 1000).
pub const fn queue_depth(params: &SchedParams, actor: &ActorView) -> u32 {
    if !params.engine_share {
        return actor.dev_queue;
    }
    let share = clamp_permille(actor.engine_share_permille) as u64;
    // At most `dev_queue`.
    (actor.dev_queue as u64 * share / 1000) as u32
}

const fn clamp_permille(x: u32) -> u32 {
    if x > 1000 {
        1000
    } else {
        x
    }
}

/// `U_host`: the host utilisation of `sample` (ReFlux's own with
/// [`SchedParams::u_reflux_only`]), scaled by its frequency where given, in permille
/// (`0..=1000`). A frequency of 0 or above 1000 is taken as not given or as the maximum.
pub const fn u_host_permille(params: &SchedParams, sample: &Sample) -> u32 {
    let u = if params.u_reflux_only {
        sample.reflux_util_permille
    } else {
        sample.host_util_permille
    };
    let u = clamp_permille(u) as u64;
    let u = match sample.host_freq_permille {
        Some(f) if f > 0 && f < 1000 => u * 1000 / f as u64,
        _ => u,
    };
    if u > 1000 {
        1000
    } else {
        u as u32
    }
}

/// The busy fraction of an interval in which CPUs were busy for `busy_ns` and idle for
/// `idle_ns`, in permille; `None` if neither counter moved (no tick in the interval).
pub const fn busy_permille(busy_ns: u64, idle_ns: u64) -> Option<u32> {
    // Times beyond `LIMIT` (weeks, not an epoch's) are scaled down rather than overflow: no
    // 128-bit division, which a kernel module cannot link.
    const LIMIT: u64 = u64::MAX / 2000;
    let (busy, idle) = if busy_ns > LIMIT || idle_ns > LIMIT {
        (busy_ns >> 20, idle_ns >> 20)
    } else {
        (busy_ns, idle_ns)
    };
    // Each at most `LIMIT`: the sum and `busy · 1000` fit.
    let total = busy + idle;
    if total == 0 {
        return None;
    }
    // At most 1000.
    Some((busy * 1000 / total) as u32)
}

/// `S = (α · T_dev + β · U_host + γ · Q_dev) / 1000` from its normalised terms.
const fn combine(params: &SchedParams, t_dev: u32, u_host: u32, q_dev: u32) -> u32 {
    // Each product is below 2^42, the sum below 2^44: no overflow whatever the weights.
    let sum = params.alpha_permille as u64 * t_dev as u64
        + params.beta_permille as u64 * u_host as u64
        + params.gamma_permille as u64 * q_dev as u64;
    let s = sum / 1000;
    // At most 1000 when the weights sum to 1000; clamped for invalid ones.
    if s > 1000 {
        1000
    } else {
        s as u32
    }
}

/// The score `S` of an actor with `dev_queue` requests queued on the device, in `sample`'s
/// conditions, in permille (`0..=1000`). Any parameters are safe; invalid weights are clamped to
/// a score of 1000.
pub const fn score(params: &SchedParams, sample: &Sample, dev_queue: u32) -> u32 {
    combine(
        params,
        t_dev_permille(params, sample.temp_milli_c),
        u_host_permille(params, sample),
        q_dev_permille(params, dev_queue),
    )
}

/// The temperature `horizon_ns` after one of `temp_milli_c`, changing at `slope_milli_c_per_s`:
/// the linear projection of the thermal lookahead. A falling temperature is not projected (the
/// lookahead only brings uploads forward); the slope is clamped to
/// [`MAX_SLOPE_MILLI_C_PER_S`], the horizon to [`MAX_DWELL_MS`], the result to [`MAX_MILLI_C`]
/// (or `temp_milli_c`, if above).
pub const fn project_milli_c(temp_milli_c: u32, slope_milli_c_per_s: i64, horizon_ns: u64) -> u32 {
    if slope_milli_c_per_s <= 0 {
        return temp_milli_c;
    }
    let slope = if slope_milli_c_per_s > MAX_SLOPE_MILLI_C_PER_S {
        MAX_SLOPE_MILLI_C_PER_S
    } else {
        slope_milli_c_per_s
    } as u64;
    let max_h = MAX_DWELL_MS as u64 * NS_PER_MS;
    let h = if horizon_ns > max_h {
        max_h
    } else {
        horizon_ns
    };
    // `slope <= 2·10^8` and `h <= 10^10`: the product is below 2^64.
    let rise = slope * h / 1_000_000_000;
    let t = temp_milli_c as u64 + rise;
    if temp_milli_c >= MAX_MILLI_C {
        temp_milli_c
    } else if t > MAX_MILLI_C as u64 {
        MAX_MILLI_C
    } else {
        t as u32
    }
}

/// The longest horizon of the thermal lookahead with `params`, in nanoseconds: 0 without
/// [`SchedParams::lookahead`].
const fn lookahead_cap_ns(params: &SchedParams) -> u64 {
    if params.lookahead {
        params.lookahead_max_ms as u64 * NS_PER_MS
    } else {
        0
    }
}

/// `(3 · old + new) / 4`, the moving average of the lookahead's rate and horizon.
const fn average(old: i64, new: i64) -> i64 {
    old.saturating_mul(3).saturating_add(new) / 4
}

/// How long ago `actor` last migrated, at `now_ns`: `None` if never, 0 if "after now".
const fn move_age(actor: &ActorView, now_ns: u64) -> Option<u64> {
    match actor.last_move_ns {
        None => None,
        Some(last) => match now_ns.checked_sub(last) {
            Some(age) => Some(age),
            None => Some(0),
        },
    }
}

/// Whether `actor` may migrate at `now_ns`: it is not pinned and its last migration is at least
/// `dwell_ns` old.
const fn movable(actor: &ActorView, now_ns: u64, dwell_ns: u64) -> bool {
    if actor.pinned {
        return false;
    }
    match actor.last_move_ns {
        None => true,
        // A last move after `now_ns` is "just now", too recent even for a zero dwell.
        Some(last) => match now_ns.checked_sub(last) {
            Some(age) => age >= dwell_ns,
            None => false,
        },
    }
}

/// What one epoch scores every actor against, computed once from its sample.
struct Epoch {
    /// The normalised device temperature `T_dev`, in permille.
    t_dev: u32,
    /// The longest a device-placed actor's temperature is projected ahead, in nanoseconds.
    cap_ns: u64,
    /// The shortest it is projected ahead, in nanoseconds.
    horizon_ns: u64,
    /// The host CPU utilisation `U_host`, in permille.
    u_host: u32,
    /// The device engine utilisation, in permille (clamped).
    dev_util: u32,
    /// The host can take an upload: `U_host` is below the saturation threshold.
    host_free: bool,
    /// The device can take an offload: cool and idle enough.
    headroom: bool,
    /// The time an actor stays put after a migration, in nanoseconds.
    dwell_ns: u64,
}

/// The epoch's choice so far: the best upload and offload, and whether a device-placed actor
/// wanted an upload the saturated host could not take.
#[derive(Default)]
struct Choice {
    upload: Option<Move>,
    offload: Option<Move>,
    saturated: bool,
}

/// The scheduler's state: the throttle level, the actors' offload holds and statistics. One per
/// device.
///
/// # Invariants
///
/// `inflight_permille` is in `1..=1000`; `slope` is within
/// `±MAX_SLOPE_MILLI_C_PER_S`; both times in `upload` are at most `MAX_DWELL_MS` in
/// nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scheduler {
    inflight_permille: u32,
    /// The last sample's time and temperature, for the rate of change.
    last_temp: Option<(u64, u32)>,
    /// The temperature's rate of change (moving average), in milli-°C per second.
    slope: i64,
    /// The time uploads took: its moving average and the moving average of the deviation from
    /// it, in nanoseconds; `None` before the first (the lookahead then takes its cap).
    upload: Option<(u64, u64)>,
    /// The start of the current window: time and `Sample::finished`.
    window: Option<(u64, u64)>,
    /// The time between finished requests over the last whole window, in nanoseconds (at
    /// least the window, when none finished); `None` before the first.
    per_request_ns: Option<u64>,
    /// Per actor id: the offload hold the flap back-off set, in milliseconds (0: the dwell).
    hold_ms: [u32; MAX_TRACKED],
    epochs: u64,
    moves: u64,
    throttled_epochs: u64,
    flaps: u64,
}

impl Scheduler {
    /// A scheduler that has not throttled.
    pub const fn new() -> Self {
        // INVARIANT: 1000 is in range; a zero slope and horizon are.
        Self {
            inflight_permille: 1000,
            last_temp: None,
            slope: 0,
            upload: None,
            window: None,
            per_request_ns: None,
            hold_ms: [0; MAX_TRACKED],
            epochs: 0,
            moves: 0,
            throttled_epochs: 0,
            flaps: 0,
        }
    }

    /// Runs one epoch: scores every actor in `actors`, decides at most one migration and updates
    /// the throttle (see the module documentation).
    ///
    /// `params` should be valid ([`SchedParams::validate`]); invalid ones give meaningless but
    /// safe decisions (no panic, no overflow, an in-flight fraction in `1..=1000`). The caller
    /// performs the migration and records its time in the actor's [`ActorView::last_move_ns`].
    pub fn step(
        &mut self,
        params: &SchedParams,
        sample: &Sample,
        actors: &[ActorView],
    ) -> Decision {
        self.observe(sample);
        let t_dev = t_dev_permille(params, sample.temp_milli_c);
        self.pace(sample);
        let epoch = self.epoch(params, sample, t_dev);
        // The highest projection a device-placed actor was scored at (a host-placed actor's
        // temperature is `t_dev` itself, which this starts at).
        let mut t_proj = t_dev;
        let mut scores = [ActorScore::NONE; MAX_LOGGED];
        let mut choice = Choice::default();
        for (i, a) in actors.iter().enumerate() {
            let t = self.actor_temp(params, sample, &epoch, a);
            t_proj = t_proj.max(t);
            let s = combine(
                params,
                t,
                epoch.u_host,
                q_dev_permille(params, queue_depth(params, a)),
            );
            if let Some(slot) = scores.get_mut(i) {
                *slot = ActorScore {
                    id: a.id,
                    side: a.side,
                    score: s,
                };
            }
            self.consider(params, sample, &epoch, a, s, &mut choice);
        }
        let hold_ms = choice.upload.and_then(|m| {
            let a = actors.iter().find(|a| a.id == m.actor)?;
            self.note_upload(params, a, sample.now_ns)
        });
        let migrate = match choice.upload {
            Some(m) => Some(m),
            None => choice.offload,
        };
        self.count_epoch(params, choice.saturated, migrate.is_some());

        Decision {
            migrate,
            hold_ms,
            throttle: choice.saturated,
            inflight_permille: self.inflight_permille,
            t_dev_permille: t_dev,
            t_proj_permille: t_proj,
            u_host_permille: epoch.u_host,
            host_freq_permille: sample.host_freq_permille,
            dev_util_permille: epoch.dev_util,
            actors: actors.len(),
            scores,
            logged: actors.len().min(MAX_LOGGED),
        }
    }

    /// What every actor of this epoch is scored against, from `sample` and the normalised
    /// temperature `t_dev`. Called after [`Self::pace`], whose window the horizon depends on.
    fn epoch(&self, params: &SchedParams, sample: &Sample, t_dev: u32) -> Epoch {
        let u_host = u_host_permille(params, sample);
        let dev_util = clamp_permille(sample.dev_util_permille);
        Epoch {
            t_dev,
            cap_ns: lookahead_cap_ns(params),
            horizon_ns: self.horizon_ns(params),
            u_host,
            dev_util,
            host_free: u_host < params.host_saturated_permille,
            headroom: t_dev < params.headroom_temp_permille
                && dev_util < params.headroom_util_permille,
            dwell_ns: u64::from(params.dwell_ms) * NS_PER_MS,
        }
    }

    /// The normalised temperature `a` is scored at: for a device-placed actor `T_dev` projected
    /// over the time its drain would take (at least the horizon, at most the cap) and never
    /// below `t_dev`; for a host-placed one `t_dev`.
    fn actor_temp(
        &self,
        params: &SchedParams,
        sample: &Sample,
        epoch: &Epoch,
        a: &ActorView,
    ) -> u32 {
        match a.side {
            Side::Device => {
                let h = match self.drain_ns(a.inflight) {
                    Some(d) => d.max(epoch.horizon_ns).min(epoch.cap_ns),
                    None => epoch.horizon_ns,
                };
                t_dev_permille(params, project_milli_c(sample.temp_milli_c, self.slope, h))
                    .max(epoch.t_dev)
            }
            Side::Host => epoch.t_dev,
        }
    }

    /// Weighs actor `a`, scored `s`, into `choice`: a device-placed actor above `θ` is the
    /// upload candidate if it scores highest (or marks the epoch saturated when the host is
    /// not free); a host-placed one below `θ_low` is the offload candidate if it scores lowest
    /// and the device has headroom. Only actors past their dwell (and flap hold) count.
    fn consider(
        &self,
        params: &SchedParams,
        sample: &Sample,
        epoch: &Epoch,
        a: &ActorView,
        s: u32,
        choice: &mut Choice,
    ) {
        let candidate = Move {
            actor: a.id,
            to: a.side.other(),
            score: s,
        };
        match a.side {
            Side::Device if s > params.theta_permille => {
                if !epoch.host_free {
                    choice.saturated = true;
                } else if movable(a, sample.now_ns, epoch.dwell_ns) {
                    choice.upload = match choice.upload {
                        Some(m) if m.score >= s => Some(m),
                        _ => Some(candidate),
                    };
                }
            }
            Side::Host
                if s < params.theta_low_permille
                    && epoch.headroom
                    && movable(
                        a,
                        sample.now_ns,
                        epoch.dwell_ns.max(self.hold_ns(params, a.id)),
                    ) =>
            {
                choice.offload = match choice.offload {
                    Some(m) if m.score <= s => Some(m),
                    _ => Some(candidate),
                };
            }
            _ => {}
        }
    }

    /// Ends an epoch: halves the in-flight fraction (down to the floor) if it was `saturated`,
    /// doubles it back towards 1000 otherwise, and counts the epoch, its migration and its
    /// throttling.
    fn count_epoch(&mut self, params: &SchedParams, saturated: bool, migrated: bool) {
        let floor = params.min_inflight_permille.clamp(1, 1000);
        self.inflight_permille = if saturated {
            (self.inflight_permille / 2).max(floor)
        } else {
            self.inflight_permille.saturating_mul(2).min(1000)
        };
        self.epochs = self.epochs.saturating_add(1);
        if migrated {
            self.moves = self.moves.saturating_add(1);
        }
        if saturated {
            self.throttled_epochs = self.throttled_epochs.saturating_add(1);
        }
    }

    /// Updates the temperature's rate of change with `sample`. A sample no later than the last
    /// one leaves the rate alone (a clock going backwards restarts from it).
    fn observe(&mut self, sample: &Sample) {
        let now = (sample.now_ns, sample.temp_milli_c);
        let Some((t0, temp0)) = self.last_temp else {
            self.last_temp = Some(now);
            return;
        };
        if sample.now_ns == t0 {
            return;
        }
        self.last_temp = Some(now);
        let Some(dt) = sample.now_ns.checked_sub(t0) else {
            return;
        };
        let dt = i64::try_from(dt).unwrap_or(i64::MAX);
        let d = i64::from(sample.temp_milli_c) - i64::from(temp0);
        let rate = (d.saturating_mul(1_000_000_000) / dt)
            .clamp(-MAX_SLOPE_MILLI_C_PER_S, MAX_SLOPE_MILLI_C_PER_S);
        // INVARIANT: the average of two values within the bound is within it.
        self.slope = average(self.slope, rate);
    }

    /// Measures the time between finished requests over windows of [`RATE_WINDOW_MS`]: a window
    /// closes at the first sample past its length. A counter or clock going backwards restarts
    /// it.
    fn pace(&mut self, sample: &Sample) {
        let now = (sample.now_ns, sample.finished);
        let Some((t0, f0)) = self.window else {
            self.window = Some(now);
            return;
        };
        let (Some(dt), Some(df)) = (
            sample.now_ns.checked_sub(t0),
            sample.finished.checked_sub(f0),
        ) else {
            self.window = Some(now);
            return;
        };
        if dt < RATE_WINDOW_MS * NS_PER_MS {
            return;
        }
        // None finished: a request takes at least the window.
        self.per_request_ns = Some(dt / df.max(1));
        self.window = Some(now);
    }

    /// How long a drain of `inflight` requests would take at the measured pace, in
    /// nanoseconds, at most [`MAX_DWELL_MS`]; `None` before a pace was measured.
    pub fn drain_ns(&self, inflight: u32) -> Option<u64> {
        let max = u64::from(MAX_DWELL_MS) * NS_PER_MS;
        self.per_request_ns
            .map(|p| p.saturating_mul(u64::from(inflight)).min(max))
    }

    /// Tells the scheduler an upload took `ns` nanoseconds, from its decision until the
    /// device's part was done (drain, checkpoint, hand-over): the horizon of the thermal
    /// lookahead follows the moving average of these (before the first, it is the cap).
    pub fn learn_upload_ns(&mut self, ns: u64) {
        let max = u64::from(MAX_DWELL_MS) * NS_PER_MS;
        // Every value below is in `0..=max`, far inside `i64`.
        let ns = ns.min(max) as i64;
        let (mean, dev) = match self.upload {
            None => (ns, ns / 2),
            Some((m, v)) => {
                let (m, v) = (m as i64, v as i64);
                (average(m, ns), average(v, (m - ns).abs()))
            }
        };
        // INVARIANT: averages of values in `0..=max` are in `0..=max`.
        self.upload = Some((mean as u64, dev as u64));
    }

    /// The lookahead's horizon with `params`, in nanoseconds: the time uploads took plus four
    /// times its deviation, at most `lookahead_max_ms`; the cap before the first upload; 0
    /// without [`SchedParams::lookahead`].
    pub fn horizon_ns(&self, params: &SchedParams) -> u64 {
        let cap = lookahead_cap_ns(params);
        match self.upload {
            // At most `5 · max`: no overflow.
            Some((mean, dev)) => (mean + 4 * dev).min(cap),
            None => cap,
        }
    }

    /// The temperature's rate of change the lookahead uses, in milli-°C per second.
    pub const fn slope_milli_c_per_s(&self) -> i64 {
        self.slope
    }

    /// The time uploads took (moving average) and its deviation, in nanoseconds; `None` before
    /// the first.
    pub const fn upload_ns(&self) -> Option<(u64, u64)> {
        self.upload
    }

    /// The offload hold of actor `id` with `params`, in nanoseconds (0: none beyond the dwell,
    /// as always without [`SchedParams::flap_backoff`]).
    fn hold_ns(&self, params: &SchedParams, id: u8) -> u64 {
        if !params.flap_backoff {
            return 0;
        }
        self.hold_ms
            .get(usize::from(id))
            .map_or(0, |h| u64::from(*h) * NS_PER_MS)
    }

    /// Updates the offload hold of `a`, which is being uploaded at `now_ns`; returns the new hold
    /// if the upload is a flap (never without [`SchedParams::flap_backoff`]).
    fn note_upload(&mut self, params: &SchedParams, a: &ActorView, now_ns: u64) -> Option<u32> {
        if !params.flap_backoff {
            return None;
        }
        let hold = self.hold_ms.get_mut(usize::from(a.id))?;
        let window = u64::from(params.flap_window_ms) * NS_PER_MS;
        let flap = match move_age(a, now_ns) {
            Some(age) => age < window,
            None => false,
        };
        if !flap {
            *hold = 0;
            return None;
        }
        let doubled = (*hold).max(params.dwell_ms).saturating_mul(2);
        *hold = doubled.min(params.max_backoff_ms.min(MAX_BACKOFF_MS));
        self.flaps = self.flaps.saturating_add(1);
        Some(*hold)
    }

    /// The offload hold of actor `id` the flap back-off set, in milliseconds (0: the dwell).
    pub fn hold_ms(&self, id: u8) -> u32 {
        self.hold_ms.get(usize::from(id)).copied().unwrap_or(0)
    }

    /// Uploads that were flaps, so far.
    pub const fn flaps(&self) -> u64 {
        self.flaps
    }

    /// The permitted in-flight fraction, in permille (1000: unthrottled).
    pub const fn inflight_permille(&self) -> u32 {
        self.inflight_permille
    }

    /// Epochs run so far.
    pub const fn epochs(&self) -> u64 {
        self.epochs
    }

    /// Migrations decided so far.
    pub const fn moves(&self) -> u64 {
        self.moves
    }

    /// Epochs in which both sides were saturated (the throttle tightened).
    pub const fn throttled_epochs(&self) -> u64 {
        self.throttled_epochs
    }
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}
