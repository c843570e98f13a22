// SPDX-License-Identifier: GPL-2.0

//! The compute model of the software CCM device: how long the modelled CCM (the AXLE paper's
//! Table III) takes to compute one chunk, so that the device releases a chunk no earlier than
//! that CCM would have finished it.
//!
//! The software device computes every chunk for real, on the host's CPUs; this model says how
//! long the same chunk would take on the CCM's processing units, so that the device can hold the
//! result back until then. Kernels then differ in *how much* work a chunk is, not in how fast the
//! emulating CPU happens to be.
//!
//! | parameter | default | source |
//! | --- | --- | --- |
//! | `ccm_units` | 16 | Table III: processing units |
//! | `ccm_uthreads_per_unit` | 16 | Table III: µthreads per processing unit |
//! | `ccm_clock_mhz` | 2 000 | Table III: 2 GHz |
//! | `ccm_mem_mb_per_s` | 614 400 | Table III: DDR5-4800 × 16 channels, 38.4 GB/s each |
//! | `dilation_milli` | 1 000 | none: the emulator's time dilation (see below) |
//!
//! # The machine
//!
//! "The CCM scheduler partitions the task such that each µthread processes a fixed-size input
//! vector" (AXLE §IV-B): one chunk runs on one µthread. A processing unit is fine-grained
//! multithreaded: it issues one instruction per cycle from one of its µthreads, interleaving them
//! to hide memory latency. The model assumes the **busy** machine (every µthread has a chunk), so
//! that a µthread gets `1 / uthreads_per_unit` of its unit's issue slots and `1 / uthreads()` of
//! the memory bandwidth:
//!
//! - compute time: `ops * uthreads_per_unit / clock` (PAPER: 8 ns per instruction);
//! - memory time: `bytes * uthreads() / bandwidth` (PAPER: 2.4 GB/s per µthread, 5/12 ns per
//!   byte);
//! - a chunk takes the larger of the two (the µthread's loads overlap its arithmetic), rounded
//!   up to a whole nanosecond, times the dilation ([`ComputeModel::chunk_ns`]).
//!
//! Modelling the busy machine is conservative for a lightly loaded CCM (a lone µthread would get
//! a whole unit) and exact for the throughput-bound runs the device exists to measure. With the
//! PAPER numbers the machine issues 32 G instructions/s against 614.4 GB/s, 19.2 bytes per
//! instruction, so every kernel below (at most 2 bytes per instruction) is compute-bound.
//!
//! # What a chunk costs ([`Work`])
//!
//! `ops` counts the instructions one µthread issues for the chunk, on a scalar 64-bit core, by
//! these rules:
//!
//! - one instruction per load or store (any width up to 8 bytes), per ALU operation (add,
//!   subtract, multiply, divide, shift, compare, min, select) and per branch;
//! - one instruction per iteration of a loop, for the loop control (the index increment; the
//!   compare-and-branch fused with it or unrolled away);
//! - one CRC32C instruction per 8 bytes of the chunk's output ([`CRC_BYTES_PER_OP`]; SSE4.2
//!   `crc32q`, Armv8 `CRC32CX`), rounded up: a real CCM checksums every record as the software
//!   device does;
//! - [`CHUNK_OPS`] per chunk, whatever the kernel.
//!
//! `bytes` counts the bytes read from CCM memory plus the bytes written to it. Data a chunk
//! reuses (the KNN query, an attention query row, the SLS accumulator) stays in the µthread's
//! registers or cache and is read once per chunk (per row for attention); loading it again from
//! there costs instructions, not bytes. Gathered data (SLS rows, graph values) is counted at its
//! size, not at the 64-byte DDR5 burst it really moves; at the PAPER numbers even the burst
//! would leave every kernel compute-bound.
//!
//! With `L` the chunk's output bytes (its record's length), `crc = ceil(L / 8)` and
//! `C` = [`CHUNK_OPS`]:
//!
//! | kernel | one chunk | `ops` | `bytes` |
//! | --- | --- | --- | --- |
//! | STREAM_XFORM | `L` bytes: `w = ceil(L / 4)` words | `C + 4w + crc` | `2L` |
//! | KNN | `n` rows of `d` elements | `C + n(6d + 4) + crc` | `4d + 4nd + 8n` |
//! | SSB Q1.x | `n` rows | `C + 17n + 2 + crc` | `16n + 16` |
//! | SLS | `s` samples, `p` rows of `d` | `C + s(2 + 5p + 5pd + 5d) + crc` | `4sp(1 + d) + 4sd` |
//! | PageRank | `n` vertices, `e` edges | `C + 6n + 7e + crc` | `4(n + 1) + 12e + 8n` |
//! | SSSP | `n` vertices, `e` edges | `C + 6n + 10e + crc` | `4(n + 1) + 16e + 8n` |
//! | attention | `n` rows of `D`, `K` keys | `C + n(6D + 4) + K(16D + 13) + crc` | `6D(n + K)` |
//!
//! The constants are derived in their documentation ([`XFORM_OPS_PER_WORD`] and below). Two
//! counts are estimates, because the data they depend on is in CCM memory, which this model
//! does not read:
//!
//! - **graph**: a chunk's edges are its share of the launch's, `e = ceil(edges * n / vertices)`
//!   (exact for a regular graph, and over a whole launch on average);
//! - **attention**: query row `i` attends to `q_first + i + 1` keys, and the launch's `q_first`
//!   is not visible outside [`Attention`]; the model takes the query rows to be the last
//!   `q_rows` of the `tokens` (`q_first = tokens - q_rows`), which is exact for a whole prefill
//!   (`q_first = 0`, `q_rows = tokens`) and for decoding, and an underestimate otherwise.
//!
//! # Dilation
//!
//! The emulator runs the device on the host's CPUs, typically slower (a VM, sanitizers, a
//! loaded machine) than the hardware being compared against; every modelled time is multiplied
//! by `dilation_milli / 1000` so that the CCM's time stays in proportion with the rest of the
//! emulated system. 1000 means none.
//!
//! # Ranges
//!
//! Every parameter has an inclusive range ([`ComputeParam::range`]), and the µthreads number at
//! most [`MAX_UTHREADS`]; [`ComputeModel::new`] refuses anything else. With these bounds the
//! scaling of [`ComputeModel::chunk_ns`] is exact in `u64` arithmetic (no 128-bit division, which
//! the kernel does not provide), as the `const` assertions at the bottom of this file check;
//! work so large that the time exceeds `u64::MAX` ns saturates there. Work counts saturate too.
//!
//! # The timeline
//!
//! [`place`] keeps the virtual µthreads' timeline in storage the caller owns: one `u64` per
//! µthread, the time it becomes free. A chunk ready at `now` runs on the µthread free earliest
//! and completes at `max(now, free_at) + chunk_ns`.
//!
//! [`Attention`]: super::attention::Attention

