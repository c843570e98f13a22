// SPDX-License-Identifier: GPL-2.0

//! The device ABI of the ReFlux CXL computational-storage device: the one source of truth.
//!
//! Every register offset and every structure that crosses the boundary between the host driver
//! (`drivers/reflux/`, a blk-mq block device) and the device (the software CXL SSD in
//! `tools/testing/reflux/`, or one day real hardware) is defined here, once. Both sides compile
//! this file in with `#[path]`; it uses `core` only and no `unsafe`. Every layout is frozen by
//! `const` assertions at the bottom of the file: changing a layout without changing the
//! assertions does not compile.
//!
//! The protocol logic that interprets these structures (pipelines and the placement runs,
//! per-block metadata validation, AES-XTS, the thermal model, the completion-wait switch, engine
//! pacing) is in `drivers/reflux/proto/`, which refers to this file as `crate::abi`.
//!
//! # Byte order and field widths
//!
//! All multi-byte fields are **little-endian**, every field has a fixed width, every structure is
//! `#[repr(C)]` with explicit reserved fields and no implicit padding. Reserved fields are written
//! as zero and ignored by the reader, so that a later minor version can give them a meaning. Both
//! agents are little-endian (a `const` assertion refuses any other target).
//!
//! # The two places
//!
//! | place | reached by | holds |
//! | --- | --- | --- |
//! | **register block** ([`REGISTER_BLOCK_SIZE`] bytes, [`Regs`]) | CXL.io loads/stores | identification, device control and status, the SQ doorbell, interrupt control, telemetry (temperature, throttling, utilisation, queue depth, engine speed, drain backlog), fault injection |
//! | **PMR**: the persistent memory region ([`Regs::pmr_size`] bytes; file-backed in the VM so that it survives a power cut) | CXL.mem loads/stores (coherent, byte-addressable) | the [`Superblock`] and the areas it describes ([`PmrLayout`]): submission and completion rings, request state blobs, data buffers, the actor table, the epoch table, the per-block metadata table and the data store |
//!
//! The PMR is the paper's coherent shared memory (§4.1): I/O queues, data buffers and shared actor
//! state all live there, so that a pipeline stage can run on either side and hand a request over
//! without copying it. The data store stands for the NAND behind the PMR write cache; how much of
//! it is not yet "on NAND" is the [`Regs::drain_backlog`] telemetry.
//!
//! # Who writes what
//!
//! Every field has exactly one writer at any time, so no field needs an atomic read-modify-write
//! across the link and an aligned store of the field's width is all a counter needs. Each field's
//! documentation names its writer. Where the writer changes, the hand-over is a handshake named
//! there: the enable handshake for the ring counters, the two-phase checkpoint commit for an
//! actor's control state (§4.5), the submission/completion of a request for its buffers and state
//! blob.
//!
//! Ring counters are free-running `u32`s ([`RingProducer::tail`], [`RingConsumer::head`]); the
//! slot of counter `c` is `c & (entries - 1)` (the arithmetic of `proto::ring`).
//!
//! # Memory ordering
//!
//! Every "publish" is: write the data, **write barrier** (`smp_wmb`; a release store in the
//! software device), store the index. Every "consume" is: load the index (**acquire**), then read
//! the data. The pairs:
//!
//! | data | index that publishes it | writer → reader |
//! | --- | --- | --- |
//! | submission descriptors, the data buffers and state blobs they name | SQ [`RingProducer::tail`] | host → device |
//! | (the device's copy of a descriptor) | SQ [`RingConsumer::head`] | device → host |
//! | completion entries, the data buffers and state blobs of the completed requests, block metadata of committed writes | CQ [`RingProducer::tail`] | device → host |
//! | (the host's reads of completion entries) | CQ [`RingConsumer::head`] | host → device |
//! | an actor's control state checkpoint | [`ActorShared::ckpt_epoch`] (the "ready" flag) | migration source → destination |
//! | the reconstructed actor | [`ActorShared::active_epoch`] (the "active" flag) | migration destination → source |
//! | a data-store slot | its [`BlockMeta`] entry | device → both |
//! | the completions an interrupt announces | [`REG_IRQ_SEQ`] | device → host |
//!
//! # Lifecycle
//!
//! 1. At power-on the device looks for a valid [`Superblock`] at PMR offset 0. If there is none
//!    (a fresh backing file) it **formats**: computes the [`PmrLayout`] from its configuration,
//!    writes the superblock ([`Superblock::format`]) and zeroes the metadata areas. It then writes
//!    the identification registers and leaves [`DEV_STATUS_READY`] clear.
//! 2. The host checks [`REG_MAGIC`], the major version and [`REG_CAPS`], maps the PMR and
//!    validates the superblock ([`Superblock::validate`]). While the device is not ready the host
//!    owns the PMR: it increments [`Superblock::generation`] (the mount count), clears
//!    [`Superblock::clean`], and writes every counter of both ring headers (`tail` and `head` of
//!    the SQ and of the CQ) to one starting value (0 normally; just below `u32::MAX` in tests).
//! 3. The host sets [`DEV_CTRL_ENABLE`]. The device re-validates the superblock, loads the ring
//!    counters and sets [`DEV_STATUS_READY`] (or, on an invalid PMR, writes a `DEV_ERR_*` code to
//!    [`REG_DEV_ERROR`] and sets [`DEV_STATUS_FATAL`]). From now on each counter has one writer.
//! 4. Requests: the host fills data buffers and a state blob, writes a [`SubmissionDescriptor`]
//!    into SQ slot `tail`, publishes `tail + 1` and rings [`REG_SQ_DOORBELL`]. The device runs the
//!    device-placed stages and answers with a [`CompletionEntry`] (see [`SubmissionDescriptor`] for
//!    the hand-over of a request between host and device stages).
//! 5. The host clears [`DEV_CTRL_ENABLE`]. The device finishes or abandons (status
//!    [`STATUS_ECANCELED`]) what it holds and clears [`DEV_STATUS_READY`]; the host then sets
//!    [`Superblock::clean`].
//!
//! [`DEV_CTRL_RESET`] is a level: while it is set the device abandons all work, clears
//! [`DEV_STATUS_READY`] and [`DEV_STATUS_FATAL`] and sets [`DEV_STATUS_IN_RESET`]; when the host
//! clears it the device clears [`DEV_STATUS_IN_RESET`] and is back at step 2. Reset does not
//! format.
//!
//! # Versioning
//!
//! [`Regs::version`] and [`Superblock::version`] are `major << 16 | minor`. A driver accepts a
//! device of its own major version and any minor version; a minor version only gives meaning to
//! reserved fields and bits that older agents write as zero and ignore.

use core::mem::size_of;

/// The wire-format machinery (`LeField`, `wire_image!`, `assert_layout!`, `registers!`), shared
/// with `drivers/cxl_ccm/abi.rs`.
#[path = "../wire/wire.rs"]
mod wire;
use wire::{assert_layout, registers, wire_image};
pub use wire::{Access, LeField, Readable, Reg, RegWidth, Ro, Rw, Wo, Writable};

const _: () = assert!(
    cfg!(target_endian = "little"),
    "the ReFlux device ABI is little-endian; a big-endian port needs byte-swapping accessors"
);

// ---------------------------------------------------------------------------------------------
// Identification and architectural constants
// ---------------------------------------------------------------------------------------------

/// [`Regs::magic`]: the bytes `"RFXR"` (ReFlux registers) in memory order.
pub const REGISTER_MAGIC: u32 = u32::from_le_bytes(*b"RFXR");
/// [`Superblock::magic`]: the bytes `"RFXS"` (ReFlux superblock) in memory order.
pub const SUPERBLOCK_MAGIC: u32 = u32::from_le_bytes(*b"RFXS");

/// Major version of this ABI. Incompatible layout changes increment it.
pub const ABI_VERSION_MAJOR: u16 = 1;
/// Minor version of this ABI. Compatible additions (meanings for reserved fields) increment it.
pub const ABI_VERSION_MINOR: u16 = 2;
/// [`Regs::version`] and [`Superblock::version`] of an agent implementing exactly this file.
pub const ABI_VERSION: u32 = version(ABI_VERSION_MAJOR, ABI_VERSION_MINOR);

/// Encodes a version as stored in [`Regs::version`].
pub const fn version(major: u16, minor: u16) -> u32 {
    ((major as u32) << 16) | minor as u32
}

/// The major version of a [`Regs::version`] value.
pub const fn version_major(version: u32) -> u16 {
    (version >> 16) as u16
}

