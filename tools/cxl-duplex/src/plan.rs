// SPDX-License-Identifier: GPL-2.0

//! Sweeps: which configurations a run measures, in which order.

/// Largest thread count a run may use.
pub const MAX_THREADS: u32 = 512;
/// Smallest and largest block.
pub const MIN_BLOCK: u64 = 64;
/// Largest block.
pub const MAX_BLOCK: u64 = 1 << 20;

/// One measured configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Reads in percent.
    pub read_percent: u32,
    /// Worker threads.
    pub threads: u32,
}

/// Why a plan is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A read ratio above 100 %.
    BadRatio(u32),
    /// A thread count of 0 or above [`MAX_THREADS`].
    BadThreads(u32),
    /// A block size that is not a power of two in `64 B..=1 MiB`.
    BadBlock(u64),
    /// A buffer smaller than one block per thread.
    BufferTooSmall {
        /// Bytes asked for.
        buffer: u64,
        /// Bytes needed.
        needed: u64,
    },
    /// Nothing to measure.
    Empty,
}

impl core::fmt::Display for PlanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadRatio(r) => write!(f, "read ratio {r} % is above 100 %"),
            Self::BadThreads(t) => write!(f, "{t} threads: use 1 to {MAX_THREADS}"),
            Self::BadBlock(b) => write!(
                f,
                "block of {b} bytes: use a power of two from {MIN_BLOCK} to {MAX_BLOCK}"
            ),
            Self::BufferTooSmall { buffer, needed } => write!(
                f,
                "a {buffer}-byte buffer is smaller than one block per thread ({needed} bytes)"
            ),
            Self::Empty => write!(f, "no read ratio or thread count to measure"),
        }
    }
}

/// Checks the block and buffer for the largest thread count, and lists every (ratio, threads)
/// point: thread counts outer, ratios inner, each list in the order given.
pub fn sweep(
    ratios: &[u32],
    threads: &[u32],
    block: u64,
    buffer: u64,
) -> Result<Vec<Point>, PlanError> {
    if ratios.is_empty() || threads.is_empty() {
        return Err(PlanError::Empty);
    }
    check_values(ratios, threads, block)?;
    let most = u64::from(threads.iter().copied().max().unwrap_or(1));
    let needed = most * block;
    if buffer < needed {
        return Err(PlanError::BufferTooSmall { buffer, needed });
    }
    Ok(threads
        .iter()
        .flat_map(|&t| {
            ratios.iter().map(move |&r| Point {
                read_percent: r,
                threads: t,
            })
        })
        .collect())
}

/// Checks the values an option can get wrong on its own (ratios, thread counts, the block), so
/// that the command line can refuse them before any buffer exists; the buffer size is checked
/// against them by [`sweep`].
pub fn check_values(ratios: &[u32], threads: &[u32], block: u64) -> Result<(), PlanError> {
    if let Some(r) = ratios.iter().find(|r| **r > 100) {
        return Err(PlanError::BadRatio(*r));
    }
    if let Some(t) = threads.iter().find(|t| **t == 0 || **t > MAX_THREADS) {
        return Err(PlanError::BadThreads(*t));
    }
    if !block.is_power_of_two() || !(MIN_BLOCK..=MAX_BLOCK).contains(&block) {
        return Err(PlanError::BadBlock(block));
    }
    Ok(())
}

/// Parses a list such as `0,25,50` or a range with a step such as `0-100:10`.
pub fn parse_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        if let Some((range, step)) = part.split_once(':') {
            let (a, b) = range.split_once('-')?;
            let (a, b, step): (u32, u32, u32) =
                (a.parse().ok()?, b.parse().ok()?, step.parse().ok()?);
            if step == 0 || a > b {
                return None;
            }
            out.extend((a..=b).step_by(step as usize));
        } else {
            out.push(part.parse().ok()?);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Parses a size with an optional `K`, `M` or `G` suffix (powers of 1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, shift) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 10),
        b'M' | b'm' => (&s[..s.len() - 1], 20),
        b'G' | b'g' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Parses a kernel node list such as `0`, `0-1` or `0,2-3`.
pub fn parse_node_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}
