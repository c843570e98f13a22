// SPDX-License-Identifier: GPL-2.0

//! The page cache of a ReFlux disk: on the PMR's NUMA node, each page tagged with the epochs of
//! the actors that produced it (`proto::page_tag`), stale pages read again.
//!
//! The kernel side is the page-cache hook (`patches/0001-mm-pagecache-hook.patch`, wrapped by
//! `kernel::pagecache_hook`): a static-key-guarded call at the page-cache allocation sites, when
//! a folio is added, and when a read (`read(2)`, buffered io_uring) or a page fault (`mmap`)
//! finds uptodate folios; fault-around only peeks, and leaves a stale folio to the fault on its
//! own page. The module installs the hook at load and removes it at unload (then the kernel
//! behaves as upstream). Bound disks are published in [`SLOTS`] by the address of their
//! page-cache mapping; the hook, called for every mapping in the system under `rcu_read_lock()`,
//! compares addresses without a lock. A disk is unpublished (slot cleared, then an RCU grace
//! period) before it goes away.
//!
//! Tags live in the driver, one `u32` per block (a page is a block: 4 KiB), because the folio's
//! private field belongs to the block device's buffer heads.

use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use kernel::{pagecache_hook, prelude::*, sync::Arc};

use crate::abi;
use crate::actor::pipeline_actors;
use crate::proto::page_tag::{is_stale, PageTag};
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

static SLOTS: [Slot; NR_SLOTS] = [FREE; NR_SLOTS];

/// Runs `f` on the device whose page cache `mapping` is, if it is published.
fn with_dev<R>(mapping: usize, f: impl FnOnce(&RefluxDev) -> R) -> Option<R> {
    if mapping == 0 {
        return None;
    }
    for slot in &SLOTS {
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

/// The module's hook.
pub(crate) struct Hook;

impl pagecache_hook::Hook for Hook {
    fn alloc_node(mapping: usize, _index: u64) -> Option<i32> {
        with_dev(mapping, |d| d.pagecache.node).flatten()
    }

    fn added(mapping: usize, index: u64, nr: u64) {
        with_dev(mapping, |d| d.tag_pages(index, nr));
    }

    fn stale(mapping: usize, index: u64, nr: u64, consume: bool) -> bool {
        with_dev(mapping, |d| d.pages_stale(index, nr, consume)).unwrap_or(false)
    }
}

/// Publishes `dev`'s page cache (mapping address `mapping`) to the hook. `EBUSY` when every
/// slot is taken: the disk then works without the hook (pages anywhere, no tags).
pub(crate) fn publish(dev: &Arc<RefluxDev>, mapping: usize) -> Result {
    let raw = Arc::into_raw(dev.clone()).cast_mut();
    for slot in &SLOTS {
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
pub(crate) fn unpublish(dev: &RefluxDev) {
    for slot in &SLOTS {
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

/// A disk's page-cache state.
pub(crate) struct PageTags {
    /// The node its pages are allocated on (`None`: the usual policy).
    pub(crate) node: Option<i32>,
    /// One per block: the tag of its page when it entered the page cache (0: none).
    tags: KVVec<AtomicU32>,
    /// Pages tagged.
    pub(crate) tagged: AtomicU64,
    /// Pages a reader found stale (and dropped, unless dirty or mapped).
    pub(crate) stale: AtomicU64,
}

impl PageTags {
    /// Tags for `blocks` blocks; pages on `node`.
    pub(crate) fn new(blocks: u64, node: Option<i32>) -> Result<Self> {
        // The page index is the block number only if a page is a block.
        let blocks = if kernel::page::PAGE_SIZE == abi::BLOCK_SIZE as usize {
            usize::try_from(blocks).map_err(|_| EINVAL)?
        } else {
            0
        };
        let mut tags = KVVec::with_capacity(blocks, GFP_KERNEL)?;
        for _ in 0..blocks {
            tags.push(AtomicU32::new(0), GFP_KERNEL)?;
        }
        Ok(Self {
            node,
            tags,
            tagged: AtomicU64::new(0),
            stale: AtomicU64::new(0),
        })
    }
}

impl PageTags {
    /// The tag of block `lba`'s page, if the disk has such a block.
    fn slot(&self, lba: u64) -> Option<&AtomicU32> {
        usize::try_from(lba).ok().and_then(|i| self.tags.get(i))
    }
}

impl RefluxDev {
    /// The tag block `lba`'s page would get now.
    fn page_tag(&self, lba: u64) -> u32 {
        // One block never straddles an attachment.
        let (pipeline, flags) = self
            .pipeline_at(lba, 1)
            .unwrap_or((self.cfg.pipeline, self.cfg.flags));
        let mut tag = PageTag::default();
        let routing = self.routing.lock();
        for id in pipeline_actors(pipeline, flags) {
            if let Some(a) = routing.actor(id) {
                tag.add(id, a.epoch, matches!(a.side, Side::Device));
            }
        }
        tag.encode()
    }

    fn tag_pages(&self, index: u64, nr: u64) {
        for lba in index..index.saturating_add(nr) {
            let Some(slot) = self.pagecache.slot(lba) else {
                return;
            };
            slot.store(self.page_tag(lba), Ordering::Relaxed);
            self.pagecache.tagged.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether any page of `index..index + nr` is stale; with `consume`, counts them and tags
    /// them current (see below).
    fn pages_stale(&self, index: u64, nr: u64, consume: bool) -> bool {
        let mut stale = 0;
        for lba in index..index.saturating_add(nr) {
            let Some(slot) = self.pagecache.slot(lba) else {
                break;
            };
            let (recorded, now) = (slot.load(Ordering::Relaxed), self.page_tag(lba));
            if is_stale(recorded, now) {
                if !consume {
                    return true;
                }
                stale += 1;
                // Reported once: the reader evicts the page and reads it again (which tags it
                // anew), or, if it cannot evict it (a transient reference such as a per-CPU
                // LRU batch holds it), reads it as it is, the same bytes: either way the page
                // is current from here on.
                let _ = slot.compare_exchange(recorded, now, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        if stale > 0 {
            self.pagecache.stale.fetch_add(stale, Ordering::Relaxed);
        }
        stale > 0
    }

    /// The tag of block `lba`'s page (0: none), for debugfs.
    pub(crate) fn recorded_page_tag(&self, lba: u64) -> u32 {
        self.pagecache
            .slot(lba)
            .map_or(0, |t| t.load(Ordering::Relaxed))
    }
}
