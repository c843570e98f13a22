// SPDX-License-Identifier: GPL-2.0

//! Generic disk abstraction.
//!
//! C header: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h)
//! C header: [`include/linux/blk-mq.h`](srctree/include/linux/blk-mq.h)

use crate::block::mq::{raw_writer::RawWriter, Operations, TagSet};
use crate::{
    bindings,
    error::from_err_ptr,
    error::Result,
    sync::Arc,
    types::{ForeignOwnable, ScopeGuard},
};
use crate::{error, owner::Owner, static_lock_class};
use core::fmt::{self, Write};

/// A builder for [`GenDisk`].
///
/// Use this struct to configure and add new [`GenDisk`] to the VFS.
pub struct GenDiskBuilder {
    rotational: bool,
    logical_block_size: u32,
    physical_block_size: u32,
    capacity_sectors: u64,
    max_hw_sectors: u32,
    chunk_sectors: u32,
    write_cache: bool,
    fua: bool,
}

impl Default for GenDiskBuilder {
    fn default() -> Self {
        Self {
            rotational: false,
            logical_block_size: bindings::PAGE_SIZE as u32,
            physical_block_size: bindings::PAGE_SIZE as u32,
            capacity_sectors: 0,
            max_hw_sectors: 0,
            chunk_sectors: 0,
            write_cache: false,
            fua: false,
        }
    }
}

impl GenDiskBuilder {
    /// Create a new instance.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the rotational media attribute for the device to be built.
    pub fn rotational(mut self, rotational: bool) -> Self {
        self.rotational = rotational;
        self
    }

    /// Validate block size by verifying that it is between 512 and `PAGE_SIZE`,
    /// and that it is a power of two.
    fn validate_block_size(size: u32) -> Result<()> {
        if !(512..=bindings::PAGE_SIZE as u32).contains(&size) || !size.is_power_of_two() {
            Err(error::code::EINVAL)
        } else {
            Ok(())
        }
    }

    /// Set the logical block size of the device to be built.
    ///
    /// This method will check that block size is a power of two and between 512
    /// and 4096. If not, an error is returned and the block size is not set.
    ///
    /// This is the smallest unit the storage device can address. It is
    /// typically 4096 bytes.
    pub fn logical_block_size(mut self, block_size: u32) -> Result<Self> {
        Self::validate_block_size(block_size)?;
        self.logical_block_size = block_size;
        Ok(self)
    }

    /// Set the physical block size of the device to be built.
    ///
    /// This method will check that block size is a power of two and between 512
    /// and 4096. If not, an error is returned and the block size is not set.
    ///
    /// This is the smallest unit a physical storage device can write
    /// atomically. It is usually the same as the logical block size but may be
    /// bigger. One example is SATA drives with 4096 byte physical block size
    /// that expose a 512 byte logical block size to the operating system.
    pub fn physical_block_size(mut self, block_size: u32) -> Result<Self> {
        Self::validate_block_size(block_size)?;
        self.physical_block_size = block_size;
        Ok(self)
    }

    /// Set the capacity of the device to be built, in sectors (512 bytes).
    pub fn capacity_sectors(mut self, capacity: u64) -> Self {
        self.capacity_sectors = capacity;
        self
    }

    /// Set the largest request the device takes, in sectors (0: the block
    /// layer's default). Larger I/O is split by the block layer.
    pub fn max_hw_sectors(mut self, sectors: u32) -> Self {
        self.max_hw_sectors = sectors;
        self
    }

    /// Set a boundary, in sectors (a power of two; 0: none), that no request
    /// crosses: the block layer splits and refuses to merge I/O there.
    pub fn chunk_sectors(mut self, sectors: u32) -> Self {
        self.chunk_sectors = sectors;
        self
    }

    /// Declare a volatile write cache (the block layer then sends flushes,
    /// `REQ_PREFLUSH`) and whether the device honours `REQ_FUA` itself.
    pub fn write_cache(mut self, write_cache: bool, fua: bool) -> Self {
        self.write_cache = write_cache;
        self.fua = fua;
        self
    }

    /// Build a new `GenDisk` and add it to the VFS. `queue_data` is lent to
    /// every [`Operations`] callback of the disk's queue and dropped with the
    /// disk, after the last callback. `_owner` names the module of `T`'s code
    /// ([`module_owner!`](crate::module_owner)): an open disk pins it, so the
    /// module cannot be unloaded while the kernel may still call into it.
    pub fn build<T: Operations, O: Owner>(
        self,
        _owner: O,
        name: fmt::Arguments<'_>,
        tagset: Arc<TagSet<T>>,
        queue_data: T::QueueData,
    ) -> Result<GenDisk<T>> {
        // SAFETY: `bindings::queue_limits` contain only fields that are valid when zeroed.
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };

        lim.logical_block_size = self.logical_block_size;
        lim.physical_block_size = self.physical_block_size;
        lim.max_hw_sectors = self.max_hw_sectors;
        lim.chunk_sectors = self.chunk_sectors;
        if self.rotational {
            lim.features |= bindings::BLK_FEAT_ROTATIONAL;
        }
        if self.write_cache {
            lim.features |= bindings::BLK_FEAT_WRITE_CACHE;
            if self.fua {
                lim.features |= bindings::BLK_FEAT_FUA;
            }
        }

