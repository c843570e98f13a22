// SPDX-License-Identifier: GPL-2.0

//! The device ABI of the CXL computational-memory (CCM) device: the one source of truth.
//!
//! Every structure and offset that crosses the boundary between the host driver (`cxl_ccm`) and
//! the device (the software device in `tools/testing/cxl_ccm`, or one day real hardware) is
//! defined here, once. Both sides compile this file in with `#[path]`; it uses `core` only and no
//! `unsafe`. The user-visible subset is mirrored in C by `include/uapi/linux/cxl_ccm.h`, and
//! `tools/ccm-abi` checks the two against each other (sizes, alignments, offsets, constants).
//! Every layout below is frozen by `const` assertions at the bottom of this file: changing a
//! layout without changing the assertions does not compile.
//!
//! The protocol logic (ring arithmetic, gap-aware head, credit, batcher) is in the `proto` module
//! (`drivers/cxl_ccm/proto/`); its documentation explains the AXLE asynchronous back-streaming
//! protocol that this ABI carries (paper §IV-B, §IV-C). The user ABI (ioctls, mmap offsets) is in
//! `uapi.rs` next to this file.
//!
//! # Byte order and field widths
//!
//! All multi-byte fields are **little-endian**, every field has a fixed width, every structure is
//! `#[repr(C)]` with explicit reserved fields and no implicit padding (checked by `tools/ccm-abi`).
//! Reserved fields are written as zero and ignored by the reader, so that a later minor version can
//! give them a meaning. Both agents are little-endian (a `const` assertion below refuses any other
//! target); a big-endian port would wrap the fields in `__le32`-style accessors.
//!
//! # The three places
//!
//! | place | reached by | holds |
//! | --- | --- | --- |
//! | **register block**: an MMIO resource (a BAR of a real device; ordinary memory the driver maps in the software device) | CXL.io loads/stores, ~350 ns round trip | page 0: [`GlobalRegs`]; page `1 + t`: [`TenantRegs`] of tenant `t` (configuration, status, mailbox, interrupt control) |
//! | **device memory** (HDM, 64 MiB by default) | CXL.mem loads/stores, ~70 ns round trip | tenant data (input, output), the shadowed [`DescriptorTable`]s, and per tenant a [`TenantWindow`]: the launch window (64 [`LaunchPacket`] slots) and the credit line ([`CreditLine`]: the metadata and payload heads) |
//! | **DMA region** in host memory, per tenant: pinned, mapped cache-bypass, physically non-contiguous | device DMA (CXL.io posted writes); host local loads | [`RingHeaders`] (the tails the device writes), the metadata ring ([`MetadataRecord`] slots), the payload ring (`slot_size` slots) |
//!
//! The credit heads and launch packets are in device memory, not in the register block, because
//! the paper sends both as CXL.mem stores (§IV-B: the launch "by issuing a CXL.mem store request";
//! flow control "by sending CXL.mem store operations"); CXL.io is used for what the paper's remote
//! polling (RP) baseline uses it for (mailbox doorbell and status) and for configuration. The
//! latency model of the software device charges each access by the column "reached by".
//!
//! # Who writes what
//!
//! Every field has exactly one writer at any time, so no field ever needs an atomic
//! read-modify-write across the link, and an aligned 32-bit store (single-copy atomic on every
//! path: CXL.mem, CXL.io, DMA) is all a counter needs. Where a field is written by the host during
//! setup and by the device afterwards (the launch slots' tags, see [`TenantWindow`]), the hand-over
//! is the tenant enable handshake. Each field's documentation names its writer and its reader.
//!
//! Counters (ring heads and tails, launch tags, mailbox sequence numbers, interrupt sequence
//! numbers) are free-running `u32`s compared by wrapping distance only, like the ring counters of
//! `proto::ring`. A tenant's counters all start at the [`TenantRegs::index_base`] the host chooses
//! (0 normally; just below `u32::MAX` in tests): the first launch tag, mailbox sequence number and
//! interrupt sequence number are `index_base`, and "nothing yet" is `index_base - 1`.
//!
//! # Memory ordering
//!
//! Every "publish" below is: write the data, then a **write barrier** (`dma_wmb`/`smp_wmb`, a
//! release store in the software device), then store the index. Every "consume" is: load the index
//! (**acquire**: `smp_rmb`/`dma_rmb` after it), then read the data. The pairs:
//!
//! | data | index (publishes it) | writer → reader |
//! | --- | --- | --- |
//! | payload slots | [`RingHeader::tail`] of the payload ring | device → host |
//! | metadata records | [`RingHeader::tail`] of the metadata ring (after the payload tail: the AXLE invariant *payload data → payload tail / metadata data → metadata tail*) | device → host |
//! | (reads of released slots) | [`CreditLine::metadata_head`], [`CreditLine::payload_head`] | host → device |
//! | [`LaunchPacket`] bytes 4..64 | [`LaunchPacket::tag`] (bytes 0..4) | host → device |
//! | (the device's copy of a packet) | [`LaunchHeader::head`] | device → host |
//! | [`SyncCompletion::status`], `result_bytes` | [`SyncCompletion::done_tag`] | device → host |
//! | `mbox_cmd`, `mbox_arg` | `mbox_doorbell` | host → device |
//! | `mbox_status`, `mbox_ret` | `mbox_done` | device → host |
//! | `irq_cause` | `irq_seq` | device → host |
//! | tenant configuration | [`TENANT_CTRL_ENABLE`] in `ctrl` | host → device |
//! | tenant window initialisation | [`TENANT_STATUS_ENABLED`] in `status` | device → host |
//!
//! The DMA region is mapped cache-bypass on the host (paper §IV-C, cache staleness), so a slot
//! reused on the next lap is never read from a stale line. Device memory holding the tenant windows
//! is mapped uncached or write-combining by the host; with write-combining the host follows the tag
//! store of a launch and every head store with a store fence so that they leave the core. A real
//! device decodes a whole 64-byte launch store (e.g. `MOVDIR64B`) as one packet, for which the
//! "tag last" order is moot but harmless.
//!
//! # Lifecycle of a tenant
//!
//! 1. The host allocates the DMA region, zeroes it, fills the read-only fields of the
//!    [`RingHeaders`] and sets every counter there and both heads of the [`CreditLine`] to
//!    `index_base`. It writes the [`DescriptorTable`] into device memory that no user can map
//!    (a writable descriptor table would let a user aim the device's DMA at any host page), then
//!    the configuration registers of [`TenantRegs`] and `irq_ack = index_base - 1`, and finally
//!    sets [`TENANT_CTRL_ENABLE`].
//! 2. The device validates the configuration and the descriptor table. On success it initialises
//!    the tenant window (every launch slot's tag to [`launch_slot_initial_tag`],
//!    [`SyncCompletion::done_tag`] to `index_base - 1`), sets `mbox_done` and `irq_seq` to
//!    `index_base - 1`, and sets [`TENANT_STATUS_ENABLED`]. On failure it writes a `STATUS_*`
//!    code into `error`, sets [`TENANT_STATUS_ERROR`], and stays disabled.
//! 3. Launches, streaming and credit, per the mode ([`MODE_AXLE`], [`MODE_RP`], [`MODE_BS`],
//!    [`MODE_AXLE_IRQ`]).
//! 4. The host clears [`TENANT_CTRL_ENABLE`]. The device abandons pending work, finishes or drops
//!    the DMA in flight and clears [`TENANT_STATUS_ENABLED`]; only then may the host unpin the DMA
//!    region. A device that stops updating [`GlobalRegs::heartbeat`] is presumed dead.
//!
//! # Versioning
//!
//! [`GlobalRegs::version`] is `major << 16 | minor`. A driver accepts a device of its own major
//! version and any minor version; a minor version only gives meaning to reserved fields and bits
//! that older agents write as zero and ignore. [`REGISTER_MAGIC`] identifies the register block.

use core::mem::size_of;

/// The wire-format machinery (`LeField`, `wire_image!`, `assert_layout!`, `registers!`), shared
/// with `drivers/reflux/abi.rs`.
#[path = "../wire/wire.rs"]
mod wire;
pub use wire::{Access, LeField, Readable, Reg, RegWidth, Ro, Rw, Wo, Writable};
// Also used by uapi.rs, which not every includer of this file compiles.
pub(crate) use wire::assert_layout;
use wire::{registers, wire_image};

const _: () = assert!(
    cfg!(target_endian = "little"),
    "the CCM device ABI is little-endian; a big-endian port needs byte-swapping accessors"
);

// ---------------------------------------------------------------------------------------------
// Identification and architectural limits
// ---------------------------------------------------------------------------------------------

