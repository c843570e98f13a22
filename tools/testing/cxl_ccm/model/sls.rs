// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_DLRM_SLS`: DLRM's sparse-length-sum (AXLE Table IV (i)): the embedding gather and
//! reduction on the device, the MLP on the host.
//!
//! The input is an embedding table of `rows` vectors of `dim` little-endian `i32`, then `samples`
//! lists of `pooling` little-endian `u32` row indices, taken modulo `rows` (so any index is
//! defined and the kernel has no error path per index). Each sample's output is the element-wise
//! wrapping sum of its rows; every `chunk_samples` samples are one record.

use super::xform::ChunkSpan;
use crate::abi::{SlsArgs, MAX_ARG_SIZE, SLS_MAX_DIM, STATUS_BAD_ARGS};

/// Bytes of one element and of one index.
pub const WORD_BYTES: u32 = 4;

/// Why an SLS launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlsError {
    /// `arg_size` is not the size of [`SlsArgs`].
    BadArgSize,
    /// A reserved field is not zero.
    ReservedNonZero,
    /// `dim` is 0 or above [`SLS_MAX_DIM`], or `rows`, `samples` or `pooling` is 0.
    BadShape,
    /// The input is not `(rows * dim + samples * pooling) * 4` bytes.
    InputSizeMismatch,
    /// A record of `chunk_samples` vectors does not fit the streaming factor.
    ChunkAboveStreamingFactor,
}

impl SlsError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated SLS launch.
///
/// # Invariants
///
/// `dim` in `1..=SLS_MAX_DIM`; `rows`, `samples`, `pooling`, `chunk_samples` at least 1; the
/// input size and `samples * dim * 4` (the output size) fit in a `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sls {
    dim: u32,
    rows: u32,
    samples: u32,
    pooling: u32,
    chunk_samples: u32,
}

impl Sls {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    pub fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, SlsError> {
        if usize::from(arg_size) != core::mem::size_of::<SlsArgs>() {
            return Err(SlsError::BadArgSize);
        }
        let a = SlsArgs::from_bytes(args);
        if a.reserved0 != 0 || a.reserved != 0 {
            return Err(SlsError::ReservedNonZero);
        }
        if a.dim == 0 || a.dim > SLS_MAX_DIM || a.rows == 0 || a.samples == 0 || a.pooling == 0 {
            return Err(SlsError::BadShape);
        }
        let w = u64::from(WORD_BYTES);
        // `dim` is at most `SLS_MAX_DIM`, so the table and the output fit a `u64`; the index
        // lists (`samples * pooling` words) may not, and then match no `u32` input size.
        let table = u64::from(a.rows) * u64::from(a.dim) * w;
        let output = u64::from(a.samples) * u64::from(a.dim) * w;
        let input = u64::from(a.samples)
            .checked_mul(u64::from(a.pooling))
            .and_then(|n| n.checked_mul(w))
            .and_then(|lists| lists.checked_add(table));
        if input != Some(u64::from(input_size)) || output > u64::from(u32::MAX) {
            return Err(SlsError::InputSizeMismatch);
        }
        let vector = a.dim * WORD_BYTES;
        let fit = streaming_factor / vector;
        let chunk_samples = if a.chunk_samples == 0 {
            fit
        } else {
            a.chunk_samples
        };
        if chunk_samples == 0 || chunk_samples > fit {
            return Err(SlsError::ChunkAboveStreamingFactor);
        }
        // INVARIANT: checked above.
        Ok(Self {
            dim: a.dim,
            rows: a.rows,
            samples: a.samples,
            pooling: a.pooling,
            chunk_samples,
        })
    }

    /// Elements per vector.
    pub const fn dim(&self) -> u32 {
        self.dim
    }

    /// Indices per sample.
    pub const fn pooling(&self) -> u32 {
        self.pooling
    }

    /// Bytes of output: one vector per sample.
    pub const fn output_bytes(&self) -> u32 {
        // Cannot overflow: checked at validation (type invariant).
        self.samples * self.dim * WORD_BYTES
    }

    /// Result records of the launch.
    pub const fn chunk_count(&self) -> u32 {
        self.samples.div_ceil(self.chunk_samples)
    }

    /// The output span of chunk `index`.
    pub const fn chunk(&self, index: u32) -> Option<ChunkSpan> {
        let first = index as u64 * self.chunk_samples as u64;
        if first >= self.samples as u64 {
            return None;
        }
        let rest = self.samples as u64 - first;
        let n = if rest < self.chunk_samples as u64 {
            rest
        } else {
            self.chunk_samples as u64
        };
        let vector = (self.dim * WORD_BYTES) as u64;
        Some(ChunkSpan {
            offset: (first * vector) as u32,
            length: (n * vector) as u32,
        })
    }

    /// Byte offset in the input of the table row `index` names (modulo `rows`).
    pub const fn row_offset(&self, index: u32) -> u64 {
        (index % self.rows) as u64 * self.dim as u64 * WORD_BYTES as u64
    }

    /// Byte offset in the input of index `k` of sample `sample`.
    pub const fn index_offset(&self, sample: u32, k: u32) -> u64 {
        let table = self.rows as u64 * self.dim as u64 * WORD_BYTES as u64;
        table + (sample as u64 * self.pooling as u64 + k as u64) * WORD_BYTES as u64
    }
}

/// Adds one piece of a row (little-endian `i32`) into the accumulator, wrapping.
pub fn add_piece(acc: &mut [i32], row: &[u8]) {
    for (a, b) in acc.iter_mut().zip(row.chunks_exact(WORD_BYTES as usize)) {
        *a = a.wrapping_add(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
}
