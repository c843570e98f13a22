// SPDX-License-Identifier: GPL-2.0

//! The data store behind the PMR write cache: loading a read's blocks into its buffers, and
//! committing a write's blocks from them.
//!
//! A block's bytes live in its data-store slot and its [`BlockMeta`] entry says how many there
//! are and what was done to them. The entry's first 8 bytes (`stored_len`, `flags`, `crc`) are
//! stored as one aligned `u64` with release, after the slot's bytes and the generation, and
//! loaded with acquire before the slot is read: a core never sees an entry torn between two
//! writes, nor an entry describing bytes not yet stored.
//!
//! A commit overwrites the slot in place, so the cores take the store's [`BlockLock`] around
//! each block's copy and entry, in a load as in a commit: a read racing a write of the same block
//! gets the old or the new block whole, and two writes of one block commit one after the other.
//! The device's atomic write unit is therefore one block (NVMe's AWUN/AWUPF of one logical
//! block); a request of several blocks is not atomic as a whole. The PMR is persistent
//! (power-loss protected), so a committed write survives a power cut; a write *being* committed
//! when the power goes may leave its block torn (new bytes under the old entry, or a mix), which
//! a checksummed block reports as `EIO` on the next read. The host sees the write complete only
//! after the commit.

use core::sync::atomic::Ordering;

use kernel::{prelude::*, shared_mem::SharedMem, sync::SpinLock};

use crate::abi::{
    BlockMeta, PmrLayout, ReqState, BLOCK_SIZE, META_CHECKSUMMED, META_COMPRESSED, META_ENCRYPTED,
};
use crate::actor::exec::{self, ExecError, Scratch, StageObserver, BLOB_FLAGS, BLOCK};
use crate::proto::block_meta::{self, BlockInfo, BlockMetaError, BlockState};
use crate::proto::pipeline::Stage;
use crate::proto::request::Request;

/// Why a load or a commit failed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StoreError {
    /// `EIO`: block `block` (at `lba`) has a metadata entry that does not decode.
    Meta {
        block: u8,
        lba: u64,
        err: BlockMetaError,
    },
    /// Block `block` (at `lba`) was stored with a transform the read's pipeline lacks, and
    /// undoing it at load failed (`err` says how, and gives the status).
    Decode { block: u8, lba: u64, err: ExecError },
    /// `EINVAL`: block `block`'s state, as the write's stages left it, cannot be committed
    /// with this pipeline.
    BadState { block: u8 },
    /// `EIO`: a PMR offset outside the mapping (a layout bug; requests are validated).
    Pmr,
}

impl StoreError {
    /// The completion status.
    pub(crate) fn status(&self) -> i32 {
        match self {
            Self::Decode { err, .. } => err.status(),
            Self::BadState { .. } => crate::abi::STATUS_EINVAL,
            Self::Meta { .. } | Self::Pmr => crate::abi::STATUS_EIO,
        }
    }
}

impl core::fmt::Display for StoreError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Meta { block, lba, err } => {
                write!(f, "block {block} (LBA {lba}): corrupt metadata: {err}")
            }
            Self::Decode { block, lba, err } => {
                write!(f, "block {block} (LBA {lba}), decoded at load: {err}")
            }
            Self::BadState { block } => {
                write!(f, "block {block}: state not committable with this pipeline")
            }
            Self::Pmr => f.write_str("PMR offset outside the mapping"),
        }
    }
}

/// Held by a core while it copies one block's bytes and entry to or from the data store (a
/// controller's per-LBA serialisation in its simplest form: one lock, held for one block).
pub(crate) type BlockLock = SpinLock<()>;

fn at(offset: Option<u64>) -> Result<usize, StoreError> {
    offset
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(StoreError::Pmr)
}

/// The first word of a metadata entry: `stored_len`, `flags`, `crc`, little-endian.
const fn meta_word(m: &BlockMeta) -> u64 {
    m.stored_len as u64 | (m.flags as u64) << 16 | (m.crc as u64) << 32
}