/// [`GlobalRegs::magic`]: the bytes `"CCMR"` (CCM registers) in memory order.
pub const REGISTER_MAGIC: u32 = u32::from_le_bytes(*b"CCMR");

/// Major version of this ABI. Incompatible layout changes increment it.
pub const ABI_VERSION_MAJOR: u16 = 1;
/// Minor version of this ABI. Compatible additions (meanings for reserved fields) increment it.
pub const ABI_VERSION_MINOR: u16 = 6;
/// [`GlobalRegs::version`] of a device implementing exactly this file.
pub const ABI_VERSION: u32 = version(ABI_VERSION_MAJOR, ABI_VERSION_MINOR);

/// Encodes a version as stored in [`GlobalRegs::version`].
pub const fn version(major: u16, minor: u16) -> u32 {
    ((major as u32) << 16) | minor as u32
}

/// The major version of a [`GlobalRegs::version`] value.
pub const fn version_major(version: u32) -> u16 {
    (version >> 16) as u16
}

/// The minor version of a [`GlobalRegs::version`] value.
pub const fn version_minor(version: u32) -> u16 {
    version as u16
}

/// Most tenants a device can serve; [`GlobalRegs::max_tenants`] may be lower.
pub const MAX_TENANTS: u32 = 16;

/// Launch slots per tenant window: the launch ring's capacity (a power of two).
pub const LAUNCH_SLOTS: u32 = 64;

/// Size of the argument block of a [`LaunchPacket`].
pub const MAX_ARG_SIZE: u32 = 32;

/// Size of one [`MetadataRecord`], which is also the metadata ring's slot size.
pub const METADATA_RECORD_SIZE: u32 = 32;

/// Smallest payload slot size (bytes) the ABI allows; [`GlobalRegs::min_slot_size`] may be larger.
pub const MIN_SLOT_SIZE: u32 = 8;
/// Largest payload slot size (bytes) the ABI allows: one page, so that a slot never straddles two
/// DMA segments ([`DMA_SEGMENT_ALIGN`]). [`GlobalRegs::max_slot_size`] may be smaller.
pub const MAX_SLOT_SIZE: u32 = 4096;
/// The paper's DMA slot = payload slot size (§IV-B, Table III).
pub const DEFAULT_SLOT_SIZE: u32 = 32;
/// The paper's default streaming factor, in bytes (Table III: 32 B or 64 B).
pub const DEFAULT_STREAMING_FACTOR: u32 = 32;

/// Largest ring capacity in slots (the free-running-counter limit of `proto::ring`).
pub const MAX_RING_SLOTS: u32 = 1 << 31;

/// Alignment of DMA segment bus addresses and lengths, and of the ring offsets in the DMA region.
pub const DMA_SEGMENT_ALIGN: u32 = 4096;

// ---------------------------------------------------------------------------------------------
// Modes, streaming order, capabilities
// ---------------------------------------------------------------------------------------------

/// AXLE: non-blocking launch by a CXL.mem store to the launch window; results back-streamed by DMA
/// into the host rings; the host polls the metadata tail locally.
pub const MODE_AXLE: u32 = 0;
/// Remote polling: the host enqueues a launch by a CXL.io mailbox command and polls the mailbox
/// status over CXL.io; results stay in device memory at the packet's `output_base`. No DMA.
pub const MODE_RP: u32 = 1;
/// Bulk synchronous: a launch store ([`LAUNCH_FLAG_SYNC`], required) is answered only at
/// completion ([`SyncCompletion`]); results stay in device memory. No DMA.
pub const MODE_BS: u32 = 2;
/// AXLE with an interrupt on new results ([`IRQ_CAUSE_METADATA`]) instead of local polling.
pub const MODE_AXLE_IRQ: u32 = 3;
/// Number of modes; a mode is below this.
pub const MODE_COUNT: u32 = 4;

/// Streaming order: out of order, as the compute engine produces results (the paper's OoO streaming).
pub const ORDER_OUT_OF_ORDER: u32 = 0;
/// Streaming order: results of a launch in `result_offset` order, through a reorder buffer.
pub const ORDER_IN_ORDER: u32 = 1;

/// [`GlobalRegs::caps`] bit of a mode: the device supports mode `mode`.
pub const fn cap_mode(mode: u32) -> u64 {
    1 << mode
}
/// Capability: [`MODE_AXLE`].
pub const CAP_MODE_AXLE: u64 = cap_mode(MODE_AXLE);
/// Capability: [`MODE_RP`].
pub const CAP_MODE_RP: u64 = cap_mode(MODE_RP);
/// Capability: [`MODE_BS`].
pub const CAP_MODE_BS: u64 = cap_mode(MODE_BS);
/// Capability: [`MODE_AXLE_IRQ`].
pub const CAP_MODE_AXLE_IRQ: u64 = cap_mode(MODE_AXLE_IRQ);
/// Capability: [`ORDER_IN_ORDER`] streaming.
pub const CAP_IN_ORDER: u64 = 1 << 8;

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

/// Kernel: does nothing; streams one record with [`MD_FLAG_FINAL`] and no payload. Measures the
/// launch and notification path alone.
pub const KERNEL_NOP: u16 = 0;
/// Kernel: a streaming element-wise transform with a per-chunk checksum. The input is a vector of
/// little-endian `u32`; each output element is `op(input, operand)` ([`StreamXformArgs`]); every
/// `chunk_size` bytes of output become one result record whose `checksum` is the CRC32C of the
/// chunk. Output size = input size.
pub const KERNEL_STREAM_XFORM: u16 = 1;
/// Kernel: k-nearest-neighbour distances (VectorDB; Table IV (a)-(c)). The input is a query
/// vector of `dim` little-endian `i32` followed by `rows` vectors of `dim` ([`KnnArgs`]); the
/// output is one little-endian `u64` per row, the squared Euclidean distance to the query. Every
/// `chunk_rows` rows are one result record (CRC32C of its distances); the host keeps the top K.
pub const KERNEL_KNN: u16 = 2;
/// Largest [`KnnArgs::dim`].
pub const KNN_MAX_DIM: u32 = 4096;
/// Kernel: single-source shortest path edge relaxation (graph analytics; Table IV (d)); the host
/// takes the minimum with the current distances, builds the next iteration's input and stops at
/// the fixed point. The input is the in-edge CSR (`vertices + 1` `u32` offsets, `edges` `u32`
/// sources, `edges` `u32` weights), then `vertices` `u64` current distances (`u64::MAX`:
/// unreached) ([`SsspArgs`]). The output is, per vertex, the smallest `dist[source] + weight`
/// over its in-edges (saturating; `u64::MAX` if none is reached). Offsets are clamped and
/// sources taken modulo `vertices`, as for [`KERNEL_PAGERANK`].
pub const KERNEL_SSSP: u16 = 3;
/// Kernel: PageRank's neighbour traversal (graph analytics; Table IV (e)); the host does the rank
/// update and the next iteration's contributions. The input is the in-edge CSR of the graph,
/// `vertices + 1` little-endian `u32` offsets and `edges` `u32` source vertices, followed by
/// `vertices` little-endian `u64` contributions (rank / out-degree, fixed point) ([`PageRankArgs`]).
/// The output is, per vertex, the wrapping sum of its in-neighbours' contributions (`u64`); every
/// `chunk_vertices` vertices are one record. Offsets beyond `edges` are clamped and sources are
/// taken modulo `vertices`, so any input is defined.
pub const KERNEL_PAGERANK: u16 = 4;
/// Kernel: Star Schema Benchmark query 1.1 (OLAP; Table IV (f)). The input is `lineorder` rows of
/// four little-endian `u32` (orderdate as yyyymmdd, quantity, discount, extendedprice); the
/// device filters them by the predicates of [`SsbArgs`] and streams, per `chunk_rows` rows, one
/// record of two `u64`: the chunk's revenue (`sum(extendedprice * discount)` over the matching
/// rows) and its number of matches. The host aggregates. Q1.1 and Q1.2 differ only in their
/// predicates, which the arguments carry.
pub const KERNEL_SSB_Q1_1: u16 = 5;
/// Kernel: Star Schema Benchmark query 1.2 (OLAP; Table IV (g)); as [`KERNEL_SSB_Q1_1`].
pub const KERNEL_SSB_Q1_2: u16 = 6;
/// Kernel: the attention of an LLM inference block (OPT-2.7B; Table IV (h)), in integers
/// ([`AttentionArgs`]). The input is, for each of `heads` heads, the `q_rows` query vectors of
/// the launch (from position `q_first`), then for each head `tokens` key vectors, then for each
/// head `tokens` value vectors, every vector `head_dim` little-endian `i16`. Query row `i`
/// attends causally to keys `0..=q_first + i`: scores `s = q . k` (`i64`), softmax weights
/// `w = exp2q((max - s) >> shift)` with the fixed-point [`attention_weight`], and output
/// `o[d] = sum(w * v[d]) / sum(w)` (`i64` division truncating toward zero) as `head_dim`
/// little-endian `i32`. Record `c` holds rows `[b * chunk_rows, ..)` of head `c % heads` for block
/// `b = c / heads`: the blocks come in order and every block has one record per head, which is
/// what the host's per-block task (heads concatenated, output projection) waits for.
pub const KERNEL_LLM_ATTENTION: u16 = 7;
/// Largest [`AttentionArgs::head_dim`].
pub const ATTENTION_MAX_HEAD_DIM: u32 = 256;
/// Largest [`AttentionArgs::heads`].
pub const ATTENTION_MAX_HEADS: u32 = 64;

