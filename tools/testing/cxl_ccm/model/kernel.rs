// SPDX-License-Identifier: GPL-2.0

//! The kernels the engine runs, behind one type: how a launch is cut into chunks and how much
//! output it makes. Computing a chunk is the engine's (it reads device memory).

use super::attention::Attention;
use super::graph::Graph;
use super::knn::Knn;
use super::sls::Sls;
use super::ssb::Ssb;
use super::xform::{ChunkSpan, Xform};

/// A validated launch of one of the device's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `KERNEL_STREAM_XFORM`.
    Xform(Xform),
    /// `KERNEL_KNN`.
    Knn(Knn),
    /// `KERNEL_SSB_Q1_1`, `KERNEL_SSB_Q1_2`.
    Ssb(Ssb),
    /// `KERNEL_DLRM_SLS`.
    Sls(Sls),
    /// `KERNEL_PAGERANK`, `KERNEL_SSSP`.
    Graph(Graph),
    /// `KERNEL_LLM_ATTENTION`.
    Attention(Attention),
}

impl Kernel {
    /// Result records of a launch with `input_size` bytes of input.
    pub fn chunk_count(&self, input_size: u32) -> u32 {
        match self {
            Self::Xform(x) => x.chunk_count(input_size as usize).unwrap_or(0),
            Self::Knn(k) => k.chunk_count(),
            Self::Ssb(q) => q.chunk_count(),
            Self::Sls(l) => l.chunk_count(),
            Self::Graph(p) => p.chunk_count(),
            Self::Attention(a) => a.chunk_count(),
        }
    }

    /// The output span of chunk `index`.
    pub fn chunk(&self, input_size: u32, index: u32) -> Option<ChunkSpan> {
        match self {
            Self::Xform(x) => x.chunk(input_size, index),
            Self::Knn(k) => k.chunk(index),
            Self::Ssb(q) => q.chunk(index),
            Self::Sls(l) => l.chunk(index),
            Self::Graph(p) => p.chunk(index),
            Self::Attention(a) => a.chunk(index),
        }
    }

    /// Bytes of output of a launch with `input_size` bytes of input.
    pub fn output_bytes(&self, input_size: u32) -> u32 {
        match self {
            Self::Xform(_) => input_size,
            Self::Knn(k) => k.output_bytes(),
            Self::Ssb(q) => q.output_bytes(),
            Self::Sls(l) => l.output_bytes(),
            Self::Graph(p) => p.output_bytes(),
            Self::Attention(a) => a.output_bytes(),
        }
    }
}