use core::fmt;

use super::attention::{
    Attention, IN_BYTES as ATTENTION_IN_BYTES, OUT_BYTES as ATTENTION_OUT_BYTES,
};
use super::graph::{Graph, Pass, SUM_BYTES};
use super::kernel::Kernel;
use super::knn::{Knn, DISTANCE_BYTES, ELEMENT_BYTES};
use super::sls::{Sls, WORD_BYTES};
use super::ssb::{Ssb, PARTIAL_BYTES, ROW_BYTES};
use super::xform::{ChunkSpan, WORD};

/// Bytes of output one CRC32C instruction covers: a µthread is assumed to have the 64-bit
/// CRC32C instruction of SSE4.2 (`crc32q`) or Armv8 (`CRC32CX`). A trailing 4-byte word uses the
/// 32-bit form, one instruction too, hence the rounding up.
pub const CRC_BYTES_PER_OP: u64 = 8;

/// Instructions per chunk whatever the kernel: about 4 loads of the chunk's descriptor (kernel
/// arguments, input base, output offset, length), 6 address computations, the CRC32C's
/// initialisation and final inversion (2), the store of the result record's checksum and the
/// completion signal (2), and the loop exit (2).
pub const CHUNK_OPS: u64 = 16;

/// STREAM_XFORM, per 4-byte word: load, transform (XOR or ADD; charged for COPY too), store,
/// loop control: 4.
pub const XFORM_OPS_PER_WORD: u64 = 4;

