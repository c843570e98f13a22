// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/cxl_ccmN/stats`: what the device reports, per device and per tenant.
//!
//! The device's view (its status, heartbeat, and each tenant's status, error and counters) is
//! read from the register block at every read of the file; the host's view of a tenant (polls,
//! credit stores, launches completed) is its `CXL_CCM_IOC_STATS`.

use core::fmt::{self, Display, LowerHex, Write};
use kernel::{
    debugfs::{SeqWriter, Show},
    io_mem::IoMem,
    prelude::*,
    sync::Arc,
};

use crate::abi::{self, GlobalRegs, Readable, Reg, TenantRegs};
use crate::regio::{IoWidth, RegIo};
use crate::CcmDev;

/// A register's value as read for display, or `?` where the block could not be read (a value
/// of 0 would pass for the device's).
struct Shown<T>(Result<T>);

impl<T> Shown<T> {
    fn read<A: Readable>(regs: &IoMem, reg: Reg<T, A>) -> Self
    where
        T: IoWidth,
    {
        Self(regs.read_reg(reg))
    }

    fn fmt_with(
        &self,
        f: &mut fmt::Formatter<'_>,
        show: fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result,
    ) -> fmt::Result {
        match &self.0 {
            Ok(v) => show(v, f),
            Err(_) => f.write_str("?"),
        }
    }
}

impl<T: Display> Display for Shown<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_with(f, Display::fmt)
    }
}

impl<T: LowerHex> LowerHex for Shown<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_with(f, LowerHex::fmt)
    }
}

/// The `stats` file of one device.
pub(crate) struct DeviceStats {
    pub(crate) dev: Arc<CcmDev>,
}

impl Show for DeviceStats {
    fn show(&self, out: &mut SeqWriter<'_>) -> fmt::Result {
        let Some(hw) = self.dev.hw.try_access() else {
            return writeln!(out, "unbound");
        };
        let regs = &hw.regs;
        // A copy: the file is written without the table's lock.
        let table = *self.dev.tenants.lock();
        let used = table.used();
        writeln!(
            out,
            "dev_status {:#x} heartbeat {} tenants_in_use {:#x}",
            Shown::read(regs, GlobalRegs::REG_DEV_STATUS),
            Shown::read(regs, GlobalRegs::REG_HEARTBEAT),
            used
        )?;
        writeln!(
            out,
            "tenant status error launches records payload_bytes credit_stalls dma_batches unpublished \
             mode streaming_factor slot_size metadata_slots payload_slots owner"
        )?;
        for t in 0..self.dev.id.max_tenants {
            let status = Shown::read(regs, abi::tenant_reg(t, TenantRegs::TREG_STATUS));
            if matches!(status.0, Ok(0)) && used & (1 << t) == 0 {
                continue;
            }
            // 0: no process holds the number (the device still reports a status for it).
            let owner = table.owner(t).unwrap_or(0);
            writeln!(out, "{t} {status:#x} {} {owner}", TenantRow { regs, t })?;
        }
        Ok(())
    }
}

/// The device's registers of tenant `t` after its status, in the header's order.
struct TenantRow<'a> {
    regs: &'a IoMem,
    t: u32,
}

impl TenantRow<'_> {
    fn get<T: IoWidth, A: Readable>(&self, reg: Reg<T, A>) -> Shown<T> {
        Shown::read(self.regs, abi::tenant_reg(self.t, reg))
    }
}

impl Display for TenantRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {} {} {} {} {} {} {}",
            self.get(TenantRegs::TREG_ERROR),
            self.get(TenantRegs::TREG_LAUNCHES),
            self.get(TenantRegs::TREG_RECORDS),
            self.get(TenantRegs::TREG_PAYLOAD_BYTES),
            self.get(TenantRegs::TREG_CREDIT_STALLS),
            self.get(TenantRegs::TREG_DMA_BATCHES),
            self.get(TenantRegs::TREG_UNPUBLISHED),
            self.get(TenantRegs::TREG_MODE),
            self.get(TenantRegs::TREG_STREAMING_FACTOR),
            self.get(TenantRegs::TREG_SLOT_SIZE),
            self.get(TenantRegs::TREG_METADATA_SLOTS),
            self.get(TenantRegs::TREG_PAYLOAD_SLOTS)
        )
    }
}
