// SPDX-License-Identifier: GPL-2.0

//! The device's engine thread: follows `dev_ctrl`, beats the heartbeat, enables and disables
//! tenants as the host asks, and serves the enabled ones in turn.
//!
//! One thread per device runs the launch intake, the scheduler and the DMA executor of every
//! tenant; the chunks themselves are computed by the device's µthreads ([`crate::uthreads`]),
//! whose completions the engine collects. Serving tenants in turn with a bounded number of work
//! items per turn keeps one busy tenant from starving the others.
//!
//! When there is no work the thread sleeps briefly (it polls the launch slots, as hardware would
//! watch them); after a while without work it sleeps longer, so an idle device costs little.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{kthread, memremap::MemRemap, prelude::*, shared_mem::SharedMem, sync::Arc};

use crate::abi;
use crate::ccm_clock::CcmClock;
use crate::model::latency::{Cost, LatencyModel};
use crate::pacer::Pacer;
use crate::tenant::Tenant;
use crate::uthreads::Pool;
use crate::visibility::Visibility;
use kernel::irq::SoftLine;

/// Idle turns after which the engine sleeps a millisecond rather than a few microseconds.
const IDLE_TURNS_BEFORE_NAP: u32 = 2_000;
/// A held result due sooner than this is waited for by spinning, a later one by polling.
const HOLD_SPIN_NS: u64 = 200_000;

/// What the engine of one device works with.
pub(crate) struct EngineConfig {
    pub(crate) regs: Arc<MemRemap>,
    pub(crate) mem: Arc<MemRemap>,
    pub(crate) latency: LatencyModel,
    pub(crate) round_robin: bool,
    /// End of the tenant windows in device memory: partitions start after it.
    pub(crate) windows_end: u64,
    pub(crate) max_segments: u32,
    pub(crate) name: u32,
    /// The µthreads' work queues.
    pub(crate) pool: Arc<Pool>,
    /// The device's interrupt line (AXLE_IRQ).
    pub(crate) line: Arc<SoftLine>,
    /// The modelled CCM's clock ([`crate::ccm_clock`]); `None` releases results as soon as
    /// they are computed.
    pub(crate) clock: Option<CcmClock>,
    /// Poll without sleeping while a tenant is enabled (module parameter `poll_idle`).
    pub(crate) poll_idle: bool,
    /// What the device can see of its memory, if it models HDM-H ([`crate::visibility`]).
    pub(crate) vis: Option<Arc<Visibility>>,
}

struct Engine {
    cfg: EngineConfig,
    tenants: KVec<Option<KBox<Tenant>>>,
    pacer: Pacer,
    /// Taken from the configuration: the tenants book its µthreads as they dispatch.
    clock: Option<CcmClock>,
    /// Generation of the next tenant enabled.
    generation: u64,
}

