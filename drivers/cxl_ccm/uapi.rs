// SPDX-License-Identifier: GPL-2.0

//! The user ABI of `cxl_ccm`: the Rust side of `include/uapi/linux/cxl_ccm.h`.
//!
//! A process opens the CCM character device, describes its rings with [`IOC_CONFIGURE`] (which
//! makes it a tenant of the device), maps the regions below, launches kernels with [`IOC_LAUNCH`],
//! polls the metadata tail in the mapped [`RingHeaders`] (or blocks in [`IOC_WAIT`]), reads the
//! [`MetadataRecord`]s and their payloads in any order, and hands the consumed records back with
//! [`IOC_RELEASE`], which returns the credit to the device.
//!
//! | mmap offset | region | protection |
//! | --- | --- | --- |
//! | [`MMAP_HEADERS`] | the [`RingHeaders`] page | read-only |
//! | [`MMAP_METADATA`] | the metadata ring, `metadata_slots` records | read-only |
//! | [`MMAP_PAYLOAD`] | the payload ring, `payload_slots * slot_size` bytes | read-only |
//! | [`MMAP_INPUT`] | the tenant's input buffer in device memory (`input_size` bytes) | read-write |
//!
//! The user-visible device structures ([`MetadataRecord`], [`RingHeader`], [`LaunchHeader`],
//! [`RingHeaders`], [`StreamXformArgs`]) and the constants they use are defined in `abi.rs` and
//! re-exported here. The C header spells every name with a `CXL_CCM_`/`cxl_ccm_` prefix;
//! `tools/ccm-abi` checks that both sides agree.
//!
//! # Conventions
//!
//! Every argument structure has fixed-width fields, explicit padding and reserved fields. The
//! driver rejects with `EINVAL` a nonzero `flags` bit it does not know and a nonzero reserved field
//! (so that they can be given a meaning later), and with `ENOTTY` a command whose encoded size
//! differs from the structure's (an older or newer ABI). Fields are marked *in* (read by the
//! driver) or *out* (written by the driver).
//!
//! Every command is `_IOWR`: for an argument smaller than 8 KiB the `_IOWR` encoding is the same
//! on every Linux architecture (the direction bits are `0b11 << 30` whether the architecture has a
//! 2-bit or a 3-bit direction field), so [`iowr`] computes the command numbers without arch
//! headers.

use core::mem::size_of;

pub use super::abi::{
    attention_weight, crc32c, crc32c_update, AttentionArgs, KnnArgs, LaunchHeader, MetadataRecord,
    PageRankArgs, RingHeader, RingHeaders, SlsArgs, SsbArgs, SsspArgs, StreamXformArgs,
    ATTENTION_MAX_HEADS, ATTENTION_MAX_HEAD_DIM, CAP_IN_ORDER, CAP_MODE_AXLE, CAP_MODE_AXLE_IRQ,
    CAP_MODE_BS, CAP_MODE_RP, CRC32C_POLY, DEFAULT_SLOT_SIZE, DEFAULT_STREAMING_FACTOR,
    KERNEL_DLRM_SLS, KERNEL_ID_LIMIT, KERNEL_KNN, KERNEL_LLM_ATTENTION, KERNEL_NOP,
    KERNEL_PAGERANK, KERNEL_SSB_Q1_1, KERNEL_SSB_Q1_2, KERNEL_SSSP, KERNEL_STREAM_XFORM,
    KNN_MAX_DIM, LAUNCH_SLOTS, MAX_ARG_SIZE, MAX_RING_SLOTS, MAX_SLOT_SIZE, MD_FLAG_ERROR,
    MD_FLAG_FINAL, METADATA_RECORD_SIZE, MIN_SLOT_SIZE, MODE_AXLE, MODE_AXLE_IRQ, MODE_BS, MODE_RP,
    ORDER_IN_ORDER, ORDER_OUT_OF_ORDER, SLS_MAX_DIM, STATUS_ABORTED, STATUS_BAD_ARGS,
    STATUS_BAD_COMMAND, STATUS_BAD_CONFIG, STATUS_BAD_DESCRIPTOR, STATUS_BAD_KERNEL,
    STATUS_BAD_PACKET, STATUS_BAD_RANGE, STATUS_DMA_FAULT, STATUS_OK, XFORM_OP_ADD, XFORM_OP_COPY,
    XFORM_OP_XOR,
};