/// The softmax weight of a score `delta` below the row's maximum (after the shift), in units
/// of 1/16: `2^(-delta / 16)` in Q16 by a linear interpolation of `2^-x` between integers
/// (`2^-(n + f/16) ~ (1 - f/32) >> n`). Exact, so device and CPU agree bit for bit.
pub const fn attention_weight(delta: u64) -> u64 {
    let n = delta >> 4;
    let f = delta & 15;
    if n >= 32 {
        0
    } else {
        ((32 - f) << 11) >> n
    }
}
/// Kernel: DLRM sparse-length-sum embedding reduction (Criteo; Table IV (i)). The input is an
/// embedding table of `rows` vectors of `dim` little-endian `i32`, followed by `samples` lists of
/// `pooling` little-endian `u32` row indices (taken modulo `rows`) ([`SlsArgs`]). The output is,
/// per sample, the element-wise wrapping sum of its rows (`dim` `i32`); every `chunk_samples`
/// samples are one record. The host runs the MLP on the pooled vectors.
pub const KERNEL_DLRM_SLS: u16 = 8;
/// Largest [`SlsArgs::dim`].
pub const SLS_MAX_DIM: u32 = 512;
/// Kernel ids are below this; [`GlobalRegs::kernels`] has one bit per id.
pub const KERNEL_ID_LIMIT: u16 = 64;

/// [`StreamXformArgs::op`]: output = input.
pub const XFORM_OP_COPY: u32 = 0;
/// [`StreamXformArgs::op`]: output = input XOR operand.
pub const XFORM_OP_XOR: u32 = 1;
/// [`StreamXformArgs::op`]: output = input + operand, wrapping.
pub const XFORM_OP_ADD: u32 = 2;

// ---------------------------------------------------------------------------------------------
// Status codes (launch results, mailbox results, tenant errors)
// ---------------------------------------------------------------------------------------------

/// Success.
pub const STATUS_OK: u16 = 0;
/// The kernel id is unknown or not in [`GlobalRegs::kernels`].
pub const STATUS_BAD_KERNEL: u16 = 1;
/// The argument block is invalid for the kernel (including a wrong `arg_size`).
pub const STATUS_BAD_ARGS: u16 = 2;
/// The input or output lies outside the tenant's device-memory partition.
pub const STATUS_BAD_RANGE: u16 = 3;
/// A malformed packet: tenant mismatch, unknown flags, nonzero reserved field, or a flag the mode
/// forbids (e.g. no [`LAUNCH_FLAG_SYNC`] in [`MODE_BS`]).
pub const STATUS_BAD_PACKET: u16 = 4;
/// A DMA transfer failed (e.g. a bus address the IOMMU refused).
pub const STATUS_DMA_FAULT: u16 = 5;
/// The tenant configuration was rejected at enable.
pub const STATUS_BAD_CONFIG: u16 = 6;
/// The descriptor table was rejected at enable.
pub const STATUS_BAD_DESCRIPTOR: u16 = 7;
/// The launch was abandoned because the tenant was disabled.
pub const STATUS_ABORTED: u16 = 8;
/// A mailbox command unknown or not allowed in the tenant's mode.
pub const STATUS_BAD_COMMAND: u16 = 9;

// ---------------------------------------------------------------------------------------------
// Register block: page 0, global registers
// ---------------------------------------------------------------------------------------------

/// Size of one register page: global registers, then one page per tenant.
pub const REGISTER_PAGE_SIZE: usize = 4096;
/// Size of the register block: the global page and [`MAX_TENANTS`] tenant pages.
pub const REGISTER_BLOCK_SIZE: usize = REGISTER_PAGE_SIZE * (1 + MAX_TENANTS as usize);

/// Offset of tenant `tenant`'s [`TenantRegs`] in the register block.
pub const fn tenant_regs_offset(tenant: u32) -> usize {
    REGISTER_PAGE_SIZE * (1 + tenant as usize)
}

/// Register `reg` of [`TenantRegs`] in tenant `tenant`'s page of the register block.
pub const fn tenant_reg<T: RegWidth, A: Access>(tenant: u32, reg: Reg<T, A>) -> Reg<T, A> {
    reg.at(tenant_regs_offset(tenant))
}

registers! {
    /// Page 0 of the register block: identification, limits and device control.
    ///
    /// The identification fields are written by the device before the host can map the block and
    /// are constant afterwards.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct GlobalRegs, size = 0x100, align = 8 {
        /// Device writes at reset: [`REGISTER_MAGIC`]. The driver reads it first and refuses the
        /// device if it differs.
        0x00 magic: u32, Ro REG_MAGIC;
        /// Device writes at reset: [`ABI_VERSION`]. The driver refuses another major version.
        0x04 version: u32, Ro REG_VERSION;
        /// Device writes at reset: `CAP_*` bits.
        0x08 caps: u64, Ro REG_CAPS;
        /// Device writes at reset: bit `k` set if kernel id `k` is implemented.
        0x10 kernels: u64, Ro REG_KERNELS;
        /// Device writes at reset: device memory bytes.
        0x18 mem_size: u64, Ro REG_MEM_SIZE;
        /// Device writes at reset: device-memory offset of tenant 0's [`TenantWindow`]
        /// ([`DMA_SEGMENT_ALIGN`]-aligned); tenant `t`'s is at `+ t * TENANT_WINDOW_SIZE`. The host
        /// never places data in this range.
        0x20 tenant_windows: u64, Ro REG_TENANT_WINDOWS;
        /// Device writes at reset: `1..=MAX_TENANTS`.
        0x28 max_tenants: u32, Ro REG_MAX_TENANTS;
        /// Device writes at reset: [`LAUNCH_SLOTS`].
        0x2C launch_slots: u32, Ro REG_LAUNCH_SLOTS;
        /// Device writes at reset: the most [`DmaSegment`]s a tenant's descriptor table may have.
        0x30 max_segments: u32, Ro REG_MAX_SEGMENTS;
        /// Device writes at reset: smallest payload slot size it supports, a power of two `>=
        /// MIN_SLOT_SIZE`.
        0x34 min_slot_size: u32, Ro REG_MIN_SLOT_SIZE;
        /// Device writes at reset: largest payload slot size it supports, a power of two `<=
        /// MAX_SLOT_SIZE`.
        0x38 max_slot_size: u32, Ro REG_MAX_SLOT_SIZE;
        /// Device writes at reset: largest capacity of either ring, a power of two `<=
        /// MAX_RING_SLOTS`.
        0x3C max_ring_slots: u32, Ro REG_MAX_RING_SLOTS;
        /// Host writes: [`DEV_CTRL_ENABLE`]. Device reads. Clearing the bit disables every tenant
        /// as if each had been disabled.
        0x40 dev_ctrl: u32, Rw REG_DEV_CTRL {
            /// [`GlobalRegs::dev_ctrl`]: the device may run tenants.
            pub const DEV_CTRL_ENABLE: u32 = 1 << 0;
        };
        /// Device writes: `DEV_STATUS_*`. Host reads.
        0x44 dev_status: u32, Ro REG_DEV_STATUS {
            /// [`GlobalRegs::dev_status`]: the device is enabled and serving tenants.
            pub const DEV_STATUS_READY: u32 = 1 << 0;
            /// [`GlobalRegs::dev_status`]: the device hit an unrecoverable error; it needs a reset.
            pub const DEV_STATUS_FATAL: u32 = 1 << 1;
        };
        /// Device increments it at least every 10 ms while [`DEV_STATUS_READY`]. Host reads it to
        /// detect a dead device.
        0x48 heartbeat: u32, Ro REG_HEARTBEAT;
        /// Zero.
        0x4C reserved0: u32;
        /// Since 1.1. A software device that models the link writes the CXL.mem round trip the host
        /// should add to its own CXL.mem accesses, so that both sides pay the modelled link;
        /// hardware writes 0 (its link costs itself).
        0x50 link_cxl_mem_rtt_ns: u32, Ro REG_LINK_CXL_MEM_RTT_NS;
        /// Since 1.1. As above, for CXL.io accesses (the mailbox).
        0x54 link_cxl_io_rtt_ns: u32, Ro REG_LINK_CXL_IO_RTT_NS;
        /// Since 1.1. As above, the transfer cost of bulk CXL.mem loads, in picoseconds per byte.
        0x58 link_ps_per_byte: u32, Ro REG_LINK_PS_PER_BYTE;
        /// Since 1.1. The remote polling interval the device's model assumes (RP), the default for
        /// a tenant that asks for none.
        0x5C link_remote_poll_ns: u32, Ro REG_LINK_REMOTE_POLL_NS;
        /// Since 1.4. The handling cost of one interrupt (Table III: 50 µs per DMA request) the
        /// host pays on its interrupt path for every interrupt the device raised ([`TREG_IRQ_SEQ`]
        /// counts them); hardware writes 0.
        0x60 link_irq_ns: u32, Ro REG_LINK_IRQ_NS;
        /// Since 1.5. The factor, in thousandths, by which a software device multiplies every
        /// modelled cost (the `link_*` registers above and its CCM compute model), because its CPU
        /// runs the host's and the device's code that much slower than the modelled hardware would;
        /// hardware writes 0 (nothing is modelled).
        0x64 model_dilation_milli: u32, Ro REG_MODEL_DILATION_MILLI;
        /// Zero; room for later global registers.
        0x68 reserved: [u64; 19];
    }
}