        let data = queue_data.into_foreign();
        let data_guard = ScopeGuard::new(|| {
            // SAFETY: `data` came from `into_foreign` above and was not
            // handed to a queue that could still use it.
            drop(unsafe { T::QueueData::from_foreign(data) });
        });

        // SAFETY: `tagset.raw_tag_set()` points to a valid and initialized tag set
        let gendisk = from_err_ptr(unsafe {
            bindings::__blk_mq_alloc_disk(
                tagset.raw_tag_set(),
                &mut lim,
                data.cast_mut(),
                static_lock_class!().as_ptr(),
            )
        })?;

        // SAFETY: `gendisk` is a valid pointer as we initialized it above; the
        // table is a promoted constant, alive as long as the module that holds it,
        // which the table's owner keeps loaded while the disk is open.
        unsafe { (*gendisk).fops = DiskOps::<O>::table() };

        let cleanup_failure = ScopeGuard::new_with_data(gendisk, |gendisk| {
            // SAFETY: `gendisk` came from `__blk_mq_alloc_disk()` above and
            // has not been added to the VFS on this cleanup path.
            unsafe { bindings::put_disk(gendisk) };
        });

        let mut raw_writer = RawWriter::from_array(
            // SAFETY: `gendisk` points to a valid and initialized instance. We
            // have exclusive access, since the disk is not added to the VFS
            // yet.
            unsafe { &mut (*gendisk).disk_name },
        )?;
        raw_writer.write_fmt(name)?;
        raw_writer.write_char('\0')?;

        // SAFETY: `gendisk` points to a valid and initialized instance of
        // `struct gendisk`. `set_capacity` takes a lock to synchronize this
        // operation, so we will not race.
        unsafe { bindings::set_capacity(gendisk, self.capacity_sectors) };

        crate::error::to_result(
            // SAFETY: `gendisk` points to a valid and initialized instance of
            // `struct gendisk`.
            unsafe {
                bindings::device_add_disk(core::ptr::null_mut(), gendisk, core::ptr::null_mut())
            },
        )?;

        cleanup_failure.dismiss();
        data_guard.dismiss();

        // INVARIANT: `gendisk` was initialized above.
        // INVARIANT: `gendisk` was added to the VFS via `device_add_disk` above.
        Ok(GenDisk {
            _tagset: tagset,
            gendisk,
        })
    }
}

/// A generic block device.
///
/// # Invariants
///
/// - `gendisk` must always point to an initialized and valid `struct gendisk`.
/// - `gendisk` was added to the VFS through a call to
///   `bindings::device_add_disk`.
pub struct GenDisk<T: Operations> {
    _tagset: Arc<TagSet<T>>,
    gendisk: *mut bindings::gendisk,
}

// SAFETY: `GenDisk` is an owned pointer to a `struct gendisk` and an `Arc` to a
// `TagSet` It is safe to send this to other threads as long as T is Send.
unsafe impl<T: Operations + Send> Send for GenDisk<T> {}

// SAFETY: the only method taking `&self` reads pointers that do not change while the disk exists.
unsafe impl<T: Operations + Send> Sync for GenDisk<T> {}

impl<T: Operations> GenDisk<T> {
    /// The address of the disk's page cache (the whole-disk block device's mapping): an identity
    /// to compare the mappings the page cache names with, never dereferenced by Rust.
    pub fn mapping_addr(&self) -> usize {
        // SAFETY: by the type invariants `gendisk` is valid and added, so its `part0` block
        // device exists (it is freed with the disk) and its `bd_mapping` is set.
        unsafe { (*(*self.gendisk).part0).bd_mapping as usize }
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: By type invariant, `self.gendisk` points to a valid and
        // initialized instance of `struct gendisk`, and it was previously added
        // to the VFS.
        let queue_data = unsafe { (*(*self.gendisk).queue).queuedata };

        // SAFETY: As above.
        unsafe { bindings::del_gendisk(self.gendisk) };

        // SAFETY: `del_gendisk` has frozen and quiesced the queue: no callback
        // runs or will run, so the queue data (from `into_foreign` in
        // `build`) can be released.
        drop(unsafe { T::QueueData::from_foreign(queue_data) });

        // SAFETY: By type invariant, `self.gendisk` was added to the VFS, so
        // `put_disk()` must follow `del_gendisk()` to drop the final gendisk
        // reference and trigger the remaining release path.
        unsafe { bindings::put_disk(self.gendisk) };
    }
}

/// The disk operations of a module: none but the owner, which an open disk pins.
struct DiskOps<O>(core::marker::PhantomData<O>);

impl<O: Owner> DiskOps<O> {
    const TABLE: bindings::block_device_operations = bindings::block_device_operations {
        owner: O::MODULE,
        // SAFETY: all-zero is a valid `block_device_operations` (no callbacks).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    fn table() -> &'static bindings::block_device_operations {
        &Self::TABLE
    }
}