/// Version of this user ABI, reported by [`IOC_INFO`] in [`Info::abi_version`].
pub const UAPI_VERSION: u32 = 1;

// ---------------------------------------------------------------------------------------------
// mmap offsets
// ---------------------------------------------------------------------------------------------

/// mmap offset of the [`RingHeaders`] page (read-only).
pub const MMAP_HEADERS: u64 = 0x0000_0000;
/// mmap offset of the metadata ring (read-only).
pub const MMAP_METADATA: u64 = 0x1000_0000;
/// mmap offset of the payload ring (read-only).
pub const MMAP_PAYLOAD: u64 = 0x2000_0000;
/// mmap offset of the tenant's input buffer in device memory (read-write).
pub const MMAP_INPUT: u64 = 0x3000_0000;
/// The largest region: each mmap offset above starts a window of this size, and a mapping must
/// lie within one window ([`IOC_CONFIGURE`] refuses larger rings or input buffers).
pub const MMAP_REGION_SIZE: u64 = 0x1000_0000;

// ---------------------------------------------------------------------------------------------
// Flags and limits
// ---------------------------------------------------------------------------------------------

/// [`Launch::flags`]: return only when the kernel has completed (the BS flow; implied in
/// [`MODE_BS`]).
pub const LAUNCH_SYNC: u32 = super::abi::LAUNCH_FLAG_SYNC as u32;

/// [`Release::flags`]: [`Release::metadata_head`] is valid: every metadata record below it has been
/// read and its slot may be reused.
pub const RELEASE_METADATA: u32 = 1 << 0;
/// [`Release::flags`]: publish the heads to the device now, whatever the publish policy.
pub const RELEASE_PUBLISH: u32 = 1 << 1;
/// Most entries one [`IOC_RELEASE`] takes.
pub const RELEASE_MAX: u32 = 4096;

/// [`Stats::flags`]: zero the counters after reading them.
pub const STATS_RESET: u32 = 1 << 0;

/// [`Configure::flags`]: schedule the tenant's launches first in, first out (a launch's chunks
/// before the next launch's). An out-of-order tenant is otherwise served round-robin over its
/// launches (Table III); in-order streaming is always first in, first out.
pub const CONFIGURE_FIFO: u32 = 1 << 0;

/// [`Wait::flags`]: the caller is the tenant's only releaser. `WAIT` fails with `EDEADLK`
/// instead of waiting when no record can arrive before a release: every released credit is
/// published, and the producer (the device in `MODE_AXLE`/`MODE_AXLE_IRQ`, the driver in
/// `MODE_RP`/`MODE_BS`) holds a result it has no room for under exactly those heads. A host
/// whose tasks all wait for results still to come is then deadlocked (AXLE, Figure 16 (h) at 12.5 % capacity).
pub const WAIT_FLAG_DEADLOCK: u32 = 1 << 0;

/// [`Wait::timeout_ns`]: wait without a time limit (until a signal).
pub const WAIT_FOREVER: u64 = u64::MAX;

// ---------------------------------------------------------------------------------------------
// Argument structures
// ---------------------------------------------------------------------------------------------

