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

/// What the page cache asks the hook. Mappings are named by address only.
///
/// The registration owns the hook's value and lends it to every callback, so the driver's
/// state (its published disks) lives there rather than in a global.
pub trait Hook: Send + Sync + 'static {
    /// The node to allocate a folio of `mapping` at page `index` on, if any.
    fn alloc_node(&self, mapping: usize, index: u64) -> Option<i32>;
    /// A folio of `nr` pages was added to `mapping` at `index`.
    fn added(&self, mapping: usize, index: u64, nr: u64);
    /// Whether the uptodate folio of `nr` pages at `index` of `mapping` that a reader found is
    /// stale. With `consume` the reader then evicts it (if it is clean and unmapped) and reads it
    /// again, or reads it as it is: the hook may count it current from then on. Without
    /// `consume` (fault-around, which only skips the folio) nothing changes.
    fn stale(&self, mapping: usize, index: u64, nr: u64, consume: bool) -> bool;
}

/// The callbacks table and the hook it leads to, at one heap address.
#[repr(C)]
struct Installed<T: Hook> {
    ops: bindings::pagecache_hook_ops,
    hook: T,
}

/// The installed hook `T`.
///
/// # Invariants
///
/// `inner.ops` is registered with the page cache until drop; every callback it names is
/// called with a pointer to `inner.ops`.
pub struct Registration<T: Hook> {
    inner: KBox<Installed<T>>,
}

// SAFETY: the callbacks table is immutable and only read by the page cache; `T` is `Send`.
unsafe impl<T: Hook> Send for Registration<T> {}
// SAFETY: `&self` lends `&T`, and `T` is `Sync`.
unsafe impl<T: Hook> Sync for Registration<T> {}

impl<T: Hook> Registration<T> {
    /// Installs `hook`; `EBUSY` if another hook is installed.
    pub fn register(hook: T) -> Result<Self> {
        let inner = KBox::new(
            Installed {
                ops: bindings::pagecache_hook_ops {
                    alloc_node: Some(Self::alloc_node),
                    added: Some(Self::added),
                    stale: Some(Self::stale),
                },
                hook,
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `inner.ops` is a valid table whose heap address stays valid until `drop`
        // unregisters it.
        to_result(unsafe { bindings::pagecache_hook_register(&inner.ops) })?;
        // INVARIANT: registered just above.
        Ok(Self { inner })
    }

    /// The installed hook.
    pub fn hook(&self) -> &T {
        &self.inner.hook
    }

    /// # Safety
    ///
    /// `ops` is the `ops` of a registered [`Installed<T>`] (type invariant of [`Registration`]),
    /// which stays alive for the callback (unregistering waits for callbacks).
    unsafe fn hook_of<'a>(ops: *const bindings::pagecache_hook_ops) -> &'a T {
        // SAFETY: `ops` is the first field of a `#[repr(C)]` `Installed<T>` (caller).
        let inner = unsafe { crate::container_of!(ops, Installed<T>, ops) };
        // SAFETY: alive for the callback (caller).
        unsafe { &(*inner).hook }
    }

    unsafe extern "C" fn alloc_node(
        ops: *const bindings::pagecache_hook_ops,
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
    ) -> crate::ffi::c_int {
        // SAFETY: the page cache calls with the registered table (type invariant).
        let hook = unsafe { Self::hook_of(ops) };
        hook.alloc_node(mapping as usize, index as u64)
            .unwrap_or(bindings::NUMA_NO_NODE)
    }

    unsafe extern "C" fn added(
        ops: *const bindings::pagecache_hook_ops,
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
        nr: crate::ffi::c_ulong,
    ) {
        // SAFETY: the page cache calls with the registered table (type invariant).
        let hook = unsafe { Self::hook_of(ops) };
        hook.added(mapping as usize, index as u64, nr as u64)
    }

    unsafe extern "C" fn stale(
        ops: *const bindings::pagecache_hook_ops,
        mapping: *mut bindings::address_space,
        index: crate::ffi::c_ulong,
        nr: crate::ffi::c_ulong,
        consume: bool,
    ) -> bool {
        // SAFETY: the page cache calls with the registered table (type invariant).
        let hook = unsafe { Self::hook_of(ops) };
        hook.stale(mapping as usize, index as u64, nr as u64, consume)
    }
}

impl<T: Hook> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); this waits for every callback in progress.
        unsafe { bindings::pagecache_hook_unregister(&self.inner.ops) };
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
