// SPDX-License-Identifier: GPL-2.0

//! One tenant: an open file of `/dev/cxl_ccmN` after `CONFIGURE`.
//!
//! A tenant owns a DMA region in host memory (pinned pages, write-combining, physically
//! scattered on purpose) holding the ring headers, the metadata ring and the payload ring; its
//! scatter-gather list is shadowed into device memory as a descriptor table (AXLE §IV-D). It
//! also owns a partition of device memory: the descriptor table, the input buffer user space
//! maps, and the output buffer the device computes into.
//!
//! Host side of the protocol (`proto/`): [`TenantCore::scan`] loads the metadata tail with
//! acquire, checks every new record's `seq` and tells the [`GapHead`] which payload slots were
//! received; `RELEASE` releases payload slots in any order, moves the metadata head, and stores
//! heads into the device's credit line (a CXL.mem store, release-ordered after the reads of the
//! released slots) when the [`HeadPublisher`] policy says so. The poller thread polls the tail
//! at the configured interval while someone waits (`WAIT`, `poll()`), and wakes them.
//!
//! Teardown: the tenant is disabled in the device (`ctrl` cleared) and the driver waits until
//! the device acknowledges (`status` cleared) before unmapping and freeing the region. If the
//! device never acknowledges, the region is leaked rather than freed under a DMA. Once an
//! unbind has begun, the registers are out of reach but the device may still be serving the
//! tenant (the unbind disables it only after its users have left): the region then goes to
//! the device's [`DeviceStop`](crate::device_stop::DeviceStop), which frees it once the device
//! acknowledged its disable.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use kernel::{
    dev_err,
    dma_sg::DmaSgTable,
    kthread::KThread,
    pinned_pages::PinnedPages,
    prelude::*,
    sync::{Arc, Mutex},
    wait::WaitQueue,
};

use crate::abi::{self, TenantRegs};
use crate::host_copy::{Cut, Producer};
use crate::link::Link;
use crate::proto::credit::HeadPublisher;
use crate::proto::gap_head::GapHead;
use crate::proto::ring::RingIndex;
use crate::proto::tenant_config::TenantConfig;
use crate::regio::RegIo;
use crate::{CcmDev, TenantNumber};

mod configure;
mod cut;
mod launch;
mod layout;
mod mailbox;
mod mmap;
mod poller;
mod release;
mod rings;
mod stats;
mod wait;

use layout::Layout;
use stats::DeviceBaseline;

/// The gap head's bitmap on the heap (6.12's `KVec` has no `AsRef<[T]>`).
struct Bitmap(KVec<u64>);

impl AsRef<[u64]> for Bitmap {
    fn as_ref(&self) -> &[u64] {
        &self.0
    }
}