/// KNN, per element of a row: load the query element (from the µthread's cache), load the row
/// element, subtract, multiply, add to the distance, loop control: 6.
pub const KNN_OPS_PER_ELEMENT: u64 = 6;

/// KNN, per row: clear the distance, compute the row's address, store the distance, loop
/// control: 4.
pub const KNN_OPS_PER_ROW: u64 = 4;

/// SSB Q1.x, per 16-byte row: 4 loads (orderdate, quantity, discount, extendedprice), 6
/// compares (a low and a high bound for each of the three ranges), 2 ANDs to combine them, the
/// revenue's multiply, a select (zero unless the row matches: branch-free), 2 adds (revenue,
/// matches), loop control: 17.
pub const SSB_OPS_PER_ROW: u64 = 17;

/// SSB Q1.x, per chunk: the stores of the partial's two `u64` (revenue, matches): 2.
pub const SSB_OPS_PER_CHUNK: u64 = 2;

/// DLRM SLS, per sample: the address of its index list, loop control: 2.
pub const SLS_OPS_PER_SAMPLE: u64 = 2;

/// DLRM SLS, per index: load it, reduce it modulo the table's rows (one divide), the row's
/// address (multiply, add), loop control: 5.
pub const SLS_OPS_PER_INDEX: u64 = 5;

/// DLRM SLS, per element of a gathered row: load the element, load the accumulator element
/// (cache), add, store the accumulator element, loop control: 5.
pub const SLS_OPS_PER_GATHERED_ELEMENT: u64 = 5;

/// DLRM SLS, per output element: clear the accumulator element before the sample (store, loop
/// control), then move it to the output (load, store, loop control): 5.
pub const SLS_OPS_PER_OUTPUT_ELEMENT: u64 = 5;

/// Graph kernels, per vertex: load its two CSR offsets (one 8-byte load), clamp them (2 mins),
/// initialise the result, store the result, loop control: 6.
pub const GRAPH_OPS_PER_VERTEX: u64 = 6;

/// PageRank, per in-edge: load the source, reduce it modulo the vertices (one divide), the
/// value's address (shift, add), load the value, add, loop control: 7.
pub const PAGERANK_OPS_PER_EDGE: u64 = 7;

/// SSSP, per in-edge: PageRank's 7, plus the weight's load, the saturation of the add (a
/// select on the carry) and the minimum: 10.
pub const SSSP_OPS_PER_EDGE: u64 = 10;

/// Attention, per key and element: the score's dot product twice (the maximum pass and the
/// weight pass; each: load the query element from cache, load the key element, multiply, add,
/// loop control: 5), and the weighted value (load the value element, load the accumulator
/// element, multiply, add, store the accumulator element, loop control: 6): 16.
pub const ATTENTION_OPS_PER_KEY_ELEMENT: u64 = 16;

/// Attention, per key: in the maximum pass, the maximum and loop control (2); in the weight
/// pass, the weight (subtract from the maximum, shift, split into integer and fraction (2),
/// compare-and-branch on the underflow, subtract, 2 shifts: 8), the add to the weights' sum, the
/// branch on a zero weight and loop control (3): 13.
pub const ATTENTION_OPS_PER_KEY: u64 = 13;

/// Attention, per query row and element: clear the accumulator element (store, loop control),
/// then the output element (load the accumulator element, divide by the weights' sum, store,
/// loop control): 6.
pub const ATTENTION_OPS_PER_ROW_ELEMENT: u64 = 6;

/// Attention, per query row: initialise the maximum and the weights' sum, the row's key count,
/// loop control: 4.
pub const ATTENTION_OPS_PER_ROW: u64 = 4;

/// The largest number of µthreads ([`CcmConfig::uthreads`]) a model accepts.
pub const MAX_UTHREADS: u32 = 65_536;

/// No dilation, in thousandths.
pub const NO_DILATION_MILLI: u32 = 1_000;

/// The largest dilation, in thousandths (a factor of 1000).
pub const MAX_DILATION_MILLI: u32 = 1_000_000;

/// The modelled CCM's hardware (defaults: the AXLE paper's Table III, [`CcmConfig::PAPER`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CcmConfig {
    /// Processing units.
    pub units: u32,
    /// µthreads per processing unit, which share its issue slots.
    pub uthreads_per_unit: u32,
    /// Clock of a processing unit, MHz (one instruction issued per cycle).
    pub clock_mhz: u32,
    /// Bandwidth of the CCM's memory, MB/s (10^6 bytes per second), shared by every µthread.
    pub mem_mb_per_s: u64,
}