/// Reads block `lba`'s metadata entry at `meta`.
fn read_meta(pmr: &impl SharedMem, meta: usize) -> Result<BlockMeta, StoreError> {
    // Acquire: the slot's bytes, stored before the entry, are visible.
    let w = pmr
        .atomic_u64(meta)
        .map_err(|_| StoreError::Pmr)?
        .load(Ordering::Acquire);
    let generation = pmr
        .atomic_u64(meta + 8)
        .map_err(|_| StoreError::Pmr)?
        .load(Ordering::Relaxed);
    Ok(BlockMeta {
        stored_len: w as u16,
        flags: (w >> 16) as u16,
        crc: (w >> 32) as u32,
        generation,
    })
}

fn read_blob(pmr: &impl SharedMem, blob: usize) -> Result<ReqState, StoreError> {
    let mut image = [0u8; core::mem::size_of::<ReqState>()];
    pmr.read_bytes(blob, &mut image)
        .map_err(|_| StoreError::Pmr)?;
    Ok(ReqState::from_bytes(&image))
}

/// A read's first visit: copies each block's stored bytes from the data store into its buffer
/// and its metadata into the request's blob. A block never written loads as a block of zeros; a
/// block stored with a transform the read's pipeline lacks is decoded on the way
/// ([`exec::undo_unrouted`]). `scratch` is the core's; `obs` paces that decoding.
pub(crate) fn load(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    blocks: &BlockLock,
    req: &Request,
    scratch: &mut Scratch,
    obs: &mut impl StageObserver,
) -> Result<(), StoreError> {
    let desc = req.descriptor();
    let route = req.route();
    let blob_at = at(layout.req_state(desc.state))?;
    let mut blob = read_blob(pmr, blob_at)?;
    for b in 0..desc.nr_blocks {
        let i = usize::from(b);
        let lba = desc.lba.wrapping_add(u64::from(b));
        let buf_at = at(layout.buffer(desc.buf_index.wrapping_add(u32::from(b))))?;
        let (mut len, mut crc, mut flags) =
            load_block(pmr, layout, blocks, b, lba, scratch.block())?;
        exec::undo_unrouted(
            pmr,
            layout,
            &route,
            b,
            lba,
            scratch,
            (&mut len, &mut crc, &mut flags),
            obs,
        )
        .map_err(|err| StoreError::Decode { block: b, lba, err })?;
        let bytes = scratch
            .block()
            .get(..usize::from(len))
            .ok_or(StoreError::Pmr)?;
        pmr.write_bytes(buf_at, bytes)
            .map_err(|_| StoreError::Pmr)?;
        if let (Some(l), Some(c), Some(f)) = (
            blob.len.get_mut(i),
            blob.crc.get_mut(i),
            blob.flags.get_mut(i),
        ) {
            *l = len;
            *c = crc;
            // `BLOB_FLAGS` fit in the blob's byte.
            *f = flags as u8;
        }
    }
    pmr.write_bytes(blob_at, &blob.to_bytes())
        .map_err(|_| StoreError::Pmr)
}

/// Copies block `lba`'s stored bytes into `block` (zeros if it was never written) and returns
/// its length, checksum and blob flags, all of one commit.
fn load_block(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    blocks: &BlockLock,
    b: u8,
    lba: u64,
    block: &mut [u8; BLOCK],
) -> Result<(u16, u32, u16), StoreError> {
    let meta_at = at(layout.block_meta(lba))?;
    let data_at = at(layout.block_data(lba))?;
    let _guard = blocks.lock();
    let raw = read_meta(pmr, meta_at)?;
    match block_meta::decode(&raw) {
        Err(err) => Err(StoreError::Meta { block: b, lba, err }),
        Ok(BlockState::Unwritten { .. }) => {
            block.fill(0);
            Ok((BLOCK_SIZE as u16, 0, 0))
        }
        Ok(BlockState::Written(info)) => {
            let bytes = block
                .get_mut(..usize::from(info.stored_len()))
                .ok_or(StoreError::Pmr)?;
            pmr.read_bytes(data_at, bytes)
                .map_err(|_| StoreError::Pmr)?;
            Ok((
                info.stored_len(),
                info.crc().unwrap_or(0),
                info.flags() & BLOB_FLAGS,
            ))
        }
    }
}