impl AsMut<[u64]> for Bitmap {
    fn as_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

/// Counters of the tenant, kept by the driver.
#[derive(Clone, Copy, Default)]
struct Counters {
    launched: u64,
    /// Launches that waited for a free launch slot, and how long.
    launch_waits: u64,
    launch_wait_ns: u64,
    completed: u64,
    polls: u64,
    empty_polls: u64,
    published: u64,
    errors: u64,
}

/// The host side of the rings, under the tenant lock.
struct RingState {
    gap: GapHead<Bitmap>,
    /// The metadata head user space released (`RELEASE_METADATA`).
    md_head: RingIndex,
    /// Every record before this one was checked and its payload received.
    scanned: RingIndex,
    md_pub: HeadPublisher,
    pl_pub: HeadPublisher,
    counters: Counters,
    baseline: DeviceBaseline,
    /// `stall_ns` at the last `STATS_RESET`.
    stall_base: u64,
    /// `interrupts` at the last `STATS_RESET`.
    interrupts_base: u64,
    /// A record failed its checks: the device broke the protocol. Sticky.
    broken: bool,
    /// RP and BS: the driver writes the rings from the results in device memory.
    producer: Producer,
    /// RP: the launch whose mailbox command is outstanding, and the last doorbell rung.
    rp: Option<RpLaunch>,
    mbox_seq: u32,
}

/// An RP launch enqueued in the mailbox.
#[derive(Clone, Copy)]
struct RpLaunch {
    seq: u32,
    tag: u32,
    cut: Cut,
    src: u64,
}

/// Who needs the poller (see [`poller`](poller::poller)).
struct PollerDemand {
    /// A `poll()` found nothing, or an RP launch needs driving, since the last wakeup: the
    /// poller polls. Cleared at a wakeup and when its lease runs out with nobody waiting.
    armed: AtomicBool,
    /// When `armed` was last set ([`crate::link::now_ns`]).
    armed_at: AtomicU64,
    /// `WAIT` calls in progress in a polled mode: the poller polls while there are any.
    waiters: AtomicU32,
}

/// What the poller and the file share.
#[pin_data]
pub(crate) struct TenantCore {
    dev: Arc<CcmDev>,
    index: u32,
    link: Link,
    region: Arc<PinnedPages>,
    cfg: TenantConfig,
    layout: Layout,
    #[pin]
    state: Mutex<RingState>,
    #[pin]
    wq: WaitQueue,
    /// Where the poller sleeps while nobody waits.
    #[pin]
    arm_wq: WaitQueue,
    /// The next launch tag; held across a launch, so tags reach the device in order and a
    /// failed launch consumes none.
    #[pin]
    launch: Mutex<u32>,
    /// Held by every `STATS` from its snapshot to its reset, if any (`stats.rs`).
    #[pin]
    stats_serial: Mutex<()>,
    /// `scanned`, readable without the lock (for wait conditions).
    scanned: AtomicU32,
    /// Who needs the poller.
    demand: PollerDemand,
    /// AXLE_IRQ: interrupts handled.
    interrupts: AtomicU64,
    /// Nanoseconds a host core spent stalled on the link for this tenant (every CXL.mem and
    /// CXL.io access the driver makes for it, and the BS store's wait for its answer).
    stall_ns: AtomicU64,
}

/// Whether the device back-streams a mode's results itself (AXLE, AXLE_IRQ), rather than the
/// driver copying them (RP, BS).
fn streams(mode: u32) -> bool {
    mode == abi::MODE_AXLE || mode == abi::MODE_AXLE_IRQ
}

fn slots_for(length: u32, slot_size: u32) -> u32 {
    length.div_ceil(slot_size)
}

/// A configured tenant, owned by its open file.
pub(crate) struct Tenant {
    index: u32,
    dev: Arc<CcmDev>,
    core: Arc<TenantCore>,
    poller: Option<KThread>,
    sg: Option<DmaSgTable>,
    /// Dropped after the teardown: the number is reused only once the device let go (never, if
    /// it did not acknowledge the disable). `None` only once leaked.
    number: Option<TenantNumber>,
}

/// How a tenant's disable ended, which decides what may be done with its DMA region.
enum Disabled {
    /// The device acknowledged: it writes no more of the region.
    Acked,
    /// It did not acknowledge: its DMA may still be live.
    NotAcked,
    /// The device is being detached: out of reach, but maybe not yet stopped.
    Detaching,
}

impl Tenant {
    /// Disables the tenant in the device and waits for the acknowledgement.
    fn disable(&self) -> Disabled {
        // Once unbind has begun the registers are out of reach, but the device still runs
        // until the unbind's users have left and it is disabled as a whole.
        let Some(hw) = self.dev.hw.try_access() else {
            return Disabled::Detaching;
        };
        let t = abi::tenant_regs_offset(self.index);
        if hw.regs.try_write32(0, t + abi::TREG_CTRL).is_err() {
            return Disabled::NotAcked;
        }
        if crate::wait_until(1000, || hw.regs.try_read32(t + abi::TREG_STATUS) == Ok(0)) {
            Disabled::Acked
        } else {
            Disabled::NotAcked
        }
    }

    fn core(&self) -> &TenantCore {
        &self.core
    }

    /// The device's error code if it stopped serving this tenant.
    fn tenant_error(&self) -> Result<Option<u32>> {
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let t = self.index;
        let st = hw
            .regs
            .read_reg(abi::tenant_reg(t, TenantRegs::TREG_STATUS))?;
        if st & abi::TENANT_STATUS_ERROR == 0 {
            return Ok(None);
        }
        Ok(Some(
            hw.regs
                .read_reg(abi::tenant_reg(t, TenantRegs::TREG_ERROR))?,
        ))
    }

    /// Tears the tenant down; see the module documentation.
    fn teardown(&mut self) {
        drop(self.poller.take());
        let disabled = self.disable();
        // After the disable: the device raises nothing more for this tenant.
        if let Some(slot) = self.dev.irq_tenants.lock().get_mut(self.index as usize) {
            *slot = None;
        }
        let sg = self.sg.take();
        match disabled {
            Disabled::Acked => drop(sg),
            // The region's pages live as long as its mapping: the detach frees both once the
            // device is disabled. The number belongs to this binding, which is ending.
            Disabled::Detaching => {
                if let Some(sg) = sg {
                    self.dev.stop.hand_over(sg);
                }
            }
            Disabled::NotAcked => {
                dev_err!(
                    &self.dev.dma_dev,
                    "tenant {}: the device did not acknowledge the disable; leaking its DMA region\n",
                    self.index
                );
                core::mem::forget(sg);
                core::mem::forget(self.core.region.clone());
                // Nor its number: the device may still serve it, and a new tenant would
                // reprogram its registers and partition under it.
                core::mem::forget(self.number.take());
            }
        }
    }
}

impl Drop for Tenant {
    fn drop(&mut self) {
        self.teardown();
    }
}