/// The minor version of a [`Regs::version`] value.
pub const fn version_minor(version: u32) -> u16 {
    version as u16
}

/// Bytes of one logical block, of one data buffer and of one data-store slot. The block device
/// exposes 4 KiB logical blocks; LBAs in this ABI count these blocks, not 512-byte sectors.
pub const BLOCK_SIZE: u32 = 4096;
/// `log2(BLOCK_SIZE)`.
pub const BLOCK_SHIFT: u32 = 12;

/// The cache line size both agents assume when they keep fields of different writers apart.
pub const CACHE_LINE: u64 = 64;
/// Alignment of every PMR area: a page, so that an area can be mapped on its own.
pub const PMR_AREA_ALIGN: u64 = 4096;

/// Most blocks one request may carry (128 KiB, the paper's sustained-write size).
pub const MAX_REQ_BLOCKS: u32 = 32;
/// Most pipeline stages a request may have; [`SubmissionDescriptor::actors`] has one id per stage.
pub const MAX_STAGES: u32 = 2;
/// Most actors (actor ids are `u8`).
pub const MAX_ACTORS: u32 = 256;
/// Largest ring size in entries. Tags and state handles are `u16`; blk-mq never needs more.
pub const MAX_RING_ENTRIES: u32 = 4096;

// ---------------------------------------------------------------------------------------------
// Status values
// ---------------------------------------------------------------------------------------------

/// [`CompletionEntry::status`]: success.
pub const STATUS_OK: i32 = 0;
/// `-EIO`: a checksum mismatch, or stored data that does not decode (e.g. a corrupt LZ4 block).
pub const STATUS_EIO: i32 = -5;
/// `-EAGAIN`: a stage's actor is migrating or has migrated since the host read its epoch
/// ([`SubmissionDescriptor::epochs`]); the host re-reads the epoch table and resubmits.
pub const STATUS_EAGAIN: i32 = -11;
/// `-EINVAL`: a malformed descriptor (unknown pipeline, direction or flags, a placement bit for a
/// stage the pipeline does not have, out-of-range LBA, buffer, state handle or actor id, nonzero
/// reserved field).
pub const STATUS_EINVAL: i32 = -22;
/// `-ECANCELED`: the request was abandoned because the host disabled or reset the device.
pub const STATUS_ECANCELED: i32 = -125;

// ---------------------------------------------------------------------------------------------
// Register block
// ---------------------------------------------------------------------------------------------

/// Size of the register block (CXL.io). [`Regs`] occupies its start; the rest is reserved.
pub const REGISTER_BLOCK_SIZE: usize = 4096;

/// [`Regs::caps`] bit of pipeline `pipeline` (a `PIPELINE_*` value): the device runs it.
pub const fn cap_pipeline(pipeline: u8) -> u64 {
    1 << (pipeline & OPCODE_PIPELINE_MASK)
}
/// Capability: the host may poll the CQ (completions are published in the PMR without an
/// interrupt).
pub const CAP_POLL: u64 = 1 << 16;
/// Capability: the device raises completion interrupts ([`REG_IRQ_CTRL`]).
pub const CAP_IRQ: u64 = 1 << 17;
/// Capability: [`REG_FAULT_INJECT`] works.
pub const CAP_FAULT_INJECT: u64 = 1 << 18;
/// Capability (minor 1): the device takes [`DIR_MIGRATE`] descriptors, so actors can move
/// between host and device at run time. Without it, placement is fixed while the device is
/// enabled.
pub const CAP_MIGRATE: u64 = 1 << 19;
/// Capability (minor 2, with [`CAP_MIGRATE`]): the device serves the migration mailbox
/// ([`REG_MIG_ARM`]); a host then uses it instead of [`DIR_MIGRATE`] descriptors.
pub const CAP_MIGRATE_MAILBOX: u64 = 1 << 20;

