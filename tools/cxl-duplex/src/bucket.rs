// SPDX-License-Identifier: GPL-2.0

//! A token bucket: `rate` bytes per second, bursts of at most `burst` bytes. Time is given by the
//! caller (nanoseconds since any origin), so the bucket is a pure state machine.

/// A bandwidth cap.
///
/// # Invariants
///
/// `tokens <= burst`; `rate > 0`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: u64,
    burst: u64,
    tokens: u64,
    /// Nanoseconds of refill not yet turned into a whole token, times `rate` (a remainder).
    frac: u128,
    last_ns: u64,
}

impl TokenBucket {
    /// A full bucket of `burst` bytes refilled at `rate` bytes per second, from `now_ns`; `None`
    /// for a zero rate or burst.
    pub fn new(rate: u64, burst: u64, now_ns: u64) -> Option<Self> {
        if rate == 0 || burst == 0 {
            return None;
        }
        Some(Self {
            rate,
            burst,
            tokens: burst,
            frac: 0,
            last_ns: now_ns,
        })
    }

    fn refill(&mut self, now_ns: u64) {
        let dt = u128::from(now_ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(now_ns);
        // Exact: tokens = rate * dt / 1e9, the remainder carried over.
        let scaled = dt * u128::from(self.rate) + self.frac;
        let whole = scaled / 1_000_000_000;
        self.frac = scaled % 1_000_000_000;
        let add = u64::try_from(whole).unwrap_or(u64::MAX);
        self.tokens = self.tokens.saturating_add(add).min(self.burst);
        if self.tokens == self.burst {
            self.frac = 0;
        }
    }

    /// Takes `bytes` if the bucket holds them at `now_ns`; otherwise returns how many
    /// nanoseconds to wait before they will be there. A request above the burst is taken once the
    /// bucket is full (it then empties it): large blocks are not refused, only paced.
    pub fn take(&mut self, bytes: u64, now_ns: u64) -> Result<(), u64> {
        self.refill(now_ns);
        let need = bytes.min(self.burst);
        if self.tokens >= need {
            self.tokens -= need;
            return Ok(());
        }
        let missing = u128::from(need - self.tokens) * 1_000_000_000;
        let wait = (missing.saturating_sub(self.frac)).div_ceil(u128::from(self.rate));
        Err(u64::try_from(wait).unwrap_or(u64::MAX).max(1))
    }
}