// ---------------------------------------------------------------------------------------------
// Register block: one page per tenant
// ---------------------------------------------------------------------------------------------

/// The [`TREG_CREDIT_BLOCKED`] value of a device blocked on heads `metadata`, `payload`.
pub const fn credit_blocked(metadata: u32, payload: u32) -> u64 {
    CREDIT_BLOCKED | ((metadata as u64 & 0x7fff_ffff) << 32) | payload as u64
}

/// Device-memory bytes per checksum table entry; also the shortest record that has one.
pub const CHECKSUM_GRANULE: u64 = 16;

/// The checksum table entry of a record of `len` bytes at device-memory offset `at`, for a table
/// of `entries` entries describing the memory from `base` ([`TREG_CHECKSUM_TABLE`]); `None`
/// if the record has none (shorter than [`CHECKSUM_GRANULE`], not at a granule, or outside).
pub const fn checksum_entry(base: u64, entries: u32, at: u64, len: u64) -> Option<u32> {
    if at < base || len < CHECKSUM_GRANULE || (at - base) % CHECKSUM_GRANULE != 0 {
        return None;
    }
    let k = (at - base) / CHECKSUM_GRANULE;
    if k < entries as u64 {
        Some(k as u32)
    } else {
        None
    }
}

registers! {
    /// The registers of one tenant, at [`tenant_regs_offset`] in the register block (CXL.io).
    ///
    /// Grouped by writer into 64-byte lines: configuration (host), status and counters (device),
    /// mailbox (host words, then device words), interrupt control (host words, then device words).
    /// The device's counters are statistics: a host reads them with plain loads and may see them
    /// torn on a 32-bit host.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct TenantRegs, size = 0x100, align = 8 {
        /// Host writes: [`TENANT_CTRL_ENABLE`], after every configuration register (a write barrier
        /// in between). Device reads. The configuration registers (`TREG_MODE` to
        /// `TREG_DESC_COUNT`) may change only while the tenant is disabled.
        0x00 ctrl: u32, Rw TREG_CTRL {
            /// `ctrl`: the tenant is enabled (host's request).
            pub const TENANT_CTRL_ENABLE: u32 = 1 << 0;
        };
        /// Host writes: `MODE_*`.
        0x04 mode: u32, Rw TREG_MODE;
        /// Host writes: payload slot size in bytes (the DMA slot size), a power of two in
        /// `[min_slot_size, max_slot_size]`.
        0x08 slot_size: u32, Rw TREG_SLOT_SIZE;
        /// Host writes: the SF in bytes, a multiple of `slot_size`, at most `payload_slots *
        /// slot_size`.
        0x0C streaming_factor: u32, Rw TREG_STREAMING_FACTOR;
        /// Host writes: metadata ring capacity, a power of two.
        0x10 metadata_slots: u32, Rw TREG_METADATA_SLOTS;
        /// Host writes: payload ring capacity, a power of two.
        0x14 payload_slots: u32, Rw TREG_PAYLOAD_SLOTS;
        /// Host writes: `ORDER_*`.
        0x18 streaming_order: u32, Rw TREG_STREAMING_ORDER;
        /// Host writes: the initial value of every counter of the tenant (ring heads and tails,
        /// launch tags).
        0x1C index_base: u32, Rw TREG_INDEX_BASE;
        /// Host writes: device-memory offset of the tenant's partition; every input and output of
        /// its launches must lie in the partition.
        0x20 mem_base: u64, Rw TREG_MEM_BASE;
        /// Host writes: size of the partition in bytes.
        0x28 mem_size: u64, Rw TREG_MEM_SIZE;
        /// Host writes: device-memory offset of the tenant's [`DescriptorTable`] (8-byte aligned,
        /// outside any memory a user can map).
        0x30 desc_table: u64, Rw TREG_DESC_TABLE;
        /// Host writes: number of segments of the descriptor table; must equal
        /// [`DescriptorTable::segment_count`]. 0 is allowed in RP and BS modes (no DMA).
        0x38 desc_count: u32, Rw TREG_DESC_COUNT;
        /// Since 1.2. Host writes: `SCHEDULE_*`, how the device schedules the chunks of the
        /// tenant's launches.
        0x3C schedule: u32, Rw TREG_SCHEDULE {
            /// [`TREG_SCHEDULE`]: the device's choice (round-robin over the launches of an
            /// out-of-order tenant, Table III; first in, first out for an in-order one).
            pub const SCHEDULE_DEFAULT: u32 = 0;
            /// [`TREG_SCHEDULE`]: first in, first out: a launch's chunks before the next launch's.
            pub const SCHEDULE_FIFO: u32 = 1;
        };
        /// Device writes: `TENANT_STATUS_*`. Host reads.
        0x40 status: u32, Ro TREG_STATUS {
            /// `status`: the tenant is enabled and its window initialised (device's answer).
            pub const TENANT_STATUS_ENABLED: u32 = 1 << 0;
            /// `status`: the tenant hit an error; `error` says which. Cleared by the next enable.
            pub const TENANT_STATUS_ERROR: u32 = 1 << 1;
        };
        /// Device writes: a `STATUS_*` code when it sets [`TENANT_STATUS_ERROR`], before it. Host
        /// reads.
        0x44 error: u32, Ro TREG_ERROR;
        /// Device writes: launches accepted since enable.
        0x48 launches: u64, Ro TREG_LAUNCHES;
        /// Device writes: metadata records streamed since enable.
        0x50 records: u64, Ro TREG_RECORDS;
        /// Device writes: payload bytes streamed since enable.
        0x58 payload_bytes: u64, Ro TREG_PAYLOAD_BYTES;
        /// Device writes: batches that had to wait for credit (back-pressure on the device side).
        0x60 credit_stalls: u64, Ro TREG_CREDIT_STALLS;
        /// Device writes: batches back-streamed since enable.
        0x68 dma_batches: u64, Ro TREG_DMA_BATCHES;
        /// Since 1.1. Device writes: nanoseconds during which the tenant had work the device could
        /// do (jobs queued or computing, a mailbox command running, results it may stream); the
        /// rest of a run is the CCM's idle time for this tenant. Since 1.4 results held back for
        /// lack of credit with nothing else to do count as idle, as the AXLE paper counts waiting
        /// on the other side (RP and BS results waiting for the host to load them never counted).
        0x70 busy_ns: u64, Ro TREG_BUSY_NS;
        /// Since 1.1. Device writes: nanoseconds batches waited for credit (back-pressure), from
        /// the first refusal to the reservation.
        0x78 credit_wait_ns: u64, Ro TREG_CREDIT_WAIT_NS;
        /// Host writes: a `MBOX_CMD_*` opcode, before ringing `mbox_doorbell`. Only one command is
        /// outstanding: the host writes the next one only after `mbox_done` reached the previous
        /// sequence number.
        0x80 mbox_cmd: u32, Rw TREG_MBOX_CMD {
            /// `mbox_cmd`: no operation; completes at once (measures a CXL.io round trip).
            pub const MBOX_CMD_NOP: u32 = 0;
            /// `mbox_cmd`: run the launch packet in launch slot `mbox_arg & (LAUNCH_SLOTS - 1)`,
            /// whose tag must be `mbox_arg`. Completes when the kernel has completed (the RP flow:
            /// the host polls `mbox_done`). Only in [`MODE_RP`].
            pub const MBOX_CMD_ENQUEUE: u32 = 1;
            /// `mbox_cmd`: retire the completed launch `mbox_arg`; the device may reuse its
            /// resources.
            pub const MBOX_CMD_DEQUEUE: u32 = 2;
        };
        /// Host writes: the command's argument (a launch tag).
        0x84 mbox_arg: u32, Rw TREG_MBOX_ARG;
        /// Host writes, last (CXL.io writes are posted in order): the command's sequence number,
        /// one more than the previous. Device reads; a new value rings the doorbell.
        0x88 mbox_doorbell: u32, Rw TREG_MBOX_DOORBELL;
        /// Zero.
        0x8C mbox_reserved0: u32;
        /// Device writes, last (release): the sequence number of the command it finished. Host
        /// polls it over CXL.io (acquire), then reads `mbox_status`/`mbox_ret`.
        0x90 mbox_done: u32, Ro TREG_MBOX_DONE;
        /// Device writes: the command's `STATUS_*`.
        0x94 mbox_status: u32, Ro TREG_MBOX_STATUS;
        /// Device writes: the command's result ([`MBOX_CMD_ENQUEUE`]: output bytes written at the
        /// packet's `output_base`).
        0x98 mbox_ret: u64, Ro TREG_MBOX_RET;
        /// Since 1.2. Device writes (release): 0 while it can stream; [`CREDIT_BLOCKED`] ORed with
        /// the heads it last read from the credit line (metadata head's low 31 bits in bits 32..63,
        /// payload head in bits 0..32) when a result waits for credit those heads do not give,
        /// written only once every batch streamed before is visible in host memory. The host
        /// compares the heads with the ones it stored: if they are equal, nothing more can arrive
        /// before it releases (the deadlock test of `WAIT`).
        0xA0 credit_blocked: u64, Ro TREG_CREDIT_BLOCKED {
            /// [`TREG_CREDIT_BLOCKED`]: the device is waiting for credit.
            pub const CREDIT_BLOCKED: u64 = 1 << 63;
        };
        /// Since 1.3. Device writes: host stores into device memory that the device consumed for
        /// this tenant (launch packets, inputs, descriptor tables, credit heads) before the host
        /// had made them visible (`MemRemap::publish`). Only a software device that models
        /// host-only coherent memory (HDM-H) can see this; hardware reads 0.
        0xA8 unpublished: u64, Ro TREG_UNPUBLISHED;
        /// Since 1.5. Device writes: by how many nanoseconds, summed over the late chunks, a
        /// software device that models its compute ([`REG_MODEL_DILATION_MILLI`]) finished this
        /// tenant's chunks after its model says the modelled CCM would have. Nonzero means the
        /// emulator was slower than its model, so measured times overstate the CCM's; hardware
        /// writes 0.
        0xB0 model_deficit_ns: u64, Ro TREG_MODEL_DEFICIT_NS;
        /// Since 1.5. Device writes: how many of this tenant's chunks [`TREG_MODEL_DEFICIT_NS`]
        /// counts.
        0xB8 model_late: u64, Ro TREG_MODEL_LATE;
        /// Host writes: the `IRQ_CAUSE_*` bits that may raise an interrupt.
        0xC0 irq_ctrl: u32, Rw TREG_IRQ_CTRL;
        /// Host writes: the `irq_seq` it has handled. Before 1.4 the device raised interrupt `n +
        /// 1` only after `irq_ack == n` (at most one outstanding); since 1.4 it raises one per DMA
        /// request, and only a device that coalesces (a named variant) waits.
        0xC4 irq_ack: u32, Rw TREG_IRQ_ACK;
        /// Host writes: the MSI/MSI-X vector to signal.
        0xC8 irq_vector: u32, Rw TREG_IRQ_VECTOR;
        /// Zero.
        0xCC irq_reserved0: u32;
        /// Device writes, after `irq_cause` (release), then signals: the sequence number of the
        /// last interrupt it raised. Signals raised while the host handles one may reach it as one:
        /// `irq_seq - irq_ack` interrupts are handled (and paid, see [`REG_LINK_IRQ_NS`]) at a
        /// time.
        0xD0 irq_seq: u32, Ro TREG_IRQ_SEQ;
        /// Device writes: the `IRQ_CAUSE_*` bits that occurred since the previous interrupt.
        0xD4 irq_cause: u32, Ro TREG_IRQ_CAUSE {
            /// `irq_cause`: the metadata tail advanced (new results; [`MODE_AXLE_IRQ`]).
            pub const IRQ_CAUSE_METADATA: u32 = 1 << 0;
            /// `irq_cause`: a mailbox command completed.
            pub const IRQ_CAUSE_MBOX: u32 = 1 << 1;
            /// `irq_cause`: a sync launch completed.
            pub const IRQ_CAUSE_SYNC: u32 = 1 << 2;
            /// `irq_cause`: the tenant set [`TENANT_STATUS_ERROR`].
            pub const IRQ_CAUSE_ERROR: u32 = 1 << 3;
        };
        /// Since 1.6. Host writes: device-memory offset of the tenant's checksum table (4-byte
        /// aligned, inside the partition, outside any memory a user can map), for RP and BS, where
        /// the host loads the results from device memory and writes the records itself. Entry `k`
        /// (a little-endian `u32`) belongs to the 16 bytes of device memory at `checksum_base + 16
        /// k`: before it answers a launch, the device stores there the CRC32C of each record that
        /// starts at such an offset and is at least 16 bytes long ([`checksum_entry`]), so that the
        /// host loads the device's checksum with the results rather than computing it. Entries live
        /// as long as the results they describe: two launches whose outputs do not overlap never
        /// share one. AXLE carries the checksum in the metadata record.
        0xD8 checksum_table: u64, Rw TREG_CHECKSUM_TABLE;
        /// Since 1.6. Host writes: the entries of the checksum table; 0 (the reset value, and what
        /// a 1.5 host leaves) for none.
        0xE0 checksum_entries: u32, Rw TREG_CHECKSUM_ENTRIES;
        /// Zero.
        0xE4 checksum_reserved0: u32;
        /// Since 1.6. Host writes: the device-memory offset entry 0 of the checksum table describes
        /// (the start of the output area).
        0xE8 checksum_base: u64, Rw TREG_CHECKSUM_BASE;
        /// Zero; room for later tenant registers.
        0xF0 reserved: [u64; 2];
    }
}