registers! {
    /// The register block (CXL.io), [`REGISTER_BLOCK_SIZE`] bytes of which this is the start.
    ///
    /// Grouped by writer into 64-byte lines: identification (device, at reset), control (host),
    /// status (device), telemetry (device). The telemetry registers are what the paper's scheduler
    /// reads "via CXL.io configuration registers" (§5.2) every scheduling epoch.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Regs, size = 0x180, align = 8 {
        /// Device writes at reset: [`REGISTER_MAGIC`].
        0x00 magic: u32, Ro REG_MAGIC;
        /// Device writes at reset: [`ABI_VERSION`].
        0x04 version: u32, Ro REG_VERSION;
        /// Device writes at reset: `CAP_*` bits.
        0x08 caps: u64, Ro REG_CAPS;
        /// Device writes at reset: bytes of the PMR.
        0x10 pmr_size: u64, Ro REG_PMR_SIZE;
        /// Device writes at reset: logical blocks of [`BLOCK_SIZE`] bytes, equal to
        /// [`Superblock::nr_blocks`].
        0x18 capacity_blocks: u64, Ro REG_CAPACITY_BLOCKS;
        /// Device writes at reset: the engine cores that run device-placed stages.
        0x20 nr_cores: u32, Ro REG_NR_CORES;
        /// Zero.
        0x24 id_reserved0: u32;
        /// Zero.
        0x28 id_reserved: [u64; 3];
        /// Host writes: `DEV_CTRL_*`. Device reads.
        0x40 dev_ctrl: u32, Rw REG_DEV_CTRL {
            /// [`Regs::dev_ctrl`]: the device may take requests.
            pub const DEV_CTRL_ENABLE: u32 = 1 << 0;
            /// [`Regs::dev_ctrl`]: hold the device in reset (a level, see the module
            /// documentation).
            pub const DEV_CTRL_RESET: u32 = 1 << 1;
        };
        /// Host writes: [`IRQ_CTRL_ENABLE`] to be interrupted on completions, 0 to poll the CQ. The
        /// device reads it before each completion it publishes.
        0x44 irq_ctrl: u32, Rw REG_IRQ_CTRL {
            /// [`Regs::irq_ctrl`]: raise an interrupt when completions are published.
            pub const IRQ_CTRL_ENABLE: u32 = 1 << 0;
        };
        /// Host writes: the [`REG_IRQ_SEQ`] it has handled. The device raises interrupt `n + 1`
        /// only after `irq_ack == n`: at most one is outstanding.
        0x48 irq_ack: u32, Rw REG_IRQ_ACK;
        /// Host writes, after publishing the SQ tail in the PMR: that tail. A new value wakes an
        /// idle device; the tail in the PMR stays authoritative.
        0x4C sq_doorbell: u32, Rw REG_SQ_DOORBELL;
        /// Self-clearing. Host writes a PMR byte offset; the device XORs that PMR byte with `0xFF`
        /// and then writes [`FAULT_INJECT_IDLE`] back. The host writes only while it reads
        /// [`FAULT_INJECT_IDLE`]. Offsets past the PMR are ignored (and cleared). Present only with
        /// [`CAP_FAULT_INJECT`]; it lets a test corrupt a stored block and check that the checksum
        /// stage reports [`STATUS_EIO`].
        0x50 fault_inject: u64, Rw REG_FAULT_INJECT {
            /// [`Regs::fault_inject`] when no injection is pending.
            pub const FAULT_INJECT_IDLE: u64 = u64::MAX;
        };
        /// Zero.
        0x58 ctrl_reserved: [u64; 5];
        /// Device writes: `DEV_STATUS_*`.
        0x80 dev_status: u32, Ro REG_DEV_STATUS {
            /// [`Regs::dev_status`]: enabled and serving the rings.
            pub const DEV_STATUS_READY: u32 = 1 << 0;
            /// [`Regs::dev_status`]: an unrecoverable error ([`REG_DEV_ERROR`] says which); needs a
            /// reset.
            pub const DEV_STATUS_FATAL: u32 = 1 << 1;
            /// [`Regs::dev_status`]: held in reset by [`DEV_CTRL_RESET`].
            pub const DEV_STATUS_IN_RESET: u32 = 1 << 2;
        };
        /// Device increments it at least every 10 ms while [`DEV_STATUS_READY`]; a host that sees
        /// it stop presumes the device dead.
        0x84 heartbeat: u32, Ro REG_HEARTBEAT;
        /// Device writes, after the completions it announces (release), then signals: the sequence
        /// number of the interrupt it raises.
        0x88 irq_seq: u32, Ro REG_IRQ_SEQ;
        /// Device writes a `DEV_ERR_*` code before it sets [`DEV_STATUS_FATAL`], so that the driver
        /// can say why in its log.
        0x8C dev_error: u32, Ro REG_DEV_ERROR {
            /// [`Regs::dev_error`]: no error.
            pub const DEV_ERR_NONE: u32 = 0;
            /// [`Regs::dev_error`]: enable found no valid superblock.
            pub const DEV_ERR_SUPERBLOCK: u32 = 1;
            /// [`Regs::dev_error`]: enable found ring counters that do not form a valid ring
            /// (`tail - head > entries`).
            pub const DEV_ERR_RING: u32 = 2;
            /// [`Regs::dev_error`]: the PMR's backing store failed.
            pub const DEV_ERR_BACKING: u32 = 3;
        };
        /// Zero.
        0x90 status_reserved: [u64; 6];
        /// Device writes: the controller temperature in milli-degrees Celsius (the thermal model's
        /// output).
        0xC0 temp_milli_c: u32, Ro REG_TEMP_MILLI_C;
        /// Device writes: 1 while thermally throttled, else 0.
        0xC4 throttled: u32, Ro REG_THROTTLED;
        /// Device writes: engine utilisation over the last thermal tick, 0..=1000 (busy core time /
        /// (cores × tick)).
        0xC8 core_util_permille: u32, Ro REG_CORE_UTIL_PERMILLE;
        /// Device writes: requests it holds (taken from the SQ, not yet completed).
        0xCC queue_depth: u32, Ro REG_QUEUE_DEPTH;
        /// Device writes: the effective engine speed relative to a host core, in permille (500: the
        /// engine needs twice the host's time), throttling included.
        0xD0 speed_permille: u32, Ro REG_SPEED_PERMILLE;
        /// Zero.
        0xD4 telemetry_reserved0: u32;
        /// Device writes: bytes of the PMR write cache not yet drained to NAND.
        0xD8 drain_backlog: u64, Ro REG_DRAIN_BACKLOG;
        /// Device writes: times it entered throttling.
        0xE0 throttle_events: u64, Ro REG_THROTTLE_EVENTS;
        /// Zero.
        0xE8 telemetry_reserved: [u64; 3];
        // The migration mailbox (minor 2, [`CAP_MIGRATE_MAILBOX`]): the device's part of a
        // migration (checkpoint as the source, rebuild as the destination) asked for beside the
        // rings, so that it waits behind no queued request and its answer behind no completion.
        // The host's line (0x100..0x140) and the device's (0x140..0x180) are apart. The commit
        // points stay the PMR's "ready" and "active" flags; the mailbox only carries the request
        // and the answer.
        /// Host writes [`MIG_ARM_SOON`] when it starts a migration whose command follows a short
        /// drain (the command is imminent; [`MIG_ARM_ON`] when the drain may be long),
        /// [`MIG_ARM_ON`] once the device has answered the command, and [`MIG_ARM_OFF`] when the
        /// migration ends. While it reads nonzero, the device watches [`REG_MIG_SEQ`] closely
        /// (every few microseconds rather than every millisecond), so that the command that follows
        /// the drain is taken at once; otherwise it may look as seldom as its other housekeeping.
        /// [`MIG_ARM_SOON`] is a hint: a device may treat it as [`MIG_ARM_ON`].
        0x100 mig_arm: u32, Rw REG_MIG_ARM {
            /// [`Regs::mig_arm`]: no migration.
            pub const MIG_ARM_OFF: u32 = 0;
            /// [`Regs::mig_arm`]: a migration is draining.
            pub const MIG_ARM_ON: u32 = 1;
            /// [`Regs::mig_arm`]: the command comes within the time the runs in progress take. A
            /// device with a management core to spare polls [`REG_MIG_SEQ`] without pause until it
            /// comes (for a bounded time), rather than waking up every few microseconds.
            pub const MIG_ARM_SOON: u32 = 2;
        };
        /// Host writes before [`REG_MIG_SEQ`]: the actor id in bits 0..8, and [`MIG_CMD_TO_DEVICE`]
        /// to have the device rebuild the actor from the host's checkpoint (clear: checkpoint it
        /// for the host).
        0x104 mig_cmd: u32, Rw REG_MIG_CMD {
            /// [`Regs::mig_cmd`]: rebuild on the device (clear: checkpoint for the host).
            pub const MIG_CMD_TO_DEVICE: u32 = 1 << 8;
            /// [`Regs::mig_cmd`]: the actor id.
            pub const MIG_CMD_ACTOR_MASK: u32 = 0xFF;
        };
        /// Host writes before [`REG_MIG_SEQ`]: the migration's (odd) epoch, as a descriptor's epoch
        /// tag. The device acts only if the PMR's epoch table agrees.
        0x108 mig_epoch: u32, Rw REG_MIG_EPOCH;
        /// Host writes last, with release: the previous value plus one, which posts the command.
        /// One command at a time: the host posts the next only after the device answered this one
        /// (or the host gave up on it).
        0x10C mig_seq: u32, Rw REG_MIG_SEQ;
        /// Zero.
        0x110 mig_host_reserved: [u64; 6];
        /// Device writes after [`REG_MIG_STATUS`] and [`REG_MIG_DEV_NS`], with release: the
        /// [`REG_MIG_SEQ`] it answered.
        0x140 mig_done_seq: u32, Ro REG_MIG_DONE_SEQ;
        /// Device writes: the answer's `STATUS_*` (an `i32`).
        0x144 mig_status: u32, Ro REG_MIG_STATUS;
        /// Device writes: its own time for its part, in nanoseconds (saturating).
        0x148 mig_dev_ns: u32, Ro REG_MIG_DEV_NS;
        /// Device writes, with release: the [`REG_MIG_ARM`] value its firmware acts on, once it
        /// does. A host that wants the firmware watching before a migration starts (a firmware core
        /// may sleep a while between looks) waits for its value here.
        0x14C mig_arm_seen: u32, Ro REG_MIG_ARM_SEEN;
        /// Zero.
        0x150 mig_dev_reserved: [u64; 6];
    }
}

// ---------------------------------------------------------------------------------------------
// PMR: the rings
// ---------------------------------------------------------------------------------------------

/// The producer's line of a ring header: the tail, and the ring's geometry.
///
/// `tail` is written by the producer only (the host for the SQ, the device for the CQ; **release**
/// after the entries it publishes) and loaded by the consumer (**acquire**). `entries` and
/// `entry_size` are written by the device at format time and never change.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingProducer {
    /// Free-running tail: one past the last published entry.
    pub tail: u32,
    /// Entries in the ring, a power of two, [`Superblock::ring_entries`].
    pub entries: u32,
    /// Bytes per entry: [`SQ_ENTRY_SIZE`] or [`CQ_ENTRY_SIZE`].
    pub entry_size: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 6],
}

/// The consumer's line of a ring header: the head, on its own cache line so that the producer's
/// polling of its tail and the consumer's stores to its head do not share a line.
///
/// `head` is written by the consumer only (the device for the SQ, the host for the CQ; **release**
/// after it has finished reading the entries below it) and loaded by the producer, which may
/// reuse the slots below it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingConsumer {
    /// Free-running head: the first entry not yet consumed.
    pub head: u32,
    /// Zero.
    pub reserved0: u32,
    /// Zero.
    pub reserved: [u64; 7],
}

/// The header at the start of a ring area; the entries follow at [`RING_ENTRIES_OFFSET`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingHeader {
    /// The producer's line.
    pub producer: RingProducer,
    /// The consumer's line.
    pub consumer: RingConsumer,
}

/// Offset of entry 0 in a ring area: after the [`RingHeader`].
pub const RING_ENTRIES_OFFSET: u64 = size_of::<RingHeader>() as u64;

/// Bytes of one [`SubmissionDescriptor`].
pub const SQ_ENTRY_SIZE: u32 = 32;
/// Bytes of one [`CompletionEntry`].
pub const CQ_ENTRY_SIZE: u32 = 32;

/// Pipeline (low nibble of [`SubmissionDescriptor::opcode`]): no stage; data is stored as is.
pub const PIPELINE_PASSTHROUGH: u8 = 0;
/// Pipeline: `[crc32c]`. Write: checksum the block; read: verify it.
pub const PIPELINE_CHECKSUM: u8 = 1;
/// Pipeline: `[lz4, crc32c if PIPE_FLAG_CHECKSUM]`. Write: compress, then checksum the stored
/// bytes; read: verify, then decompress.
pub const PIPELINE_COMPRESS: u8 = 2;
/// Pipeline: `[aes-xts, crc32c if PIPE_FLAG_CHECKSUM]`. Write: encrypt (data unit = LBA), then
/// checksum the ciphertext; read: verify, then decrypt. The checksum is over the stored bytes so
/// that the device can verify integrity without the key.
pub const PIPELINE_ENCRYPT: u8 = 3;
/// Number of pipelines this version defines; pipelines are below this.
pub const PIPELINE_COUNT: u8 = 4;

