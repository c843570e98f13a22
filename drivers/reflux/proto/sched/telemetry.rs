// SPDX-License-Identifier: GPL-2.0

//! What the driver measures every epoch: the host and the device, and each actor.

use super::super::pipeline::Side;

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
    /// The CPU time ReFlux's host-placed stages used over the epoch, in permille of the epoch times
    /// the CPUs: `U_host` with [`SchedParams::u_reflux_only`](super::SchedParams::u_reflux_only).
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
    /// [`SchedParams::engine_share`](super::SchedParams::engine_share); ignored otherwise.
    pub engine_share_permille: u32,
    /// The requests a drain of the actor would wait for: those that need it and are in runs
    /// already started (a source refuses the runs it has not started; the driver counts at most
    /// one per engine core for a device-placed actor).
    pub inflight: u32,
    /// When the actor last migrated, on the clock of [`Sample::now_ns`]; `None` if it never did.
    /// A time after `now_ns` counts as "just now".
    pub last_move_ns: Option<u64>,
}
