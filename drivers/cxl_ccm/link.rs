// SPDX-License-Identifier: GPL-2.0

//! The host's side of a modelled link.
//!
//! A software device models the CXL link's costs for its own accesses; the host's accesses to
//! the device (a CXL.io mailbox read, a CXL.mem store, loading results) reach ordinary memory and
//! would cost nothing. The device therefore advertises the costs the host must add
//! (`REG_LINK_*`, zero on hardware) and the driver pays them here by spinning, so that the offload
//! modes differ by their protocol structure and not by who happens to model what.

use kernel::time::Ktime;

/// Link costs the host pays, from the device's `REG_LINK_*` registers. Every access returns the
/// nanoseconds the core was stalled for it (the host core stall time of AXLE's Figure 13).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Link {
    pub(crate) cxl_mem_rtt_ns: u64,
    pub(crate) cxl_io_rtt_ns: u64,
    pub(crate) ps_per_byte: u64,
    pub(crate) remote_poll_ns: u64,
    /// The handling of one interrupt (AXLE_IRQ), paid on the host's interrupt path.
    pub(crate) irq_ns: u64,
}

/// Monotonic time in nanoseconds: the clock of every modelled wait and interval of the driver.
pub(crate) fn now_ns() -> u64 {
    Ktime::ktime_get().to_ns().max(0) as u64
}

/// Busy-waits until `until` ([`now_ns`]); returns the nanoseconds spun.
pub(crate) fn spin_until(until: u64) -> u64 {
    let start = now_ns();
    let mut now = start;
    while now < until {
        core::hint::spin_loop();
        now = now_ns();
    }
    now - start
}

/// Busy-waits `ns` nanoseconds: the core is stalled on the link, as it would be on hardware.
/// Returns `ns`, the stall the caller accounts to its tenant.
fn spin(ns: u64) -> u64 {
    if ns != 0 {
        spin_until(now_ns().saturating_add(ns));
    }
    ns
}

impl Link {
    /// A posted CXL.mem store: half a round trip until it is visible.
    pub(crate) fn mem_store(&self) -> u64 {
        spin(self.cxl_mem_rtt_ns.div_ceil(2))
    }

    /// A CXL.mem load, or the response of a synchronous store: a round trip.
    pub(crate) fn mem_load(&self) -> u64 {
        spin(self.cxl_mem_rtt_ns)
    }

    /// Loading `bytes` of results by CXL.mem: a round trip plus the transfer.
    pub(crate) fn mem_bulk_load(&self, bytes: u64) -> u64 {
        spin(self.cxl_mem_rtt_ns + bytes.saturating_mul(self.ps_per_byte) / 1000)
    }

    /// A posted CXL.io register write.
    pub(crate) fn io_write(&self) -> u64 {
        spin(self.cxl_io_rtt_ns.div_ceil(2))
    }

    /// Handling `n` interrupts: the host core spends the modelled latency on each.
    pub(crate) fn interrupts(&self, n: u32) -> u64 {
        spin(self.irq_ns.saturating_mul(u64::from(n)))
    }

    /// A CXL.io register read: a round trip.
    pub(crate) fn io_read(&self) -> u64 {
        spin(self.cxl_io_rtt_ns)
    }
}
