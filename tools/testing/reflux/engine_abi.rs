// SPDX-License-Identifier: GPL-2.0

//! The interface between the software CXL SSD's engine cores and its compression engine: a
//! fixed-function unit that checksums, compresses and encrypts written blocks and verifies,
//! decompresses and decrypts read ones, as a computational SSD's hardware compressor and inline
//! cipher do for its embedded cores.
//!
//! In the VM the unit is a process outside it (`tools/reflux-engine`). The cores' own work runs
//! on the guest's CPUs, which the host path shares: a device modelled that way can never be
//! faster than the host's spare capacity, and each byte it compresses is a byte the host cannot.
//! The engine process does the work on a CPU the guest does not have; the core still paces the
//! request to the modelled engine speed (and its throttling), so the device's speed stays a
//! parameter of the model, and what the unit saves the guest is only CPU time.
//!
//! # Where it lives
//!
//! A window of guest-physical memory next to the PMR (`engine_base=`, `engine_window=`), backed
//! by the same shared host file, which the engine process maps too. The window is device-internal
//! memory: the host driver never maps it. The engine reads the blocks' buffers in the PMR
//! (through its own mapping of the file) and writes only into the window.
//!
//! ```text
//! window offset 0        Header (the first page)
//! SLOT_BASE + i*STRIDE   Slot i: job and result, then OUTPUT_OFFSET: MAX_BLOCKS output blocks
//! ```
//!
//! Each engine core has its own slot, so slots need no lock.
//!
//! # Who writes what, and the ordering
//!
//! | field | writer | published by |
//! | --- | --- | --- |
//! | [`Header`] except `heartbeat` | device, at load (magic last, release); `pause` at any time | `magic` |
//! | [`Header::heartbeat`] | engine, about every millisecond while it serves | itself |
//! | [`Slot::seq`], `nr_blocks`, `ops`, `lba`, `blocks_in`, `key` | device (the slot's core) | `seq` (release) |
//! | [`Slot::done`], `status`, `bad_block`, `engine_ns`, `blocks_out`, the output area | engine | `done` (release) |
//!
//! A job is posted by writing it and storing `seq + 1` (release); it is finished when `done`
//! equals `seq` (acquire). `seq` and `done` are free-running and never reset, so a result that
//! comes late (after the core gave up on it) is never taken for the next job's. A core posts a
//! new job only once `done == seq`.
//!
//! # Little-endian, fixed widths
//!
//! As the device ABI (`drivers/reflux/abi.rs`): `#[repr(C)]`, no implicit padding, frozen by the
//! assertions at the bottom.

use core::mem::{offset_of, size_of};

/// [`Header::magic`]: `"RFXE"`.
pub const MAGIC: u32 = u32::from_le_bytes(*b"RFXE");
/// [`Header::version`] of this file.
pub const VERSION: u32 = 1;
/// Slots, one per engine core (the device has at most 8 cores).
pub const SLOTS: u32 = 8;
/// Most blocks of one job: a whole request.
pub const MAX_BLOCKS: usize = 32;
/// Bytes of a block.
pub const BLOCK: usize = 4096;
/// Offset of slot 0 in the window.
pub const SLOT_BASE: usize = 4096;
/// Offset of a slot's output blocks in the slot.
pub const OUTPUT_OFFSET: usize = 4096;
/// Bytes between two slots.
pub const SLOT_STRIDE: usize = OUTPUT_OFFSET + MAX_BLOCKS * BLOCK;
/// Bytes of the window the interface uses; `engine_window` must be at least this.
pub const WINDOW_BYTES: usize = SLOT_BASE + SLOTS as usize * SLOT_STRIDE;

/// No operation (the slot of an absent step).
pub const OP_NONE: u8 = 0;
/// crc32c of the block's live bytes (the write step of the crc32c stage).
pub const OP_CRC32C: u8 = 1;
/// LZ4 compression of a raw block, kept only if it shrinks (the write step of the lz4 stage).
pub const OP_LZ4_COMPRESS: u8 = 2;
/// AES-256-XTS encryption of a raw block with [`Slot::key`], data unit = the block's LBA (the
/// write step of the aes-xts stage).
pub const OP_XTS_ENCRYPT: u8 = 3;
/// Checks a block's crc32c if it has one, and clears the flag (the read step of crc32c).
pub const OP_CRC32C_VERIFY: u8 = 4;
/// Decompresses a compressed block to exactly one block (the read step of lz4).
pub const OP_LZ4_DECOMPRESS: u8 = 5;
/// Decrypts an encrypted block (the read step of aes-xts).
pub const OP_XTS_DECRYPT: u8 = 6;
/// Bytes of [`Slot::key`]: an XTS key pair (data key, then tweak key, AES-256 each).
pub const KEY_BYTES: usize = 64;
/// Most operations per job (one per pipeline stage).
pub const MAX_OPS: usize = 2;

