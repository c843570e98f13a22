// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_PAGERANK`: PageRank's neighbour traversal (AXLE Table IV (e)); the host updates the
//! ranks and writes the next iteration's contributions.
//!
//! The input is the graph's in-edge CSR, `vertices + 1` little-endian `u32` offsets into `edges`
//! little-endian `u32` source vertices, then `vertices` little-endian `u64` contributions (a
//! vertex's rank divided by its out-degree, in the host's fixed point). Each vertex's output is
//! the wrapping sum of its in-neighbours' contributions. Offsets are clamped to `edges` (and a
//! vertex whose end precedes its start has no edges) and sources are taken modulo `vertices`,
//! so the kernel has no error path per edge.

use super::xform::ChunkSpan;
use crate::abi::{PageRankArgs, MAX_ARG_SIZE, STATUS_BAD_ARGS};

/// Bytes of one output sum and of one contribution.
pub const SUM_BYTES: u32 = 8;

/// Why a PageRank launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PageRankError {
    /// `arg_size` is not the size of [`PageRankArgs`].
    BadArgSize,
    /// A reserved field is not zero.
    ReservedNonZero,
    /// No vertex.
    NoVertices,
    /// The input is not `(vertices + 1 + edges) * 4 + vertices * 8` bytes.
    InputSizeMismatch,
    /// A record of `chunk_vertices` sums does not fit the streaming factor.
    ChunkAboveStreamingFactor,
}

impl PageRankError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated PageRank launch.
///
/// # Invariants
///
/// `vertices >= 1`, `chunk_vertices >= 1`, and the input size fits a `u32`, so every offset
/// below does too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRank {
    vertices: u32,
    edges: u32,
    chunk_vertices: u32,
}

impl PageRank {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    pub fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, PageRankError> {
        if usize::from(arg_size) != core::mem::size_of::<PageRankArgs>() {
            return Err(PageRankError::BadArgSize);
        }
        let a = PageRankArgs::from_bytes(args);
        if a.reserved0 != 0 || a.reserved != [0; 2] {
            return Err(PageRankError::ReservedNonZero);
        }
        if a.vertices == 0 {
            return Err(PageRankError::NoVertices);
        }
        let v = u64::from(a.vertices);
        let want = (v + 1 + u64::from(a.edges)) * 4 + v * u64::from(SUM_BYTES);
        if want != u64::from(input_size) {
            return Err(PageRankError::InputSizeMismatch);
        }
        let fit = streaming_factor / SUM_BYTES;
        let chunk_vertices = if a.chunk_vertices == 0 {
            fit
        } else {
            a.chunk_vertices
        };
        if chunk_vertices == 0 || chunk_vertices > fit {
            return Err(PageRankError::ChunkAboveStreamingFactor);
        }
        // INVARIANT: checked above.
        Ok(Self {
            vertices: a.vertices,
            edges: a.edges,
            chunk_vertices,
        })
    }

    /// Vertices of the graph.
    pub const fn vertices(&self) -> u32 {
        self.vertices
    }

    /// Bytes of output: one sum per vertex.
    pub const fn output_bytes(&self) -> u32 {
        // Cannot overflow: the input holds 8 bytes per vertex (type invariant).
        self.vertices * SUM_BYTES
    }

    /// Result records of the launch.
    pub const fn chunk_count(&self) -> u32 {
        self.vertices.div_ceil(self.chunk_vertices)
    }

    /// The output span of chunk `index`.
    pub const fn chunk(&self, index: u32) -> Option<ChunkSpan> {
        let first = index as u64 * self.chunk_vertices as u64;
        if first >= self.vertices as u64 {
            return None;
        }
        let rest = self.vertices as u64 - first;
        let n = if rest < self.chunk_vertices as u64 {
            rest
        } else {
            self.chunk_vertices as u64
        };
        Some(ChunkSpan {
            offset: (first * SUM_BYTES as u64) as u32,
            length: (n * SUM_BYTES as u64) as u32,
        })
    }

    /// Byte offset of offset `v` (for `v` in `0..=vertices`).
    pub const fn offset_at(&self, v: u32) -> u64 {
        v as u64 * 4
    }

    /// Byte offset of source `e`.
    pub const fn source_at(&self, e: u32) -> u64 {
        (self.vertices as u64 + 1 + e as u64) * 4
    }

    /// Byte offset of the contribution of vertex `v` (any `u32`: taken modulo `vertices`).
    pub const fn contribution_at(&self, v: u32) -> u64 {
        (self.vertices as u64 + 1 + self.edges as u64) * 4 + (v % self.vertices) as u64 * 8
    }

    /// The edge range of a vertex from its two offsets, clamped to the edges.
    pub fn edge_range(&self, start: u32, end: u32) -> core::ops::Range<u32> {
        let end = end.min(self.edges);
        start.min(end)..end
    }
}