/// [`IOC_INFO`]: what the device and the driver support.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// In: 0.
    pub flags: u32,
    /// Out: [`UAPI_VERSION`].
    pub abi_version: u32,
    /// Out: the device's ABI version (`abi::ABI_VERSION` encoding).
    pub device_version: u32,
    /// Out: tenants the device serves.
    pub max_tenants: u32,
    /// Out: `CAP_*` bits.
    pub caps: u64,
    /// Out: bit `k` set if kernel id `k` is implemented.
    pub kernels: u64,
    /// Out: device memory bytes.
    pub mem_size: u64,
    /// Out: smallest payload slot size.
    pub min_slot_size: u32,
    /// Out: largest payload slot size.
    pub max_slot_size: u32,
    /// Out: largest ring capacity, in slots.
    pub max_ring_slots: u32,
    /// Out: launch slots per tenant: the most launches outstanding at once.
    pub launch_slots: u32,
    /// Out: [`RELEASE_MAX`].
    pub max_release: u32,
    /// Out: 0.
    pub reserved0: u32,
    /// Out: 0.
    pub reserved: [u64; 4],
}

/// [`IOC_CONFIGURE`]: become a tenant with the given rings and mode. Once per open file (`EBUSY`
/// afterwards).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Configure {
    /// In: 0 or [`CONFIGURE_FIFO`].
    pub flags: u32,
    /// In: `MODE_*`.
    pub mode: u32,
    /// In: payload slot size in bytes (the DMA slot size), a power of two in
    /// `[min_slot_size, max_slot_size]`; 0 means [`DEFAULT_SLOT_SIZE`].
    pub slot_size: u32,
    /// In: metadata ring capacity in records, a power of two.
    pub metadata_slots: u32,
    /// In: payload ring capacity in slots, a power of two.
    pub payload_slots: u32,
    /// In: streaming factor in bytes, a multiple of the slot size fitting the payload ring; 0 means
    /// one slot.
    pub streaming_factor: u32,
    /// In: `ORDER_*`.
    pub streaming_order: u32,
    /// In: initial value of every counter (0 normally; near `u32::MAX` to test the wrap).
    pub index_base: u32,
    /// In: interval at which the driver polls the metadata tail for [`IOC_WAIT`] (AXLE) or the
    /// mailbox (RP), in nanoseconds; 0 means busy polling.
    pub poll_interval_ns: u64,
    /// In: bytes of the input buffer to allocate in device memory (page multiple, at most
    /// [`MMAP_REGION_SIZE`]).
    pub input_size: u64,
    /// Out: the tenant number.
    pub tenant: u32,
    /// In: 0.
    pub reserved0: u32,
    /// Out: mmap length of [`MMAP_HEADERS`].
    pub headers_size: u64,
    /// Out: mmap length of [`MMAP_METADATA`].
    pub metadata_ring_size: u64,
    /// Out: mmap length of [`MMAP_PAYLOAD`].
    pub payload_ring_size: u64,
    /// In: 0.
    pub reserved: [u64; 4],
}

/// [`IOC_LAUNCH`]: launch a kernel on part of the input buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// In: `KERNEL_*`.
    pub kernel_id: u32,
    /// In: `LAUNCH_*` flags.
    pub flags: u32,
    /// In: offset of the input in the input buffer.
    pub input_offset: u64,
    /// In: input bytes (at most `u32::MAX`).
    pub input_size: u64,
    /// In: bytes of `args` used, at most [`MAX_ARG_SIZE`].
    pub arg_size: u32,
    /// Out: the launch tag; every [`MetadataRecord`] of this launch carries it.
    pub tag: u32,
    /// In: the kernel's argument block (e.g. [`StreamXformArgs`]), little-endian.
    pub args: [u8; MAX_ARG_SIZE as usize],
    /// In: 0.
    pub reserved: [u64; 2],
}

/// One entry of [`IOC_RELEASE`]: the payload of one consumed record, copied from its
/// [`MetadataRecord`] (or, for a run of consecutive records, their first index and total slot
/// bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReleaseEntry {
    /// [`MetadataRecord::payload_index`].
    pub payload_index: u32,
    /// [`MetadataRecord::length`]: the entry releases `ceil(length / slot_size)` slots.
    pub length: u32,
}

