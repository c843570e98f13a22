// SPDX-License-Identifier: GPL-2.0

//! AXLE_IRQ: the device's interrupt tells the host that a tenant has new records.
//!
//! The device raises at most one interrupt per tenant at a time (`irq_seq` one ahead of
//! `irq_ack`). The handler runs in a thread: it reads each registered tenant's `irq_seq`,
//! acknowledges it (`irq_ack`, which lets the device raise the next one), and wakes the tenant's
//! waiters, who then scan the rings. The handling cost of Table III is paid by the device before
//! it raises the interrupt, so every interrupt costs it once.

use kernel::{irq::Handler, sync::Arc};

use crate::{abi, CcmDev};

/// The handler of one device's interrupt.
pub(crate) struct DeviceIrq {
    pub(crate) dev: Arc<CcmDev>,
}

impl Handler for DeviceIrq {
    fn handle(&self) {
        // Lock order: the hardware, then the registry (as everywhere else).
        let hw = self.dev.hw.lock();
        let Some(hw) = hw.as_ref() else {
            return;
        };
        let tenants = self.dev.irq_tenants.lock();
        for (t, core) in tenants.iter().enumerate() {
            let Some(core) = core else {
                continue;
            };
            let base = abi::tenant_regs_offset(t as u32);
            // `readl()`: the cause and the records were written before the sequence number,
            // and are read after it.
            let (Ok(s), Ok(ack)) = (
                hw.regs.try_read32(base + abi::TREG_IRQ_SEQ),
                hw.regs.try_read32(base + abi::TREG_IRQ_ACK),
            ) else {
                continue;
            };
            if s == ack || hw.regs.try_write32(s, base + abi::TREG_IRQ_ACK).is_err() {
                continue;
            }
            core.interrupted();
        }
    }
}
