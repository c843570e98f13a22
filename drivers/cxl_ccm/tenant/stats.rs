// SPDX-License-Identifier: GPL-2.0

//! `STATS`: the tenant's counters, the device's, and their baselines at the last reset.

use core::sync::atomic::Ordering;
use kernel::{pr_warn_ratelimited, prelude::*};

use super::{streams, Counters, Tenant};
use crate::abi::{self, Reg, Ro, TenantRegs};
use crate::regio::RegIo;
use crate::uapi;

impl Counters {
    /// What was counted since `earlier`, a snapshot of these counters; they only grow between
    /// resets, and resets are serialised, so nothing wraps.
    fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            launched: self.launched.wrapping_sub(earlier.launched),
            launch_waits: self.launch_waits.wrapping_sub(earlier.launch_waits),
            launch_wait_ns: self.launch_wait_ns.wrapping_sub(earlier.launch_wait_ns),
            completed: self.completed.wrapping_sub(earlier.completed),
            polls: self.polls.wrapping_sub(earlier.polls),
            empty_polls: self.empty_polls.wrapping_sub(earlier.empty_polls),
            published: self.published.wrapping_sub(earlier.published),
            errors: self.errors.wrapping_sub(earlier.errors),
        }
    }
}

/// The counters of a `STATS` call, taken before anything is reset.
struct StatsSnapshot {
    counters: Counters,
    /// The device's counters (the driver's, for RP and BS) now, and at the last reset.
    device: DeviceBaseline,
    baseline: DeviceBaseline,
    stall: u64,
    stall_base: u64,
    interrupts: u64,
    interrupts_base: u64,
    /// The device's count of stores it consumed unpublished (never reset).
    unpublished: u64,
}

impl StatsSnapshot {
    /// The statistics since the last reset, as `STATS` reports them.
    fn report(&self, flags: u32, tenant: u32) -> uapi::Stats {
        let (c, d, b) = (&self.counters, &self.device, &self.baseline);
        uapi::Stats {
            flags,
            tenant,
            launched: c.launched,
            launches_completed: c.completed,
            records: d.records.wrapping_sub(b.records),
            payload_bytes: d.payload_bytes.wrapping_sub(b.payload_bytes),
            backpressure_waits: c.launch_waits,
            backpressure_ns: c.launch_wait_ns,
            credit_stalls: d.credit_stalls.wrapping_sub(b.credit_stalls),
            dma_batches: d.dma_batches.wrapping_sub(b.dma_batches),
            polls: c.polls,
            empty_polls: c.empty_polls,
            credits_published: c.published,
            errors: c.errors,
            interrupts: self.interrupts.wrapping_sub(self.interrupts_base),
            ccm_busy_ns: d.busy_ns.wrapping_sub(b.busy_ns),
            credit_wait_ns: d.credit_wait_ns.wrapping_sub(b.credit_wait_ns),
            host_stall_ns: self.stall.wrapping_sub(self.stall_base),
            unpublished: self.unpublished,
            model_deficit_ns: d.model_deficit_ns.wrapping_sub(b.model_deficit_ns),
            model_late_chunks: d.model_late.wrapping_sub(b.model_late),
        }
    }
}

/// Device counters at the last `STATS_RESET`.
#[derive(Clone, Copy, Default)]
pub(super) struct DeviceBaseline {
    records: u64,
    payload_bytes: u64,
    credit_stalls: u64,
    dma_batches: u64,
    busy_ns: u64,
    credit_wait_ns: u64,
    model_deficit_ns: u64,
    model_late: u64,
}

impl Tenant {
    /// `CXL_CCM_IOC_STATS`; `publish` copies the statistics out to the caller.
    ///
    /// With `STATS_RESET`, the counters are reset only after `publish` succeeded, so a caller
    /// that cannot be told the counters does not lose them. The reset then subtracts exactly what
    /// was reported: what was counted between the snapshot and the reset is kept.
    ///
    /// Every `STATS` holds `stats_serial` from its snapshot to its reset, if any: no reset
    /// commits a baseline between another call's reads of the counters and of the baseline, so
    /// no counter is ever read below its baseline (which would wrap), and a reset subtracts
    /// exactly what it reported. The copy-out runs under no lock the data plane takes.
    pub(crate) fn stats(
        &self,
        arg: &uapi::Stats,
        publish: impl FnOnce(&uapi::Stats) -> Result,
    ) -> Result {
        if arg.flags & !uapi::STATS_RESET != 0 {
            pr_warn_ratelimited!("STATS: unknown flags\n");
            return Err(EINVAL);
        }
        let reset = arg.flags & uapi::STATS_RESET != 0;
        let _serial = self.core.stats_serial.lock();
        let snap = self.stats_snapshot()?;
        publish(&snap.report(arg.flags, self.index))?;
        if reset {
            let mut st = self.core.state.lock();
            st.counters = st.counters.since(&snap.counters);
            st.baseline = snap.device;
            st.stall_base = snap.stall;
            st.interrupts_base = snap.interrupts;
        }
        Ok(())
    }

    /// The counters now, and the baselines of the last reset.
    fn stats_snapshot(&self) -> Result<StatsSnapshot> {
        let (device, unpublished) = {
            let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
            let r = |reg: Reg<u64, Ro>| hw.regs.read_reg(abi::tenant_reg(self.index, reg));
            let device = DeviceBaseline {
                records: r(TenantRegs::TREG_RECORDS)?,
                payload_bytes: r(TenantRegs::TREG_PAYLOAD_BYTES)?,
                credit_stalls: r(TenantRegs::TREG_CREDIT_STALLS)?,
                dma_batches: r(TenantRegs::TREG_DMA_BATCHES)?,
                busy_ns: r(TenantRegs::TREG_BUSY_NS)?,
                credit_wait_ns: r(TenantRegs::TREG_CREDIT_WAIT_NS)?,
                model_deficit_ns: r(TenantRegs::TREG_MODEL_DEFICIT_NS)?,
                model_late: r(TenantRegs::TREG_MODEL_LATE)?,
            };
            (device, r(TenantRegs::TREG_UNPUBLISHED)?)
        };
        let st = self.core.state.lock();
        let device = if streams(self.core.cfg.mode) {
            device
        } else {
            // RP and BS: the driver itself writes the rings, one copy per record.
            DeviceBaseline {
                records: st.producer.records,
                payload_bytes: st.producer.bytes,
                credit_stalls: 0,
                dma_batches: 0,
                ..device
            }
        };
        Ok(StatsSnapshot {
            counters: st.counters,
            device,
            baseline: st.baseline,
            stall: self.core.stall_ns.load(Ordering::Relaxed),
            stall_base: st.stall_base,
            interrupts: self.core.interrupts.load(Ordering::Relaxed),
            interrupts_base: st.interrupts_base,
            unpublished,
        })
    }
}