impl CcmConfig {
    /// Table III: 16 processing units × 16 µthreads at 2 GHz, DDR5-4800 × 16 channels (38.4 GB/s
    /// each, 614.4 GB/s in all).
    pub const PAPER: Self = Self {
        units: 16,
        uthreads_per_unit: 16,
        clock_mhz: 2_000,
        mem_mb_per_s: 16 * 38_400,
    };

    /// µthreads in all, each of which runs one chunk at a time (saturating at `u32::MAX`).
    pub const fn uthreads(&self) -> u32 {
        self.units.saturating_mul(self.uthreads_per_unit)
    }
}

impl Default for CcmConfig {
    fn default() -> Self {
        Self::PAPER
    }
}

/// A parameter of the compute model (each one a module parameter of the software device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComputeParam {
    /// [`CcmConfig::units`].
    Units,
    /// [`CcmConfig::uthreads_per_unit`].
    UthreadsPerUnit,
    /// [`CcmConfig::clock_mhz`].
    ClockMhz,
    /// [`CcmConfig::mem_mb_per_s`].
    MemMbPerS,
    /// The dilation, in thousandths.
    DilationMilli,
}

impl ComputeParam {
    /// Number of parameters.
    pub const COUNT: usize = 5;

    /// Every parameter, in the order of the table in the module documentation.
    pub const ALL: [ComputeParam; ComputeParam::COUNT] = [
        ComputeParam::Units,
        ComputeParam::UthreadsPerUnit,
        ComputeParam::ClockMhz,
        ComputeParam::MemMbPerS,
        ComputeParam::DilationMilli,
    ];

    /// The parameter's name, as a module parameter and in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            ComputeParam::Units => "ccm_units",
            ComputeParam::UthreadsPerUnit => "ccm_uthreads_per_unit",
            ComputeParam::ClockMhz => "ccm_clock_mhz",
            ComputeParam::MemMbPerS => "ccm_mem_mb_per_s",
            ComputeParam::DilationMilli => "dilation_milli",
        }
    }

    /// The parameter named `name`, if any.
    pub fn from_name(name: &str) -> Option<ComputeParam> {
        ComputeParam::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The default value ([`CcmConfig::PAPER`], no dilation).
    pub const fn default_value(self) -> u64 {
        let c = CcmConfig::PAPER;
        match self {
            ComputeParam::Units => c.units as u64,
            ComputeParam::UthreadsPerUnit => c.uthreads_per_unit as u64,
            ComputeParam::ClockMhz => c.clock_mhz as u64,
            ComputeParam::MemMbPerS => c.mem_mb_per_s,
            ComputeParam::DilationMilli => NO_DILATION_MILLI as u64,
        }
    }

    /// The inclusive range `(min, max)` of valid values: up to 1024 units of up to 1024 µthreads
    /// (and at most [`MAX_UTHREADS`] in all), 1 MHz to 100 GHz, 1 MB/s to 100 TB/s, and a
    /// dilation of 1 to 1000.
    pub const fn range(self) -> (u64, u64) {
        match self {
            ComputeParam::Units | ComputeParam::UthreadsPerUnit => (1, 1_024),
            ComputeParam::ClockMhz => (1, 100_000),
            ComputeParam::MemMbPerS => (1, 100_000_000),
            ComputeParam::DilationMilli => (NO_DILATION_MILLI as u64, MAX_DILATION_MILLI as u64),
        }
    }

    const fn check(self, value: u64) -> Result<(), ComputeError> {
        let (min, max) = self.range();
        if value < min || value > max {
            return Err(ComputeError::OutOfRange { param: self, value });
        }
        Ok(())
    }
}

impl fmt::Display for ComputeParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of the compute model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComputeError {
    /// A parameter value outside [`ComputeParam::range`].
    OutOfRange {
        /// The parameter.
        param: ComputeParam,
        /// The rejected value.
        value: u64,
    },
    /// More than [`MAX_UTHREADS`] µthreads in all.
    TooManyUthreads {
        /// `units * uthreads_per_unit`.
        uthreads: u64,
    },
}

