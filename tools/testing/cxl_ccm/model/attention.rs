// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_LLM_ATTENTION`: the attention of an LLM inference block (AXLE Table IV (h)) on the
//! device; the heads' concatenation and the output projection are the host's.
//!
//! Integers throughout (no FPU in the kernel, and device and CPU must agree bit for bit): `i16`
//! vectors, `i64` scores, the softmax as the fixed-point [`attention_weight`] of each score's
//! distance below the row's maximum, and the weighted sum of the values divided by the sum of
//! the weights. The row's maximum has weight `1 << 16`, so the divisor is never 0.
//!
//! Records are block-major: record `c` is block `c / heads` (`chunk_rows` query rows) of head
//! `c % heads`, so a host task that needs one block of every head waits for `heads` records in
//! a row. That dependency is what deadlocks a payload ring smaller than one block's records
//! (AXLE, Figure 16 (h) at 12.5 % capacity).

use super::xform::ChunkSpan;
use crate::abi::{
    attention_weight, AttentionArgs, ATTENTION_MAX_HEADS, ATTENTION_MAX_HEAD_DIM, MAX_ARG_SIZE,
    STATUS_BAD_ARGS,
};

/// Bytes of one input element (`i16`) and of one output element (`i32`).
pub const IN_BYTES: u32 = 2;
/// Bytes of one output element.
pub const OUT_BYTES: u32 = 4;

/// Why an attention launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionError {
    /// `arg_size` is not the size of [`AttentionArgs`].
    BadArgSize,
    /// The reserved field is not zero.
    ReservedNonZero,
    /// A dimension is 0 or above its limit, the query rows run past `tokens`, or `shift >= 64`.
    BadShape,
    /// The input is not `heads * (q_rows + 2 * tokens) * head_dim * 2` bytes.
    InputSizeMismatch,
    /// A record of `chunk_rows` rows does not fit the streaming factor.
    ChunkAboveStreamingFactor,
}

impl AttentionError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated attention launch.
///
/// # Invariants
///
/// `heads` in `1..=ATTENTION_MAX_HEADS`, `head_dim` in `1..=ATTENTION_MAX_HEAD_DIM`, `q_rows`
/// and `chunk_rows` at least 1, `q_first + q_rows <= tokens`, `shift < 64`; the input size and
/// the output size (`heads * q_rows * head_dim * 4`) fit in a `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Attention {
    tokens: u32,
    q_first: u32,
    q_rows: u32,
    heads: u32,
    head_dim: u32,
    chunk_rows: u32,
    shift: u32,
}

impl Attention {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    pub fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, AttentionError> {
        if usize::from(arg_size) != core::mem::size_of::<AttentionArgs>() {
            return Err(AttentionError::BadArgSize);
        }
        let a = AttentionArgs::from_bytes(args);
        if a.reserved != 0 {
            return Err(AttentionError::ReservedNonZero);
        }
        if a.heads == 0
            || a.heads > ATTENTION_MAX_HEADS
            || a.head_dim == 0
            || a.head_dim > ATTENTION_MAX_HEAD_DIM
            || a.q_rows == 0
            || u64::from(a.q_first) + u64::from(a.q_rows) > u64::from(a.tokens)
            || a.shift >= 64
        {
            return Err(AttentionError::BadShape);
        }
        let per_head = u64::from(a.q_rows) + 2 * u64::from(a.tokens);
        let input = u64::from(a.heads) * per_head * u64::from(a.head_dim) * u64::from(IN_BYTES);
        let output =
            u64::from(a.heads) * u64::from(a.q_rows) * u64::from(a.head_dim) * u64::from(OUT_BYTES);
        if input != u64::from(input_size) || output > u64::from(u32::MAX) {
            return Err(AttentionError::InputSizeMismatch);
        }
        let fit = streaming_factor / (a.head_dim * OUT_BYTES);
        let chunk_rows = if a.chunk_rows == 0 { fit } else { a.chunk_rows };
        if chunk_rows == 0 || chunk_rows > fit {
            return Err(AttentionError::ChunkAboveStreamingFactor);
        }
        // INVARIANT: checked above.
        Ok(Self {
            tokens: a.tokens,
            q_first: a.q_first,
            q_rows: a.q_rows,
            heads: a.heads,
            head_dim: a.head_dim,
            chunk_rows,
            shift: a.shift,
        })
    }

    /// Elements per vector.
    pub const fn head_dim(&self) -> u32 {
        self.head_dim
    }

    /// Bytes of output.
    pub const fn output_bytes(&self) -> u32 {
        // Cannot overflow: checked at validation (type invariant).
        self.heads * self.q_rows * self.head_dim * OUT_BYTES
    }

    /// Blocks of query rows.
    const fn blocks(&self) -> u32 {
        // `chunk_rows >= 1` (type invariant).
        match self.q_rows.checked_div(self.chunk_rows) {
            Some(q) if q * self.chunk_rows == self.q_rows => q,
            Some(q) => q + 1,
            None => 0,
        }
    }

    /// Result records of the launch: one per block and head.
    pub const fn chunk_count(&self) -> u32 {
        // At most `q_rows * heads`, which the output size bounds (type invariant).
        self.blocks().wrapping_mul(self.heads)
    }

    /// The head, the first query row (of the launch) and the number of rows of chunk `index`.
    pub const fn rows_of(&self, index: u32) -> Option<(u32, u32, u32)> {
        if index >= self.chunk_count() {
            return None;
        }
        // `heads >= 1` and `first < q_rows` for `index < chunk_count()` (type invariant).
        let (block, head) = match (index.checked_div(self.heads), index.checked_rem(self.heads)) {
            (Some(b), Some(h)) => (b, h),
            _ => return None,
        };
        let first = block.wrapping_mul(self.chunk_rows);
        let rest = self.q_rows.wrapping_sub(first);
        let n = if rest < self.chunk_rows {
            rest
        } else {
            self.chunk_rows
        };
        Some((head, first, n))
    }

