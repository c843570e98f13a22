// SPDX-License-Identifier: GPL-2.0

//! The page-cache tags of one disk: the node its pages are allocated on, and one tag per block
//! (a page is a block: 4 KiB) recording the epochs of the actors that produced its page
//! (`proto::page_tag`). The hook that uses them is `pagecache.rs`; the tag a page would get
//! now is the device's to compute, and is passed in.
//!
//! Tags are relaxed atomics: a tag races only with another tag of the same page, and either
//! value is one the page had.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;

use crate::abi;
use crate::proto::page_tag::is_stale;

/// A disk's page-cache state.
pub(crate) struct PageTags {
    /// The node its pages are allocated on (`None`: the usual policy).
    node: Option<i32>,
    /// One per block: the tag of its page when it entered the page cache (0: none).
    tags: KVVec<AtomicU32>,
    /// Pages tagged.
    tagged: AtomicU64,
    /// Pages a reader found stale (and dropped, unless dirty or mapped).
    stale: AtomicU64,
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

    /// The node the disk's pages are allocated on (`None`: the usual policy).
    pub(crate) fn node(&self) -> Option<i32> {
        self.node
    }

    /// Pages tagged so far.
    pub(crate) fn tagged(&self) -> u64 {
        self.tagged.load(Ordering::Relaxed)
    }

    /// Pages found stale so far.
    pub(crate) fn stale(&self) -> u64 {
        self.stale.load(Ordering::Relaxed)
    }

    /// The tag of block `lba`'s page, if the disk has such a block.
    fn slot(&self, lba: u64) -> Option<&AtomicU32> {
        usize::try_from(lba).ok().and_then(|i| self.tags.get(i))
    }

    /// The tag recorded for block `lba`'s page (0: none), for debugfs.
    pub(crate) fn recorded(&self, lba: u64) -> u32 {
        self.slot(lba).map_or(0, |t| t.load(Ordering::Relaxed))
    }

    /// The pages of blocks `index..index + nr` entered the page cache: each gets the tag
    /// `now(lba)` gives.
    pub(crate) fn tag(&self, index: u64, nr: u64, now: impl Fn(u64) -> u32) {
        for lba in index..index.saturating_add(nr) {
            let Some(slot) = self.slot(lba) else {
                return;
            };
            slot.store(now(lba), Ordering::Relaxed);
            self.tagged.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether any page of `index..index + nr` is stale (its tag is not `now(lba)`); with
    /// `consume`, counts them and tags them current (see below).
    pub(crate) fn any_stale(
        &self,
        index: u64,
        nr: u64,
        consume: bool,
        now: impl Fn(u64) -> u32,
    ) -> bool {
        let mut stale = 0;
        for lba in index..index.saturating_add(nr) {
            let Some(slot) = self.slot(lba) else {
                break;
            };
            let (recorded, now) = (slot.load(Ordering::Relaxed), now(lba));
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
            self.stale.fetch_add(stale, Ordering::Relaxed);
        }
        stale > 0
    }
}
