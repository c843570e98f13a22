// SPDX-License-Identifier: GPL-2.0

//! Scatter-gather DMA mappings of pinned pages.
//!
//! C headers: [`include/linux/scatterlist.h`](srctree/include/linux/scatterlist.h),
//! [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! A [`DmaSgTable`] builds an `sg_table` over the pages of a [`PinnedPages`] (merging pages that
//! happen to be physically adjacent), maps it for a device with `dma_map_sgtable()` and lists
//! the resulting DMA segments — the bus addresses and lengths a driver writes into the
//! device's descriptor table. The mapping keeps the pages alive and is undone on drop.

use crate::{
    bindings,
    device::Device,
    error::to_result,
    pinned_pages::PinnedPages,
    prelude::*,
    sync::Arc,
    types::{ARef, Opaque},
};

/// The direction of the data a device moves through a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataDirection {
    /// The device reads memory.
    ToDevice,
    /// The device writes memory.
    FromDevice,
    /// Both.
    Bidirectional,
}

impl DataDirection {
    fn as_raw(self) -> bindings::dma_data_direction {
        match self {
            Self::ToDevice => bindings::dma_data_direction_DMA_TO_DEVICE,
            Self::FromDevice => bindings::dma_data_direction_DMA_FROM_DEVICE,
            Self::Bidirectional => bindings::dma_data_direction_DMA_BIDIRECTIONAL,
        }
    }
}

/// One contiguous range in the device's address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaSegment {
    /// The bus address the device uses.
    pub bus_addr: u64,
    /// The length in bytes.
    pub len: u32,
}

/// Pinned pages mapped for DMA by one device.
///
/// # Invariants
///
/// `sgt` is an `sg_table` built over `pages`' pages and mapped for `dev` in direction `dir`
/// (`dma_map_sgtable` succeeded) until drop.
///
/// # Examples
///
/// ```
/// use kernel::{cache_mode::CacheMode, dma_sg::{DataDirection, DmaSgTable},
///     pinned_pages::{PinnedPages, ANY_NODE}, platform::OwnedPlatformDevice, sync::Arc};
///
/// let pdev = OwnedPlatformDevice::register(kernel::c_str!("rust_dma_doctest"), 0, None, &[])?;
/// // Scattered pages: no two neighbours are physically adjacent, so one segment per page.
/// let pages = PinnedPages::alloc_scattered(4, ANY_NODE, CacheMode::WriteCombining)?;
/// let pages = Arc::new(pages, GFP_KERNEL)?;
/// let map = DmaSgTable::map(pdev.device().as_dev(), pages.clone(), DataDirection::FromDevice)?;
/// let segs = map.segments()?;
/// assert_eq!(segs.len(), 4);
/// // The test kernel has no IOMMU: dma-direct gives physical addresses.
/// for (i, seg) in segs.iter().enumerate() {
///     assert_eq!(seg.bus_addr, pages.phys_addr(i * kernel::page::PAGE_SIZE)?);
/// }
/// assert_eq!(segs.iter().map(|s| s.len as usize).sum::<usize>(), 4 * kernel::page::PAGE_SIZE);
/// assert!(segs.iter().all(|s| s.bus_addr % kernel::page::PAGE_SIZE as u64 == 0));
/// drop(map);
/// drop(pdev);
/// # Ok::<(), Error>(())
/// ```
pub struct DmaSgTable {
    sgt: KBox<Opaque<bindings::sg_table>>,
    dev: ARef<Device>,
    dir: DataDirection,
    pages: Arc<PinnedPages>,
}

// SAFETY: the mapping is not tied to a thread; the C functions used on it are thread safe.
unsafe impl Send for DmaSgTable {}
// SAFETY: `&self` only reads the mapped table.
unsafe impl Sync for DmaSgTable {}

impl DmaSgTable {
    /// Builds the scatter-gather table of `pages` and maps it for `dev`.
    pub fn map(dev: &Device, pages: Arc<PinnedPages>, dir: DataDirection) -> Result<Self> {
        let sgt = KBox::new(Opaque::<bindings::sg_table>::uninit(), GFP_KERNEL)?;
        let mut ptrs = pages.page_ptrs(GFP_KERNEL)?;
        let count = u32::try_from(ptrs.len()).map_err(|_| EINVAL)?;
        // SAFETY: `sgt` is valid for writes; `ptrs` holds `count` valid pages that `pages` keeps
        // alive; the table copies the page pointers.
        to_result(unsafe {
            bindings::sg_alloc_table_from_pages_segment(
                sgt.get(),
                ptrs.as_mut_ptr(),
                count,
                0,
                pages.len() as _,
                u32::MAX,
                GFP_KERNEL.as_raw(),
            )
        })?;
        // SAFETY: the table was just built; `dev` is a valid device.
        let ret = unsafe { bindings::dma_map_sgtable(dev.as_raw(), sgt.get(), dir.as_raw(), 0) };
        if let Err(e) = to_result(ret) {
            // SAFETY: built above and not mapped.
            unsafe { bindings::sg_free_table(sgt.get()) };
            return Err(e);
        }
        // INVARIANT: built over `pages` and mapped for `dev` in `dir`.
        Ok(Self {
            sgt,
            dev: dev.into(),
            dir,
            pages,
        })
    }

    /// The pages behind the mapping.
    pub fn pages(&self) -> &Arc<PinnedPages> {
        &self.pages
    }

    /// The DMA segments, in order of the region's offsets.
    pub fn segments(&self) -> Result<KVec<DmaSegment>> {
        // SAFETY: the table is mapped (type invariant); `nents` is the mapped entry count.
        let (mut sg, nents) = unsafe { ((*self.sgt.get()).sgl, (*self.sgt.get()).nents) };
        let mut out = KVec::with_capacity(nents as usize, GFP_KERNEL)?;
        for _ in 0..nents {
            if sg.is_null() {
                break;
            }
            // SAFETY: `sg` is one of the first `nents` entries of the mapped table.
            let seg = unsafe {
                DmaSegment {
                    bus_addr: bindings::sg_dma_address(sg),
                    len: bindings::sg_dma_len(sg),
                }
            };
            out.push(seg, GFP_KERNEL)?;
            // SAFETY: as above; returns null after the last entry.
            sg = unsafe { bindings::sg_next(sg) };
        }
        Ok(out)
    }
}

impl Drop for DmaSgTable {
    fn drop(&mut self) {
        // SAFETY: mapped for `dev` in `dir` (type invariant); unmapped and freed once.
        unsafe {
            bindings::dma_unmap_sgtable(self.dev.as_raw(), self.sgt.get(), self.dir.as_raw(), 0);
            bindings::sg_free_table(self.sgt.get());
        }
    }
}