/// [`IOC_RELEASE`]: return consumed records; the driver advances the gap-aware payload head and
/// the metadata head, and stores them into the device when its publish policy (or
/// [`RELEASE_PUBLISH`]) says so.
///
/// Entries are processed in order; on an error (`EINVAL`: a slot not received, or already
/// released) `processed` says how many were applied before the failing one.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Release {
    /// In: user pointer to `count` [`ReleaseEntry`]s.
    pub entries: u64,
    /// In: number of entries, at most [`RELEASE_MAX`]; 0 to release only metadata or publish.
    pub count: u32,
    /// In: `RELEASE_*`.
    pub flags: u32,
    /// In, with [`RELEASE_METADATA`]: the caller's metadata head (free-running); it only moves
    /// forward and never past the metadata tail.
    pub metadata_head: u32,
    /// Out: entries applied.
    pub processed: u32,
    /// Out: the metadata head last published to the device.
    pub metadata_head_published: u32,
    /// Out: the payload head last published to the device.
    pub payload_head_published: u32,
    /// In: 0.
    pub reserved: [u64; 2],
}

/// [`IOC_STATS`]: the tenant's counters since configure (or the last [`STATS_RESET`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// In: `STATS_*`.
    pub flags: u32,
    /// Out: the tenant number.
    pub tenant: u32,
    /// Out: kernels launched.
    pub launched: u64,
    /// Out: launches whose final record (or sync completion) was seen.
    pub launches_completed: u64,
    /// Out: metadata records received.
    pub records: u64,
    /// Out: payload bytes received.
    pub payload_bytes: u64,
    /// Out: times a launch waited for a free launch slot (host-side back-pressure).
    pub backpressure_waits: u64,
    /// Out: nanoseconds spent in those waits.
    pub backpressure_ns: u64,
    /// Out: batches the device held back for lack of credit (device-side back-pressure).
    pub credit_stalls: u64,
    /// Out: batches the device back-streamed.
    pub dma_batches: u64,
    /// Out: polls of the metadata tail (AXLE) or of the mailbox (RP) or of the sync completion (BS).
    pub polls: u64,
    /// Out: polls that found nothing new.
    pub empty_polls: u64,
    /// Out: head stores into the device (flow-control messages).
    pub credits_published: u64,
    /// Out: interrupts handled (AXLE-IRQ).
    pub interrupts: u64,
    /// Out: errors: records with [`MD_FLAG_ERROR`], failed launches (not those a signal
    /// interrupted), rejected releases, device errors.
    pub errors: u64,
    /// Out: nanoseconds the device had work for this tenant (the rest of a run is CCM idle
    /// time); 0 where the device does not report it.
    pub ccm_busy_ns: u64,
    /// Out: nanoseconds the device held results back for lack of credit.
    pub credit_wait_ns: u64,
    /// Out: nanoseconds host cores spent stalled on the link for this tenant: every CXL.mem and
    /// CXL.io access of the driver (launch stores, credit stores, remote polls, result loads) and
    /// the BS store's wait for its answer. User space adds its own local polling.
    pub host_stall_ns: u64,
    /// Out: host stores into device memory the device consumed for this tenant before the host
    /// made them visible (a driver bug; only a software device that models HDM-H sees it, and
    /// `STATS_RESET` does not reset it).
    pub unpublished: u64,
    /// Out (since ABI 1.5): nanoseconds by which a software device that models its compute
    /// finished this tenant's chunks later than its model, summed over the late chunks (0 on
    /// hardware). Nonzero means the run measured the emulator, not the model.
    pub model_deficit_ns: u64,
    /// Out (since ABI 1.5): the chunks `model_deficit_ns` counts.
    pub model_late_chunks: u64,
}

