// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_KNN`: squared Euclidean distances of rows to a query (AXLE Table IV (a)-(c), VectorDB;
//! the host keeps the top K).
//!
//! The input is the query vector followed by `rows` vectors, `dim` little-endian `i32` each. The
//! output is one little-endian `u64` per row, `sum((q[i] - r[i])^2)` computed with wrapping
//! arithmetic (a reference in any language can match it bit for bit). Every `chunk_rows` rows
//! are one result record. Integers rather than floats: kernel code may not use the FPU, and exact
//! results make every run checkable.

use super::xform::ChunkSpan;
use crate::abi::{KnnArgs, KNN_MAX_DIM, MAX_ARG_SIZE, STATUS_BAD_ARGS};

/// Bytes of one distance.
pub const DISTANCE_BYTES: u32 = 8;
/// Bytes of one vector element.
pub const ELEMENT_BYTES: u32 = 4;

/// Why a KNN launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KnnError {
    /// `arg_size` is not the size of [`KnnArgs`].
    BadArgSize,
    /// A reserved field is not zero.
    ReservedNonZero,
    /// `dim` is 0 or above [`KNN_MAX_DIM`].
    BadDim,
    /// `rows` is 0.
    NoRows,
    /// The input is not `(rows + 1) * dim * 4` bytes.
    InputSizeMismatch,
    /// `chunk_rows` distances exceed the streaming factor, or it holds none.
    ChunkAboveStreamingFactor,
    /// The distances would not fit a `u32` of bytes.
    OutputTooLarge,
}

impl KnnError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated KNN launch.
///
/// # Invariants
///
/// `dim` in `1..=KNN_MAX_DIM`, `rows >= 1`, `chunk_rows >= 1`, and both `(rows + 1) * dim * 4`
/// (the input size) and `rows * 8` (the output size) fit in a `u32`, so every offset below does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Knn {
    dim: u32,
    rows: u32,
    chunk_rows: u32,
}

impl Knn {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    pub fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, KnnError> {
        if usize::from(arg_size) != core::mem::size_of::<KnnArgs>() {
            return Err(KnnError::BadArgSize);
        }
        let a = KnnArgs::from_bytes(args);
        if a.reserved0 != 0 || a.reserved != [0; 2] {
            return Err(KnnError::ReservedNonZero);
        }
        if a.dim == 0 || a.dim > KNN_MAX_DIM {
            return Err(KnnError::BadDim);
        }
        if a.rows == 0 {
            return Err(KnnError::NoRows);
        }
        if a.rows.checked_mul(DISTANCE_BYTES).is_none() {
            return Err(KnnError::OutputTooLarge);
        }
        let expect = (u64::from(a.rows) + 1) * u64::from(a.dim) * u64::from(ELEMENT_BYTES);
        if expect != u64::from(input_size) {
            return Err(KnnError::InputSizeMismatch);
        }
        let fit = streaming_factor / DISTANCE_BYTES;
        let chunk_rows = if a.chunk_rows == 0 { fit } else { a.chunk_rows };
        if chunk_rows == 0 || chunk_rows > fit {
            return Err(KnnError::ChunkAboveStreamingFactor);
        }
        // INVARIANT: checked above; the input size is a `u32`.
        Ok(Self {
            dim: a.dim,
            rows: a.rows,
            chunk_rows,
        })
    }

    /// Elements per vector.
    pub const fn dim(&self) -> u32 {
        self.dim
    }

    /// Bytes of output: one distance per row.
    pub const fn output_bytes(&self) -> u32 {
        // Cannot overflow: checked at validation (type invariant).
        self.rows * DISTANCE_BYTES
    }

    /// Result records of the launch.
    pub const fn chunk_count(&self) -> u32 {
        self.rows.div_ceil(self.chunk_rows)
    }

    /// The output span of chunk `index`, if there is one: `chunk_rows` distances (fewer at the
    /// end), at byte `first_row * 8`.
    pub const fn chunk(&self, index: u32) -> Option<ChunkSpan> {
        let first = index as u64 * self.chunk_rows as u64;
        if first >= self.rows as u64 {
            return None;
        }
        let n = if self.rows as u64 - first < self.chunk_rows as u64 {
            self.rows as u64 - first
        } else {
            self.chunk_rows as u64
        };
        Some(ChunkSpan {
            offset: (first * DISTANCE_BYTES as u64) as u32,
            length: (n * DISTANCE_BYTES as u64) as u32,
        })
    }

    /// Byte offset in the input of row `row` (the query is row "-1", at offset 0).
    pub const fn row_offset(&self, row: u32) -> u64 {
        (row as u64 + 1) * self.dim as u64 * ELEMENT_BYTES as u64
    }
}

/// Continues a squared distance over one piece of the query and of a row (equal lengths, a
/// multiple of 4 bytes), wrapping.
pub fn distance_piece(query: &[u8], row: &[u8], acc: u64) -> u64 {
    query
        .chunks_exact(ELEMENT_BYTES as usize)
        .zip(row.chunks_exact(ELEMENT_BYTES as usize))
        .fold(acc, |acc, (q, r)| {
            let q = i64::from(i32::from_le_bytes([q[0], q[1], q[2], q[3]]));
            let r = i64::from(i32::from_le_bytes([r[0], r[1], r[2], r[3]]));
            // |d| < 2^32, so its square fits a `u64` (not an `i64`).
            let d = (q - r).unsigned_abs();
            acc.wrapping_add(d * d)
        })
}
