// SPDX-License-Identifier: GPL-2.0

//! Pinned, zeroed pages with a chosen caching mode, mapped contiguously into the kernel and,
//! on request, into user space.
//!
//! C headers: [`include/linux/vmalloc.h`](srctree/include/linux/vmalloc.h),
//! [`include/linux/mm.h`](srctree/include/linux/mm.h)
//!
//! This is the memory of rings that user space, the kernel and a device share: the pages come
//! from the page allocator without `__GFP_MOVABLE`, so they are never migrated or swapped and
//! their physical addresses stay valid for as long as the object lives. The kernel sees them
//! through one `vmap()` range; user space through [`PinnedPages::map_to_user`].

use crate::shared_mem::SharedMem;
use crate::{
    alloc::{flags, KVec},
    bindings,
    cache_mode::CacheMode,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    vma::{self, VmArea},
};
use core::ptr::NonNull;

/// The NUMA node argument meaning "any node" (`NUMA_NO_NODE`).
pub const ANY_NODE: i32 = -1;

/// Zeroed, pinned pages mapped contiguously into the kernel with a caching mode.
///
/// # Invariants
///
/// - Every entry of `pages` is an order-0 page owned by this object, with memory type `mode`
///   in the direct map.
/// - `vaddr` is the start of a `vmap()` range of `pages.len() * PAGE_SIZE` bytes mapping
///   `pages` in order with caching `mode`, valid until `drop`.
/// - `pages` is not empty.
pub struct PinnedPages {
    pages: KVec<*mut bindings::page>,
    vaddr: NonNull<u8>,
    mode: CacheMode,
}

// SAFETY: the object owns its pages and the kernel mapping; nothing in it is tied to a thread.
unsafe impl Send for PinnedPages {}
// SAFETY: `&PinnedPages` only gives out addresses and the `SharedMem` accessors, which are safe
// to use from several threads.
unsafe impl Sync for PinnedPages {}