/// [`IOC_WAIT`]: block until at least `min_records` records are ready past the caller's metadata
/// head. Returns 0, or `EAGAIN` (`timeout_ns` 0 and not ready) or `ETIMEDOUT` after `timeout_ns`
/// (the out fields are written in these three cases), `EINTR`, `EIO` (the device stopped the
/// tenant or broke the ring protocol) or `ENODEV`. The head must lie between the released
/// metadata head and the tail when the call starts (else `EINVAL`); released past meanwhile, it
/// still ends the wait once `min_records` lie past it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    /// In: records to wait for, at least 1.
    pub min_records: u32,
    /// In: the caller's metadata head.
    pub metadata_head: u32,
    /// In: time limit in nanoseconds; 0 checks once without blocking; [`WAIT_FOREVER`].
    pub timeout_ns: u64,
    /// In: 0 or [`WAIT_FLAG_DEADLOCK`].
    pub flags: u32,
    /// Out: records ready: `metadata_tail - metadata_head`.
    pub ready: u32,
    /// Out: the metadata tail seen.
    pub metadata_tail: u32,
    /// In: 0.
    pub reserved0: u32,
    /// In: 0.
    pub reserved: [u64; 2],
}

// ---------------------------------------------------------------------------------------------
// ioctl numbers
// ---------------------------------------------------------------------------------------------

/// The ioctl type of `cxl_ccm`. 0xCF is shared with `fs/smb/client/cifs_ioctl.h`, which uses
/// numbers 3 to 12; `cxl_ccm` uses 0x80 and up.
pub const IOC_MAGIC: u32 = 0xCF;

/// The command number of [`IOC_INFO`].
pub const IOC_NR_INFO: u32 = 0x80;
/// The command number of [`IOC_CONFIGURE`].
pub const IOC_NR_CONFIGURE: u32 = 0x81;
/// The command number of [`IOC_LAUNCH`].
pub const IOC_NR_LAUNCH: u32 = 0x82;
/// The command number of [`IOC_RELEASE`].
pub const IOC_NR_RELEASE: u32 = 0x83;
/// The command number of [`IOC_STATS`].
pub const IOC_NR_STATS: u32 = 0x84;
/// The command number of [`IOC_WAIT`].
pub const IOC_NR_WAIT: u32 = 0x85;

/// `_IOWR(IOC_MAGIC, nr, T)` for an argument of `size` bytes (`size < 8192`).
pub const fn iowr(nr: u32, size: usize) -> u32 {
    assert!(nr < 256 && size < 1 << 13);
    // (_IOC_READ | _IOC_WRITE) << _IOC_DIRSHIFT, on both the 2-bit and 3-bit direction layouts.
    const DIR_READ_WRITE: u32 = 0xC000_0000;
    DIR_READ_WRITE | (size as u32) << 16 | IOC_MAGIC << 8 | nr
}

/// `CXL_CCM_IOC_INFO`: fill an [`Info`].
pub const IOC_INFO: u32 = iowr(IOC_NR_INFO, size_of::<Info>());
/// `CXL_CCM_IOC_CONFIGURE`: become a tenant ([`Configure`]).
pub const IOC_CONFIGURE: u32 = iowr(IOC_NR_CONFIGURE, size_of::<Configure>());
/// `CXL_CCM_IOC_LAUNCH`: launch a kernel ([`Launch`]).
pub const IOC_LAUNCH: u32 = iowr(IOC_NR_LAUNCH, size_of::<Launch>());
/// `CXL_CCM_IOC_RELEASE`: return consumed records ([`Release`]).
pub const IOC_RELEASE: u32 = iowr(IOC_NR_RELEASE, size_of::<Release>());
/// `CXL_CCM_IOC_STATS`: read the counters ([`Stats`]).
pub const IOC_STATS: u32 = iowr(IOC_NR_STATS, size_of::<Stats>());
/// `CXL_CCM_IOC_WAIT`: wait for ready records ([`Wait`]).
pub const IOC_WAIT: u32 = iowr(IOC_NR_WAIT, size_of::<Wait>());

// ---------------------------------------------------------------------------------------------
// Layout assertions
// ---------------------------------------------------------------------------------------------

// The same checks as the device ABI's, with the same macro.
use super::abi::assert_layout;

