// SPDX-License-Identifier: GPL-2.0

//! AXLE_IRQ: the device's interrupt tells the host that a tenant has new records.
//!
//! The device raises one interrupt per streamed batch, counting them in `irq_seq`; signals
//! raised while the handler runs reach it as one. The handler runs in a thread: it reads each
//! registered tenant's `irq_seq`, pays the handling cost of every interrupt since its last
//! acknowledgement (Table III: 50 µs each, `REG_LINK_IRQ_NS`; zero on hardware, where the
//! interrupt costs itself), acknowledges (`irq_ack`), and wakes the tenant's waiters, who then
//! scan the rings. The cost lands on the host's interrupt path, as it does on hardware, and is
//! counted in the tenant's host core stall.

use kernel::{irq::Handler, sync::Arc};

use crate::{abi, CcmDev};

/// The handler of one device's interrupt.
pub(crate) struct DeviceIrq {
    pub(crate) dev: Arc<CcmDev>,
}

impl Handler for DeviceIrq {
    fn handle(&self) {
        // What each tenant was signalled, acknowledged under the tenant registry's lock; paid
        // for after it, so the handling cost does not hold up launches and releases.
        let mut signalled = [0u32; abi::MAX_TENANTS as usize];
        {
            // Unbind waits for this access to end before the hardware goes.
            let Some(hw) = self.dev.hw.try_access() else {
                return;
            };
            let tenants = self.dev.irq_tenants.lock();
            for ((t, core), n) in tenants.iter().enumerate().zip(signalled.iter_mut()) {
                if core.is_none() {
                    continue;
                }
                let base = abi::tenant_regs_offset(t as u32);
                // `readl()`: the cause and the records were written before the sequence
                // number, and are read after it.
                let (Ok(s), Ok(ack)) = (
                    hw.regs.try_read32(base + abi::TREG_IRQ_SEQ),
                    hw.regs.try_read32(base + abi::TREG_IRQ_ACK),
                ) else {
                    continue;
                };
                if s != ack && hw.regs.try_write32(s, base + abi::TREG_IRQ_ACK).is_ok() {
                    *n = s.wrapping_sub(ack);
                }
            }
        }
        let tenants = self.dev.irq_tenants.lock();
        for (core, n) in tenants.iter().zip(signalled) {
            if let (Some(core), true) = (core, n != 0) {
                core.interrupted(n);
            }
        }
    }
}