impl fmt::Display for ComputeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { param, value } => {
                let (min, max) = param.range();
                write!(f, "{param} = {value} is outside {min}..={max}")
            }
            Self::TooManyUthreads { uthreads } => {
                write!(f, "{uthreads} uthreads exceed {MAX_UTHREADS}")
            }
        }
    }
}

/// What one chunk costs: instructions a µthread issues, and bytes it moves to or from CCM
/// memory (read plus written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Work {
    /// Instructions issued.
    pub ops: u64,
    /// Bytes read from and written to CCM memory.
    pub bytes: u64,
}

/// The compute model: a validated [`CcmConfig`] and dilation.
///
/// # Invariants
///
/// Every parameter lies in its [`ComputeParam::range`] and `cfg.uthreads() <= MAX_UTHREADS`;
/// `ns_per_op` is `(uthreads_per_unit * dilation_milli, clock_mhz)` and `ns_per_byte` is
/// `(uthreads() * dilation_milli, mem_mb_per_s)`: the exact dilated costs in nanoseconds, as
/// fractions (the factors of 1000 of MHz, MB/s and thousandths cancel out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ComputeModel {
    cfg: CcmConfig,
    dilation_milli: u32,
    /// Nanoseconds per instruction, as a fraction `(numerator, denominator)`.
    ns_per_op: (u64, u64),
    /// Nanoseconds per byte, as a fraction `(numerator, denominator)`.
    ns_per_byte: (u64, u64),
}

impl Default for ComputeModel {
    fn default() -> Self {
        Self::PAPER
    }
}

impl ComputeModel {
    /// [`CcmConfig::PAPER`] without dilation.
    pub const PAPER: Self = match Self::new(CcmConfig::PAPER, NO_DILATION_MILLI) {
        Ok(m) => m,
        // Evaluated at compile time: a build error, not a run-time panic.
        Err(_) => panic!("the PAPER configuration is out of range"),
    };

    /// Validates `cfg` and the dilation `dilation_milli` (thousandths; 1000 is none).
    pub const fn new(cfg: CcmConfig, dilation_milli: u32) -> Result<Self, ComputeError> {
        let checks = [
            (ComputeParam::Units, cfg.units as u64),
            (ComputeParam::UthreadsPerUnit, cfg.uthreads_per_unit as u64),
            (ComputeParam::ClockMhz, cfg.clock_mhz as u64),
            (ComputeParam::MemMbPerS, cfg.mem_mb_per_s),
            (ComputeParam::DilationMilli, dilation_milli as u64),
        ];
        let mut i = 0;
        while i < checks.len() {
            let (param, value) = checks[i];
            if let Err(e) = param.check(value) {
                return Err(e);
            }
            i += 1;
        }
        // Cannot overflow: both factors are at most 1024.
        let uthreads = cfg.units as u64 * cfg.uthreads_per_unit as u64;
        if uthreads > MAX_UTHREADS as u64 {
            return Err(ComputeError::TooManyUthreads { uthreads });
        }
        let dil = dilation_milli as u64;
        // A µthread issues one instruction every `uthreads_per_unit` cycles of `1000 / clock_mhz`
        // ns, times `dil / 1000`; it moves a byte in `uthreads * 1000 / mem_mb_per_s` ns (a
        // `1 / uthreads` share of the bandwidth), times `dil / 1000`. Cannot overflow: the
        // numerators are at most `MAX_UTHREADS * MAX_DILATION_MILLI` (asserted below).
        // INVARIANT: every parameter was checked above.
        Ok(Self {
            cfg,
            dilation_milli,
            ns_per_op: (cfg.uthreads_per_unit as u64 * dil, cfg.clock_mhz as u64),
            ns_per_byte: (uthreads * dil, cfg.mem_mb_per_s),
        })
    }

    /// The modelled hardware.
    pub const fn config(&self) -> CcmConfig {
        self.cfg
    }

    /// The dilation, in thousandths.
    pub const fn dilation_milli(&self) -> u32 {
        self.dilation_milli
    }

    /// The virtual µthreads: the length of the timeline [`place`] needs.
    pub const fn slots(&self) -> u32 {
        // At most `MAX_UTHREADS` (type invariant), so no saturation.
        self.cfg.uthreads()
    }