    /// The output span of chunk `index`: blocks in order, heads in order within a block.
    pub const fn chunk(&self, index: u32) -> Option<ChunkSpan> {
        let Some((head, first, n)) = self.rows_of(index) else {
            return None;
        };
        let row = (self.head_dim * OUT_BYTES) as u64;
        // Every block before this one is full; within it, `head` heads of `n` rows come first.
        let rows_before = first as u64 * self.heads as u64 + head as u64 * n as u64;
        Some(ChunkSpan {
            offset: (rows_before * row) as u32,
            length: (n as u64 * row) as u32,
        })
    }

    /// Byte offset in the input of query row `row` of head `head`.
    pub const fn query_offset(&self, head: u32, row: u32) -> u64 {
        (head as u64 * self.q_rows as u64 + row as u64) * self.vector_bytes()
    }

    /// Byte offset in the input of key `token` of head `head`.
    pub const fn key_offset(&self, head: u32, token: u32) -> u64 {
        let keys = self.heads as u64 * self.q_rows as u64;
        (keys + head as u64 * self.tokens as u64 + token as u64) * self.vector_bytes()
    }

    /// Byte offset in the input of value `token` of head `head`.
    pub const fn value_offset(&self, head: u32, token: u32) -> u64 {
        self.key_offset(head, token) + self.heads as u64 * self.tokens as u64 * self.vector_bytes()
    }

    const fn vector_bytes(&self) -> u64 {
        self.head_dim as u64 * IN_BYTES as u64
    }

    /// Computes query row `row` of head `head` into `buf.out`, reading the input through
    /// `read(offset, bytes)`. The keys are read twice (the maximum, then the weights), so that no
    /// per-row score buffer is needed.
    pub fn attend_row<E>(
        &self,
        head: u32,
        row: u32,
        read: &mut impl FnMut(u64, &mut [u8]) -> Result<(), E>,
        buf: &mut RowBuffers,
    ) -> Result<(), E> {
        let bytes = self.vector_bytes() as usize;
        let dim = self.head_dim as usize;
        // `head_dim <= ATTENTION_MAX_HEAD_DIM` (type invariant), so the slices exist.
        let (Some(query), Some(key), Some(acc), Some(out)) = (
            buf.query.get_mut(..bytes),
            buf.vector.get_mut(..bytes),
            buf.acc.get_mut(..dim),
            buf.out.get_mut(..dim),
        ) else {
            return Ok(());
        };
        read(self.query_offset(head, row), query)?;
        // Causal: the row at position `q_first + row` sees itself and every earlier token.
        let keys = self.q_first + row + 1;
        let mut max = i64::MIN;
        for j in 0..keys {
            read(self.key_offset(head, j), key)?;
            max = max.max(dot(query, key));
        }
        acc.fill(0);
        let mut total = 0i64;
        for j in 0..keys {
            read(self.key_offset(head, j), key)?;
            let w = self.weight(max, dot(query, key));
            if w == 0 {
                continue;
            }
            total += w;
            read(self.value_offset(head, j), key)?;
            for (a, v) in acc.iter_mut().zip(key.chunks_exact(IN_BYTES as usize)) {
                *a += w * i64::from(i16::from_le_bytes([v[0], v[1]]));
            }
        }
        for (o, a) in out.iter_mut().zip(acc.iter()) {
            // The row's maximum has weight 1 << 16, so `total > 0`; |a| <= total * 2^15, so the
            // quotient fits an i16.
            *o = (a / total.max(1)) as i32;
        }
        Ok(())
    }

    /// The weight of `score` in a row whose maximum is `max`.
    pub fn weight(&self, max: i64, score: i64) -> i64 {
        // max >= score; both below 2^38 in magnitude (256 products of two i16), so no overflow.
        let delta = (max - score) as u64 >> self.shift;
        attention_weight(delta) as i64
    }
}

/// Working storage for one query row, sized for [`ATTENTION_MAX_HEAD_DIM`] (4.5 KiB).
pub struct RowBuffers {
    query: [u8; (ATTENTION_MAX_HEAD_DIM * IN_BYTES) as usize],
    vector: [u8; (ATTENTION_MAX_HEAD_DIM * IN_BYTES) as usize],
    acc: [i64; ATTENTION_MAX_HEAD_DIM as usize],
    /// The row's output after [`Attention::attend_row`] (`head_dim` elements used).
    pub out: [i32; ATTENTION_MAX_HEAD_DIM as usize],
}

impl RowBuffers {
    /// Zeroed buffers.
    pub const fn new() -> Self {
        Self {
            query: [0; (ATTENTION_MAX_HEAD_DIM * IN_BYTES) as usize],
            vector: [0; (ATTENTION_MAX_HEAD_DIM * IN_BYTES) as usize],
            acc: [0; ATTENTION_MAX_HEAD_DIM as usize],
            out: [0; ATTENTION_MAX_HEAD_DIM as usize],
        }
    }
}

impl Default for RowBuffers {
    fn default() -> Self {
        Self::new()
    }
}

/// The dot product of two vectors of little-endian `i16`.
pub fn dot(a: &[u8], b: &[u8]) -> i64 {
    a.chunks_exact(IN_BYTES as usize)
        .zip(b.chunks_exact(IN_BYTES as usize))
        .map(|(x, y)| {
            i64::from(i16::from_le_bytes([x[0], x[1]]))
                * i64::from(i16::from_le_bytes([y[0], y[1]]))
        })
        .sum()
}