impl PinnedPages {
    /// Allocates `count` zeroed pages on NUMA node `node` (or [`ANY_NODE`]) and maps them into
    /// the kernel with caching `mode`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{cache_mode::CacheMode, pinned_pages::{PinnedPages, ANY_NODE}};
    /// use kernel::shared_mem::SharedMem;
    ///
    /// for mode in [CacheMode::Cached, CacheMode::WriteCombining, CacheMode::Uncached] {
    ///     let pages = PinnedPages::alloc(3, ANY_NODE, mode)?;
    ///     assert_eq!(pages.len(), 3 * kernel::page::PAGE_SIZE);
    ///     assert_eq!(pages.mode(), mode);
    ///     let last = pages.len() - 8;
    ///     assert_eq!(pages.atomic_u64(last)?.load(core::sync::atomic::Ordering::Relaxed), 0);
    ///     pages.atomic_u64(last)?.store(0x1234, core::sync::atomic::Ordering::Release);
    ///     assert_eq!(pages.atomic_u64(last)?.load(core::sync::atomic::Ordering::Acquire), 0x1234);
    ///     // Out of range and misaligned accesses are refused.
    ///     assert_eq!(pages.atomic_u64(pages.len()).err(), Some(EINVAL));
    ///     assert_eq!(pages.atomic_u64(4).err(), Some(EINVAL));
    /// }
    /// assert_eq!(PinnedPages::alloc(0, ANY_NODE, CacheMode::Cached).err(), Some(EINVAL));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn alloc(count: usize, node: i32, mode: CacheMode) -> Result<Self> {
        Self::alloc_placed(count, node, mode, false)
    }

    /// As [`PinnedPages::alloc`], but no page is physically adjacent to the one before it, so a
    /// scatter-gather mapping has one segment per page. Drivers use it to exercise the
    /// descriptor path of a device on purpose, as fragmented memory would.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{cache_mode::CacheMode, pinned_pages::{PinnedPages, ANY_NODE}};
    ///
    /// let pages = PinnedPages::alloc_scattered(8, ANY_NODE, CacheMode::Cached)?;
    /// for i in 1..pages.page_count() {
    ///     let (a, b) = (pages.phys_addr((i - 1) * 4096)?, pages.phys_addr(i * 4096)?);
    ///     assert!(b != a + 4096 && a != b + 4096);
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn alloc_scattered(count: usize, node: i32, mode: CacheMode) -> Result<Self> {
        Self::alloc_placed(count, node, mode, true)
    }

    fn alloc_placed(count: usize, node: i32, mode: CacheMode, scattered: bool) -> Result<Self> {
        if count == 0 || count > (i32::MAX as usize) >> PAGE_SHIFT {
            return Err(EINVAL);
        }
        // `alloc_pages_node` trusts its node id: an offline or out-of-range one must not get there.
        if node != ANY_NODE && !node_is_online(node) {
            return Err(EINVAL);
        }
        let mut pages = KVec::with_capacity(count, GFP_KERNEL)?;
        // Frees what was allocated so far if a later step fails.
        let mut guard = PageListGuard {
            pages: &mut pages,
            mode: CacheMode::Cached,
        };
        // Pages set aside because they were adjacent to their predecessor; freed on return.
        let mut spacers = KVec::new();
        let spacer_guard = PageListGuard {
            pages: &mut spacers,
            mode: CacheMode::Cached,
        };
        let mut attempts = count.saturating_mul(4).saturating_add(16);
        while guard.pages.len() < count {
            attempts = attempts.checked_sub(1).ok_or(ENOMEM)?;
            // SAFETY: allocation with valid flags; the result is checked for NULL.
            let page = unsafe {
                bindings::alloc_pages_node(node, (GFP_KERNEL | flags::__GFP_ZERO).as_raw(), 0)
            };
            if page.is_null() {
                return Err(ENOMEM);
            }
            if scattered {
                if let Some(&prev) = guard.pages.last() {
                    // SAFETY: `prev` was allocated by this function and is still owned by it.
                    let a = unsafe { pfn(prev) };
                    // SAFETY: `page` was just allocated.
                    let b = unsafe { pfn(page) };
                    if a.abs_diff(b) == 1 {
                        if let Err(e) = spacer_guard.pages.push(page, GFP_KERNEL) {
                            // SAFETY: `page` was allocated above with order 0 and is in no list.
                            unsafe { bindings::__free_pages(page, 0) };
                            return Err(e.into());
                        }
                        continue;
                    }
                }
            }
            // Capacity was reserved above, so this cannot fail; treat failure as ENOMEM anyway.
            if let Err(e) = guard.pages.push(page, GFP_KERNEL) {
                // SAFETY: `page` was allocated above with order 0 and is not in the list.
                unsafe { bindings::__free_pages(page, 0) };
                return Err(e.into());
            }
        }
        // SAFETY: the pages are ours, unmapped except in the direct map, and the guard sets them
        // back to write-back before freeing them.
        unsafe { mode.set_pages(guard.pages)? };
        guard.mode = mode;
        // SAFETY: `PAGE_KERNEL` is a constant of the architecture.
        let prot = mode.pgprot(unsafe { bindings::page_kernel() });
        // SAFETY: `pages` holds `count` valid page pointers; `vmap` takes no ownership.
        let vaddr = unsafe {
            bindings::vmap(
                guard.pages.as_mut_ptr(),
                count as u32,
                bindings::VM_MAP as _,
                prot,
            )
        };
        let vaddr = NonNull::new(vaddr.cast::<u8>()).ok_or(ENOMEM)?;
        core::mem::forget(guard);
        drop(spacer_guard);
        // INVARIANT: `count > 0` order-0 pages of memory type `mode`, mapped by `vaddr`.
        Ok(Self { pages, vaddr, mode })
    }

    /// The size of the region in bytes.
    pub fn len(&self) -> usize {
        self.pages.len() << PAGE_SHIFT
    }

    /// Always `false`: a region has at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The number of pages.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// A copy of the page pointers, for C interfaces that take a page array.
    pub(crate) fn page_ptrs(
        &self,
        flags: crate::alloc::Flags,
    ) -> Result<KVec<*mut bindings::page>> {
        let mut v = KVec::with_capacity(self.pages.len(), flags)?;
        v.extend_from_slice(&self.pages, flags)?;
        Ok(v)
    }

    /// The caching mode of every mapping of the region.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// The kernel virtual address of the first byte.
    ///
    /// The memory may be written concurrently by user space or a device: access it only with
    /// volatile or atomic operations.
    pub fn as_ptr(&self) -> *mut u8 {
        self.vaddr.as_ptr()
    }

    /// The physical address of byte `offset`, or `EINVAL` if it is outside the region.
    pub fn phys_addr(&self, offset: usize) -> Result<u64> {
        let page = *self.pages.get(offset >> PAGE_SHIFT).ok_or(EINVAL)?;
        // SAFETY: `page` is a valid page owned by us (type invariant).
        let frame = unsafe { pfn(page) };
        Ok((frame << PAGE_SHIFT) + (offset & (PAGE_SIZE - 1)) as u64)
    }

    /// Maps the pages selected by the file offset of `vma` into it, with the region's caching.
    ///
    /// The area must be shared (`MAP_SHARED`) and lie inside the region; otherwise `EINVAL`.
    /// It is made non-expandable and left out of core dumps. Every inserted page takes a
    /// reference, so the memory stays valid for as long as it is mapped.
    pub fn map_to_user(&self, vma: &VmArea) -> Result {
        self.map_pages_to_user(vma, vma.pgoff())
    }

    /// As [`Self::map_to_user`], but the area starts at page `first` of the region whatever its
    /// file offset (for a driver that maps several objects at fixed offsets of one file).
    pub fn map_pages_to_user(&self, vma: &VmArea, first: usize) -> Result {
        if vma.flags() & vma::flags::SHARED == 0 {
            return Err(EINVAL);
        }
        let count = vma.len() >> PAGE_SHIFT;
        let last = first.checked_add(count).ok_or(EINVAL)?;
        if count == 0 || last > self.pages.len() {
            return Err(EINVAL);
        }
        vma.set_flags(vma::flags::DONTEXPAND | vma::flags::DONTDUMP);
        vma.set_cache_mode(self.mode);
        for (i, page) in self.pages[first..last].iter().enumerate() {
            // SAFETY: each page is an order-0 page-allocator page whose memory type is
            // `self.mode` (type invariant), matching the cache mode set above.
            unsafe { vma.insert_page(vma.start() + (i << PAGE_SHIFT), *page)? };
        }
        Ok(())
    }
}