/// Direction (high nibble of [`SubmissionDescriptor::opcode`]): read blocks into buffers.
pub const DIR_READ: u8 = 0;
/// Direction: write blocks from buffers.
pub const DIR_WRITE: u8 = 1;
/// Direction: flush: complete once everything written before is on NAND (the paper's GPF
/// barrier). Pipeline [`PIPELINE_PASSTHROUGH`], no blocks.
pub const DIR_FLUSH: u8 = 2;
/// Direction (minor 1, [`CAP_MIGRATE`]): the device's part of a drain-and-switch migration of
/// one actor (§4.3, §4.5). Pipeline [`PIPELINE_PASSTHROUGH`], no flags, no blocks, LBA 0, buffer
/// 0; `actors[0]` is the actor and `epochs[0]` the low 32 bits of its **odd** (migrating) epoch;
/// `placement` is the destination: 1 the device, 0 the host.
///
/// - To the host (the device is the source): the device checks that it owns the actor,
///   serialises its control state into the actor's control area, writes
///   [`ActorShared::ckpt_len`] and [`ActorShared::ckpt_side`], then stores
///   [`ActorShared::ckpt_epoch`] `=` the epoch (release): "ready". It drops its copy.
/// - To the device (the host is the source and has already written the checkpoint and "ready"):
///   the device checks "ready" for this epoch, rebuilds the actor from the checkpoint, writes
///   [`ActorShared::owner`] `=` [`SIDE_DEVICE`], then stores [`ActorShared::active_epoch`] `=` the
///   epoch (release): "active".
///
/// The host sends it only after the actor's in-flight requests have drained. The completion's
/// `stored_bytes` is the device's time for its part, in nanoseconds (saturating); its status is
/// [`STATUS_EINVAL`] for an actor the device cannot act on (free slot, not the owner, epoch not
/// the current odd one) and [`STATUS_EIO`] for a checkpoint that does not decode.
pub const DIR_MIGRATE: u8 = 3;
/// Number of directions this version defines.
pub const DIR_COUNT: u8 = 4;

/// The pipeline bits of an opcode.
pub const OPCODE_PIPELINE_MASK: u8 = 0x0F;
/// The shift of the direction in an opcode.
pub const OPCODE_DIR_SHIFT: u32 = 4;

/// The opcode byte of a request: the 4-bit pipeline and the direction.
pub const fn opcode(pipeline: u8, direction: u8) -> u8 {
    (pipeline & OPCODE_PIPELINE_MASK) | (direction << OPCODE_DIR_SHIFT)
}

/// The pipeline of an opcode byte.
pub const fn opcode_pipeline(opcode: u8) -> u8 {
    opcode & OPCODE_PIPELINE_MASK
}

/// The direction of an opcode byte.
pub const fn opcode_direction(opcode: u8) -> u8 {
    opcode >> OPCODE_DIR_SHIFT
}

/// [`SubmissionDescriptor::flags`]: add the optional crc32c stage to [`PIPELINE_COMPRESS`] and
/// [`PIPELINE_ENCRYPT`] (harmless on [`PIPELINE_CHECKSUM`], whose only stage it is).
pub const PIPE_FLAG_CHECKSUM: u16 = 1 << 0;
/// Every [`SubmissionDescriptor::flags`] bit this version defines; the others are rejected.
pub const PIPE_FLAGS_KNOWN: u16 = PIPE_FLAG_CHECKSUM;

/// The 32-byte submission descriptor (paper §4.1), one SQ entry.
///
/// Written by the host into SQ slot `tail & (entries - 1)` before it publishes `tail + 1`; read by
/// the device, which takes a copy and advances the SQ head.
///
/// # Stages, steps and hand-over
///
/// The pipeline and the flags give the request's stages in **pipeline order** (stage 0 first on a
/// write). A read runs them in reverse. A **step** is a position in the execution order of this
/// request's direction: on a write step `j` is stage `j`, on a read step `j` is stage
/// `n - 1 - j`. Placement is per stage (it is the stage's actor that lives on one side):
/// [`placement`](Self::placement) bit `i` set means stage `i` runs on the device.
///
/// The device runs the steps from [`stage_start`](Self::stage_start) for as long as they are
/// device-placed. If it reaches a host-placed step `k` it completes with
/// [`CompletionEntry::next_stage`] `= k`; the host runs from `k` while the steps are host-placed
/// and resubmits the request (same tag, buffers and state blob) with `stage_start` at the next
/// device-placed step. A read starts on the device at step 0, which first **loads** the blocks
/// from the data store into the buffers (and their metadata into the state blob); a write that
/// has run all its steps is **committed** by the device (data-store slots, then [`BlockMeta`]).
/// So a write whose stages all run on the host is submitted with `stage_start == steps`, and is
/// only committed. `proto::pipeline` computes these runs.
///
/// Between submission and completion the device owns the request's buffers and state blob; after
/// the completion, the host does.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SubmissionDescriptor {
    /// The request's tag (the blk-mq tag), echoed in its completions.
    pub tag: u16,
    /// Bits 0..4: the pipeline (`PIPELINE_*`); bits 4..8: the direction (`DIR_*`). See [`opcode`].
    pub opcode: u8,
    /// The first step the device runs (0 on a first submission).
    pub stage_start: u8,
    /// Bit `i`: stage `i` (pipeline order) runs on the device. Bits at or above the pipeline's
    /// stage count must be clear.
    pub placement: u8,
    /// Blocks of the request, `1..=MAX_REQ_BLOCKS`; 0 for a flush.
    pub nr_blocks: u8,
    /// `PIPE_FLAG_*`: optional stages.
    pub flags: u16,
    /// The actor id of each stage (pipeline order), an index into the actor table and the epoch
    /// table. Entries past the stage count are zero.
    pub actors: [u8; MAX_STAGES as usize],
    /// The request's state blob: an index into the request-state area ([`ReqState`]), below
    /// [`Superblock::ring_entries`].
    pub state: u16,
    /// The first data buffer; block `i` of the request is in buffer `buf_index + i`.
    pub buf_index: u32,
    /// The first logical block ([`BLOCK_SIZE`] bytes).
    pub lba: u64,
    /// The low 32 bits of each stage's actor epoch as the host read it when it routed the request
    /// ([`EpochSlot`]); the device completes with [`STATUS_EAGAIN`] instead of running a stage
    /// whose actor's epoch differs. Entries past the stage count are zero.
    pub epochs: [u32; MAX_STAGES as usize],
}

impl SubmissionDescriptor {
    /// The pipeline of [`Self::opcode`].
    pub const fn pipeline(&self) -> u8 {
        opcode_pipeline(self.opcode)
    }

    /// The direction of [`Self::opcode`].
    pub const fn direction(&self) -> u8 {
        opcode_direction(self.opcode)
    }
}

/// [`CompletionEntry::next_stage`]: the request is finished (successfully or not).
pub const NEXT_STAGE_DONE: u8 = 0xFF;

/// One completion entry (32 bytes), one CQ entry.
///
/// Written by the device into CQ slot `seq & (entries - 1)` before it publishes `seq + 1`. Every
/// submission (a first one or a resubmission after a hand-over) gets exactly one completion, and
/// the host resubmits only after consuming it, so with at most `ring_entries` requests in flight
/// the CQ never holds more than `ring_entries` entries; the device still checks the CQ head
/// before it writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompletionEntry {
    /// The tag of the request.
    pub tag: u16,
    /// The step the host must run next, or [`NEXT_STAGE_DONE`]. Always [`NEXT_STAGE_DONE`] when
    /// `status` is not [`STATUS_OK`].
    pub next_stage: u8,
    /// Zero.
    pub flags: u8,
    /// [`STATUS_OK`] or a negative errno (`STATUS_*`).
    pub status: i32,
    /// A finished write: bytes stored in the data store (the sum of the blocks' stored lengths,
    /// smaller than `nr_blocks * BLOCK_SIZE` when compression helped). A finished read: bytes
    /// delivered. A hand-over: 0.
    pub stored_bytes: u32,
    /// The free-running CQ index of this entry. A host that finds another value in the slot it
    /// expects has seen an ordering bug or a stale entry.
    pub seq: u32,
    /// The low 32 bits of each stage's actor epoch as the device saw it when it completed (with
    /// [`STATUS_EAGAIN`]: the epoch that made it refuse).
    pub epochs: [u32; MAX_STAGES as usize],
    /// Zero.
    pub reserved: u64,
}