// ---------------------------------------------------------------------------------------------
// Device memory: the tenant window (launch window and credit line)
// ---------------------------------------------------------------------------------------------

/// [`LaunchPacket::flags`]: the store is answered only at completion (the BS flow): the device
/// writes the tenant's [`SyncCompletion`] when the kernel has completed. Required in [`MODE_BS`].
pub const LAUNCH_FLAG_SYNC: u16 = 1 << 0;
/// Every [`LaunchPacket::flags`] bit this version defines; the device rejects the others.
pub const LAUNCH_FLAGS_KNOWN: u16 = LAUNCH_FLAG_SYNC;

/// The 64-byte kernel-launch packet, stored by the host into launch slot `tag & (LAUNCH_SLOTS - 1)`
/// of its [`TenantWindow`] (CXL.mem).
///
/// Host: waits until the slot is free (`tag - launch.head < LAUNCH_SLOTS`, from the local
/// [`LaunchHeader`]), writes bytes 4..64, **write barrier**, stores [`LaunchPacket::tag`].
/// Device: watches the slot of the next expected tag; when that slot's tag equals it (**acquire**),
/// copies the packet, then publishes [`LaunchHeader::head`] `= tag + 1` by DMA (AXLE modes), after
/// which the host may reuse the slot. In [`MODE_RP`] the device ignores the window until a
/// [`MBOX_CMD_ENQUEUE`] names the tag.
///
/// The tag is the launch's sequence number: the host numbers a tenant's launches consecutively from
/// `index_base`, and every [`MetadataRecord`] of the launch carries it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchPacket {
    /// The launch tag; stored last, it makes the packet valid.
    pub tag: u32,
    /// `KERNEL_*`.
    pub kernel_id: u16,
    /// `LAUNCH_FLAG_*`.
    pub flags: u16,
    /// The tenant (must be the window's own tenant: a check against misdirected stores).
    pub tenant: u16,
    /// Bytes of `args` the kernel's argument structure uses (e.g. `size_of::<StreamXformArgs>()`);
    /// the rest of `args` is zero.
    pub arg_size: u16,
    /// Input bytes.
    pub input_size: u32,
    /// Device-memory offset of the input, inside the tenant's partition.
    pub input_base: u64,
    /// Device-memory offset of the output area, inside the tenant's partition. AXLE stages results
    /// here before back-streaming them; RP and BS leave them here for the host to load. Its size
    /// is the kernel's, a function of input and arguments (e.g. `input_size` for
    /// [`KERNEL_STREAM_XFORM`]).
    pub output_base: u64,
    /// The kernel's argument block, little-endian.
    pub args: [u8; MAX_ARG_SIZE as usize],
}