    /// Time, ns, a µthread of the busy machine takes to issue `ops` instructions, dilated and
    /// rounded up (saturating at `u64::MAX`).
    pub const fn compute_ns(&self, ops: u64) -> u64 {
        mul_div_ceil(ops, self.ns_per_op.0, self.ns_per_op.1)
    }

    /// Time, ns, a µthread of the busy machine takes to move `bytes` bytes to or from memory,
    /// dilated and rounded up (saturating at `u64::MAX`).
    pub const fn memory_ns(&self, bytes: u64) -> u64 {
        mul_div_ceil(bytes, self.ns_per_byte.0, self.ns_per_byte.1)
    }

    /// Modelled time, ns, of one chunk on one µthread when every µthread is busy:
    /// `max(compute, memory)`, dilated.
    pub const fn chunk_ns(&self, w: Work) -> u64 {
        let c = self.compute_ns(w.ops);
        let m = self.memory_ns(w.bytes);
        if c > m {
            c
        } else {
            m
        }
    }

    /// The modelled time of chunk `index` of `kernel` with `input_size` bytes of input, if there
    /// is such a chunk: [`Kernel::chunk_work`], then [`ComputeModel::chunk_ns`].
    pub fn kernel_chunk_ns(&self, kernel: &Kernel, input_size: u32, index: u32) -> Option<u64> {
        kernel
            .chunk_work(input_size, index)
            .map(|w| self.chunk_ns(w))
    }
}

/// `ceil(n * num / den)`, saturating at `u64::MAX`, without 128-bit arithmetic. Exact while
/// `(den - 1) * num` fits a `u64` (true of every validated model: asserted below); `den == 0`
/// gives `u64::MAX`.
const fn mul_div_ceil(n: u64, num: u64, den: u64) -> u64 {
    if den == 0 {
        return u64::MAX;
    }
    let whole = (n / den).saturating_mul(num);
    let part = match (n % den).checked_mul(num) {
        Some(p) => p.div_ceil(den),
        None => return u64::MAX,
    };
    whole.saturating_add(part)
}

/// Places a chunk that becomes ready at `now_ns` and runs `dur_ns` on the virtual µthread free
/// earliest (the first such one), and returns its modelled completion time,
/// `max(now_ns, free_at[i]) + dur_ns` (saturating), which becomes `free_at[i]`.
///
/// `free_at` is the timeline, one entry per µthread ([`ComputeModel::slots`]), all 0 (or the
/// current time) to start. An empty timeline models unbounded µthreads: `now_ns + dur_ns`.
pub fn place(free_at: &mut [u64], now_ns: u64, dur_ns: u64) -> u64 {
    let Some(slot) = free_at.iter_mut().min_by_key(|t| **t) else {
        return now_ns.saturating_add(dur_ns);
    };
    let start = if *slot > now_ns { *slot } else { now_ns };
    let end = start.saturating_add(dur_ns);
    *slot = end;
    end
}

/// [`place`] on a timeline kept as a binary min-heap (`free_at[i] <= free_at[2i + 1]`,
/// `free_at[2i + 2]`), in `O(log slots)` instead of `O(slots)`: the device books every chunk
/// on a timeline of up to 4 096 virtual µthreads, and a linear search for the earliest was a
/// fifth of the emulated device's time on small chunks. Returns what [`place`] returns (the
/// same earliest free time), and keeps the heap property: the earliest entry grows to the
/// chunk's completion and sinks to its place. An all-equal timeline (all 0 to start) is a heap.
pub fn place_in_heap(free_at: &mut [u64], now_ns: u64, dur_ns: u64) -> u64 {
    let Some(&earliest) = free_at.first() else {
        return now_ns.saturating_add(dur_ns);
    };
    let end = earliest.max(now_ns).saturating_add(dur_ns);
    let mut i = 0;
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let (child, earlier) = match (free_at.get(l), free_at.get(r)) {
            (Some(&a), Some(&b)) if b < a => (r, b),
            (Some(&a), _) => (l, a),
            _ => break,
        };
        if earlier >= end {
            break;
        }
        free_at.swap(i, child);
        i = child;
    }
    if let Some(slot) = free_at.get_mut(i) {
        *slot = end;
    }
    end
}

