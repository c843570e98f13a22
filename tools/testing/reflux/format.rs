// SPDX-License-Identifier: GPL-2.0

//! Finding, or writing, the PMR's superblock at load time (the ABI's lifecycle, step 1).
//!
//! A PMR whose superblock validates is kept as it is, whatever the module parameters say: it
//! holds data written before a power cut or a module reload, and the data matters more than the
//! parameter (the difference is logged, and `format=1` reformats on purpose). Anything else (a
//! fresh, zeroed backing file, or a superblock that does not validate) is formatted.

use core::mem::size_of;
use core::sync::atomic::Ordering;

use kernel::{memremap::MemRemap, prelude::*, shared_mem::SharedMem};

use crate::abi::{
    self, LayoutError, LayoutParams, PmrLayout, RingProducer, Superblock, SuperblockError,
    AREA_ACTORS, AREA_BLOCK_META, AREA_CQ, AREA_EPOCHS, AREA_REQ_STATE, AREA_SQ, CQ_ENTRY_SIZE,
    PMR_AREA_ALIGN, SQ_ENTRY_SIZE,
};
use crate::actor;
use crate::proto::checkpoint::ActorControl;

/// Bytes of the superblock's wire image.
const SB_BYTES: usize = size_of::<Superblock>();

/// Actor slots of a freshly formatted PMR: the default actors (ids 1..=3) and room for actors a
/// host registers (per-tenant keys, say).
pub(crate) const NR_ACTORS: u32 = 16;
const _: () = assert!(actor::DEFAULT_ACTOR_SLOTS <= NR_ACTORS && NR_ACTORS <= abi::MAX_ACTORS);

/// The layout the module parameters ask for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    /// Entries of each ring.
    pub(crate) ring_entries: u32,
    /// Data buffers.
    pub(crate) nr_buffers: u32,
    /// Logical blocks, or 0 for as many as fit.
    pub(crate) nr_blocks: u64,
}

/// The layout `want` gives a PMR of `pmr_size` bytes, or `EINVAL` with a log line naming the
/// parameter that does not fit.
pub(crate) fn wanted_layout(want: Wanted, pmr_size: u64) -> Result<PmrLayout> {
    let mut params = LayoutParams {
        pmr_size,
        ring_entries: want.ring_entries,
        nr_buffers: want.nr_buffers,
        nr_actors: NR_ACTORS,
        nr_blocks: want.nr_blocks,
    };
    let too_small = |e: LayoutError| {
        pr_err!(
            "pmr_window: {} bytes of PMR cannot hold {} ring entries and {} buffers: {e}\n",
            pmr_size,
            want.ring_entries,
            want.nr_buffers
        );
        EINVAL
    };
    if params.nr_blocks == 0 {
        params.nr_blocks = PmrLayout::max_blocks(params, pmr_size).map_err(too_small)?;
    }
    PmrLayout::compute(params).map_err(|e| {
        let fit = PmrLayout::max_blocks(params, pmr_size).unwrap_or(0);
        pr_err!(
            "capacity_mib: {} MiB does not fit in the PMR ({e}); at most {} MiB does\n",
            want.nr_blocks >> (20 - abi::BLOCK_SHIFT),
            fit >> (20 - abi::BLOCK_SHIFT)
        );
        EINVAL
    })
}

/// Reads the superblock.
fn read_superblock(pmr: &MemRemap) -> Result<Superblock> {
    let mut image = [0u8; SB_BYTES];
    pmr.read_bytes(0, &mut image)?;
    Ok(Superblock::from_bytes(&image))
}

/// Whether the PMR still has a valid superblock describing `layout` (the enable handshake's
/// re-validation: while the device was not ready the host owned the PMR and rewrote the
/// superblock's mount fields).
pub(crate) fn still_valid(pmr: &MemRemap, pmr_size: u64, layout: &PmrLayout) -> bool {
    match read_superblock(pmr).map(|sb| sb.validate(pmr_size)) {
        Ok(Ok(stored)) => stored == *layout,
        _ => false,
    }
}

