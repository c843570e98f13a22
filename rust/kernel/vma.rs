// SPDX-License-Identifier: GPL-2.0

//! Virtual memory areas being set up by a driver's `mmap` handler.
//!
//! C header: [`include/linux/mm.h`](srctree/include/linux/mm.h)

use crate::{
    bindings,
    cache_mode::CacheMode,
    error::to_result,
    page::PAGE_SHIFT,
    prelude::*,
    sync::{Arc, ArcBorrow},
    types::{ForeignOwnable, Opaque},
};
use core::{marker::PhantomData, ptr::NonNull};

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
    /// The area maps raw page frame numbers, not pages with a `struct page` to count.
    pub const PFNMAP: Flags = bindings::VM_PFNMAP as Flags;
    /// The area maps I/O or device memory: no core dump, no `get_user_pages()`.
    pub const IO: Flags = bindings::VM_IO as Flags;
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

    /// The page cache object of the file this area maps, through which every user mapping of
    /// the file can later be zapped ([`FileMapping::unmap_range`]); `None` for an area without
    /// a file.
    pub fn file_mapping(&self) -> Option<FileMapping> {
        // SAFETY: the VMA is valid (type invariant); `vm_file` is set before `mmap()` is called
        // and stays for the area's lifetime.
        let file = unsafe { (*self.raw()).vm_file };
        if file.is_null() {
            return None;
        }
        // SAFETY: `file` is the open file being mapped; the area holds a reference on it.
        let mapping = NonNull::new(unsafe { (*file).f_mapping })?;
        // SAFETY: an open file's `f_mapping` is valid and its `host` is the file's inode, on
        // which the open file holds a reference, as `ihold` requires.
        unsafe { bindings::ihold((*mapping.as_ptr()).host) };
        // INVARIANT: the reference on the host inode was just taken.
        Some(FileMapping { mapping })
    }

    /// Has the area's pages mapped one at a time by `handler` when they are first touched
    /// (`vm_ops->fault`); nothing is mapped yet. The area becomes `VM_PFNMAP | VM_IO`, cannot
    /// grow, and is left out of core dumps. The area keeps `handler` alive (and each copy made by
    /// a split, `mremap()` or `fork()` takes its own reference) until it is unmapped.
    ///
    /// Call this last in the `mmap` handler: if the handler failed afterwards, the area would be
    /// freed without `vm_ops->close`, and the reference on `handler` would leak.
    ///
    /// `EINVAL` for a private writable (copy-on-write) area, which cannot map raw frames;
    /// `EBUSY` if the area already has a handler.
    pub fn set_fault_handler<T: FaultHandler>(&self, handler: Arc<T>) -> Result {
        let cow = self.flags() & (flags::SHARED | flags::MAYWRITE) == flags::MAYWRITE;
        if cow {
            return Err(EINVAL);
        }
        let vma = self.raw();
        // SAFETY: the mmap lock is held for writing (type invariant).
        if !unsafe { (*vma).vm_private_data }.is_null() {
            return Err(EBUSY);
        }
        self.set_flags(flags::PFNMAP | flags::IO | flags::DONTEXPAND | flags::DONTDUMP);
        // SAFETY: the mmap lock is held for writing (type invariant), so the area's operations
        // and private data may be set. `FaultTable::<T>::OPS` is a `'static` table whose
        // callbacks expect exactly this private data: a reference from `Arc::into_foreign`.
        unsafe {
            (*vma).vm_private_data = handler.into_foreign().cast_mut();
            (*vma).vm_ops = &FaultTable::<T>::OPS;
        }
        Ok(())
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

/// The page cache object (`struct address_space`) of a mapped file. Every user mapping of the
/// file is linked to it, so [`FileMapping::unmap_range`] reaches all of them, in every process.
///
/// # Invariants
///
/// `mapping` is the `f_mapping` of a file and `(*mapping).host` is its inode, on which this
/// object holds a reference (taken with `ihold`), so `mapping` stays valid.
pub struct FileMapping {
    mapping: NonNull<bindings::address_space>,
}

// SAFETY: an inode reference may be dropped, and `unmap_mapping_range` called, from any thread.
unsafe impl Send for FileMapping {}
// SAFETY: `unmap_range` takes `&self` and does its own locking (`i_mmap_rwsem`).
unsafe impl Sync for FileMapping {}

impl FileMapping {
    /// Whether `self` and `other` are the same page cache object.
    pub fn same(&self, other: &FileMapping) -> bool {
        self.mapping == other.mapping
    }

    /// Removes the page table entries of every user mapping of file bytes
    /// `offset..offset + len` (`unmap_mapping_range`). The areas stay; a later access faults
    /// again, into the area's fault handler (or `SIGBUS` without one). `EINVAL` if the range does
    /// not fit in a file offset.
    pub fn unmap_range(&self, offset: u64, len: u64) -> Result {
        let start = i64::try_from(offset).map_err(|_| EINVAL)?;
        let len = i64::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: `mapping` is valid (type invariant); the function locks what it walks.
        unsafe { bindings::unmap_mapping_range(self.mapping.as_ptr(), start, len, 1) };
        Ok(())
    }
}

impl Drop for FileMapping {
    fn drop(&mut self) {
        // SAFETY: this object holds a reference on the host inode (type invariant), given back
        // here exactly once.
        unsafe { bindings::iput((*self.mapping.as_ptr()).host) };
    }
}

/// A page fault in an area set up with [`VmArea::set_fault_handler`].
///
/// # Invariants
///
/// `vmf` is a valid `vm_fault` of an area set up by [`VmArea::set_fault_handler`] (so
/// `VM_PFNMAP` and not copy-on-write), for as long as the reference exists: the fault handler
/// holds the mmap lock or the area's lock for reading.
#[repr(transparent)]
pub struct VmFault {
    vmf: Opaque<bindings::vm_fault>,
}

impl VmFault {
    /// # Safety
    ///
    /// `ptr` must be a valid fault of an area set up by [`VmArea::set_fault_handler`], being
    /// handled for the whole lifetime `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::vm_fault) -> &'a Self {
        // SAFETY: `VmFault` is a transparent wrapper of `vm_fault`; validity is the caller's.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The offset into the file, in bytes, of the faulting page; `None` if it does not fit.
    pub fn offset(&self) -> Option<u64> {
        // SAFETY: the fault is valid (type invariant) and `pgoff` is not changed while handled.
        let pgoff = unsafe { (*self.vmf.get()).__bindgen_anon_1.pgoff };
        u64::try_from(pgoff).ok()?.checked_mul(1 << PAGE_SHIFT)
    }

    /// Maps the page of physical memory at `phys` at the faulting address, with the area's page
    /// protection (`vmf_insert_pfn`). `EINVAL` for an unaligned address, `ENOMEM` if a page
    /// table could not be allocated, `EFAULT` otherwise.
    ///
    /// # Safety
    ///
    /// The page must be memory the caller owns for as long as the mapping can exist (for device
    /// memory: until every mapping of it is zapped), and the area's cache mode must match the
    /// kernel's mappings of it.
    pub unsafe fn insert_phys(&self, phys: u64) -> Result {
        if phys & ((1 << PAGE_SHIFT) - 1) != 0 {
            return Err(EINVAL);
        }
        let pfn = usize::try_from(phys >> PAGE_SHIFT).map_err(|_| EINVAL)?;
        let vmf = self.vmf.get();
        // SAFETY: the fault is valid and its area is `VM_PFNMAP` and not copy-on-write (type
        // invariant), as `vmf_insert_pfn` requires; it checks that the address is inside the
        // area. The page is the caller's by the safety requirements.
        let ret = unsafe {
            bindings::vmf_insert_pfn(
                (*vmf).__bindgen_anon_1.vma,
                (*vmf).__bindgen_anon_1.address,
                pfn as _,
            )
        };
        match ret {
            bindings::vm_fault_reason_VM_FAULT_NOPAGE => Ok(()),
            bindings::vm_fault_reason_VM_FAULT_OOM => Err(ENOMEM),
            _ => Err(EFAULT),
        }
    }
}

/// A driver's handler of page faults in an area it maps lazily ([`VmArea::set_fault_handler`]).
pub trait FaultHandler: Send + Sync + Sized + 'static {
    /// Maps the faulting page with [`VmFault::insert_phys`], or refuses it: any error ends in
    /// `SIGBUS` for the faulting task (`ENOMEM`: the out-of-memory path).
    fn fault(this: ArcBorrow<'_, Self>, fault: &VmFault) -> Result;
}

/// The operations of areas whose faults `T` handles.
struct FaultTable<T>(PhantomData<T>);

impl<T: FaultHandler> FaultTable<T> {
    const OPS: bindings::vm_operations_struct = bindings::vm_operations_struct {
        open: Some(vm_open::<T>),
        close: Some(vm_close::<T>),
        fault: Some(vm_fault::<T>),
        // SAFETY: every other field is an optional callback, for which all zeroes is `None`.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };
}

/// # Safety
///
/// `vma` is a new copy (split, `mremap()`, `fork()`) of an area set up by
/// [`VmArea::set_fault_handler`]; the original still exists.
unsafe extern "C" fn vm_open<T: FaultHandler>(vma: *mut bindings::vm_area_struct) {
    // SAFETY: the copy's private data is the original's, a reference from `Arc::into_foreign`
    // that the original keeps alive for the duration of this call.
    let handler: Arc<T> = unsafe { Arc::<T>::borrow((*vma).vm_private_data) }.into();
    // SAFETY: the copy is being set up under the mmap lock, so its private data may be written;
    // it now owns the reference just taken, dropped by `vm_close`.
    unsafe { (*vma).vm_private_data = handler.into_foreign().cast_mut() };
}

/// # Safety
///
/// `vma` is an area set up by [`VmArea::set_fault_handler`] (or copied by `vm_open`) that is
/// being unmapped; this is its last use of the private data.
unsafe extern "C" fn vm_close<T: FaultHandler>(vma: *mut bindings::vm_area_struct) {
    // SAFETY: the private data is the area's own reference from `Arc::into_foreign`, not used
    // again after the area's `close`.
    drop(unsafe { Arc::<T>::from_foreign((*vma).vm_private_data) });
}

/// # Safety
///
/// `vmf` is a valid fault of an area set up by [`VmArea::set_fault_handler`].
unsafe extern "C" fn vm_fault<T: FaultHandler>(
    vmf: *mut bindings::vm_fault,
) -> bindings::vm_fault_t {
    // SAFETY: the area is valid while its fault is handled; its private data is its reference
    // from `Arc::into_foreign`, alive until `vm_close`, which cannot run during the fault.
    let handler = unsafe { Arc::<T>::borrow((*(*vmf).__bindgen_anon_1.vma).vm_private_data) };
    // SAFETY: `vmf` is valid for this call and its area was set up by `set_fault_handler`.
    let fault = unsafe { VmFault::from_raw(vmf) };
    match T::fault(handler, fault) {
        Ok(()) => bindings::vm_fault_reason_VM_FAULT_NOPAGE,
        Err(e) if e == ENOMEM => bindings::vm_fault_reason_VM_FAULT_OOM,
        Err(_) => bindings::vm_fault_reason_VM_FAULT_SIGBUS,
    }
}