/// The credit line of a tenant (device memory, CXL.mem): where the host returns credit.
///
/// Host: stores a head (**release**: the reads of the released slots complete first) whenever its
/// publish policy says so; a head only moves forward, over slots the host has finished reading.
/// Device: loads the heads (**acquire**) whenever it likes, typically when short of credit; a
/// stale head is conservative. Both heads start at `index_base`, written by the host before
/// enabling the tenant.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditLine {
    /// Metadata ring head: records below it may be overwritten.
    pub metadata_head: u32,
    /// Payload ring head: the gap-aware head; slots below it may be overwritten.
    pub payload_head: u32,
    /// Zero.
    pub reserved: [u64; 7],
}

/// The response to sync launches (device memory, CXL.mem): the "store answered at completion" of
/// the BS flow, which the host emulates by polling `done_tag` with CXL.mem loads.
///
/// Device: writes `status` and `result_bytes`, **write barrier**, stores `done_tag`. Host: loads
/// `done_tag` (**acquire**) until it equals the tag of its sync launch. `done_tag` starts at
/// `index_base - 1`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncCompletion {
    /// Tag of the last completed sync launch; stored last.
    pub done_tag: u32,
    /// Its `STATUS_*`.
    pub status: u32,
    /// Output bytes it wrote at its `output_base`.
    pub result_bytes: u64,
    /// Zero.
    pub reserved: [u64; 6],
}

/// Size of a [`TenantWindow`].
pub const TENANT_WINDOW_SIZE: u64 = 8192;
/// Offset of the launch slots in a [`TenantWindow`].
pub const TWIN_LAUNCH: usize = 0x0000;
/// Offset of the [`CreditLine`] in a [`TenantWindow`] (its own page, so that it can one day be
/// mapped into user space without the launch window).
pub const TWIN_CREDIT: usize = 0x1000;
/// Offset of the [`SyncCompletion`] in a [`TenantWindow`].
pub const TWIN_COMPLETION: usize = 0x1040;

/// Device-memory offset of tenant `tenant`'s window, given [`GlobalRegs::tenant_windows`].
pub const fn tenant_window_offset(tenant_windows: u64, tenant: u32) -> u64 {
    tenant_windows + TENANT_WINDOW_SIZE * tenant as u64
}

/// The launch slot of a tag.
pub const fn launch_slot(tag: u32) -> u32 {
    tag & (LAUNCH_SLOTS - 1)
}

/// The tag the device stores into launch slot `slot` at enable: the tag that slot held one lap
/// before `index_base`, so that no slot looks like a valid packet until the host writes it.
pub const fn launch_slot_initial_tag(slot: u32, index_base: u32) -> u32 {
    index_base
        .wrapping_sub(LAUNCH_SLOTS)
        .wrapping_add(slot.wrapping_sub(index_base) & (LAUNCH_SLOTS - 1))
}

/// One tenant's window in device memory, at [`tenant_window_offset`] (CXL.mem).
///
/// Written by the host (launch packets, heads) except the launch slots' tags at enable
/// ([`launch_slot_initial_tag`]) and the [`SyncCompletion`], written by the device.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TenantWindow {
    /// The launch window: [`LAUNCH_SLOTS`] packets.
    pub launch: [LaunchPacket; LAUNCH_SLOTS as usize],
    /// The credit line.
    pub credit: CreditLine,
    /// The sync launch response.
    pub completion: SyncCompletion,
    /// Zero.
    pub reserved: [u8; 4096 - 128],
}

// ---------------------------------------------------------------------------------------------
// Device memory: the shadowed DMA descriptor table
// ---------------------------------------------------------------------------------------------

/// [`DescriptorTable::magic`]: the bytes `"CCMD"` (CCM descriptors) in memory order.
pub const DESCRIPTOR_MAGIC: u32 = u32::from_le_bytes(*b"CCMD");

/// [`DmaSegment::flags`]: the last segment of the table (exactly one, the last, carries it).
pub const DMA_SEG_LAST: u32 = 1 << 0;

/// One scatter-gather segment of a tenant's DMA region.
///
/// Written by the host (driver) into device memory before enabling the tenant; read by the
/// device's DMA executor, which translates region offsets into bus addresses with it. Both
/// `bus_addr` and `len` are multiples of [`DMA_SEGMENT_ALIGN`] and `len > 0`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaSegment {
    /// Bus (IOVA) address of the segment, as mapped for the device.
    pub bus_addr: u64,
    /// Length in bytes.
    pub len: u32,
    /// `DMA_SEG_*`.
    pub flags: u32,
}

/// The header of a tenant's DMA descriptor table: the host's scatter-gather list of its DMA region,
/// shadowed into device memory (paper §IV-D). `segment_count` [`DmaSegment`]s follow it
/// immediately, in region order.
///
/// The DMA region is one host buffer, virtually contiguous for the host and physically
/// non-contiguous: the concatenation of the segments. The header says where in it the
/// [`RingHeaders`], the metadata ring and the payload ring are; each offset is a multiple of
/// [`DMA_SEGMENT_ALIGN`], and slots never straddle segments. Written by the host while the tenant
/// is disabled; read by the device at enable (it may cache the table until disable).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DescriptorTable {
    /// [`DESCRIPTOR_MAGIC`].
    pub magic: u32,
    /// Number of segments following; equals the tenant's `desc_count`.
    pub segment_count: u32,
    /// Sum of the segment lengths.
    pub region_size: u64,
    /// Region offset of the [`RingHeaders`].
    pub headers_offset: u64,
    /// Region offset of metadata slot 0 (`metadata_slots * METADATA_RECORD_SIZE` bytes).
    pub metadata_offset: u64,
    /// Region offset of payload slot 0 (`payload_slots * slot_size` bytes).
    pub payload_offset: u64,
    /// Zero.
    pub reserved: [u64; 3],
}

/// Device-memory size of a descriptor table of `segments` segments.
pub const fn descriptor_table_size(segments: u32) -> u64 {
    size_of::<DescriptorTable>() as u64 + size_of::<DmaSegment>() as u64 * segments as u64
}

// ---------------------------------------------------------------------------------------------
// Host memory: ring headers and metadata records (user-visible)
// ---------------------------------------------------------------------------------------------

/// [`MetadataRecord::flags`]: the last record of its launch (explicit completion, §IV-B).
pub const MD_FLAG_FINAL: u16 = 1 << 0;
/// [`MetadataRecord::flags`]: the launch failed; `status` says why. Always with [`MD_FLAG_FINAL`].
pub const MD_FLAG_ERROR: u16 = 1 << 1;

/// One metadata record: names one partial result and where its payload is (paper §IV-B, §IV-C).
///
/// Written by the device by DMA into metadata slot `seq & (metadata_slots - 1)`, after the
/// record's payload and the payload tail, before the metadata tail (see the module documentation).
/// Read by the host (driver or user space) below the metadata tail it loaded.
///
/// The payload occupies `ceil(length / slot_size)` consecutive payload slots starting at the
/// free-running index `payload_index` (wrapping around the ring end), none shared with another
/// record. A record with `length == 0` (only with [`MD_FLAG_FINAL`]: an empty result or an error
/// report) occupies no payload slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetadataRecord {
    /// The free-running metadata index of this record. A reader that finds another value in the
    /// slot it expects (a previous lap, or a torn write) has seen an ordering bug.
    pub seq: u32,
    /// The launch tag ([`LaunchPacket::tag`]) this result belongs to.
    pub tag: u32,
    /// Free-running payload index of the first payload slot (its slot ID and its lap).
    pub payload_index: u32,
    /// Payload bytes.
    pub length: u32,
    /// Byte offset of this partial result in the launch's output (which chunk it is: with OoO
    /// streaming, records of a launch arrive in any order of `result_offset`).
    pub result_offset: u64,
    /// CRC32C ([`crc32c`]) of the `length` payload bytes.
    pub checksum: u32,
    /// `MD_FLAG_*`.
    pub flags: u16,
    /// `STATUS_*`; nonzero only with [`MD_FLAG_ERROR`].
    pub status: u16,
}