/// What the write's pipeline must have done to every block: the `META_*` bits that must be set
/// and those that may be.
fn committable(req: &Request) -> (u16, u16) {
    let stages = req.route().stages();
    let (mut must, mut may) = (0, 0);
    for i in 0..stages.len() {
        match stages.get(i) {
            Some(Stage::Crc32c) => must |= META_CHECKSUMMED,
            Some(Stage::AesXts) => must |= META_ENCRYPTED,
            // An incompressible block is stored raw.
            Some(Stage::Lz4) => may |= META_COMPRESSED,
            None => {}
        }
    }
    (must, may)
}

/// A write's last visit: stores each block's bytes in its data-store slot and then its metadata
/// entry, with the next generation. Returns the bytes stored.
///
/// Every block's state is checked before anything is stored (the host may have run some of the
/// stages), so a refused write (`EINVAL`) changes nothing. `buf` is the caller's scratch block.
pub(crate) fn commit(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    blocks: &BlockLock,
    req: &Request,
    buf: &mut [u8; BLOCK],
) -> Result<u64, StoreError> {
    let desc = req.descriptor();
    let blob = read_blob(pmr, at(layout.req_state(desc.state))?)?;
    let (must, may) = committable(req);
    let mut infos = [None; crate::abi::MAX_REQ_BLOCKS as usize];
    for (b, slot) in (0..desc.nr_blocks).zip(infos.iter_mut()) {
        let i = usize::from(b);
        let bad = StoreError::BadState { block: b };
        let (Some(&len), Some(&crc), Some(&flags)) =
            (blob.len.get(i), blob.crc.get(i), blob.flags.get(i))
        else {
            return Err(bad);
        };
        let flags = u16::from(flags);
        if flags & !(must | may) != 0 || flags & must != must {
            return Err(bad);
        }
        let checksum = (flags & META_CHECKSUMMED != 0).then_some(crc);
        let compressed = flags & META_COMPRESSED != 0;
        let encrypted = flags & META_ENCRYPTED != 0;
        let info = BlockInfo::new(len, compressed, encrypted, checksum, 0).map_err(|_| bad)?;
        *slot = Some(info);
    }
    let mut stored = 0u64;
    for (b, info) in (0..desc.nr_blocks).zip(infos.iter()) {
        let Some(info) = info else {
            return Err(StoreError::BadState { block: b });
        };
        let lba = desc.lba.wrapping_add(u64::from(b));
        let buf_at = at(layout.buffer(desc.buf_index.wrapping_add(u32::from(b))))?;
        let meta_at = at(layout.block_meta(lba))?;
        let data_at = at(layout.block_data(lba))?;
        let bytes = buf
            .get_mut(..usize::from(info.stored_len()))
            .ok_or(StoreError::Pmr)?;
        pmr.read_bytes(buf_at, bytes).map_err(|_| StoreError::Pmr)?;
        let _guard = blocks.lock();
        pmr.write_bytes(data_at, bytes)
            .map_err(|_| StoreError::Pmr)?;
        // The generation continues the entry's, even a corrupt one's.
        let old = read_meta(pmr, meta_at)?;
        let generation = block_meta::next_generation(old.generation);
        let entry = BlockInfo::new(
            info.stored_len(),
            info.compressed(),
            info.encrypted(),
            info.crc(),
            generation,
        )
        .map_err(|_| StoreError::BadState { block: b })?
        .encode();
        let gen_word = pmr.atomic_u64(meta_at + 8).map_err(|_| StoreError::Pmr)?;
        let meta_word_ref = pmr.atomic_u64(meta_at).map_err(|_| StoreError::Pmr)?;
        gen_word.store(entry.generation, Ordering::Relaxed);
        // The write barrier of the ABI: the slot's bytes (and the generation) before the entry
        // that describes them.
        meta_word_ref.store(meta_word(&entry), Ordering::Release);
        stored += u64::from(info.stored_len());
    }
    Ok(stored)
}