// ---------------------------------------------------------------------------------------------
// PMR: request state blobs, actors, epochs, block metadata
// ---------------------------------------------------------------------------------------------

/// The state blob of one in-flight request (paper §4.1: "a handle to a per-request state blob").
///
/// Holds what one stage leaves for the next when they may run on different sides: each block's
/// current length in its buffer, its checksum and what has been done to it. Written by the side
/// that holds the request (see [`SubmissionDescriptor`]). On a read the device's load fills it
/// from the blocks' [`BlockMeta`]; on a write the device's commit copies it into them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReqState {
    /// Bytes of block `i` in its buffer after the last step run (`BLOCK_SIZE` for raw data).
    pub len: [u16; MAX_REQ_BLOCKS as usize],
    /// The crc32c of block `i`'s stored bytes, valid with [`META_CHECKSUMMED`] in `flags[i]`.
    pub crc: [u32; MAX_REQ_BLOCKS as usize],
    /// `META_*` bits of block `i` so far (compressed, encrypted, checksummed).
    pub flags: [u8; MAX_REQ_BLOCKS as usize],
    /// Zero.
    pub reserved: [u64; 4],
}

/// Bytes of one [`ReqState`] in the request-state area.
pub const REQ_STATE_SIZE: u64 = 256;

/// Bytes of one actor's slot in the actor table: control state, then shared state.
pub const ACTOR_SLOT_SIZE: u64 = 8192;
/// Bytes of an actor's control state area (at offset 0 of its slot): the serialised checkpoint
/// that moves on migration (§4.3; "up to 4 KiB").
pub const ACTOR_CONTROL_SIZE: u64 = 4096;
/// Offset of an actor's shared state in its slot: the [`ActorShared`] header, then
/// [`ACTOR_SHARED_DATA_SIZE`] bytes the actor defines (counters, per-range metadata, LRU lists).
pub const ACTOR_SHARED_OFFSET: u64 = ACTOR_CONTROL_SIZE;
/// Bytes of actor-defined shared data after the [`ActorShared`] header.
pub const ACTOR_SHARED_DATA_SIZE: u64 =
    ACTOR_SLOT_SIZE - ACTOR_SHARED_OFFSET - size_of::<ActorShared>() as u64;

/// [`ActorShared::kind`]: a free slot.
pub const ACTOR_KIND_NONE: u32 = 0;
/// [`ActorShared::kind`]: the crc32c stage.
pub const ACTOR_KIND_CRC32C: u32 = 1;
/// [`ActorShared::kind`]: the LZ4 stage.
pub const ACTOR_KIND_LZ4: u32 = 2;
/// [`ActorShared::kind`]: the AES-XTS stage; [`ActorShared::params`] holds the 64-byte XTS key
/// (data key, then tweak key; AES-256 each).
pub const ACTOR_KIND_AES_XTS: u32 = 3;

/// [`ActorShared::class`]: an I/O-dominated actor (compression, checksum, encryption): its
/// placement is reversible, the scheduler may migrate it.
pub const ACTOR_CLASS_IO: u32 = 0;
/// [`ActorShared::class`]: a compute-dominated actor, pinned to the side it was registered on
/// (§4.4: excluded from migration).
pub const ACTOR_CLASS_COMPUTE: u32 = 1;

/// [`ActorShared::class`]: an actor that runs on both sides at once, each with its own control
/// state (paradigm B, request-level dispatch: no placement, no migration). Only the owner
/// writes checkpoints.
pub const ACTOR_CLASS_REPLICATED: u32 = 2;

/// [`ActorShared::owner`] and [`ActorShared::ckpt_side`]: the host.
pub const SIDE_HOST: u32 = 0;
/// [`ActorShared::owner`] and [`ActorShared::ckpt_side`]: the device.
pub const SIDE_DEVICE: u32 = 1;

/// The header of an actor's shared state (paper §4.2): what both sides see without moving it.
///
/// One 64-byte line per writer. Lines 0 and 1 are written by the host when it registers the actor
/// (before any request names it). Line 2 by the source of a migration, line 3 by its destination
/// (the two-phase commit of §4.5: `ckpt_epoch` is the "ready" flag, `active_epoch` the "active"
/// flag; a crash between the two rolls back to the source). Line 4 by the side that currently runs
/// the actor.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActorShared {
    /// `ACTOR_KIND_*`.
    pub kind: u32,
    /// `ACTOR_CLASS_*` (minor 1; zero, I/O-dominated, before): fixed at registration.
    pub class: u32,
    /// Zero.
    pub reserved: [u64; 7],
    /// Kind-specific parameters: the [`XTS_KEY_SIZE`]-byte key of [`ACTOR_KIND_AES_XTS`].
    pub params: [u8; ACTOR_PARAMS_SIZE],
    /// The epoch whose checkpoint the control area holds; stored last by the source (release),
    /// it is the "ready" flag.
    pub ckpt_epoch: u64,
    /// Bytes of the checkpoint, at most [`ACTOR_CONTROL_SIZE`].
    pub ckpt_len: u32,
    /// `SIDE_*` that wrote the checkpoint.
    pub ckpt_side: u32,
    /// Zero.
    pub ckpt_reserved: [u64; 6],
    /// The epoch in which the destination reconstructed the actor; stored by the destination
    /// (release), it is the "active" flag.
    pub active_epoch: u64,
    /// `SIDE_*` that runs the actor now.
    pub owner: u32,
    /// Zero.
    pub active_reserved0: u32,
    /// Zero.
    pub active_reserved: [u64; 6],
    /// Stage invocations (one per block processed).
    pub invocations: u64,
    /// Bytes consumed.
    pub bytes_in: u64,
    /// Bytes produced.
    pub bytes_out: u64,
    /// Blocks that failed (checksum mismatch, undecodable data).
    pub errors: u64,
    /// Nanoseconds of device engine time the actor used (minor 1; zero before), at the engine's
    /// speed: the scheduler's measure of how much of the device's work is this actor's.
    pub dev_busy_ns: u64,
    /// Zero.
    pub stats_reserved: [u64; 3],
}

impl Default for ActorShared {
    fn default() -> Self {
        Self {
            kind: ACTOR_KIND_NONE,
            class: ACTOR_CLASS_IO,
            reserved: [0; 7],
            params: [0; ACTOR_PARAMS_SIZE],
            ckpt_epoch: 0,
            ckpt_len: 0,
            ckpt_side: SIDE_HOST,
            ckpt_reserved: [0; 6],
            active_epoch: 0,
            owner: SIDE_HOST,
            active_reserved0: 0,
            active_reserved: [0; 6],
            invocations: 0,
            bytes_in: 0,
            bytes_out: 0,
            errors: 0,
            dev_busy_ns: 0,
            stats_reserved: [0; 3],
        }
    }
}

/// Bytes of [`ActorShared::params`].
pub const ACTOR_PARAMS_SIZE: usize = 64;
/// Bytes of an AES-XTS key in [`ActorShared::params`]: two AES-256 keys, the data key then the
/// tweak key (IEEE 1619 XTS-AES-256, the paper's AES-256 engine).
pub const XTS_KEY_SIZE: usize = 64;

/// One entry of the epoch table: an actor's epoch counter, on its own cache line so that the host
/// bumping one actor's epoch does not disturb the device polling another's.
///
/// Written by the host (the scheduler that migrates actors), read by both. It works like a
/// sequence count: odd while the actor is migrating (drain-and-switch in progress), even while it
/// is placed. A request routed in one epoch and run in another is refused with
/// [`STATUS_EAGAIN`]; a page tagged with an older epoch is re-read (§4.1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EpochSlot {
    /// The epoch.
    pub epoch: u64,
    /// Zero.
    pub reserved: [u64; 7],
}

/// [`BlockMeta::flags`]: the entry describes a written block (clear: never written, reads as
/// zeros).
pub const META_VALID: u16 = 1 << 0;
/// [`BlockMeta::flags`]: `crc` is the crc32c of the stored bytes.
pub const META_CHECKSUMMED: u16 = 1 << 1;
/// [`BlockMeta::flags`]: the stored bytes are one LZ4 block that decompresses to `BLOCK_SIZE`.
pub const META_COMPRESSED: u16 = 1 << 2;
/// [`BlockMeta::flags`]: the stored bytes are AES-XTS ciphertext, data unit = the LBA.
pub const META_ENCRYPTED: u16 = 1 << 3;
/// Every [`BlockMeta::flags`] bit this version defines.
pub const META_FLAGS_KNOWN: u16 = META_VALID | META_CHECKSUMMED | META_COMPRESSED | META_ENCRYPTED;

