// SPDX-License-Identifier: GPL-2.0

//! Algorithm 1, phases 1 and 2: a sliding window of system samples, EWMA trends, the
//! oversubscription test and the scheduling hint; and the time slice the hint implies.

/// One sample of the system.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Runnable threads.
    pub running: u32,
    /// Online CPUs.
    pub cpus: u32,
    /// CPU utilization, 0 to 1.
    pub util: f64,
    /// Bytes read and written since the previous sample (0 without counters).
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

impl Sample {
    /// Runnable threads per CPU.
    pub fn load(&self) -> f64 {
        f64::from(self.running) / f64::from(self.cpus.max(1))
    }

    /// The read share of the traffic, if there was traffic.
    pub fn read_share(&self) -> Option<f64> {
        let total = self.read_bytes + self.write_bytes;
        (total > 0).then(|| self.read_bytes as f64 / total as f64)
    }
}

/// The last `N` samples.
///
/// # Invariants
///
/// `len <= N`; the samples are `buf[(head + N - len + i) % N]` for `i < len`, oldest first.
#[derive(Clone, Debug)]
pub struct Window<const N: usize> {
    buf: [Sample; N],
    head: usize,
    len: usize,
}

impl<const N: usize> Default for Window<N> {
    fn default() -> Self {
        Self {
            buf: [Sample::default(); N],
            head: 0,
            len: 0,
        }
    }
}

impl<const N: usize> Window<N> {
    /// Adds a sample, dropping the oldest once full.
    pub fn push(&mut self, s: Sample) {
        if N == 0 {
            return;
        }
        self.buf[self.head] = s;
        self.head = (self.head + 1) % N;
        self.len = (self.len + 1).min(N);
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The samples, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Sample> {
        (0..self.len).map(move |i| &self.buf[(self.head + N - self.len + i) % N])
    }

    fn mean(&self, f: impl Fn(&Sample) -> f64) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        self.iter().map(f).sum::<f64>() / self.len as f64
    }

    /// Average runnable threads per CPU.
    pub fn mean_load(&self) -> f64 {
        self.mean(Sample::load)
    }

    /// Average utilization.
    pub fn mean_util(&self) -> f64 {
        self.mean(|s| s.util)
    }
}

/// Runnable threads per CPU above which, with utilization above [`OVERSUB_UTIL`], the system is
/// oversubscribed (CXLAimPod, section 4.4.1).
pub const OVERSUB_LOAD: f64 = 1.5;
/// Utilization above which, with load above [`OVERSUB_LOAD`], the system is oversubscribed.
pub const OVERSUB_UTIL: f64 = 0.85;

/// Whether the window shows oversubscription: both averages strictly above their thresholds.
pub fn oversubscribed<const N: usize>(w: &Window<N>) -> bool {
    !w.is_empty() && w.mean_load() > OVERSUB_LOAD && w.mean_util() > OVERSUB_UTIL
}

/// Two EWMAs of the read share, a fast and a slow one: their difference is the trend (positive:
/// turning toward reads), their disagreement with each sample the volatility.
#[derive(Clone, Copy, Debug)]
pub struct Trends {
    fast: Option<f64>,
    slow: Option<f64>,
    volatility: f64,
    alpha_fast: f64,
    alpha_slow: f64,
}

impl Trends {
    /// EWMAs with smoothing factors `alpha_fast > alpha_slow`, both in `(0, 1]`.
    pub fn new(alpha_fast: f64, alpha_slow: f64) -> Option<Self> {
        let ok = |a: f64| a > 0.0 && a <= 1.0;
        (ok(alpha_fast) && ok(alpha_slow) && alpha_fast > alpha_slow).then_some(Self {
            fast: None,
            slow: None,
            volatility: 0.0,
            alpha_fast,
            alpha_slow,
        })
    }

    /// Folds in a sample's read share; samples without traffic change nothing.
    pub fn update(&mut self, s: &Sample) {
        let Some(x) = s.read_share() else {
            return;
        };
        let ew = |prev: Option<f64>, a: f64| prev.map_or(x, |p| p + a * (x - p));
        if let Some(f) = self.fast {
            self.volatility += self.alpha_slow * ((x - f).abs() - self.volatility);
        }
        self.fast = Some(ew(self.fast, self.alpha_fast));
        self.slow = Some(ew(self.slow, self.alpha_slow));
    }

    /// The current read share (the fast EWMA), if any traffic was seen.
    pub fn read_share(&self) -> Option<f64> {
        self.fast
    }

    /// Fast minus slow: positive when the mix is turning toward reads.
    pub fn trend(&self) -> f64 {
        match (self.fast, self.slow) {
            (Some(f), Some(s)) => f - s,
            _ => 0.0,
        }
    }

    /// How far samples stray from the fast EWMA, smoothed.
    pub fn volatility(&self) -> f64 {
        self.volatility
    }
}

/// What phase 2 tells the dispatcher.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hint {
    /// The system is oversubscribed: keep placements stable, do not migrate for balance.
    pub oversubscribed: bool,
    /// The mix is changing phase (|trend| above the threshold).
    pub phase_change: bool,
    /// The smoothed volatility of the mix.
    pub volatility: f64,
}

/// |trend| above which the mix is changing phase.
pub const PHASE_THRESHOLD: f64 = 0.1;

/// Algorithm 1's `GenerateSchedulingHint`.
pub fn hint<const N: usize>(w: &Window<N>, t: &Trends) -> Hint {
    Hint {
        oversubscribed: oversubscribed(w),
        phase_change: t.trend().abs() > PHASE_THRESHOLD,
        volatility: t.volatility(),
    }
}

/// Algorithm 1's `CalculateTimeSlice`: the base slice, halved (at most) as volatility grows so
/// that placements follow a changing mix, doubled when oversubscribed so that fewer switches
/// steal from the work. Never below `base / 2` nor above `2 * base`.
pub fn time_slice(base_ns: u64, h: &Hint) -> u64 {
    if h.oversubscribed {
        return base_ns.saturating_mul(2);
    }
    let v = h.volatility.clamp(0.0, 1.0);
    let shrink = 1.0 - 0.5 * v;
    ((base_ns as f64) * shrink) as u64
}
