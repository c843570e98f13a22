// SPDX-License-Identifier: GPL-2.0

//! The page-cache hook (`patches/0001-mm-pagecache-hook.patch`): where a block device's
//! page-cache folios are allocated, and tags on them that can go stale.
//!
//! C header: [`include/linux/pagecache_hook.h`](srctree/include/linux/pagecache_hook.h)
//!
//! One [`Registration`] at a time exists in the system (`EBUSY` otherwise). Its [`Hook`] is
//! called for **every** page-cache mapping, under `rcu_read_lock()`: it must not sleep and must
//! answer quickly for mappings that are not its own, which it recognises by address
//! ([`crate::block::mq::gen_disk::GenDisk::mapping_addr`]). Dropping the registration waits
//! until no callback runs any more (an RCU grace period), so the hook's data may go after it.
//! With no registration the kernel's page cache behaves as upstream (a static key is off).

use crate::{bindings, error::to_result, prelude::*};
use core::marker::PhantomData;

/// What the page cache asks the hook. Mappings are named by address only.
pub trait Hook: 'static {
    /// The node to allocate a folio of `mapping` at page `index` on, if any.
    fn alloc_node(mapping: usize, index: u64) -> Option<i32>;
    /// A folio of `nr` pages was added to `mapping` at `index`.
    fn added(mapping: usize, index: u64, nr: u64);
    /// Whether the uptodate folio of `nr` pages at `index` of `mapping` that a reader found is
    /// stale. With `consume` the reader then evicts it (if it is clean and unmapped) and reads it
    /// again, or reads it as it is: the hook may count it current from then on. Without
    /// `consume` (fault-around, which only skips the folio) nothing changes.
    fn stale(mapping: usize, index: u64, nr: u64, consume: bool) -> bool;
}

/// The installed hook `T`.
///
/// # Invariants
///
/// `ops` is registered with the page cache until drop.
pub struct Registration<T: Hook> {
    ops: KBox<bindings::pagecache_hook_ops>,
    _t: PhantomData<T>,
}

// SAFETY: the callbacks table is immutable and only read by the page cache.
unsafe impl<T: Hook> Send for Registration<T> {}
// SAFETY: as above; there is no method on `&self`.
unsafe impl<T: Hook> Sync for Registration<T> {}

impl<T: Hook> Registration<T> {
    /// Installs `T`; `EBUSY` if another hook is installed.
    pub fn register() -> Result<Self> {
        let ops = KBox::new(
            bindings::pagecache_hook_ops {
                alloc_node: Some(Self::alloc_node),
                added: Some(Self::added),
                stale: Some(Self::stale),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `ops` is a valid table whose heap address stays valid until `drop`
        // unregisters it.
        to_result(unsafe { bindings::pagecache_hook_register(&*ops) })?;
        // INVARIANT: registered just above.
        Ok(Self {
            ops,
            _t: PhantomData,
        })
    }

    unsafe extern "C" fn alloc_node(
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
    ) -> crate::ffi::c_int {
        T::alloc_node(mapping as usize, index as u64).unwrap_or(bindings::NUMA_NO_NODE)
    }

    unsafe extern "C" fn added(
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
        nr: crate::ffi::c_ulong,
    ) {
        T::added(mapping as usize, index as u64, nr as u64)
    }

    unsafe extern "C" fn stale(
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
        nr: crate::ffi::c_ulong,
        consume: bool,
    ) -> bool {
        T::stale(mapping as usize, index as u64, nr as u64, consume)
    }
}

impl<T: Hook> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); this waits for every callback in progress.
        unsafe { bindings::pagecache_hook_unregister(&*self.ops) };
    }
}

/// Waits for an RCU grace period: every `rcu_read_lock()` section (every hook callback)
/// running now has finished when this returns.
pub fn synchronize_rcu() {
    // SAFETY: may sleep; has no other requirement.
    unsafe { bindings::synchronize_rcu() }
}

/// The NUMA node of physical address `addr` as firmware described it (including memory the
/// kernel does not manage, such as a reserved persistent region), if any.
pub fn phys_to_target_node(addr: u64) -> Option<i32> {
    // SAFETY: a lookup in the boot-time NUMA tables; no requirement.
    let nid = unsafe { bindings::phys_to_target_node(addr) };
    (nid >= 0).then_some(nid)
}