/// The metadata of one logical block (16 bytes): the paper's "per-range metadata" shared state.
///
/// Written by the device when it commits a write: the data-store slot first, **write barrier**,
/// then this entry, so that a valid entry never describes bytes not yet stored. Read by the device
/// when it loads a block, and by the host for statistics. `proto::block_meta` validates it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockMeta {
    /// Bytes stored in the block's data-store slot, at most [`BLOCK_SIZE`].
    pub stored_len: u16,
    /// `META_*`.
    pub flags: u16,
    /// crc32c of the stored bytes (standard CRC32C: initial value and final XOR `0xFFFF_FFFF`,
    /// `crc32c(b"123456789") == 0xE306_9283`), valid with [`META_CHECKSUMMED`].
    pub crc: u32,
    /// Times the block has been written; 0 for a block never written.
    pub generation: u64,
}

// ---------------------------------------------------------------------------------------------
// PMR: the superblock and the layout
// ---------------------------------------------------------------------------------------------

/// A region of the PMR: `size` bytes at `offset`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PmrArea {
    /// Byte offset in the PMR, a multiple of [`PMR_AREA_ALIGN`].
    pub offset: u64,
    /// Bytes, a multiple of [`PMR_AREA_ALIGN`].
    pub size: u64,
}

impl PmrArea {
    /// One past the last byte.
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

/// [`PmrLayout::areas`] index: the [`Superblock`] (one [`PMR_AREA_ALIGN`] page at offset 0).
pub const AREA_SUPERBLOCK: usize = 0;
/// Area index: the submission ring ([`RingHeader`], then `ring_entries` [`SubmissionDescriptor`]s).
pub const AREA_SQ: usize = 1;
/// Area index: the completion ring ([`RingHeader`], then `ring_entries` [`CompletionEntry`]s).
pub const AREA_CQ: usize = 2;
/// Area index: `ring_entries` [`ReqState`] blobs of [`REQ_STATE_SIZE`] bytes.
pub const AREA_REQ_STATE: usize = 3;
/// Area index: `nr_buffers` data buffers of [`BLOCK_SIZE`] bytes.
pub const AREA_BUFFERS: usize = 4;
/// Area index: `nr_actors` actor slots of [`ACTOR_SLOT_SIZE`] bytes.
pub const AREA_ACTORS: usize = 5;
/// Area index: `nr_actors` [`EpochSlot`]s.
pub const AREA_EPOCHS: usize = 6;
/// Area index: `nr_blocks` [`BlockMeta`] entries.
pub const AREA_BLOCK_META: usize = 7;
/// Area index: the data store, `nr_blocks` slots of [`BLOCK_SIZE`] bytes.
pub const AREA_DATA: usize = 8;
/// Number of areas.
pub const AREA_COUNT: usize = 9;

/// The superblock at PMR offset 0: what the device formatted and how the host mounted it.
///
/// Written by the device at format time; from then on by the host (`generation`, `clean`) while
/// the device is not ready. The layout fields never change after format: the host recomputes the
/// layout from the parameters and refuses a superblock whose areas differ
/// ([`Superblock::validate`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Superblock {
    /// [`SUPERBLOCK_MAGIC`].
    pub magic: u32,
    /// [`ABI_VERSION`] of the formatter.
    pub version: u32,
    /// Mount count: the host increments it at every mount. Page-cache tags and logs carry it to
    /// tell one mount from the next.
    pub generation: u64,
    /// 1 after a clean unmount (the host sets it after the device stopped), 0 while mounted or
    /// after a crash.
    pub clean: u32,
    /// [`BLOCK_SIZE`].
    pub block_size: u32,
    /// PMR bytes the layout was computed for (at most [`Regs::pmr_size`]).
    pub pmr_size: u64,
    /// Entries of each ring and of the request-state area, a power of two.
    pub ring_entries: u32,
    /// Actor slots (and epoch slots).
    pub nr_actors: u32,
    /// Data buffers.
    pub nr_buffers: u32,
    /// Zero.
    pub reserved0: u32,
    /// Logical blocks: entries of the metadata table and slots of the data store.
    pub nr_blocks: u64,
    /// Zero.
    pub reserved1: u64,
    /// Every area, indexed by `AREA_*`.
    pub areas: [PmrArea; AREA_COUNT],
    /// Zero.
    pub reserved: [u64; 6],
}

/// What a PMR layout is computed from: the PMR size and the number of each kind of object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutParams {
    /// Bytes of PMR available.
    pub pmr_size: u64,
    /// Entries of each ring (and request-state blobs): a power of two in `1..=MAX_RING_ENTRIES`.
    pub ring_entries: u32,
    /// Data buffers, at least [`MAX_REQ_BLOCKS`] so that the largest request fits.
    pub nr_buffers: u32,
    /// Actors, `1..=MAX_ACTORS`.
    pub nr_actors: u32,
    /// Logical blocks, at least 1.
    pub nr_blocks: u64,
}

/// Why a layout cannot be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutError {
    /// `ring_entries` is 0, not a power of two, or above [`MAX_RING_ENTRIES`].
    RingEntries,
    /// `nr_buffers` is below [`MAX_REQ_BLOCKS`].
    Buffers,
    /// `nr_actors` is 0 or above [`MAX_ACTORS`].
    Actors,
    /// `nr_blocks` is 0.
    Blocks,
    /// The layout's size does not fit in 64 bits.
    Overflow,
    /// The layout needs `needed` bytes, more than the PMR has.
    TooSmall {
        /// Bytes the layout needs.
        needed: u64,
    },
}

impl core::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::RingEntries => f.write_str("ring entries must be a power of two in 1..=4096"),
            Self::Buffers => f.write_str("fewer data buffers than the largest request needs"),
            Self::Actors => f.write_str("actor count must be in 1..=256"),
            Self::Blocks => f.write_str("the device needs at least one block"),
            Self::Overflow => f.write_str("layout size overflows 64 bits"),
            Self::TooSmall { needed } => write!(f, "layout needs {needed} bytes of PMR"),
        }
    }
}

/// The PMR layout: where every area is. Both agents compute it from the same [`LayoutParams`];
/// the device writes it into the [`Superblock`], the host checks it there.
///
/// # Invariants
///
/// The areas are in `AREA_*` order, each starts at a multiple of [`PMR_AREA_ALIGN`] at or after
/// the end of the previous one, each size is the bytes its objects need rounded up to
/// [`PMR_AREA_ALIGN`], and the last one ends at or before `params.pmr_size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PmrLayout {
    params: LayoutParams,
    areas: [PmrArea; AREA_COUNT],
}

/// Rounds `v` up to a multiple of [`PMR_AREA_ALIGN`], or `None` on overflow.
const fn align_up(v: u64) -> Option<u64> {
    match v.checked_add(PMR_AREA_ALIGN - 1) {
        Some(x) => Some(x & !(PMR_AREA_ALIGN - 1)),
        None => None,
    }
}

/// `count * size` rounded up to [`PMR_AREA_ALIGN`], or `None` on overflow.
const fn area_bytes(count: u64, size: u64, header: u64) -> Option<u64> {
    match count.checked_mul(size) {
        Some(b) => match b.checked_add(header) {
            Some(b) => align_up(b),
            None => None,
        },
        None => None,
    }
}

