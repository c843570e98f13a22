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

/// Tenant numbers in use and their owners: number `t` is in use while `owners[t]` is nonzero.
#[derive(Clone, Copy, Default)]
pub(crate) struct TenantTable {
    owners: [Pid; MAX_TENANTS as usize],
}

impl TenantTable {
    /// The numbers in use, one bit each.
    pub(crate) fn used(&self) -> u32 {
        (0..MAX_TENANTS)
            .filter(|&t| self.owner(t).is_some())
            .fold(0, |mask, t| mask | 1 << t)
    }

    /// Takes the lowest free number below `limit` for `owner`.
    pub(crate) fn take(&mut self, limit: u32, owner: Pid) -> Option<u32> {
        let limit = limit.min(MAX_TENANTS) as usize;
        let (t, slot) = self.owners[..limit]
            .iter_mut()
            .enumerate()
            .find(|(_, o)| **o == 0)?;
        // A task always has a pid; 1 stands in should it ever read 0, which would free the number.
        *slot = owner.max(1);
        // Cannot truncate: below `MAX_TENANTS`.
        Some(t as u32)
    }

    /// Frees number `t`.
    pub(crate) fn free(&mut self, t: u32) {
        if let Some(o) = self.owners.get_mut(t as usize) {
            *o = 0;
        }
    }

    /// The process that configured tenant `t`, `None` if `t` is free.
    pub(crate) fn owner(&self, t: u32) -> Option<Pid> {
        self.owners.get(t as usize).copied().filter(|&o| o != 0)
    }
}
