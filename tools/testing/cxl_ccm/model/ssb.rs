// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_SSB_Q1_1` / `KERNEL_SSB_Q1_2`: the filter of Star Schema Benchmark queries 1.1 and 1.2
//! over `lineorder` (AXLE Table IV (f), (g)), with a partial aggregate per chunk; the host
//! aggregates the partials.
//!
//! A row is four little-endian `u32`: orderdate (yyyymmdd), quantity, discount, extendedprice.
//! A row matches when all three lie in the argument's inclusive ranges (Q1.1: year 1993,
//! discount 1-3, quantity < 25; Q1.2: January 1994, discount 4-6, quantity 26-35). Each chunk of
//! `chunk_rows` rows yields one 16-byte record: the revenue `sum(extendedprice * discount)` of
//! its matching rows (wrapping `u64`) and the number of matches.

use super::xform::ChunkSpan;
use crate::abi::{SsbArgs, MAX_ARG_SIZE, STATUS_BAD_ARGS};

/// Bytes of a `lineorder` row.
pub const ROW_BYTES: u32 = 16;
/// Bytes of a chunk's result: revenue and matches, two `u64`.
pub const PARTIAL_BYTES: u32 = 16;
/// Rows per record when the arguments say 0.
pub const DEFAULT_CHUNK_ROWS: u32 = 4096;

/// Why an SSB launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SsbError {
    /// `arg_size` is not the size of [`SsbArgs`].
    BadArgSize,
    /// `rows` is 0, or the input is not `rows * 16` bytes.
    InputSizeMismatch,
    /// A record (16 bytes) does not fit the streaming factor.
    StreamingFactorTooSmall,
}

impl SsbError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated SSB filter launch.
///
/// # Invariants
///
/// `rows >= 1`, `chunk_rows >= 1`, and `rows * 16` (the input size) fits in a `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ssb {
    args: SsbArgs,
    chunk_rows: u32,
}

impl Ssb {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    pub fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, SsbError> {
        if usize::from(arg_size) != core::mem::size_of::<SsbArgs>() {
            return Err(SsbError::BadArgSize);
        }
        let a = SsbArgs::from_bytes(args);
        if a.rows == 0 || u64::from(a.rows) * u64::from(ROW_BYTES) != u64::from(input_size) {
            return Err(SsbError::InputSizeMismatch);
        }
        if streaming_factor < PARTIAL_BYTES {
            return Err(SsbError::StreamingFactorTooSmall);
        }
        let chunk_rows = if a.chunk_rows == 0 {
            DEFAULT_CHUNK_ROWS
        } else {
            a.chunk_rows
        };
        // INVARIANT: checked above.
        Ok(Self {
            args: a,
            chunk_rows,
        })
    }

    /// Result records of the launch.
    pub const fn chunk_count(&self) -> u32 {
        self.args.rows.div_ceil(self.chunk_rows)
    }

    /// Bytes of output: one partial per chunk.
    pub const fn output_bytes(&self) -> u32 {
        // Cannot overflow: at most one partial (16 bytes) per row (16 bytes) of a `u32` input.
        self.chunk_count() * PARTIAL_BYTES
    }

    /// The output span of chunk `index` (its partial).
    pub const fn chunk(&self, index: u32) -> Option<ChunkSpan> {
        if index >= self.chunk_count() {
            return None;
        }
        Some(ChunkSpan {
            offset: index * PARTIAL_BYTES,
            length: PARTIAL_BYTES,
        })
    }

    /// The input rows of chunk `index`: the first row and how many.
    pub const fn rows_of(&self, index: u32) -> (u32, u32) {
        let first = index as u64 * self.chunk_rows as u64;
        let rest = self.args.rows as u64 - first;
        let n = if rest < self.chunk_rows as u64 {
            rest
        } else {
            self.chunk_rows as u64
        };
        (first as u32, n as u32)
    }

    /// Adds one row (16 bytes) to a partial `(revenue, matches)` if it matches.
    pub fn accumulate(&self, row: &[u8], partial: (u64, u64)) -> (u64, u64) {
        let w = |i: usize| {
            row.get(4 * i..4 * i + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (date, quantity, discount, price) = (w(0), w(1), w(2), w(3));
        let a = &self.args;
        let hit = (a.date_lo..=a.date_hi).contains(&date)
            && (a.discount_lo..=a.discount_hi).contains(&discount)
            && (a.quantity_lo..=a.quantity_hi).contains(&quantity);
        if !hit {
            return partial;
        }
        (
            partial
                .0
                .wrapping_add(u64::from(price) * u64::from(discount)),
            partial.1 + 1,
        )
    }
}