/// The CRC32C instructions over `output` bytes.
const fn crc_ops(output: u64) -> u64 {
    output.div_ceil(CRC_BYTES_PER_OP)
}

/// `a * b`, saturating.
const fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// The sum of `parts`, saturating.
const fn sum<const N: usize>(parts: [u64; N]) -> u64 {
    let mut acc = 0u64;
    let mut i = 0;
    while i < N {
        acc = acc.saturating_add(parts[i]);
        i += 1;
    }
    acc
}

impl Kernel {
    /// The work of chunk `index` of a launch with `input_size` bytes of input (see the table in
    /// [`compute`](super::compute)); `None` if there is no such chunk.
    pub fn chunk_work(&self, input_size: u32, index: u32) -> Option<Work> {
        if index >= self.chunk_count(input_size) {
            return None;
        }
        let span = self.chunk(input_size, index)?;
        let work = match self {
            Self::Xform(_) => xform_work(span),
            Self::Knn(k) => knn_work(k, span),
            Self::Ssb(q) => ssb_work(q, index),
            Self::Sls(l) => sls_work(l, span),
            Self::Graph(g) => graph_work(g, span),
            Self::Attention(a) => attention_work(a, index)?,
        };
        Some(Work {
            ops: sum([CHUNK_OPS, work.ops, crc_ops(u64::from(span.length))]),
            bytes: work.bytes,
        })
    }
}

// The per-kernel parts below leave out what every chunk pays: `CHUNK_OPS` and the CRC32C of its
// output (`span.length` bytes).

fn xform_work(span: ChunkSpan) -> Work {
    let len = u64::from(span.length);
    let words = len.div_ceil(u64::from(WORD));
    Work {
        ops: mul(words, XFORM_OPS_PER_WORD),
        bytes: mul(2, len),
    }
}

fn knn_work(k: &Knn, span: ChunkSpan) -> Work {
    let n = u64::from(span.length / DISTANCE_BYTES);
    let d = u64::from(k.dim());
    let e = u64::from(ELEMENT_BYTES);
    Work {
        ops: mul(n, sum([mul(d, KNN_OPS_PER_ELEMENT), KNN_OPS_PER_ROW])),
        // The query once, the rows, the distances.
        bytes: sum([
            mul(d, e),
            mul(mul(n, d), e),
            mul(n, u64::from(DISTANCE_BYTES)),
        ]),
    }
}

fn ssb_work(q: &Ssb, index: u32) -> Work {
    // `index < chunk_count()` (checked by the caller), as `rows_of` requires.
    let (_, n) = q.rows_of(index);
    let n = u64::from(n);
    Work {
        ops: sum([mul(n, SSB_OPS_PER_ROW), SSB_OPS_PER_CHUNK]),
        bytes: sum([mul(n, u64::from(ROW_BYTES)), u64::from(PARTIAL_BYTES)]),
    }
}

fn sls_work(l: &Sls, span: ChunkSpan) -> Work {
    let d = u64::from(l.dim());
    let p = u64::from(l.pooling());
    let w = u64::from(WORD_BYTES);
    // `dim >= 1` (type invariant of `Sls`); `max(1)` keeps the division total.
    let s = u64::from(span.length) / mul(d, w).max(1);
    let per_sample = sum([
        SLS_OPS_PER_SAMPLE,
        mul(p, SLS_OPS_PER_INDEX),
        mul(mul(p, d), SLS_OPS_PER_GATHERED_ELEMENT),
        mul(d, SLS_OPS_PER_OUTPUT_ELEMENT),
    ]);
    let gathered = mul(s, p);
    Work {
        ops: mul(s, per_sample),
        // The indices, the gathered rows, the pooled vectors.
        bytes: sum([
            mul(gathered, w),
            mul(mul(gathered, d), w),
            mul(mul(s, d), w),
        ]),
    }
}