/// The header of one result ring, in host memory: the tail the device writes, on its own 64-byte
/// cache line, and the ring's read-only geometry.
///
/// `tail` is written by the device only, by a 4-byte DMA write (**release**: after the ring data
/// it publishes); the host loads it (**acquire**) and polls nothing else (§IV-C). The other fields
/// are written by the host before the tenant is enabled and never change; the device never writes
/// them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingHeader {
    /// Free-running tail: one past the last slot the device has published.
    pub tail: u32,
    /// Capacity in slots, a power of two.
    pub capacity: u32,
    /// Slot size in bytes.
    pub slot_size: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 6],
}

/// The header of the launch ring, in host memory: the launch head the device writes, so the host
/// knows without a remote read which launch slots it may reuse.
///
/// `head` is written by the device only, by DMA, after it has copied the packets below it (AXLE
/// modes; RP and BS have one launch outstanding and do not DMA). `slots` is written by the host
/// before enable.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchHeader {
    /// Free-running launch head: one past the tag of the last packet the device has taken.
    pub head: u32,
    /// [`LAUNCH_SLOTS`].
    pub slots: u32,
    /// Zero.
    pub reserved: [u64; 7],
}

/// The ring headers at the start of the DMA region (`headers_offset`): one 64-byte line per
/// device-written counter, so that the host polls one local line per ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingHeaders {
    /// The metadata ring (`slot_size == METADATA_RECORD_SIZE`). The host polls this tail.
    pub metadata: RingHeader,
    /// The payload ring.
    pub payload: RingHeader,
    /// The launch ring.
    pub launch: LaunchHeader,
    /// Zero.
    pub reserved: [u64; 8],
}

// ---------------------------------------------------------------------------------------------
// Kernel arguments
// ---------------------------------------------------------------------------------------------

/// The argument block of [`KERNEL_SSSP`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SsspArgs {
    /// Vertices of the graph.
    pub vertices: u32,
    /// Edges of the graph; the input is `(vertices + 1 + 2 * edges) * 4 + vertices * 8` bytes.
    pub edges: u32,
    /// Vertices per result record (8 bytes each, at most the streaming factor); 0 means as
    /// many as the streaming factor holds.
    pub chunk_vertices: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 2],
}

impl SsspArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        Self {
            vertices: LeField::get(b, 0),
            edges: LeField::get(b, 4),
            chunk_vertices: LeField::get(b, 8),
            reserved0: LeField::get(b, 12),
            reserved: [LeField::get(b, 16), LeField::get(b, 24)],
        }
    }
}

/// The argument block of [`KERNEL_PAGERANK`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PageRankArgs {
    /// Vertices of the graph.
    pub vertices: u32,
    /// Edges of the graph; the input is `(vertices + 1 + edges) * 4 + vertices * 8` bytes.
    pub edges: u32,
    /// Vertices per result record (8 bytes each, at most the streaming factor); 0 means as
    /// many as the streaming factor holds.
    pub chunk_vertices: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 2],
}

impl PageRankArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        Self {
            vertices: LeField::get(b, 0),
            edges: LeField::get(b, 4),
            chunk_vertices: LeField::get(b, 8),
            reserved0: LeField::get(b, 12),
            reserved: [LeField::get(b, 16), LeField::get(b, 24)],
        }
    }
}

/// The argument block of [`KERNEL_DLRM_SLS`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlsArgs {
    /// Elements per embedding vector, in `1..=SLS_MAX_DIM`.
    pub dim: u32,
    /// Rows of the table.
    pub rows: u32,
    /// Samples (index lists).
    pub samples: u32,
    /// Indices per sample (the pooling factor).
    pub pooling: u32,
    /// Samples per result record (`dim * 4` bytes each, at most the streaming factor); 0 means
    /// as many as the streaming factor holds.
    pub chunk_samples: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: u64,
}

impl SlsArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        let w = |i: usize| LeField::get(b, 4 * i);
        Self {
            dim: w(0),
            rows: w(1),
            samples: w(2),
            pooling: w(3),
            chunk_samples: w(4),
            reserved0: w(5),
            reserved: LeField::get(b, 24),
        }
    }
}

/// The argument block of [`KERNEL_LLM_ATTENTION`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AttentionArgs {
    /// Key and value vectors per head (the context).
    pub tokens: u32,
    /// Position of the launch's first query row; `q_first + q_rows <= tokens`.
    pub q_first: u32,
    /// Query rows of the launch.
    pub q_rows: u32,
    /// Heads, in `1..=ATTENTION_MAX_HEADS`.
    pub heads: u32,
    /// Elements per vector, in `1..=ATTENTION_MAX_HEAD_DIM`.
    pub head_dim: u32,
    /// Query rows per record (`head_dim * 4` bytes each, at most the streaming factor); 0 means
    /// as many as the streaming factor holds.
    pub chunk_rows: u32,
    /// Right shift of the score differences before the weight (the softmax temperature), below 64.
    pub shift: u32,
    /// Zero.
    pub reserved: u32,
}

impl AttentionArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        let w = |i: usize| LeField::get(b, 4 * i);
        Self {
            tokens: w(0),
            q_first: w(1),
            q_rows: w(2),
            heads: w(3),
            head_dim: w(4),
            chunk_rows: w(5),
            shift: w(6),
            reserved: w(7),
        }
    }
}

/// The argument block of [`KERNEL_SSB_Q1_1`] and [`KERNEL_SSB_Q1_2`] (`arg_size == 32`): the
/// rows, and inclusive ranges on the orderdate, discount and quantity columns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SsbArgs {
    /// Rows of 16 bytes; the input is `rows * 16` bytes.
    pub rows: u32,
    /// Rows per result record (one 16-byte record each); 0 means 4096.
    pub chunk_rows: u32,
    /// Lowest orderdate (yyyymmdd).
    pub date_lo: u32,
    /// Highest orderdate.
    pub date_hi: u32,
    /// Lowest discount.
    pub discount_lo: u32,
    /// Highest discount.
    pub discount_hi: u32,
    /// Lowest quantity.
    pub quantity_lo: u32,
    /// Highest quantity.
    pub quantity_hi: u32,
}

impl SsbArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        let w = |i: usize| LeField::get(b, 4 * i);
        Self {
            rows: w(0),
            chunk_rows: w(1),
            date_lo: w(2),
            date_hi: w(3),
            discount_lo: w(4),
            discount_hi: w(5),
            quantity_lo: w(6),
            quantity_hi: w(7),
        }
    }
}

/// The argument block of [`KERNEL_KNN`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KnnArgs {
    /// Elements per vector, in `1..=KNN_MAX_DIM`.
    pub dim: u32,
    /// Vectors after the query; the input is `(rows + 1) * dim * 4` bytes.
    pub rows: u32,
    /// Rows per result record (8 bytes each, at most the streaming factor); 0 means as many as
    /// the streaming factor holds.
    pub chunk_rows: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 2],
}

impl KnnArgs {
    /// Decodes the argument block of a launch packet.
    pub fn from_bytes(b: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        Self {
            dim: LeField::get(b, 0),
            rows: LeField::get(b, 4),
            chunk_rows: LeField::get(b, 8),
            reserved0: LeField::get(b, 12),
            reserved: [LeField::get(b, 16), LeField::get(b, 24)],
        }
    }
}

/// The argument block of [`KERNEL_STREAM_XFORM`] (`arg_size == 32`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamXformArgs {
    /// `XFORM_OP_*`.
    pub op: u32,
    /// Output bytes per result record: a multiple of 4, at most the streaming factor; 0 means the
    /// streaming factor. The last chunk may be shorter.
    pub chunk_size: u32,
    /// The operand of `op`.
    pub operand: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 2],
}

impl StreamXformArgs {
    /// The little-endian bytes of the arguments, as they go into [`LaunchPacket::args`].
    pub const fn to_bytes(&self) -> [u8; MAX_ARG_SIZE as usize] {
        let mut out = [0u8; MAX_ARG_SIZE as usize];
        put_u32(&mut out, 0, self.op);
        put_u32(&mut out, 4, self.chunk_size);
        put_u32(&mut out, 8, self.operand);
        put_u32(&mut out, 12, self.reserved0);
        put_u64(&mut out, 16, self.reserved[0]);
        put_u64(&mut out, 24, self.reserved[1]);
        out
    }

    /// Decodes the arguments from [`LaunchPacket::args`].
    pub const fn from_bytes(bytes: &[u8; MAX_ARG_SIZE as usize]) -> Self {
        Self {
            op: get_u32(bytes, 0),
            chunk_size: get_u32(bytes, 4),
            operand: get_u32(bytes, 8),
            reserved0: get_u32(bytes, 12),
            reserved: [get_u64(bytes, 16), get_u64(bytes, 24)],
        }
    }
}

