// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/cxl_ccmN/stats`: what the device reports, per device and per tenant.
//!
//! The device's view (its status, heartbeat, and each tenant's status, error and counters) is
//! read from the register block at every read of the file; the host's view of a tenant (polls,
//! credit stores, launches completed) is its `CXL_CCM_IOC_STATS`.

use core::fmt::Write;
use kernel::{
    debugfs::{SeqWriter, Show},
    sync::Arc,
};

use crate::{abi, CcmDev};

/// The `stats` file of one device.
pub(crate) struct DeviceStats {
    pub(crate) dev: Arc<CcmDev>,
}

impl Show for DeviceStats {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let Some(hw) = self.dev.hw.try_access() else {
            return writeln!(out, "unbound");
        };
        // Offsets inside the block for every tenant the identity allows: never 0 by error.
        let r32 = |o: usize| hw.regs.try_read32(o).unwrap_or(0);
        let r64 = |o: usize| hw.regs.try_read64(o).unwrap_or(0);
        let used = *self.dev.tenants.lock();
        writeln!(
            out,
            "dev_status {:#x} heartbeat {} tenants_in_use {:#x}",
            r32(abi::REG_DEV_STATUS),
            r32(abi::REG_HEARTBEAT),
            used
        )?;
        writeln!(
            out,
            "tenant status error launches records payload_bytes credit_stalls dma_batches unpublished \
             mode streaming_factor slot_size metadata_slots payload_slots"
        )?;
        for t in 0..self.dev.id.max_tenants {
            let b = abi::tenant_regs_offset(t);
            let status = r32(b + abi::TREG_STATUS);
            if status == 0 && used & (1 << t) == 0 {
                continue;
            }
            writeln!(
                out,
                "{t} {status:#x} {} {} {} {} {} {} {} {} {} {} {} {}",
                r32(b + abi::TREG_ERROR),
                r64(b + abi::TREG_LAUNCHES),
                r64(b + abi::TREG_RECORDS),
                r64(b + abi::TREG_PAYLOAD_BYTES),
                r64(b + abi::TREG_CREDIT_STALLS),
                r64(b + abi::TREG_DMA_BATCHES),
                r64(b + abi::TREG_UNPUBLISHED),
                r32(b + abi::TREG_MODE),
                r32(b + abi::TREG_STREAMING_FACTOR),
                r32(b + abi::TREG_SLOT_SIZE),
                r32(b + abi::TREG_METADATA_SLOTS),
                r32(b + abi::TREG_PAYLOAD_SLOTS)
            )?;
        }
        Ok(())
    }
}