fn graph_work(g: &Graph, span: ChunkSpan) -> Work {
    let sum_bytes = u64::from(SUM_BYTES);
    let n = u64::from(span.length) / sum_bytes;
    let vertices = u64::from(g.output_bytes()) / sum_bytes;
    // The sources follow the `vertices + 1` offsets, the weights follow the `edges` sources.
    let edges = g.weight_at(0).saturating_sub(g.source_at(0)) / 4;
    // The chunk's share of the edges (`vertices >= 1`: type invariant of `Graph`).
    let e = mul(edges, n).div_ceil(vertices.max(1));
    let (per_edge, edge_bytes) = match g.pass() {
        // Source (4) and value (8).
        Pass::Sum => (PAGERANK_OPS_PER_EDGE, 12),
        // Source (4), weight (4) and value (8).
        Pass::MinPlusWeight => (SSSP_OPS_PER_EDGE, 16),
    };
    Work {
        ops: sum([mul(n, GRAPH_OPS_PER_VERTEX), mul(e, per_edge)]),
        // The offsets, the edges, the results.
        bytes: sum([mul(n + 1, 4), mul(e, edge_bytes), mul(n, sum_bytes)]),
    }
}

fn attention_work(a: &Attention, index: u32) -> Option<Work> {
    let (_, first, n) = a.rows_of(index)?;
    let d = u64::from(a.head_dim());
    let (in_bytes, out_bytes) = (
        u64::from(ATTENTION_IN_BYTES),
        u64::from(ATTENTION_OUT_BYTES),
    );
    let vector = mul(d, in_bytes).max(1);
    // The shape from the input's layout: queries of head 1 start after head 0's `q_rows`; keys
    // of head 1 start `tokens` vectors after head 0's.
    let q_rows = a.query_offset(1, 0) / vector;
    let tokens = a.key_offset(1, 0).saturating_sub(a.key_offset(0, 0)) / vector;
    // Row `first + i` attends to `q_first + first + i + 1` keys, with `q_first` taken to be
    // `tokens - q_rows` (see the module documentation): `n * base + n * (n + 1) / 2` in all.
    let base = tokens
        .saturating_sub(q_rows)
        .saturating_add(u64::from(first));
    let n = u64::from(n);
    let keys = sum([mul(n, base), mul(n, n + 1) / 2]);
    Some(Work {
        ops: sum([
            mul(
                n,
                sum([mul(d, ATTENTION_OPS_PER_ROW_ELEMENT), ATTENTION_OPS_PER_ROW]),
            ),
            mul(
                keys,
                sum([mul(d, ATTENTION_OPS_PER_KEY_ELEMENT), ATTENTION_OPS_PER_KEY]),
            ),
        ]),
        // Per row its query and its output; per key the key twice (the maximum and the weight
        // passes) and the value once.
        bytes: sum([
            mul(n, mul(d, in_bytes + out_bytes)),
            mul(keys, mul(d, 3 * in_bytes)),
        ]),
    })
}

// The defaults are valid, and the table's order is the enum's.
const _: () = {
    let mut i = 0;
    while i < ComputeParam::COUNT {
        let p = ComputeParam::ALL[i];
        let (min, max) = p.range();
        assert!(p as usize == i);
        assert!(min <= p.default_value() && p.default_value() <= max);
        i += 1;
    }
};
// Every range fits its field's type.
const _: () = assert!(ComputeParam::Units.range().1 <= u32::MAX as u64);
const _: () = assert!(ComputeParam::UthreadsPerUnit.range().1 <= u32::MAX as u64);
const _: () = assert!(ComputeParam::ClockMhz.range().1 <= u32::MAX as u64);
const _: () = assert!(ComputeParam::DilationMilli.range().1 <= u32::MAX as u64);
// `mul_div_ceil` is exact for every validated model: `(den - 1) * num` fits a `u64`, for the
// largest numerators and denominators.
const _: () = assert!(
    (ComputeParam::UthreadsPerUnit.range().1 as u128)
        * (MAX_DILATION_MILLI as u128)
        * (ComputeParam::ClockMhz.range().1 as u128)
        <= u64::MAX as u128
);
const _: () = assert!(
    (MAX_UTHREADS as u128)
        * (MAX_DILATION_MILLI as u128)
        * (ComputeParam::MemMbPerS.range().1 as u128)
        <= u64::MAX as u128
);
// The PAPER machine's per-instruction cost is a whole 8 ns.
const _: () = assert!(ComputeModel::PAPER.compute_ns(1) == 8);
