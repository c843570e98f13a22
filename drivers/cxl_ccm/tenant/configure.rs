// SPDX-License-Identifier: GPL-2.0

//! `CONFIGURE`: the tenant set up on the device (region, descriptor table, registers) and enabled.

use core::mem::size_of;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    cache_mode::CacheMode,
    dev_err,
    dma_sg::{DataDirection, DmaSgTable},
    kthread::KThread,
    new_mutex, new_wait_queue,
    pinned_pages::PinnedPages,
    pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
    sync::Arc,
};

use super::layout::{region_pages, write_headers, Layout, HEADERS_BYTES};
use super::poller::poller;
use super::stats::DeviceBaseline;
use super::{Bitmap, Counters, PollerDemand, RingState, Tenant, TenantCore};
use crate::abi::{self, DescriptorTable, DmaSegment, Reg, Rw, TenantRegs};
use crate::host_copy::Producer;
use crate::proto::credit::{HeadPublisher, PublishPolicy};
use crate::proto::gap_head::{bitmap_words, GapHead};
use crate::proto::ring::RingIndex;
use crate::proto::tenant_config::{TenantConfig, PAGE_BYTES};
use crate::regio::RegIo;
use crate::{uapi, CcmDev, Hw, TenantNumber};

impl Tenant {
    /// Sets tenant `index` up on the device and enables it.
    pub(crate) fn configure(
        dev: &Arc<CcmDev>,
        number: TenantNumber,
        cfg: TenantConfig,
        arg: &uapi::Configure,
    ) -> Result<Arc<Tenant>> {
        let index = number.index;
        let layout = Layout::new(dev, index, &cfg);
        let pages = region_pages(dev, &layout)?;
        let region = Arc::new(
            PinnedPages::alloc_scattered(pages, -1, CacheMode::WriteCombining)?,
            GFP_KERNEL,
        )?;
        let base = RingIndex::new(arg.index_base);
        let md = cfg.metadata;
        let pl = cfg.payload;
        write_headers(&region, &cfg, arg.index_base)?;
        let sg = DmaSgTable::map(&dev.dma_dev, region.clone(), DataDirection::FromDevice)?;
        let segs = sg.segments()?;
        if segs.len() > dev.id.max_segments as usize {
            return Err(EINVAL);
        }
        let gap = GapHead::new(
            pl,
            Bitmap(KVec::from_elem(
                0u64,
                bitmap_words(pl.capacity()),
                GFP_KERNEL,
            )?),
            base,
        )
        .map_err(|_| EINVAL)?;
        // Publish a quarter ring at a time, and whenever everything received is released.
        let policy = |cap: u32| PublishPolicy::Batched {
            threshold: (cap / 4).max(1),
        };
        let state = RingState {
            gap,
            md_head: base,
            scanned: base,
            md_pub: HeadPublisher::new(md, policy(md.capacity()), base).map_err(|_| EINVAL)?,
            pl_pub: HeadPublisher::new(pl, policy(pl.capacity()), base).map_err(|_| EINVAL)?,
            counters: Counters::default(),
            baseline: DeviceBaseline::default(),
            stall_base: 0,
            interrupts_base: 0,
            broken: false,
            producer: Producer::new(arg.index_base)?,
            rp: None,
            mbox_seq: arg.index_base.wrapping_sub(1),
        };
        let core = Arc::pin_init(
            pin_init!(TenantCore {
                dev: dev.clone(),
                index,
                link: dev.id.link,
                region,
                cfg,
                layout,
                state <- new_mutex!(state),
                wq <- new_wait_queue!(),
                arm_wq <- new_wait_queue!(),
                launch <- new_mutex!(arg.index_base),
                stats_serial <- new_mutex!(()),
                scanned: AtomicU32::new(arg.index_base),
                demand: PollerDemand {
                    armed: AtomicBool::new(false),
                    armed_at: AtomicU64::new(0),
                    waiters: AtomicU32::new(0),
                },
                interrupts: AtomicU64::new(0),
                stall_ns: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )?;
        let mut tenant = Tenant {
            index,
            dev: dev.clone(),
            core: core.clone(),
            poller: None,
            sg: Some(sg),
            number: Some(number),
        };
        // From here on, dropping `tenant` disables it in the device and frees safely.
        tenant.enable(&segs, arg)?;
        if cfg.mode == abi::MODE_AXLE_IRQ {
            if let Some(slot) = dev.irq_tenants.lock().get_mut(index as usize) {
                *slot = Some(core.clone());
            }
        }
        let poll_core = core.clone();
        tenant.poller = Some(KThread::spawn(
            kernel::fmt!("cxl_ccm_poll/{}", index),
            move || poller(poll_core),
        )?);
        Ok(Arc::new(tenant, GFP_KERNEL)?)
    }

    /// Checks what `configure` checks before it changes anything, and returns what `CONFIGURE`
    /// reports for tenant `index`: known before the tenant exists, so that it can be copied out
    /// first.
    pub(crate) fn outputs(
        dev: &CcmDev,
        index: u32,
        cfg: &TenantConfig,
        arg: &uapi::Configure,
    ) -> Result<uapi::Configure> {
        region_pages(dev, &Layout::new(dev, index, cfg))?;
        Ok(uapi::Configure {
            tenant: index,
            headers_size: HEADERS_BYTES,
            metadata_ring_size: cfg.metadata_ring_bytes,
            payload_ring_size: cfg.payload_ring_bytes,
            ..*arg
        })
    }

    /// Shadows the descriptors, programs the tenant registers and enables the tenant.
    fn enable(&self, segs: &[kernel::dma_sg::DmaSegment], arg: &uapi::Configure) -> Result {
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let count = u32::try_from(segs.len()).map_err(|_| EINVAL)?;
        self.prepare_device_memory(&hw, segs, count, arg.index_base)?;
        self.program_registers(&hw, count, arg)?;
        // `writel()`: the configuration, the table and the headers before the enable bit.
        hw.regs.write_reg(
            abi::tenant_reg(self.index, TenantRegs::TREG_CTRL),
            abi::TENANT_CTRL_ENABLE,
        )?;
        self.wait_enabled(&hw)
    }

    /// Prepares the tenant's device memory for [`Self::enable`]: clears what the previous
    /// holder of the tenant number left, shadows the descriptor table of `segs` (`count` of
    /// them), starts the credit line at `index_base` and publishes all of it to the device.
    fn prepare_device_memory(
        &self,
        hw: &Hw,
        segs: &[kernel::dma_sg::DmaSegment],
        count: u32,
        index_base: u32,
    ) -> Result {
        let l = &self.core.layout;
        let table = DescriptorTable {
            magic: abi::DESCRIPTOR_MAGIC,
            segment_count: count,
            region_size: l.region_bytes,
            headers_offset: 0,
            metadata_offset: l.metadata_offset,
            payload_offset: l.payload_offset,
            reserved: [0; 3],
        };
        // The previous holder of this tenant number left its inputs, outputs, descriptors and
        // launch packets here; the new tenant must see none of them.
        clear_device_memory(&hw.mem, l.part_base, l.part_size)?;
        clear_device_memory(&hw.mem, l.window, abi::TENANT_WINDOW_SIZE)?;
        let at = l.desc_table as usize;
        hw.mem.write_bytes(at, &table.to_bytes())?;
        for (i, s) in segs.iter().enumerate() {
            let seg = DmaSegment {
                bus_addr: s.bus_addr,
                len: s.len,
                flags: if i + 1 == segs.len() {
                    abi::DMA_SEG_LAST
                } else {
                    0
                },
            };
            let off = at + size_of::<DescriptorTable>() + i * size_of::<DmaSegment>();
            hw.mem.write_bytes(off, &seg.to_bytes())?;
        }
        // The credit line starts at the ring bases: a previous tenant's heads would look like
        // credit beyond the tail.
        hw.mem
            .atomic_u32(l.credit())?
            .store(index_base, Ordering::Relaxed);
        hw.mem
            .atomic_u32(l.credit() + 4)?
            .store(index_base, Ordering::Relaxed);
        // The device reads the window (launch slots, credit line) and the descriptors once the
        // tenant is enabled: they leave the write-combining buffers first.
        hw.mem
            .publish(l.window as usize, abi::TENANT_WINDOW_SIZE as usize)?;
        hw.mem.publish(
            at,
            size_of::<DescriptorTable>() + segs.len() * size_of::<DmaSegment>(),
        )
    }

    /// Writes the tenant's configuration into its registers, all but the enable bit: its
    /// modes and rings, `arg`'s index base and schedule, its partition and the descriptor table
    /// of `count` segments.
    fn program_registers(&self, hw: &Hw, count: u32, arg: &uapi::Configure) -> Result {
        let l = &self.core.layout;
        let cfg = &self.core.cfg;
        let w32 = |r: Reg<u32, Rw>, v| hw.regs.write_reg(abi::tenant_reg(self.index, r), v);
        let w64 = |r: Reg<u64, Rw>, v| hw.regs.write_reg(abi::tenant_reg(self.index, r), v);
        w32(TenantRegs::TREG_MODE, cfg.mode)?;
        w32(TenantRegs::TREG_SLOT_SIZE, cfg.streaming_factor.slot_size())?;
        w32(
            TenantRegs::TREG_STREAMING_FACTOR,
            cfg.streaming_factor.bytes(),
        )?;
        w32(TenantRegs::TREG_METADATA_SLOTS, cfg.metadata.capacity())?;
        w32(TenantRegs::TREG_PAYLOAD_SLOTS, cfg.payload.capacity())?;
        w32(
            TenantRegs::TREG_STREAMING_ORDER,
            if cfg.in_order {
                abi::ORDER_IN_ORDER
            } else {
                abi::ORDER_OUT_OF_ORDER
            },
        )?;
        w32(
            TenantRegs::TREG_SCHEDULE,
            if arg.flags & uapi::CONFIGURE_FIFO != 0 {
                abi::SCHEDULE_FIFO
            } else {
                abi::SCHEDULE_DEFAULT
            },
        )?;
        w32(TenantRegs::TREG_INDEX_BASE, arg.index_base)?;
        // The mailbox's first command rings `index_base`: start the doorbell one behind.
        w32(
            TenantRegs::TREG_MBOX_DOORBELL,
            arg.index_base.wrapping_sub(1),
        )?;
        // AXLE_IRQ: nothing acknowledged yet; interrupt on new metadata.
        w32(TenantRegs::TREG_IRQ_ACK, arg.index_base.wrapping_sub(1))?;
        w32(TenantRegs::TREG_IRQ_VECTOR, 0)?;
        w32(
            TenantRegs::TREG_IRQ_CTRL,
            if cfg.mode == abi::MODE_AXLE_IRQ {
                abi::IRQ_CAUSE_METADATA
            } else {
                0
            },
        )?;
        w64(TenantRegs::TREG_MEM_BASE, l.part_base)?;
        w64(TenantRegs::TREG_MEM_SIZE, l.part_size)?;
        w64(TenantRegs::TREG_DESC_TABLE, l.desc_table)?;
        w32(TenantRegs::TREG_DESC_COUNT, count)?;
        if self.dev.id.version >= abi::version(1, 6) {
            w64(TenantRegs::TREG_CHECKSUM_TABLE, l.checksums.table)?;
            w32(TenantRegs::TREG_CHECKSUM_ENTRIES, l.checksums.entries)?;
            w64(TenantRegs::TREG_CHECKSUM_BASE, l.checksums.base)?;
        }
        Ok(())
    }

    /// Waits up to 1 s for the device to enable the tenant or refuse it; `EINVAL` if it refused
    /// it, `ETIMEDOUT` if it did neither.
    fn wait_enabled(&self, hw: &Hw) -> Result {
        let reg = |r| abi::tenant_reg(self.index, r);
        let status = || hw.regs.read_reg(reg(TenantRegs::TREG_STATUS));
        let settled = abi::TENANT_STATUS_ENABLED | abi::TENANT_STATUS_ERROR;
        crate::wait_until(1000, || status().map_or(true, |s| s & settled != 0));
        let st = status()?;
        if st & abi::TENANT_STATUS_ENABLED != 0 {
            return Ok(());
        }
        let code = hw.regs.read_reg(reg(TenantRegs::TREG_ERROR))?;
        if st & abi::TENANT_STATUS_ERROR != 0 {
            pr_warn_ratelimited!(
                "CONFIGURE: the device refused the tenant (status {})\n",
                code
            );
            Err(EINVAL)
        } else {
            dev_err!(
                &self.dev.dma_dev,
                "tenant {}: the device did not enable it within 1 s\n",
                self.index
            );
            Err(ETIMEDOUT)
        }
    }
}

/// Zeroes `len` bytes of device memory at `offset`, a page at a time.
///
/// Done at `CONFIGURE` rather than at teardown: a teardown may find the device already unbound
/// or removed, or never see its disable acknowledged (the device may then still write), and the
/// memory may have been used under an earlier binding. Clearing before the tenant is enabled
/// is the one point that covers every way the previous holder ended.
fn clear_device_memory(mem: &impl SharedMem, offset: u64, len: u64) -> Result {
    static ZEROS: [u8; PAGE_BYTES as usize] = [0; PAGE_BYTES as usize];
    let start = usize::try_from(offset).map_err(|_| EINVAL)?;
    let len = usize::try_from(len).map_err(|_| EINVAL)?;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(ZEROS.len());
        mem.write_bytes(start.checked_add(done).ok_or(EINVAL)?, &ZEROS[..n])?;
        done += n;
    }
    Ok(())
}
