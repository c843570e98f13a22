// SPDX-License-Identifier: GPL-2.0

//! The page cache of a ReFlux disk: on the PMR's NUMA node, each page tagged with the epochs of
//! the actors that produced it (`proto::page_tag`), stale pages read again.
//!
//! The kernel side is the page-cache hook (`patches/0001-mm-pagecache-hook.patch`, wrapped by
//! `kernel::pagecache_hook`): a static-key-guarded call at the page-cache allocation sites, when
//! a folio is added, and when a read (`read(2)`, buffered io_uring) or a page fault (`mmap`)
//! finds uptodate folios; fault-around only peeks, and leaves a stale folio to the fault on its
//! own page. The module installs the hook at load and removes it at unload (then the kernel
//! behaves as upstream). Bound disks are published in the hook's [`Published`] table (owned
//! by the hook's registration and the platform driver's context, not a global) by the address
//! of their page-cache mapping; the hook, called for every mapping in the system under `rcu_read_lock()`,
//! compares addresses without a lock. A disk is unpublished (slot cleared, then an RCU grace
//! period) before it goes away.
//!
//! Tags live in the driver, one `u32` per block (a page is a block: 4 KiB; `pagetags.rs`),
//! because the folio's private field belongs to the block device's buffer heads.

use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use kernel::{pagecache_hook, prelude::*, sync::Arc};

use crate::actor::pipeline_actors;
use crate::proto::page_tag::PageTag;
use crate::proto::pipeline::Side;
use crate::queue::RefluxDev;

/// The most disks published at once.
const NR_SLOTS: usize = 8;

/// A published disk: its mapping's address (0: free) and the device (an `Arc` leaked while
/// published).
struct Slot {
    mapping: AtomicUsize,
    dev: AtomicPtr<RefluxDev>,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    mapping: AtomicUsize::new(0),
    dev: AtomicPtr::new(core::ptr::null_mut()),
};

/// The disks the hook serves.
pub(crate) struct Published {
    slots: [Slot; NR_SLOTS],
}

impl Published {
    pub(crate) fn new() -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                slots: [FREE; NR_SLOTS],
            },
            GFP_KERNEL,
        )?)
    }
}

/// Runs `f` on the device whose page cache `mapping` is, if it is published in `table`.
fn with_dev<R>(table: &Published, mapping: usize, f: impl FnOnce(&RefluxDev) -> R) -> Option<R> {
    if mapping == 0 {
        return None;
    }
    for slot in &table.slots {
        if slot.mapping.load(Ordering::Acquire) != mapping {
            continue;
        }
        let dev = slot.dev.load(Ordering::Acquire);
        // SAFETY: the hook calls this under `rcu_read_lock()`. A published device stays alive
        // until `unpublish` has cleared the slot and waited for a grace period, so the device
        // read here lives until this read-side section ends.
        return unsafe { dev.as_ref() }.map(f);
    }
    None
}

/// The module's hook: the table of published disks.
pub(crate) struct Hook(pub(crate) Arc<Published>);

impl pagecache_hook::Hook for Hook {
    fn alloc_node(&self, mapping: usize, _index: u64) -> Option<i32> {
        with_dev(&self.0, mapping, |d| d.pagecache.node()).flatten()
    }

    fn added(&self, mapping: usize, index: u64, nr: u64) {
        with_dev(&self.0, mapping, |d| {
            d.pagecache.tag(index, nr, |lba| page_tag(d, lba))
        });
    }

    fn stale(&self, mapping: usize, index: u64, nr: u64, consume: bool) -> bool {
        with_dev(&self.0, mapping, |d| {
            let stale = d
                .pagecache
                .any_stale(index, nr, consume, |lba| page_tag(d, lba));
            if stale {
                crate::trace::reflux_pagecache_stale(d.nr, index, nr);
            }
            stale
        })
        .unwrap_or(false)
    }
}

/// Publishes `dev`'s page cache (mapping address `mapping`) to the hook. `EBUSY` when every
/// slot is taken: the disk then works without the hook (pages anywhere, no tags).
pub(crate) fn publish(table: &Published, dev: &Arc<RefluxDev>, mapping: usize) -> Result {
    let raw = Arc::into_raw(dev.clone()).cast_mut();
    for slot in &table.slots {
        if slot
            .dev
            .compare_exchange(
                core::ptr::null_mut(),
                raw,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            slot.mapping.store(mapping, Ordering::Release);
            return Ok(());
        }
    }
    // SAFETY: `raw` came from `Arc::into_raw` above and was published nowhere.
    drop(unsafe { Arc::from_raw(raw) });
    Err(EBUSY)
}

/// Takes `dev` out of the hook's sight; when this returns no hook call uses it.
pub(crate) fn unpublish(table: &Published, dev: &RefluxDev) {
    for slot in &table.slots {
        if !core::ptr::eq(slot.dev.load(Ordering::Acquire), dev) {
            continue;
        }
        slot.mapping.store(0, Ordering::Release);
        pagecache_hook::synchronize_rcu();
        let raw = slot.dev.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: the slot held the `Arc` leaked by `publish`; no hook call sees it after
            // the grace period above (the mapping no longer matches).
            drop(unsafe { Arc::from_raw(raw) });
        }
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        // Every disk is unpublished before the driver goes; a slot still held would leak its
        // device. No hook call runs: the registration that shared this table is gone.
        for slot in &self.slots {
            let raw = slot.dev.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !raw.is_null() {
                // SAFETY: the slot held the `Arc` leaked by `publish`, seen by nobody now.
                drop(unsafe { Arc::from_raw(raw) });
            }
        }
    }
}

/// The tag block `lba`'s page of `dev` would get now: its pipeline's actors, their sides and
/// epochs, as the routing table has them.
fn page_tag(dev: &RefluxDev, lba: u64) -> u32 {
    // One block never straddles an attachment.
    let (pipeline, flags) = dev
        .pipeline_at(lba, 1)
        .unwrap_or((dev.cfg.pipeline, dev.cfg.flags));
    let mut tag = PageTag::default();
    let routing = dev.routing.lock();
    for id in pipeline_actors(pipeline, flags) {
        if let Some(a) = routing.actor(id) {
            tag.add(id, a.epoch, matches!(a.side, Side::Device));
        }
    }
    tag.encode()
}