// SAFETY: `vaddr` maps `len()` bytes until drop (type invariant); no Rust reference covers them.
unsafe impl SharedMem for PinnedPages {
    fn base(&self) -> *mut u8 {
        self.vaddr.as_ptr()
    }

    fn size(&self) -> usize {
        self.len()
    }
}

impl Drop for PinnedPages {
    fn drop(&mut self) {
        // SAFETY: `vaddr` came from `vmap` (type invariant) and is unmapped once.
        unsafe { bindings::vunmap(self.vaddr.as_ptr().cast()) };
        // The guard restores the memory type and frees the pages.
        drop(PageListGuard {
            pages: &mut self.pages,
            mode: self.mode,
        });
    }
}

/// The page frame number of `page`.
///
/// # Safety
///
/// `page` must point to a valid `struct page`.
unsafe fn pfn(page: *mut bindings::page) -> u64 {
    // SAFETY: valid by the function's safety requirements.
    unsafe { bindings::page_to_pfn(page) as u64 }
}

/// The physical address of an order-0 page.
pub fn page_phys_addr(page: &crate::page::Page) -> u64 {
    // SAFETY: `page` is a valid page (type invariant of `Page`).
    unsafe { pfn(page.as_ptr()) << PAGE_SHIFT }
}

fn node_is_online(node: i32) -> bool {
    // SAFETY: `nr_node_ids` is set once at boot; reading it is a plain load.
    let nr = unsafe { bindings::nr_node_ids };
    // SAFETY: `node_online` only reads the online-node mask; the id is in range.
    node >= 0 && (node as u32) < nr && unsafe { bindings::node_online(node) }
}

/// Owns a list of order-0 pages whose memory type is `mode`, and frees them on drop.
struct PageListGuard<'a> {
    pages: &'a mut KVec<*mut bindings::page>,
    mode: CacheMode,
}

impl Drop for PageListGuard<'_> {
    fn drop(&mut self) {
        if self.mode != CacheMode::Cached {
            // SAFETY: the pages are ours and no longer mapped anywhere but the direct map.
            if unsafe { CacheMode::Cached.set_pages(self.pages) }.is_err() {
                // Freeing pages with a foreign memory type would corrupt the direct map for
                // their next user: leak them instead, loudly.
                crate::warn_on!(true);
                return;
            }
        }
        for page in self.pages.iter() {
            // SAFETY: each page is an order-0 allocation owned by this list.
            unsafe { bindings::__free_pages(*page, 0) };
        }
        // SAFETY: the entries are plain pointers (nothing to drop) and the pages are gone.
        unsafe { self.pages.set_len(0) };
    }
}