/// [`Slot::status`]: every block done.
pub const STATUS_OK: u32 = 0;
/// [`Slot::status`]: block [`Slot::bad_block`] was not in a state its operation applies to (LZ4
/// of a block that is not raw): the request's state is broken, as `ExecError::BadState`.
pub const STATUS_BAD_STATE: u32 = 1;
/// [`Slot::status`]: block [`Slot::bad_block`] does not have its recorded checksum, or does not
/// decode: the core runs the request itself, which finds (and reports) the same.
pub const STATUS_DATA: u32 = 3;
/// [`Slot::status`]: the job itself is malformed (an unknown operation, too many blocks, a
/// buffer outside the PMR): nothing was done; the core runs the request itself.
pub const STATUS_INVALID: u32 = 2;

/// The window's first page.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Header {
    /// [`MAGIC`] once the device has laid the window out.
    pub magic: u32,
    /// [`VERSION`] of the device.
    pub version: u32,
    /// Slots in use ([`SLOTS`] at most).
    pub nr_slots: u32,
    /// [`SLOT_STRIDE`], for a check.
    pub slot_stride: u32,
    /// Bytes of the PMR, which starts at offset 0 of the shared file: the engine refuses a
    /// buffer outside it.
    pub pmr_size: u64,
    /// Incremented by the engine about every millisecond while it serves: a device that sees it
    /// stand still for long treats the engine as gone and runs jobs itself.
    pub heartbeat: u64,
    /// [`VERSION`] of the engine (0 until one attaches).
    pub engine_version: u32,
    /// Test hook, written by the device: while nonzero the engine neither serves nor beats its
    /// heartbeat, as an engine that hung would (the device's give-up paths).
    pub pause: u32,
    /// Reserved, zero.
    pub reserved: [u64; 3],
}

/// One block of a job, as the core gives it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockIn {
    /// Byte offset of the block's buffer in the PMR.
    pub offset: u64,
    /// Live bytes of the buffer (`1..=BLOCK`).
    pub len: u16,
    /// The block's `META_*` flags so far.
    pub flags: u16,
    /// Its crc32c so far (valid with `META_CHECKSUMMED`).
    pub crc: u32,
}

/// One block of a job, as the engine leaves it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockOut {
    /// The crc32c after the operations.
    pub crc: u32,
    /// Live bytes after the operations.
    pub len: u16,
    /// `META_*` flags after the operations.
    pub flags: u16,
    /// Live bytes after each operation (the next operation's input).
    pub len_after: [u16; MAX_OPS],
    /// 1 if the live bytes are the output area's block, 0 if they are the buffer's unchanged.
    pub in_output: u16,
    /// Reserved, zero.
    pub reserved: u16,
}

/// A slot's job and result (the output blocks follow at [`OUTPUT_OFFSET`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// Job number; a new job is posted by storing `done + 1` here (release).
    pub seq: u32,
    /// Blocks of the job (`1..=MAX_BLOCKS`).
    pub nr_blocks: u32,
    /// The operations, in order, [`OP_NONE`] after the last.
    pub ops: [u8; 8],
    /// The LBA of the first block (block `b`'s is `lba + b`): the XTS data unit.
    pub lba: u64,
    /// Reserved, zero.
    pub reserved0: [u64; 5],
    /// The number of the last job finished (release, after everything below).
    pub done: u32,
    /// `STATUS_*` of that job.
    pub status: u32,
    /// With [`STATUS_BAD_STATE`]: the block.
    pub bad_block: u32,
    /// Reserved, zero.
    pub reserved1: u32,
    /// Nanoseconds the engine spent on the job (its own clock), for statistics.
    pub engine_ns: u64,
    /// Reserved, zero.
    pub reserved2: [u64; 5],
    /// The blocks, as given.
    pub blocks_in: [BlockIn; MAX_BLOCKS],
    /// The blocks, as left.
    pub blocks_out: [BlockOut; MAX_BLOCKS],
    /// The key of [`OP_XTS_ENCRYPT`] (zero for jobs without it).
    pub key: [u8; KEY_BYTES],
}

/// Offset of slot `i` in the window.
pub const fn slot_offset(i: u32) -> usize {
    SLOT_BASE + i as usize * SLOT_STRIDE
}

/// Offset of output block `b` of slot `i` in the window.
pub const fn output_offset(i: u32, b: usize) -> usize {
    slot_offset(i) + OUTPUT_OFFSET + b * BLOCK
}

const _: () = {
    assert!(size_of::<Header>() == 64);
    assert!(size_of::<BlockIn>() == 16);
    assert!(size_of::<BlockOut>() == 16);
    assert!(offset_of!(Slot, done) == 64);
    assert!(offset_of!(Slot, blocks_in) == 128);
    assert!(offset_of!(Slot, blocks_out) == 128 + 16 * MAX_BLOCKS);
    assert!(offset_of!(Slot, lba) == 16);
    assert!(offset_of!(Slot, key) == 128 + 32 * MAX_BLOCKS);
    assert!(size_of::<Slot>() == 128 + 32 * MAX_BLOCKS + KEY_BYTES);
    assert!(size_of::<Slot>() <= OUTPUT_OFFSET);
    assert!(size_of::<Header>() <= SLOT_BASE);
    assert!(SLOT_STRIDE % 4096 == 0);
};