impl PmrLayout {
    /// Computes the layout of `params`, or says why there is none.
    pub const fn compute(params: LayoutParams) -> Result<Self, LayoutError> {
        if params.ring_entries == 0
            || !params.ring_entries.is_power_of_two()
            || params.ring_entries > MAX_RING_ENTRIES
        {
            return Err(LayoutError::RingEntries);
        }
        if params.nr_buffers < MAX_REQ_BLOCKS {
            return Err(LayoutError::Buffers);
        }
        if params.nr_actors == 0 || params.nr_actors > MAX_ACTORS {
            return Err(LayoutError::Actors);
        }
        if params.nr_blocks == 0 {
            return Err(LayoutError::Blocks);
        }
        let entries = params.ring_entries as u64;
        let actors = params.nr_actors as u64;
        let sizes = [
            area_bytes(1, size_of::<Superblock>() as u64, 0),
            area_bytes(entries, SQ_ENTRY_SIZE as u64, RING_ENTRIES_OFFSET),
            area_bytes(entries, CQ_ENTRY_SIZE as u64, RING_ENTRIES_OFFSET),
            area_bytes(entries, REQ_STATE_SIZE, 0),
            area_bytes(params.nr_buffers as u64, BLOCK_SIZE as u64, 0),
            area_bytes(actors, ACTOR_SLOT_SIZE, 0),
            area_bytes(actors, size_of::<EpochSlot>() as u64, 0),
            area_bytes(params.nr_blocks, size_of::<BlockMeta>() as u64, 0),
            area_bytes(params.nr_blocks, BLOCK_SIZE as u64, 0),
        ];
        let mut areas = [PmrArea { offset: 0, size: 0 }; AREA_COUNT];
        let mut offset = 0u64;
        let mut i = 0;
        while i < AREA_COUNT {
            let Some(size) = sizes[i] else {
                return Err(LayoutError::Overflow);
            };
            areas[i] = PmrArea { offset, size };
            offset = match offset.checked_add(size) {
                Some(end) => end,
                None => return Err(LayoutError::Overflow),
            };
            i += 1;
        }
        if offset > params.pmr_size {
            return Err(LayoutError::TooSmall { needed: offset });
        }
        // INVARIANT: areas are laid out back to back from 0 in `AREA_*` order, with aligned sizes,
        // and the last one ends at `offset <= pmr_size`, checked above.
        Ok(Self { params, areas })
    }

    /// The most blocks a PMR of `pmr_size` bytes holds next to the other areas of `params`
    /// (`params.nr_blocks` and `params.pmr_size` are ignored), or why not even one does.
    ///
    /// The device formats a fresh PMR with this many blocks.
    pub const fn max_blocks(mut params: LayoutParams, pmr_size: u64) -> Result<u64, LayoutError> {
        params.pmr_size = pmr_size;
        params.nr_blocks = 1;
        let fixed = match Self::compute(params) {
            Ok(layout) => layout.areas[AREA_BLOCK_META].offset,
            // Even one block does not fit: report how much that would need.
            Err(e) => return Err(e),
        };
        // Every block costs a data slot and a metadata entry; alignment costs less than one
        // more block, so the estimate is exact or one too many.
        let per_block = BLOCK_SIZE as u64 + size_of::<BlockMeta>() as u64;
        let estimate = (pmr_size - fixed) / per_block;
        params.nr_blocks = estimate;
        if Self::compute(params).is_ok() {
            return Ok(estimate);
        }
        // `estimate >= 2` here: one block fits, and the estimate is at least one.
        Ok(estimate - 1)
    }

    /// The parameters this layout was computed from.
    pub const fn params(&self) -> LayoutParams {
        self.params
    }

    /// Every area, indexed by `AREA_*`.
    pub const fn areas(&self) -> [PmrArea; AREA_COUNT] {
        self.areas
    }

    /// Area `AREA_*` `index`, or `None` for an unknown index.
    pub const fn area(&self, index: usize) -> Option<PmrArea> {
        if index < AREA_COUNT {
            Some(self.areas[index])
        } else {
            None
        }
    }

    /// Bytes of PMR the layout uses (the end of the data store).
    pub const fn used(&self) -> u64 {
        self.areas[AREA_COUNT - 1].end()
    }

    /// PMR offset of object `index` of `size` bytes after `header` bytes in area `area`, if
    /// `index < count`.
    const fn object(
        &self,
        area: usize,
        header: u64,
        size: u64,
        index: u64,
        count: u64,
    ) -> Option<u64> {
        if index >= count {
            return None;
        }
        // Cannot overflow: the object lies inside an area that `compute` checked.
        Some(self.areas[area].offset + header + index * size)
    }

    /// PMR offset of the SQ's [`RingHeader`].
    pub const fn sq_header(&self) -> u64 {
        self.areas[AREA_SQ].offset
    }

    /// PMR offset of the CQ's [`RingHeader`].
    pub const fn cq_header(&self) -> u64 {
        self.areas[AREA_CQ].offset
    }

    /// PMR offset of SQ slot `slot` (a slot, not a counter), if it exists.
    pub const fn sq_entry(&self, slot: u32) -> Option<u64> {
        let n = self.params.ring_entries as u64;
        self.object(
            AREA_SQ,
            RING_ENTRIES_OFFSET,
            SQ_ENTRY_SIZE as u64,
            slot as u64,
            n,
        )
    }

    /// PMR offset of CQ slot `slot`, if it exists.
    pub const fn cq_entry(&self, slot: u32) -> Option<u64> {
        let n = self.params.ring_entries as u64;
        self.object(
            AREA_CQ,
            RING_ENTRIES_OFFSET,
            CQ_ENTRY_SIZE as u64,
            slot as u64,
            n,
        )
    }

    /// PMR offset of request state blob `handle`, if it exists.
    pub const fn req_state(&self, handle: u16) -> Option<u64> {
        let n = self.params.ring_entries as u64;
        self.object(AREA_REQ_STATE, 0, REQ_STATE_SIZE, handle as u64, n)
    }

    /// PMR offset of data buffer `index`, if it exists.
    pub const fn buffer(&self, index: u32) -> Option<u64> {
        let n = self.params.nr_buffers as u64;
        self.object(AREA_BUFFERS, 0, BLOCK_SIZE as u64, index as u64, n)
    }

    /// PMR offset of actor `id`'s control state area, if the actor exists.
    pub const fn actor_control(&self, id: u8) -> Option<u64> {
        let n = self.params.nr_actors as u64;
        self.object(AREA_ACTORS, 0, ACTOR_SLOT_SIZE, id as u64, n)
    }

    /// PMR offset of actor `id`'s [`ActorShared`] header, if the actor exists.
    pub const fn actor_shared(&self, id: u8) -> Option<u64> {
        let n = self.params.nr_actors as u64;
        self.object(
            AREA_ACTORS,
            ACTOR_SHARED_OFFSET,
            ACTOR_SLOT_SIZE,
            id as u64,
            n,
        )
    }

    /// PMR offset of actor `id`'s [`EpochSlot`], if the actor exists.
    pub const fn epoch(&self, id: u8) -> Option<u64> {
        let n = self.params.nr_actors as u64;
        self.object(AREA_EPOCHS, 0, size_of::<EpochSlot>() as u64, id as u64, n)
    }

    /// PMR offset of block `lba`'s [`BlockMeta`], if the block exists.
    pub const fn block_meta(&self, lba: u64) -> Option<u64> {
        let n = self.params.nr_blocks;
        self.object(AREA_BLOCK_META, 0, size_of::<BlockMeta>() as u64, lba, n)
    }

    /// PMR offset of block `lba`'s data-store slot, if the block exists.
    pub const fn block_data(&self, lba: u64) -> Option<u64> {
        let n = self.params.nr_blocks;
        self.object(AREA_DATA, 0, BLOCK_SIZE as u64, lba, n)
    }
}

/// Why a superblock is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SuperblockError {
    /// No [`SUPERBLOCK_MAGIC`]: an unformatted PMR.
    BadMagic,
    /// Formatted by another major version.
    BadVersion {
        /// The superblock's major version.
        major: u16,
    },
    /// A block size other than [`BLOCK_SIZE`].
    BadBlockSize,
    /// `clean` is neither 0 nor 1.
    BadCleanFlag,
    /// The superblock describes more PMR than the device has.
    PmrTooSmall,
    /// The parameters admit no layout.
    Layout(LayoutError),
    /// Area `AREA_*` differs from the layout recomputed from the parameters.
    AreaMismatch {
        /// The area index.
        area: usize,
    },
}

impl core::fmt::Display for SuperblockError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadMagic => f.write_str("no ReFlux superblock (unformatted PMR)"),
            Self::BadVersion { major } => write!(f, "superblock of ABI major version {major}"),
            Self::BadBlockSize => f.write_str("superblock block size is not 4096"),
            Self::BadCleanFlag => f.write_str("superblock clean flag is neither 0 nor 1"),
            Self::PmrTooSmall => f.write_str("superblock describes more PMR than the device has"),
            Self::Layout(e) => write!(f, "superblock parameters: {e}"),
            Self::AreaMismatch { area } => write!(f, "superblock area {area} disagrees"),
        }
    }
}