const fn put_u32(out: &mut [u8; MAX_ARG_SIZE as usize], at: usize, v: u32) {
    let b = v.to_le_bytes();
    let mut i = 0;
    while i < b.len() {
        out[at + i] = b[i];
        i += 1;
    }
}

const fn put_u64(out: &mut [u8; MAX_ARG_SIZE as usize], at: usize, v: u64) {
    put_u32(out, at, v as u32);
    put_u32(out, at + 4, (v >> 32) as u32);
}

const fn get_u32(bytes: &[u8; MAX_ARG_SIZE as usize], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

const fn get_u64(bytes: &[u8; MAX_ARG_SIZE as usize], at: usize) -> u64 {
    get_u32(bytes, at) as u64 | (get_u32(bytes, at + 4) as u64) << 32
}

// ---------------------------------------------------------------------------------------------
// The record checksum
// ---------------------------------------------------------------------------------------------

/// The CRC32C (Castagnoli) polynomial, bit-reflected.
pub const CRC32C_POLY: u32 = 0x82F6_3B78;

const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ CRC32C_POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// Continues a CRC32C over `data`: `crc32c(a ++ b) == !crc32c_update(crc32c_update(!0, a), b)`.
///
/// For a payload that wraps around the end of the payload ring, feed the two pieces in order.
pub const fn crc32c_update(mut crc: u32, data: &[u8]) -> u32 {
    let mut i = 0;
    while i < data.len() {
        crc = CRC32C_TABLE[((crc ^ data[i] as u32) & 0xFF) as usize] ^ (crc >> 8);
        i += 1;
    }
    crc
}

/// The CRC32C of `data` (initial value and final XOR `0xFFFF_FFFF`; the iSCSI/ext4 CRC), the
/// [`MetadataRecord::checksum`] of a payload.
pub const fn crc32c(data: &[u8]) -> u32 {
    !crc32c_update(!0, data)
}

// ---------------------------------------------------------------------------------------------
// Wire images: the bytes a struct occupies in shared memory
// ---------------------------------------------------------------------------------------------

wire_image!(LaunchPacket, {
    tag, kernel_id, flags, tenant, arg_size, input_size, input_base, output_base, args,
});
wire_image!(DescriptorTable, {
    magic, segment_count, region_size, headers_offset, metadata_offset, payload_offset,
});
wire_image!(DmaSegment, { bus_addr, len, flags });
wire_image!(MetadataRecord, {
    seq, tag, payload_index, length, result_offset, checksum, flags, status,
});

// ---------------------------------------------------------------------------------------------
// Layout assertions: the frozen ABI
// ---------------------------------------------------------------------------------------------

assert_layout!(LaunchPacket, size = 64, align = 8, {
    tag @ 0x00,
    kernel_id @ 0x04,
    flags @ 0x06,
    tenant @ 0x08,
    arg_size @ 0x0A,
    input_size @ 0x0C,
    input_base @ 0x10,
    output_base @ 0x18,
    args @ 0x20,
});

assert_layout!(CreditLine, size = 64, align = 8, {
    metadata_head @ 0x00,
    payload_head @ 0x04,
    reserved @ 0x08,
});

assert_layout!(SyncCompletion, size = 64, align = 8, {
    done_tag @ 0x00,
    status @ 0x04,
    result_bytes @ 0x08,
    reserved @ 0x10,
});

assert_layout!(TenantWindow, size = TENANT_WINDOW_SIZE as usize, align = 8, {
    launch @ TWIN_LAUNCH,
    credit @ TWIN_CREDIT,
    completion @ TWIN_COMPLETION,
    reserved @ 0x1080,
});

assert_layout!(DmaSegment, size = 16, align = 8, {
    bus_addr @ 0x00,
    len @ 0x08,
    flags @ 0x0C,
});

assert_layout!(DescriptorTable, size = 64, align = 8, {
    magic @ 0x00,
    segment_count @ 0x04,
    region_size @ 0x08,
    headers_offset @ 0x10,
    metadata_offset @ 0x18,
    payload_offset @ 0x20,
    reserved @ 0x28,
});

assert_layout!(MetadataRecord, size = METADATA_RECORD_SIZE as usize, align = 8, {
    seq @ 0x00,
    tag @ 0x04,
    payload_index @ 0x08,
    length @ 0x0C,
    result_offset @ 0x10,
    checksum @ 0x18,
    flags @ 0x1C,
    status @ 0x1E,
});

assert_layout!(RingHeader, size = 64, align = 8, {
    tail @ 0x00,
    capacity @ 0x04,
    slot_size @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

assert_layout!(LaunchHeader, size = 64, align = 8, {
    head @ 0x00,
    slots @ 0x04,
    reserved @ 0x08,
});

assert_layout!(RingHeaders, size = 256, align = 8, {
    metadata @ 0x00,
    payload @ 0x40,
    launch @ 0x80,
    reserved @ 0xC0,
});

assert_layout!(SsspArgs, size = MAX_ARG_SIZE as usize, align = 8, {
    vertices @ 0x00,
    edges @ 0x04,
    chunk_vertices @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

assert_layout!(PageRankArgs, size = MAX_ARG_SIZE as usize, align = 8, {
    vertices @ 0x00,
    edges @ 0x04,
    chunk_vertices @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

assert_layout!(SlsArgs, size = MAX_ARG_SIZE as usize, align = 8, {
    dim @ 0x00,
    rows @ 0x04,
    samples @ 0x08,
    pooling @ 0x0C,
    chunk_samples @ 0x10,
    reserved0 @ 0x14,
    reserved @ 0x18,
});

assert_layout!(AttentionArgs, size = MAX_ARG_SIZE as usize, align = 4, {
    tokens @ 0x00,
    q_first @ 0x04,
    q_rows @ 0x08,
    heads @ 0x0C,
    head_dim @ 0x10,
    chunk_rows @ 0x14,
    shift @ 0x18,
    reserved @ 0x1C,
});

assert_layout!(SsbArgs, size = MAX_ARG_SIZE as usize, align = 4, {
    rows @ 0x00,
    chunk_rows @ 0x04,
    date_lo @ 0x08,
    date_hi @ 0x0C,
    discount_lo @ 0x10,
    discount_hi @ 0x14,
    quantity_lo @ 0x18,
    quantity_hi @ 0x1C,
});

assert_layout!(KnnArgs, size = MAX_ARG_SIZE as usize, align = 8, {
    dim @ 0x00,
    rows @ 0x04,
    chunk_rows @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

assert_layout!(StreamXformArgs, size = MAX_ARG_SIZE as usize, align = 8, {
    op @ 0x00,
    chunk_size @ 0x04,
    operand @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

// Relations between the constants.
const _: () = assert!(size_of::<GlobalRegs>() <= REGISTER_PAGE_SIZE);
const _: () = assert!(size_of::<TenantRegs>() <= REGISTER_PAGE_SIZE);
const _: () = assert!(TWIN_CREDIT == size_of::<LaunchPacket>() * LAUNCH_SLOTS as usize);
const _: () = assert!(TENANT_WINDOW_SIZE % DMA_SEGMENT_ALIGN as u64 == 0);
const _: () = assert!(LAUNCH_SLOTS.is_power_of_two());
const _: () = assert!(MIN_SLOT_SIZE.is_power_of_two() && MAX_SLOT_SIZE.is_power_of_two());
const _: () = assert!(MIN_SLOT_SIZE <= DEFAULT_SLOT_SIZE && DEFAULT_SLOT_SIZE <= MAX_SLOT_SIZE);
const _: () = assert!(MAX_SLOT_SIZE <= DMA_SEGMENT_ALIGN);
const _: () = assert!(DEFAULT_STREAMING_FACTOR % DEFAULT_SLOT_SIZE == 0);
const _: () = assert!(cap_mode(MODE_COUNT - 1) < CAP_IN_ORDER);
const _: () = assert!(KERNEL_DLRM_SLS < KERNEL_ID_LIMIT && KERNEL_ID_LIMIT as u32 <= u64::BITS);
const _: () = assert!(size_of::<RingHeaders>() <= DMA_SEGMENT_ALIGN as usize);
const _: () = assert!(crc32c(b"123456789") == 0xE306_9283);
const _: () = assert!(launch_slot_initial_tag(0, 0) == 0u32.wrapping_sub(LAUNCH_SLOTS));
const _: () = assert!(launch_slot(launch_slot_initial_tag(5, 7)) == 5);
