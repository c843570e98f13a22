// SPDX-License-Identifier: GPL-2.0

//! The graph kernels (AXLE Table IV (d), (e)): a pass over every vertex's in-edges, the host
//! doing the per-iteration step.
//!
//! The input is the graph's in-edge CSR, `vertices + 1` little-endian `u32` offsets into `edges`
//! little-endian `u32` source vertices (and, for SSSP, `edges` `u32` weights), then `vertices`
//! little-endian `u64` per-vertex values. `KERNEL_PAGERANK`: the values are contributions (rank
//! divided by out-degree, the host's fixed point) and each vertex's output is the wrapping sum
//! of its in-neighbours' ones. `KERNEL_SSSP`: the values are distances (`u64::MAX`: unreached)
//! and the output is the smallest `distance[source] + weight` (saturating). Offsets are clamped
//! to `edges` (a vertex whose end precedes its start has no edges) and sources are taken modulo
//! `vertices`, so the kernels have no error path per edge.

use super::xform::ChunkSpan;
use crate::abi::{PageRankArgs, MAX_ARG_SIZE, STATUS_BAD_ARGS};

/// What a pass computes per vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// PageRank: the sum of the in-neighbours' values.
    Sum,
    /// SSSP: the smallest in-neighbour value plus the edge's weight.
    MinPlusWeight,
}

/// Bytes of one output sum and of one contribution.
pub const SUM_BYTES: u32 = 8;

/// Why a graph launch is refused (every one reported as `STATUS_BAD_ARGS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphError {
    /// `arg_size` is not the size of the arguments (PageRank's and SSSP's have the same layout).
    BadArgSize,
    /// A reserved field is not zero.
    ReservedNonZero,
    /// No vertex.
    NoVertices,
    /// The input is not `(vertices + 1 + edges) * 4 + vertices * 8` bytes (SSSP: plus
    /// `edges * 4` of weights).
    InputSizeMismatch,
    /// A record of `chunk_vertices` sums does not fit the streaming factor.
    ChunkAboveStreamingFactor,
}

impl GraphError {
    /// The `STATUS_*` code the device reports.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

/// A validated graph launch.
///
/// # Invariants
///
/// `vertices >= 1`, `chunk_vertices >= 1`, and the input size fits a `u32`, so every offset
/// below does too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Graph {
    pass: Pass,
    vertices: u32,
    edges: u32,
    chunk_vertices: u32,
}

impl Graph {
    /// Validates a launch's arguments against its input size and the tenant's SF (bytes).
    /// `PageRankArgs` and `SsspArgs` share one layout.
    pub fn from_packet(
        pass: Pass,
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
        input_size: u32,
    ) -> Result<Self, GraphError> {
        if usize::from(arg_size) != core::mem::size_of::<PageRankArgs>() {
            return Err(GraphError::BadArgSize);
        }
        let a = PageRankArgs::from_bytes(args);
        if a.reserved0 != 0 || a.reserved != [0; 2] {
            return Err(GraphError::ReservedNonZero);
        }
        if a.vertices == 0 {
            return Err(GraphError::NoVertices);
        }
        let v = u64::from(a.vertices);
        let lists = match pass {
            Pass::Sum => 1,
            Pass::MinPlusWeight => 2,
        };
        let want = (v + 1 + lists * u64::from(a.edges)) * 4 + v * u64::from(SUM_BYTES);
        if want != u64::from(input_size) {
            return Err(GraphError::InputSizeMismatch);
        }
        let fit = streaming_factor / SUM_BYTES;
        let chunk_vertices = if a.chunk_vertices == 0 {
            fit
        } else {
            a.chunk_vertices
        };
        if chunk_vertices == 0 || chunk_vertices > fit {
            return Err(GraphError::ChunkAboveStreamingFactor);
        }
        // INVARIANT: checked above.
        Ok(Self {
            pass,
            vertices: a.vertices,
            edges: a.edges,
            chunk_vertices,
        })
    }

    /// What the pass computes.
    pub const fn pass(&self) -> Pass {
        self.pass
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

    /// Byte offset of the weight of edge `e` (SSSP).
    pub const fn weight_at(&self, e: u32) -> u64 {
        (self.vertices as u64 + 1 + self.edges as u64 + e as u64) * 4
    }

    /// Byte offset of the value of vertex `v` (any `u32`: taken modulo `vertices`).
    pub const fn value_at(&self, v: u32) -> u64 {
        let lists = match self.pass {
            Pass::Sum => 1,
            Pass::MinPlusWeight => 2,
        };
        (self.vertices as u64 + 1 + lists * self.edges as u64) * 4 + (v % self.vertices) as u64 * 8
    }

    /// Folds one in-edge into a vertex's result (`identity()` to start).
    pub const fn fold(&self, acc: u64, value: u64, weight: u32) -> u64 {
        match self.pass {
            Pass::Sum => acc.wrapping_add(value),
            Pass::MinPlusWeight => {
                let c = value.saturating_add(weight as u64);
                if c < acc {
                    c
                } else {
                    acc
                }
            }
        }
    }

    /// A vertex's result before any in-edge.
    pub const fn identity(&self) -> u64 {
        match self.pass {
            Pass::Sum => 0,
            Pass::MinPlusWeight => u64::MAX,
        }
    }

    /// The edge range of a vertex from its two offsets, clamped to the edges.
    pub fn edge_range(&self, start: u32, end: u32) -> core::ops::Range<u32> {
        let end = end.min(self.edges);
        start.min(end)..end
    }
}