/// Keeps the PMR's valid superblock, or formats the PMR with `want` (always with `force`).
/// Returns the layout in effect.
pub(crate) fn mount_or_format(
    pmr: &MemRemap,
    pmr_size: u64,
    want: &PmrLayout,
    device_id: u32,
    force: bool,
) -> Result<PmrLayout> {
    let sb = read_superblock(pmr)?;
    match sb.validate(pmr_size) {
        Ok(layout) if !force => {
            let (have, asked) = (layout.params(), want.params());
            pr_info!(
                "PMR formatted (generation {}, {}): {} blocks, {} ring entries, {} buffers; keeping it\n",
                sb.generation,
                if sb.clean == 1 { "clean" } else { "not clean: the host did not unmount it" },
                have.nr_blocks,
                have.ring_entries,
                have.nr_buffers
            );
            if have != asked {
                pr_warn!(
                    "the module parameters ask for {} blocks, {} ring entries, {} buffers; the stored layout wins (load with format=1 to reformat, losing the data)\n",
                    asked.nr_blocks,
                    asked.ring_entries,
                    asked.nr_buffers
                );
            }
            return Ok(layout);
        }
        Ok(_) => pr_warn!("format=1: reformatting the PMR; its data is lost\n"),
        Err(SuperblockError::BadMagic) => pr_info!("unformatted PMR: formatting it\n"),
        Err(e) => {
            pr_warn!("the PMR's superblock is invalid ({e}): reformatting; its data is lost\n")
        }
    }
    format(pmr, want, device_id)?;
    let p = want.params();
    pr_info!(
        "formatted the PMR: {} blocks ({} MiB), {} ring entries, {} buffers, {} actor slots\n",
        p.nr_blocks,
        p.nr_blocks >> (20 - abi::BLOCK_SHIFT),
        p.ring_entries,
        p.nr_buffers,
        p.nr_actors
    );
    Ok(*want)
}

/// Zeroes `size` bytes at `offset`.
fn zero(pmr: &MemRemap, offset: u64, size: u64) -> Result {
    static ZEROES: [u8; PMR_AREA_ALIGN as usize] = [0; PMR_AREA_ALIGN as usize];
    let start = usize::try_from(offset).map_err(|_| EINVAL)?;
    let size = usize::try_from(size).map_err(|_| EINVAL)?;
    let mut done = 0;
    while done < size {
        let n = ZEROES.len().min(size - done);
        pmr.write_bytes(start + done, &ZEROES[..n])?;
        done += n;
        if done % (1 << 20) == 0 {
            // A large metadata table takes a while under emulation.
            kernel::kthread::cond_resched();
        }
    }
    Ok(())
}

/// Formats the PMR with `layout`: invalidates the old superblock, zeroes the metadata areas,
/// writes the ring geometry and the default actors, and writes the superblock last, its magic
/// with release, so that a power cut in the middle leaves an unformatted PMR, not a valid
/// superblock over half-written metadata.
///
/// The data buffers and the data store are not zeroed: a block whose metadata entry is zero
/// reads as zeros whatever its slot holds.
fn format(pmr: &MemRemap, layout: &PmrLayout, device_id: u32) -> Result {
    // Invalidate first: from here until the magic is stored again the PMR is unformatted.
    pmr.atomic_u32(0)?.store(0, Ordering::Release);
    for area in [
        AREA_SQ,
        AREA_CQ,
        AREA_REQ_STATE,
        AREA_ACTORS,
        AREA_EPOCHS,
        AREA_BLOCK_META,
    ] {
        let a = layout.area(area).ok_or(EINVAL)?;
        zero(pmr, a.offset, a.size)?;
    }
    let p = layout.params();
    for (header, entry_size) in [
        (layout.sq_header(), SQ_ENTRY_SIZE),
        (layout.cq_header(), CQ_ENTRY_SIZE),
    ] {
        let producer = RingProducer {
            tail: 0,
            entries: p.ring_entries,
            entry_size,
            ..Default::default()
        };
        let at = usize::try_from(header).map_err(|_| EINVAL)?;
        pmr.write_bytes(at, &producer.to_bytes())?;
    }
    for stage in actor::STAGES {
        let id = actor::default_actor(stage);
        let Some(slot) = layout.actor_shared(id) else {
            continue;
        };
        let shared = actor::default_actor_shared(stage, device_id);
        let at = usize::try_from(slot).map_err(|_| EINVAL)?;
        pmr.write_bytes(at, &shared.to_bytes())?;
        // The device registers the default actors as their first owner: its first checkpoint
        // (epoch 0, nothing run) is what it rebuilds them from when the host enables it.
        let first = ActorControl {
            kind: shared.kind,
            ..Default::default()
        };
        actor::control::checkpoint(pmr, layout, id, shared.owner, 0, &first).map_err(|_| EINVAL)?;
    }
    let mut sb = Superblock::format(layout);
    let magic = sb.magic;
    sb.magic = 0;
    pmr.write_bytes(0, &sb.to_bytes())?;
    // The write barrier: everything above is in the PMR before the magic says it is formatted.
    pmr.atomic_u32(0)?.store(magic, Ordering::Release);
    Ok(())
}
