// SPDX-License-Identifier: GPL-2.0

//! The device's tenant numbers: which are in use, and which process configured each.
//!
//! The owner is for the operator, who sees it in debugfs next to the tenant's counters: when
//! `CONFIGURE` answers `EBUSY` because every tenant is taken, it says who holds them. It is the
//! configuring process's pid in the initial pid namespace (debugfs is the host's view), recorded
//! once: a file passed to another process or inherited over `fork` keeps its first owner.

use crate::abi::MAX_TENANTS;

/// A process id as the kernel keeps it (`pid_t`, in the initial namespace).
pub(crate) type Pid = i32;

/// Tenant numbers in use and their owners.
// INVARIANT: `owners[t]` is nonzero exactly when bit `t` of `used` is set.
#[derive(Clone, Copy, Default)]
pub(crate) struct TenantTable {
    used: u32,
    owners: [Pid; MAX_TENANTS as usize],
}

impl TenantTable {
    /// The numbers in use, one bit each.
    pub(crate) fn used(&self) -> u32 {
        self.used
    }

    /// Takes the lowest free number below `limit` for `owner` (a nonzero pid).
    pub(crate) fn take(&mut self, limit: u32, owner: Pid) -> Option<u32> {
        let limit = limit.min(MAX_TENANTS);
        let t = (0..limit).find(|t| self.used & (1 << t) == 0)?;
        self.used |= 1 << t;
        // A task always has a pid; 1 stands in should it ever read 0, to keep the invariant.
        self.owners[t as usize] = owner.max(1);
        Some(t)
    }

    /// Frees number `t`.
    pub(crate) fn free(&mut self, t: u32) {
        if let Some(o) = self.owners.get_mut(t as usize) {
            *o = 0;
            self.used &= !(1 << t);
        }
    }

    /// The process that configured tenant `t`, `None` if `t` is free.
    pub(crate) fn owner(&self, t: u32) -> Option<Pid> {
        self.owners.get(t as usize).copied().filter(|&o| o != 0)
    }
}
