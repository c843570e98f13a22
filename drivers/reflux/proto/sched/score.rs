// SPDX-License-Identifier: GPL-2.0

//! The score `S` and its normalised terms `T_dev`, `U_host` and `Q_dev`.

use super::{ActorView, Sample, SchedParams};

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

pub(super) const fn clamp_permille(x: u32) -> u32 {
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
pub(super) const fn combine(params: &SchedParams, t_dev: u32, u_host: u32, q_dev: u32) -> u32 {
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
