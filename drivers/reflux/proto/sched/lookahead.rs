// SPDX-License-Identifier: GPL-2.0

//! The thermal lookahead: the temperature's rate of change, the time an upload takes and the
//! pace of a drain, and the projection they give.

use super::super::thermal::MAX_MILLI_C;
use super::{
    Sample, SchedParams, Scheduler, MAX_DWELL_MS, MAX_SLOPE_MILLI_C_PER_S, NS_PER_MS,
    RATE_WINDOW_MS,
};

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
pub(super) const fn lookahead_cap_ns(params: &SchedParams) -> u64 {
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
impl Scheduler {
    /// Updates the temperature's rate of change with `sample`. A sample no later than the last
    /// one leaves the rate alone (a clock going backwards restarts from it).
    pub(super) fn observe(&mut self, sample: &Sample) {
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
    pub(super) fn pace(&mut self, sample: &Sample) {
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
}
