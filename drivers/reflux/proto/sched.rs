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

use super::thermal::MAX_MILLI_C;

mod backoff;
mod decision;
mod epoch;
mod lookahead;
mod params;
mod score;
mod telemetry;

pub use decision::{ActorScore, Decision, Move};
pub use lookahead::project_milli_c;
pub use params::{SchedError, SchedParams};
pub use score::{
    busy_permille, q_dev_permille, queue_depth, score, t_dev_permille, u_host_permille,
};
pub use telemetry::{ActorView, Sample};

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