impl Superblock {
    /// The superblock the device writes when it formats the PMR with `layout`: generation 0,
    /// clean.
    pub const fn format(layout: &PmrLayout) -> Self {
        let p = layout.params;
        Self {
            magic: SUPERBLOCK_MAGIC,
            version: ABI_VERSION,
            generation: 0,
            clean: 1,
            block_size: BLOCK_SIZE,
            pmr_size: p.pmr_size,
            ring_entries: p.ring_entries,
            nr_actors: p.nr_actors,
            nr_buffers: p.nr_buffers,
            reserved0: 0,
            nr_blocks: p.nr_blocks,
            reserved1: 0,
            areas: layout.areas,
            reserved: [0; 6],
        }
    }

    /// The parameters recorded in the superblock.
    pub const fn params(&self) -> LayoutParams {
        LayoutParams {
            pmr_size: self.pmr_size,
            ring_entries: self.ring_entries,
            nr_buffers: self.nr_buffers,
            nr_actors: self.nr_actors,
            nr_blocks: self.nr_blocks,
        }
    }

    /// Checks the superblock against a device whose PMR has `pmr_size` bytes and returns its
    /// layout. Recomputing the layout, rather than trusting the stored offsets, means a corrupt
    /// superblock cannot aim either agent outside the PMR or make two areas overlap.
    pub fn validate(&self, pmr_size: u64) -> Result<PmrLayout, SuperblockError> {
        if self.magic != SUPERBLOCK_MAGIC {
            return Err(SuperblockError::BadMagic);
        }
        let major = version_major(self.version);
        if major != ABI_VERSION_MAJOR {
            return Err(SuperblockError::BadVersion { major });
        }
        if self.block_size != BLOCK_SIZE {
            return Err(SuperblockError::BadBlockSize);
        }
        if self.clean > 1 {
            return Err(SuperblockError::BadCleanFlag);
        }
        if self.pmr_size > pmr_size {
            return Err(SuperblockError::PmrTooSmall);
        }
        let layout = PmrLayout::compute(self.params()).map_err(SuperblockError::Layout)?;
        for (area, (stored, computed)) in self.areas.iter().zip(layout.areas.iter()).enumerate() {
            if stored != computed {
                return Err(SuperblockError::AreaMismatch { area });
            }
        }
        Ok(layout)
    }
}

// ---------------------------------------------------------------------------------------------
// Wire images: the bytes a struct occupies in the PMR
// ---------------------------------------------------------------------------------------------

impl LeField for PmrArea {
    const SIZE: usize = size_of::<PmrArea>();
    fn put(self, out: &mut [u8], at: usize) {
        self.offset.put(out, at);
        self.size.put(out, at + 8);
    }
    fn get(b: &[u8], at: usize) -> Self {
        Self {
            offset: LeField::get(b, at),
            size: LeField::get(b, at + 8),
        }
    }
}

wire_image!(SubmissionDescriptor, {
    tag, opcode, stage_start, placement, nr_blocks, flags, actors, state, buf_index, lba, epochs,
});
wire_image!(CompletionEntry, {
    tag, next_stage, flags, status, stored_bytes, seq, epochs,
});
wire_image!(RingProducer, { tail, entries, entry_size });
wire_image!(RingConsumer, { head });
wire_image!(ReqState, { len, crc, flags });
wire_image!(ActorShared, {
    kind, class, params, ckpt_epoch, ckpt_len, ckpt_side, active_epoch, owner, invocations, bytes_in,
    bytes_out, errors, dev_busy_ns,
});
wire_image!(EpochSlot, { epoch });
wire_image!(BlockMeta, { stored_len, flags, crc, generation });
wire_image!(Superblock, {
    magic, version, generation, clean, block_size, pmr_size, ring_entries, nr_actors, nr_buffers,
    nr_blocks, areas,
});

// ---------------------------------------------------------------------------------------------
// Layout assertions: the frozen ABI
// ---------------------------------------------------------------------------------------------

assert_layout!(RingProducer, size = 64, align = 8, {
    tail @ 0x00,
    entries @ 0x04,
    entry_size @ 0x08,
    reserved0 @ 0x0C,
    reserved @ 0x10,
});

assert_layout!(RingConsumer, size = 64, align = 8, {
    head @ 0x00,
    reserved0 @ 0x04,
    reserved @ 0x08,
});

assert_layout!(RingHeader, size = 128, align = 8, {
    producer @ 0x00,
    consumer @ 0x40,
});

assert_layout!(SubmissionDescriptor, size = SQ_ENTRY_SIZE as usize, align = 8, {
    tag @ 0x00,
    opcode @ 0x02,
    stage_start @ 0x03,
    placement @ 0x04,
    nr_blocks @ 0x05,
    flags @ 0x06,
    actors @ 0x08,
    state @ 0x0A,
    buf_index @ 0x0C,
    lba @ 0x10,
    epochs @ 0x18,
});

assert_layout!(CompletionEntry, size = CQ_ENTRY_SIZE as usize, align = 8, {
    tag @ 0x00,
    next_stage @ 0x02,
    flags @ 0x03,
    status @ 0x04,
    stored_bytes @ 0x08,
    seq @ 0x0C,
    epochs @ 0x10,
    reserved @ 0x18,
});

assert_layout!(ReqState, size = REQ_STATE_SIZE as usize, align = 8, {
    len @ 0x00,
    crc @ 0x40,
    flags @ 0xC0,
    reserved @ 0xE0,
});

assert_layout!(ActorShared, size = 0x140, align = 8, {
    kind @ 0x00,
    class @ 0x04,
    reserved @ 0x08,
    params @ 0x40,
    ckpt_epoch @ 0x80,
    ckpt_len @ 0x88,
    ckpt_side @ 0x8C,
    ckpt_reserved @ 0x90,
    active_epoch @ 0xC0,
    owner @ 0xC8,
    active_reserved0 @ 0xCC,
    active_reserved @ 0xD0,
    invocations @ 0x100,
    bytes_in @ 0x108,
    bytes_out @ 0x110,
    errors @ 0x118,
    dev_busy_ns @ 0x120,
    stats_reserved @ 0x128,
});

assert_layout!(EpochSlot, size = CACHE_LINE as usize, align = 8, {
    epoch @ 0x00,
    reserved @ 0x08,
});

assert_layout!(BlockMeta, size = 16, align = 8, {
    stored_len @ 0x00,
    flags @ 0x02,
    crc @ 0x04,
    generation @ 0x08,
});

assert_layout!(PmrArea, size = 16, align = 8, {
    offset @ 0x00,
    size @ 0x08,
});

assert_layout!(Superblock, size = 0x100, align = 8, {
    magic @ 0x00,
    version @ 0x04,
    generation @ 0x08,
    clean @ 0x10,
    block_size @ 0x14,
    pmr_size @ 0x18,
    ring_entries @ 0x20,
    nr_actors @ 0x24,
    nr_buffers @ 0x28,
    reserved0 @ 0x2C,
    nr_blocks @ 0x30,
    reserved1 @ 0x38,
    areas @ 0x40,
    reserved @ 0xD0,
});

// Relations between the constants.
const _: () = assert!(size_of::<Regs>() <= REGISTER_BLOCK_SIZE);
const _: () = assert!(1u64 << BLOCK_SHIFT == BLOCK_SIZE as u64);
const _: () = assert!(BLOCK_SIZE as u64 % PMR_AREA_ALIGN == 0);
const _: () = assert!(RING_ENTRIES_OFFSET % CACHE_LINE == 0);
const _: () = assert!(MAX_RING_ENTRIES.is_power_of_two() && MAX_RING_ENTRIES <= 1 << 16);
const _: () = assert!(MAX_REQ_BLOCKS <= u8::MAX as u32);
const _: () = assert!(MAX_ACTORS == 1 << u8::BITS);
const _: () = assert!(MAX_STAGES <= u8::BITS);
const _: () = assert!(PIPELINE_COUNT <= OPCODE_PIPELINE_MASK + 1);
const _: () = assert!((DIR_COUNT as u32) << OPCODE_DIR_SHIFT <= u8::MAX as u32 + 1);
const _: () = assert!(cap_pipeline(PIPELINE_COUNT - 1) < CAP_POLL);
const _: () = assert!(BLOCK_SIZE <= u16::MAX as u32);
const _: () = assert!(MAX_REQ_BLOCKS as u64 * BLOCK_SIZE as u64 <= u32::MAX as u64);
const _: () = assert!(
    size_of::<ActorShared>() as u64 + ACTOR_SHARED_DATA_SIZE + ACTOR_CONTROL_SIZE
        == ACTOR_SLOT_SIZE
);
const _: () = assert!(XTS_KEY_SIZE <= ACTOR_PARAMS_SIZE);
const _: () = assert!(size_of::<Superblock>() as u64 <= PMR_AREA_ALIGN);