assert_layout!(Info, size = 0x60, align = 8, {
    flags @ 0x00,
    abi_version @ 0x04,
    device_version @ 0x08,
    max_tenants @ 0x0C,
    caps @ 0x10,
    kernels @ 0x18,
    mem_size @ 0x20,
    min_slot_size @ 0x28,
    max_slot_size @ 0x2C,
    max_ring_slots @ 0x30,
    launch_slots @ 0x34,
    max_release @ 0x38,
    reserved0 @ 0x3C,
    reserved @ 0x40,
});

assert_layout!(Configure, size = 0x70, align = 8, {
    flags @ 0x00,
    mode @ 0x04,
    slot_size @ 0x08,
    metadata_slots @ 0x0C,
    payload_slots @ 0x10,
    streaming_factor @ 0x14,
    streaming_order @ 0x18,
    index_base @ 0x1C,
    poll_interval_ns @ 0x20,
    input_size @ 0x28,
    tenant @ 0x30,
    reserved0 @ 0x34,
    headers_size @ 0x38,
    metadata_ring_size @ 0x40,
    payload_ring_size @ 0x48,
    reserved @ 0x50,
});

assert_layout!(Launch, size = 0x50, align = 8, {
    kernel_id @ 0x00,
    flags @ 0x04,
    input_offset @ 0x08,
    input_size @ 0x10,
    arg_size @ 0x18,
    tag @ 0x1C,
    args @ 0x20,
    reserved @ 0x40,
});

assert_layout!(ReleaseEntry, size = 8, align = 4, {
    payload_index @ 0x00,
    length @ 0x04,
});

assert_layout!(Release, size = 0x30, align = 8, {
    entries @ 0x00,
    count @ 0x08,
    flags @ 0x0C,
    metadata_head @ 0x10,
    processed @ 0x14,
    metadata_head_published @ 0x18,
    payload_head_published @ 0x1C,
    reserved @ 0x20,
});

assert_layout!(Stats, size = 0xA0, align = 8, {
    flags @ 0x00,
    tenant @ 0x04,
    launched @ 0x08,
    launches_completed @ 0x10,
    records @ 0x18,
    payload_bytes @ 0x20,
    backpressure_waits @ 0x28,
    backpressure_ns @ 0x30,
    credit_stalls @ 0x38,
    dma_batches @ 0x40,
    polls @ 0x48,
    empty_polls @ 0x50,
    credits_published @ 0x58,
    interrupts @ 0x60,
    errors @ 0x68,
    ccm_busy_ns @ 0x70,
    credit_wait_ns @ 0x78,
    host_stall_ns @ 0x80,
    unpublished @ 0x88,
    model_deficit_ns @ 0x90,
    model_late_chunks @ 0x98,
});

assert_layout!(Wait, size = 0x30, align = 8, {
    min_records @ 0x00,
    metadata_head @ 0x04,
    timeout_ns @ 0x08,
    flags @ 0x10,
    ready @ 0x14,
    metadata_tail @ 0x18,
    reserved0 @ 0x1C,
    reserved @ 0x20,
});

// The command numbers, frozen (x86-64 values; `_IOWR` is arch-independent below 8 KiB).
const _: () = assert!(IOC_INFO == 0xC060_CF80);
const _: () = assert!(IOC_CONFIGURE == 0xC070_CF81);
const _: () = assert!(IOC_LAUNCH == 0xC050_CF82);
const _: () = assert!(IOC_RELEASE == 0xC030_CF83);
const _: () = assert!(IOC_STATS == 0xC0A0_CF84);
const _: () = assert!(IOC_WAIT == 0xC030_CF85);

const _: () = assert!(MMAP_METADATA - MMAP_HEADERS == MMAP_REGION_SIZE);
const _: () = assert!(MMAP_PAYLOAD - MMAP_METADATA == MMAP_REGION_SIZE);
const _: () = assert!(MMAP_INPUT - MMAP_PAYLOAD == MMAP_REGION_SIZE);
const _: () = assert!(RELEASE_MAX as usize * size_of::<ReleaseEntry>() <= 32 * 1024);
