// SPDX-License-Identifier: GPL-2.0

//! Virtual memory areas being set up by a driver's `mmap` handler.
//!
//! C header: [`include/linux/mm.h`](srctree/include/linux/mm.h)

use crate::{
    bindings, cache_mode::CacheMode, error::to_result, page::PAGE_SHIFT, prelude::*, types::Opaque,
};

/// Flags of a virtual memory area (`VM_*`).
pub mod flags {
    use crate::bindings;

    /// The type of a set of flags.
    pub type Flags = bindings::vm_flags_t;

    /// Mapping is readable.
    pub const READ: Flags = bindings::VM_READ as Flags;
    /// Mapping is writable.
    pub const WRITE: Flags = bindings::VM_WRITE as Flags;
    /// Writes are visible to other mappings of the same object (`MAP_SHARED`).
    pub const SHARED: Flags = bindings::VM_SHARED as Flags;
    /// The mapping cannot grow with `mremap()`.
    pub const DONTEXPAND: Flags = bindings::VM_DONTEXPAND as Flags;
    /// The mapping is left out of core dumps.
    pub const DONTDUMP: Flags = bindings::VM_DONTDUMP as Flags;
    /// `mprotect()` may add write permission.
    pub const MAYWRITE: Flags = bindings::VM_MAYWRITE as Flags;
    /// The mapping is not copied into a child on `fork()`.
    pub const DONTCOPY: Flags = bindings::VM_DONTCOPY as Flags;
}

/// A virtual memory area handed to a driver's `mmap` file operation.
///
/// # Invariants
///
/// `self.vma` is a valid `vm_area_struct` that is being set up by `mmap()`: the caller holds
/// the mmap lock of its `mm` for writing for as long as the reference exists, so its flags and
/// page protection may be changed and pages may be inserted.
#[repr(transparent)]
pub struct VmArea {
    vma: Opaque<bindings::vm_area_struct>,
}

impl VmArea {
    /// Creates a reference to a VMA from its raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid VMA inside an `mmap` file operation (mmap lock held for
    /// writing), for the whole lifetime `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::vm_area_struct) -> &'a Self {
        // SAFETY: `VmArea` is a transparent wrapper of `vm_area_struct`; validity and locking
        // come from the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn raw(&self) -> *mut bindings::vm_area_struct {
        self.vma.get()
    }

    /// The first user address of the area.
    pub fn start(&self) -> usize {
        // SAFETY: the VMA is valid by the type invariant; the field is stable during mmap.
        unsafe { (*self.raw()).__bindgen_anon_1.__bindgen_anon_1.vm_start as usize }
    }

    /// One past the last user address of the area.
    pub fn end(&self) -> usize {
        // SAFETY: as in `start`.
        unsafe { (*self.raw()).__bindgen_anon_1.__bindgen_anon_1.vm_end as usize }
    }

    /// The length of the area in bytes.
    pub fn len(&self) -> usize {
        self.end() - self.start()
    }

    /// Whether the area is empty (it never is for a VMA set up by `mmap()`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset into the file, in pages, that the area starts at.
    pub fn pgoff(&self) -> usize {
        // SAFETY: as in `start`.
        unsafe { (*self.raw()).vm_pgoff as usize }
    }

    /// The offset into the file in bytes, or `None` if it does not fit in a `usize`.
    pub fn offset(&self) -> Option<usize> {
        self.pgoff().checked_mul(1 << PAGE_SHIFT)
    }

    /// The area's current flags.
    pub fn flags(&self) -> flags::Flags {
        // SAFETY: as in `start`.
        unsafe { (*self.raw()).__bindgen_anon_2.vm_flags }
    }

    /// Sets `flags` in the area's flags.
    pub fn set_flags(&self, flags: flags::Flags) {
        // SAFETY: the mmap lock is held for writing (type invariant), as `vm_flags_set` needs.
        unsafe { bindings::vm_flags_set(self.raw(), flags) };
    }

    /// Clears `flags` in the area's flags (e.g. [`flags::MAYWRITE`] for a read-only mapping).
    pub fn clear_flags(&self, flags: flags::Flags) {
        // SAFETY: the mmap lock is held for writing (type invariant), as `vm_flags_clear` needs.
        unsafe { bindings::vm_flags_clear(self.raw(), flags) };
    }

    /// Maps the physical range `phys..phys + self.len()` (device memory, not page-allocator
    /// pages) over the whole area with caching `mode` (`remap_pfn_range()`).
    ///
    /// # Safety
    ///
    /// The range must be memory the caller owns for as long as the mapping can exist (for device
    /// memory: until the device is gone and every mapping zapped), and `mode` must match the
    /// kernel's mappings of it.
    pub unsafe fn remap_phys(&self, phys: u64, mode: CacheMode) -> Result {
        if phys & ((1 << PAGE_SHIFT) - 1) != 0 {
            return Err(EINVAL);
        }
        self.set_cache_mode(mode);
        // SAFETY: the mmap lock is held for writing (type invariant); the range is the
        // caller's by the safety requirements; `remap_pfn_range` checks the area bounds.
        to_result(unsafe {
            bindings::remap_pfn_range(
                self.raw(),
                self.start() as _,
                (phys >> PAGE_SHIFT) as _,
                self.len() as _,
                (*self.raw()).vm_page_prot,
            )
        })
    }

    /// Makes pages inserted from now on use `mode` for caching.
    pub fn set_cache_mode(&self, mode: CacheMode) {
        // SAFETY: the mmap lock is held for writing (type invariant) and no page is mapped yet
        // by the caller's contract of `insert_page`, so changing the protection is allowed.
        unsafe {
            let vma = self.raw();
            (*vma).vm_page_prot = mode.pgprot((*vma).vm_page_prot);
        }
    }

    /// Maps `page` at user address `address`, taking a reference on the page.
    ///
    /// # Safety
    ///
    /// `page` must be an order-0 page allocated by the page allocator (not slab memory) whose
    /// memory type, if it was changed, matches the area's cache mode.
    pub unsafe fn insert_page(&self, address: usize, page: *mut bindings::page) -> Result {
        // SAFETY: the mmap lock is held for writing (type invariant); the page satisfies the C
        // function's requirements by the caller's contract. `vm_insert_page` checks that
        // `address` lies inside the area.
        to_result(unsafe { bindings::vm_insert_page(self.raw(), address as _, page) })
    }
}