/// The thread body; returns 0, or `-EINVAL` if the register block is too small.
pub(crate) fn run(mut cfg: EngineConfig) -> i32 {
    let mut tenants = KVec::new();
    for _ in 0..abi::MAX_TENANTS {
        if tenants.push(None, GFP_KERNEL).is_err() {
            return -(kernel::bindings::ENOMEM as i32);
        }
    }
    let pacer = Pacer::new(cfg.latency);
    let clock = cfg.clock.take();
    let mut engine = Engine {
        cfg,
        tenants,
        pacer,
        clock,
        generation: 1,
    };
    match engine.main_loop() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

impl Engine {
    fn treg(&self, t: u32, off: usize) -> Result<&AtomicU32> {
        treg(&self.cfg.regs, t, off)
    }

    fn main_loop(&mut self) -> Result {
        let regs = self.cfg.regs.clone();
        let ctrl = regs.atomic_u32(abi::REG_DEV_CTRL)?;
        let status = regs.atomic_u32(abi::REG_DEV_STATUS)?;
        let heartbeat = regs.atomic_u32(abi::REG_HEARTBEAT)?;
        let mut idle = 0u32;
        let mut last_beat = 0u64;
        while !kthread::should_stop() {
            // Acquire: what the host wrote before enabling is visible once the bit is.
            let enabled = ctrl.load(Ordering::Acquire) & abi::DEV_CTRL_ENABLE != 0;
            let ready = status.load(Ordering::Relaxed) & abi::DEV_STATUS_READY != 0;
            if !enabled {
                if ready {
                    // Stop every tenant before saying so: the host frees their memory next.
                    self.disable_all()?;
                    status.store(0, Ordering::Release);
                }
                kthread::schedule_timeout_interruptible(1);
                continue;
            }
            if !ready {
                status.store(abi::DEV_STATUS_READY, Ordering::Release);
            }
            // The ABI promises a beat at least every 10 ms.
            let now = crate::pacer::now_ns();
            if now.wrapping_sub(last_beat) >= 1_000_000 {
                // The registers are uncached: the device, their only writer, needs no locked
                // read-modify-write.
                heartbeat.store(
                    heartbeat.load(Ordering::Relaxed).wrapping_add(1),
                    Ordering::Release,
                );
                last_beat = now;
            }
            let served = self.serve_tenants()?;
            if self.collect()? || served {
                idle = 0;
                kthread::cond_resched();
            } else if let Some(due) = self.next_due() {
                // A result is held for its modelled time, or a batch is still on the modelled
                // DMA engine. Far from it, poll the launch slots as when idle (a launch must
                // not wait for the held result); near it, or in bench mode (`poll_idle`, the
                // device model on a CPU of its own), spin: a timer sleep under emulation may
                // overshoot by milliseconds, and the result would leave that much after its
                // modelled time.
                idle = 0;
                self.pacer.pay();
                if !self.cfg.poll_idle && due.saturating_sub(crate::pacer::now_ns()) > HOLD_SPIN_NS
                {
                    kthread::usleep_range(5, 20);
                } else {
                    kthread::cond_resched();
                }
            } else if self.cfg.poll_idle && self.tenants.iter().any(Option::is_some) {
                // Hardware watches its launch slots and mailbox all the time: a timer sleep
                // here would add its wakeup (tens of µs under emulation) to every launch.
                self.pacer.pay();
                kthread::cond_resched();
            } else {
                idle = idle.saturating_add(1);
                self.pacer.pay();
                if idle < IDLE_TURNS_BEFORE_NAP {
                    kthread::usleep_range(5, 20);
                } else {
                    kthread::usleep_range(1000, 2000);
                }
            }
        }
        let b = self.pacer.budget();
        pr_info!(
            "cxl_ccm.{}: modelled delays {} us in total, {} DMA requests ({} us)\n",
            self.cfg.name,
            b.total_ns() / 1000,
            b.events(Cost::DmaPrep),
            (b.ns(Cost::DmaPrep) + b.ns(Cost::DmaTransfer)) / 1000
        );
        self.disable_all()
    }

    /// The earliest modelled event the engine waits for: a held result's time, or a batch's
    /// landing on the modelled DMA engine.
    fn next_due(&self) -> Option<u64> {
        let held = self.clock.as_ref().and_then(CcmClock::next_due);
        let landing = self
            .tenants
            .iter()
            .flatten()
            .filter_map(|t| t.next_landing())
            .min();
        match (held, landing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Tears down every tenant and clears its status.
    fn disable_all(&mut self) -> Result {
        for t in 0..abi::MAX_TENANTS {
            if let Some(slot) = self.tenants.get_mut(t as usize) {
                *slot = None;
            }
            self.treg(t, abi::TREG_STATUS)?.store(0, Ordering::Release);
        }
        Ok(())
    }

    /// Follows each tenant's `ctrl` and serves the enabled ones; returns whether any worked.
    fn serve_tenants(&mut self) -> Result<bool> {
        let mut busy = false;
        let regs = self.cfg.regs.clone();
        for t in 0..abi::MAX_TENANTS {
            let want = treg(&regs, t, abi::TREG_CTRL)?.load(Ordering::Acquire)
                & abi::TENANT_CTRL_ENABLE
                != 0;
            let status = treg(&regs, t, abi::TREG_STATUS)?;
            let st = status.load(Ordering::Relaxed);
            let slot = self.tenants.get_mut(t as usize).ok_or(EINVAL)?;
            match (want, slot.is_some()) {
                (true, false) => {
                    if st & abi::TENANT_STATUS_ERROR != 0 {
                        continue;
                    }
                    let cfg = &self.cfg;
                    let result = Tenant::enable(
                        t,
                        cfg.name,
                        &cfg.regs,
                        &cfg.mem,
                        cfg.vis.as_ref(),
                        cfg.windows_end,
                        cfg.max_segments,
                        cfg.round_robin,
                        self.generation,
                    );
                    self.generation += 1;
                    match result {
                        Ok(tenant) => {
                            *slot = Some(tenant);
                            treg(&regs, t, abi::TREG_ERROR)?.store(0, Ordering::Relaxed);
                            status.store(abi::TENANT_STATUS_ENABLED, Ordering::Release);
                            pr_debug!("cxl_ccm.{}: tenant {t} enabled\n", self.cfg.name);
                        }
                        Err(code) => self.fail(t, code)?,
                    }
                    busy = true;
                }
                (false, true) => {
                    *slot = None;
                    status.store(0, Ordering::Release);
                    pr_debug!("cxl_ccm.{}: tenant {t} disabled\n", self.cfg.name);
                    busy = true;
                }
                (false, false) => {
                    if st != 0 {
                        status.store(0, Ordering::Release);
                    }
                }
                (true, true) => {
                    let Some(tenant) = slot.as_mut() else {
                        continue;
                    };
                    let cfg = &self.cfg;
                    match tenant.service(
                        &cfg.mem,
                        &mut self.pacer,
                        &cfg.pool,
                        self.clock.as_mut(),
                        &cfg.line,
                    ) {
                        Ok(worked) => {
                            busy |= worked;
                            self.publish_stats(t)?;
                        }
                        Err(code) => {
                            self.publish_stats(t)?;
                            if let Some(s) = self.tenants.get_mut(t as usize) {
                                *s = None;
                            }
                            self.fail(t, code)?;
                        }
                    }
                }
            }
        }
        Ok(busy)
    }

    /// Hands the µthreads' completions to their tenants once their modelled time has come;
    /// returns whether there were any.
    fn collect(&mut self) -> Result<bool> {
        let mut any = false;
        while let Some(done) = self.cfg.pool.collect() {
            any = true;
            if let Some(tenant) = self.tenant_of(&done) {
                tenant.note_finished(&done);
            }
            let done = match self.clock.as_mut() {
                Some(clock) => clock.arrive(done),
                None => Some(done),
            };
            if let Some(done) = done {
                self.finish(&done)?;
            }
        }
        while let Some(done) = self.clock.as_mut().and_then(CcmClock::due) {
            any = true;
            self.finish(&done)?;
        }
        Ok(any)
    }

    /// The tenant a completion belongs to, unless it was disabled since.
    fn tenant_of(&mut self, done: &crate::uthreads::Done) -> Option<&mut Tenant> {
        let t = done.ticket.tenant;
        let tenant = self.tenants.get_mut(t as usize)?.as_mut()?;
        (tenant.generation() == done.ticket.generation).then_some(&mut **tenant)
    }

    /// Hands one completion to its tenant.
    fn finish(&mut self, done: &crate::uthreads::Done) -> Result {
        let t = done.ticket.tenant;
        let Some(tenant) = self.tenant_of(done) else {
            // The chunk of a tenant that was disabled meanwhile.
            return Ok(());
        };
        if let Err(code) = tenant.finish(done) {
            if let Some(slot) = self.tenants.get_mut(t as usize) {
                *slot = None;
            }
            self.fail(t, code)?;
        }
        Ok(())
    }

    /// Stops serving tenant `t` with an error the host can read.
    fn fail(&mut self, t: u32, code: u16) -> Result {
        pr_warn!(
            "cxl_ccm.{}: tenant {t} stopped with status {code}\n",
            self.cfg.name
        );
        self.treg(t, abi::TREG_ERROR)?
            .store(u32::from(code), Ordering::Relaxed);
        self.treg(t, abi::TREG_STATUS)?
            .store(abi::TENANT_STATUS_ERROR, Ordering::Release);
        Ok(())
    }

    /// Mirrors a tenant's counters into its status registers.
    fn publish_stats(&self, t: u32) -> Result {
        let Some(Some(tenant)) = self.tenants.get(t as usize) else {
            return Ok(());
        };
        let s = tenant.stats();
        let base = abi::tenant_regs_offset(t);
        let regs = &self.cfg.regs;
        for (off, v) in [
            (abi::TREG_LAUNCHES, tenant.launches()),
            (abi::TREG_RECORDS, s.records),
            (abi::TREG_PAYLOAD_BYTES, s.payload_bytes),
            (abi::TREG_CREDIT_STALLS, s.credit_stalls),
            (abi::TREG_DMA_BATCHES, s.batches),
            (abi::TREG_BUSY_NS, tenant.busy_ns()),
            (abi::TREG_CREDIT_WAIT_NS, s.credit_wait_ns),
            (abi::TREG_UNPUBLISHED, tenant.unpublished()),
            (abi::TREG_MODEL_LATE, tenant.model_deficit().0),
            (abi::TREG_MODEL_DEFICIT_NS, tenant.model_deficit().1),
        ] {
            regs.atomic_u64(base + off)?.store(v, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn treg(regs: &MemRemap, t: u32, off: usize) -> Result<&AtomicU32> {
    regs.atomic_u32(abi::tenant_regs_offset(t) + off)
}
