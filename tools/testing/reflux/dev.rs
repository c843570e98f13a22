// SPDX-License-Identifier: GPL-2.0

//! The state the device's threads share: the mappings, the layout, the device side of the two
//! rings, and the counters the controller turns into telemetry.
//!
//! The SQ has one consumer across the link: the engine cores take descriptors under `sq`, which
//! holds the device's SQ head and whether the device is serving. The CQ has one producer across
//! the link: the cores publish completions under `cq`, which holds the device's CQ tail and the
//! interrupt sequence. The two locks are never nested. The controller thread
//! ([`crate::control`]) is the only writer of the status registers; a core that finds the rings
//! corrupt reports it through [`Dev::report_fatal`] and the controller stops the device.

use core::mem::offset_of;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use kernel::{
    irq::SoftLine, kthread, memremap::MemRemap, new_spinlock, pr_warn_ratelimited, prelude::*,
    shared_mem::SharedMem, sync::SpinLock, task::Task, types::ARef,
};

use crate::abi::{
    self, CompletionEntry, PmrLayout, RingConsumer, RingHeader, RingProducer, SubmissionDescriptor,
    CQ_ENTRY_SIZE, SIDE_DEVICE, SQ_ENTRY_SIZE,
};
use crate::actor::control::{self, Controls};
use crate::engine::Engine;
use crate::proto::pipeline::MAX_STAGES;
use crate::proto::ring::{RingGeometry, RingIndex};
use crate::store;

/// Offset of the producer's tail in a ring header.
const TAIL: u64 = (offset_of!(RingHeader, producer) + offset_of!(RingProducer, tail)) as u64;
/// Offset of the consumer's head in a ring header.
const HEAD: u64 = (offset_of!(RingHeader, consumer) + offset_of!(RingConsumer, head)) as u64;

/// The device's side of the SQ.
pub(crate) struct SqState {
    /// Whether the cores may take requests (the device is enabled and healthy).
    serving: bool,
    /// The device's SQ head: the next descriptor to take.
    head: RingIndex,
}

/// The device's side of the CQ.
pub(crate) struct CqState {
    /// The device's CQ tail: the next entry to write.
    tail: RingIndex,
    /// The sequence number of the last interrupt raised.
    irq_seq: u32,
    /// The CQ tail the last interrupt announced.
    announced: RingIndex,
}

/// What a core answers a request with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Completion {
    pub(crate) tag: u16,
    pub(crate) next_stage: u8,
    pub(crate) status: i32,
    pub(crate) stored_bytes: u32,
    pub(crate) epochs: [u32; MAX_STAGES],
}

/// One software CXL SSD, shared by its threads.
#[pin_data]
pub(crate) struct Dev {
    /// The instance number (`reflux.N`).
    pub(crate) id: u32,
    /// The register block.
    pub(crate) regs: MemRemap,
    /// The PMR.
    pub(crate) pmr: MemRemap,
    /// Bytes of the PMR.
    pub(crate) pmr_size: u64,
    /// The layout in effect (from the superblock, fixed while the module is loaded).
    pub(crate) layout: PmrLayout,
    geometry: RingGeometry,
    #[pin]
    sq: SpinLock<SqState>,
    #[pin]
    cq: SpinLock<CqState>,
    /// Requests taken from the SQ and not yet completed (the `QUEUE_DEPTH` register).
    pub(crate) in_flight: AtomicU32,
    /// Set while the controller stops the device: a flush stops waiting for the drain and a core
    /// stops waiting for room in a full CQ.
    cancel: AtomicBool,
    /// Set while the device is held in reset: completions are dropped, not published (the host
    /// rewrites the rings before it enables the device again).
    discard: AtomicBool,
    /// A `DEV_ERR_*` code a core found, for the controller to report.
    fatal: AtomicU32,
    /// Nanoseconds the cores have been busy, summed over the cores (the thermal model's input).
    pub(crate) busy_ns: AtomicU64,
    /// Taken around each block's copy to or from the data store ([`store::BlockLock`]).
    #[pin]
    pub(crate) blocks: store::BlockLock,
    /// Bytes ever committed to the data store.
    pub(crate) committed: AtomicU64,
    /// Bytes of `committed` drained to NAND (written by the controller only).
    pub(crate) drained: AtomicU64,
    /// The engine speed now, in permille of the host's, throttling included.
    pub(crate) speed_permille: AtomicU32,
    /// The completion interrupt, if the device has one.
    line: Option<SoftLine>,
    /// The compression engine outside the VM, if the device has a window for it.
    pub(crate) engine: Option<Engine>,
    /// The control state of the actors the device owns (rebuilt at enable, checkpointed and
    /// dropped when it stops; moved by migrations).
    #[pin]
    pub(crate) controls: SpinLock<Controls>,
    /// The controller's thread while it runs, for the cores to wake it.
    #[pin]
    controller: SpinLock<Option<ARef<Task>>>,
    /// When a core last completed a request while the host said a migration command was
    /// imminent (`MIG_ARM_SOON`): that may have been the drain's last request.
    pub(crate) soon_kick_ns: AtomicU64,
}

impl Dev {
    /// The device state, not serving until the host enables it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: u32,
        regs: MemRemap,
        pmr: MemRemap,
        pmr_size: u64,
        layout: PmrLayout,
        speed_permille: u32,
        line: Option<SoftLine>,
        engine: Option<Engine>,
    ) -> Result<impl PinInit<Self, Error>> {
        let geometry = RingGeometry::new(layout.params().ring_entries).map_err(|_| EINVAL)?;
        Ok(try_pin_init!(Self {
            id,
            regs,
            pmr,
            pmr_size,
            layout,
            geometry,
            sq <- new_spinlock!(SqState { serving: false, head: RingIndex::ZERO }, "reflux_dev_sq"),
            cq <- new_spinlock!(
                CqState { tail: RingIndex::ZERO, irq_seq: 0, announced: RingIndex::ZERO },
                "reflux_dev_cq"
            ),
            in_flight: AtomicU32::new(0),
            cancel: AtomicBool::new(false),
            discard: AtomicBool::new(false),
            fatal: AtomicU32::new(0),
            busy_ns: AtomicU64::new(0),
            blocks <- new_spinlock!((), "reflux_dev_blocks"),
            committed: AtomicU64::new(0),
            drained: AtomicU64::new(0),
            speed_permille: AtomicU32::new(speed_permille),
            line,
            engine,
            controls <- new_spinlock!(Controls::default(), "reflux_dev_actors"),
            controller <- new_spinlock!(None, "reflux_dev_controller"),
            soon_kick_ns: AtomicU64::new(0),
        }? Error))
    }

    /// Makes the calling thread the controller the cores wake (`None`: it stops being one).
    pub(crate) fn set_controller(&self, task: Option<ARef<Task>>) {
        let old = core::mem::replace(&mut *self.controller.lock(), task);
        // Dropped outside the lock: the last reference to a task may free it.
        drop(old);
    }

    /// After a completion: if the host said its migration command is imminent, this may have
    /// been the last request its drain waited for, and the command follows within the host's
    /// reaction time. The controller is told (and woken, if it sleeps) so that it polls the
    /// mailbox again, as a management core that sees the completion go out would.
    pub(crate) fn kick_if_soon(&self) {
        if self.reg32(abi::REG_MIG_ARM, Ordering::Relaxed) != abi::MIG_ARM_SOON {
            return;
        }
        self.soon_kick_ns
            .store(crate::actor::exec::now_ns(), Ordering::Release);
        if let Some(t) = self.controller.lock().as_ref() {
            t.wake_up();
        }
    }

    /// Loads a 32-bit register (0 if the offset were outside the block, which no constant is).
    pub(crate) fn reg32(&self, off: usize, order: Ordering) -> u32 {
        self.regs.atomic_u32(off).map_or(0, |r| r.load(order))
    }

    /// Stores a 32-bit register.
    pub(crate) fn set_reg32(&self, off: usize, v: u32, order: Ordering) {
        if let Ok(r) = self.regs.atomic_u32(off) {
            r.store(v, order);
        }
    }

    /// Loads a 64-bit register.
    pub(crate) fn reg64(&self, off: usize, order: Ordering) -> u64 {
        self.regs.atomic_u64(off).map_or(0, |r| r.load(order))
    }

    /// Stores a 64-bit register.
    pub(crate) fn set_reg64(&self, off: usize, v: u64, order: Ordering) {
        if let Ok(r) = self.regs.atomic_u64(off) {
            r.store(v, order);
        }
    }

    /// The ring counter at `offset` of the PMR.
    fn counter(&self, offset: u64) -> Result<&AtomicU32> {
        self.pmr
            .atomic_u32(usize::try_from(offset).map_err(|_| EINVAL)?)
    }

    /// Takes the next descriptor from the SQ, if the device serves and there is one.
    ///
    /// The descriptor is copied and the SQ head published (release: the slot is read) before
    /// the lock is dropped; the request counts as in flight from then until
    /// [`Dev::complete`] returns, so that [`Dev::quiesce`] waits for it.
    pub(crate) fn take(&self) -> Option<SubmissionDescriptor> {
        let mut sq = self.sq.lock();
        if !sq.serving {
            return None;
        }
        match self.take_locked(&mut sq) {
            Ok(desc) => desc,
            Err(_) => {
                // The host's tail is more than a ring ahead of the head: the SQ is corrupt.
                sq.serving = false;
                drop(sq);
                self.report_fatal(abi::DEV_ERR_RING);
                None
            }
        }
    }

    /// [`Dev::take`] with the SQ lock held; an error means a corrupt SQ.
    fn take_locked(&self, sq: &mut SqState) -> Result<Option<SubmissionDescriptor>> {
        let header = self.layout.sq_header();
        // Acquire: the descriptor, its buffers and its state blob, written before the host
        // published the tail, are visible.
        let tail = RingIndex::new(self.counter(header + TAIL)?.load(Ordering::Acquire));
        let used = self.geometry.used(sq.head, tail).map_err(|_| EINVAL)?;
        if used == 0 {
            return Ok(None);
        }
        let slot = self.geometry.slot(sq.head);
        let at = self.layout.sq_entry(slot).ok_or(EINVAL)?;
        let mut image = [0u8; SQ_ENTRY_SIZE as usize];
        self.pmr
            .read_bytes(usize::try_from(at).map_err(|_| EINVAL)?, &mut image)?;
        sq.head = sq.head.wrapping_add(1);
        // Release: the host may reuse the slot once it sees the head past it.
        self.counter(header + HEAD)?
            .store(sq.head.raw(), Ordering::Release);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Ok(Some(SubmissionDescriptor::from_bytes(&image)))
    }

    /// Publishes a completion in the CQ and raises the interrupt if the host asked for one.
    ///
    /// Waits while the CQ is full (the host has more requests in flight than the ring holds, or
    /// is slow to consume); gives the completion up if the device is being stopped meanwhile, or
    /// drops it at once while the device is held in reset.
    pub(crate) fn complete(&self, c: Completion) {
        loop {
            let published = {
                let mut cq = self.cq.lock();
                if self.discard.load(Ordering::Acquire) {
                    return;
                }
                match self.publish(&mut cq, &c) {
                    Ok(true) => Some(self.irq_due(&mut cq)),
                    Ok(false) => None,
                    Err(_) => {
                        drop(cq);
                        self.report_fatal(abi::DEV_ERR_RING);
                        return;
                    }
                }
            };
            if let Some(raise) = published {
                if raise {
                    self.raise();
                }
                return;
            }
            if kthread::should_stop() || self.cancel.load(Ordering::Acquire) {
                pr_warn_ratelimited!(
                    "reflux.{}: CQ full while stopping: completion of tag {} dropped\n",
                    self.id,
                    c.tag
                );
                return;
            }
            kthread::usleep_range(10, 50);
        }
    }

    /// Writes `c` into the CQ if there is room; `Ok(false)` if it is full, an error if the
    /// host's head is not a valid one.
    fn publish(&self, cq: &mut CqState, c: &Completion) -> Result<bool> {
        let header = self.layout.cq_header();
        // Acquire: the host has finished reading the entries below its head.
        let head = RingIndex::new(self.counter(header + HEAD)?.load(Ordering::Acquire));
        if self.geometry.free(head, cq.tail).map_err(|_| EINVAL)? == 0 {
            return Ok(false);
        }
        let entry = CompletionEntry {
            tag: c.tag,
            next_stage: c.next_stage,
            status: c.status,
            stored_bytes: c.stored_bytes,
            seq: cq.tail.raw(),
            epochs: c.epochs,
            ..Default::default()
        };
        let at = self
            .layout
            .cq_entry(self.geometry.slot(cq.tail))
            .ok_or(EINVAL)?;
        const _: () = assert!(CQ_ENTRY_SIZE as usize == core::mem::size_of::<CompletionEntry>());
        self.pmr
            .write_bytes(usize::try_from(at).map_err(|_| EINVAL)?, &entry.to_bytes())?;
        cq.tail = cq.tail.wrapping_add(1);
        // Release: the entry, and the buffers and blob of the request it completes, are visible
        // before the tail that publishes them.
        self.counter(header + TAIL)?
            .store(cq.tail.raw(), Ordering::Release);
        Ok(true)
    }

    /// Whether to raise the completion interrupt now: the host enabled it, there are
    /// completions it has not been told about, and it has acknowledged the previous interrupt
    /// (at most one is outstanding). If so, records and publishes the new sequence number.
    fn irq_due(&self, cq: &mut CqState) -> bool {
        if self.line.is_none()
            || self.reg32(abi::REG_IRQ_CTRL, Ordering::Acquire) & abi::IRQ_CTRL_ENABLE == 0
            || cq.announced == cq.tail
            || self.reg32(abi::REG_IRQ_ACK, Ordering::Acquire) != cq.irq_seq
        {
            return false;
        }
        cq.irq_seq = cq.irq_seq.wrapping_add(1);
        cq.announced = cq.tail;
        // Release: after the CQ tail it announces.
        self.set_reg32(abi::REG_IRQ_SEQ, cq.irq_seq, Ordering::Release);
        true
    }

    fn raise(&self) {
        if let Some(line) = &self.line {
            if line.raise().is_err() {
                pr_warn_ratelimited!("reflux.{}: cannot raise the interrupt\n", self.id);
            }
        }
    }

    /// Raises the interrupt for completions published while the previous one was outstanding,
    /// once the host has acknowledged it (called by the controller every turn, so that no
    /// completion waits for the next one to be announced).
    pub(crate) fn kick_irq(&self) {
        let raise = {
            let mut cq = self.cq.lock();
            self.irq_due(&mut cq)
        };
        if raise {
            self.raise();
        }
    }

    /// Stops serving because of `code` (`DEV_ERR_*`); the controller reports it.
    pub(crate) fn report_fatal(&self, code: u32) {
        self.sq.lock().serving = false;
        self.fatal.store(code, Ordering::Release);
    }

    /// A fatal error a core reported since the last call, if any.
    pub(crate) fn take_fatal(&self) -> Option<u32> {
        match self.fatal.swap(0, Ordering::AcqRel) {
            0 => None,
            code => Some(code),
        }
    }

    /// Whether a core should give up waiting (a flush on the drain): the device is stopping.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    /// The enable handshake (ABI lifecycle, step 3): re-validates the superblock, loads the ring
    /// counters the host set, and starts serving. On failure returns the `DEV_ERR_*` code.
    pub(crate) fn enable(&self) -> core::result::Result<(), u32> {
        if !crate::format::still_valid(&self.pmr, self.pmr_size, &self.layout) {
            return Err(abi::DEV_ERR_SUPERBLOCK);
        }
        let (sq_head, _) = self
            .ring_counters(self.layout.sq_header(), SQ_ENTRY_SIZE)
            .map_err(|_| abi::DEV_ERR_RING)?;
        let (_, cq_tail) = self
            .ring_counters(self.layout.cq_header(), CQ_ENTRY_SIZE)
            .map_err(|_| abi::DEV_ERR_RING)?;
        // Interrupts restart from what the host last acknowledged, so that the next one is
        // `ack + 1` whatever happened before a reset.
        let ack = self.reg32(abi::REG_IRQ_ACK, Ordering::Acquire);
        {
            let mut cq = self.cq.lock();
            cq.tail = cq_tail;
            cq.announced = cq_tail;
            cq.irq_seq = ack;
        }
        self.set_reg32(abi::REG_IRQ_SEQ, ack, Ordering::Release);
        self.cancel.store(false, Ordering::Release);
        self.discard.store(false, Ordering::Release);
        self.fatal.store(0, Ordering::Release);
        {
            let mut controls = self.controls.lock();
            *controls = Controls::default();
            let id = self.id;
            let n = control::rebuild_owned(
                &self.pmr,
                &self.layout,
                SIDE_DEVICE,
                &mut controls,
                |a, e| {
                    pr_warn_ratelimited!("reflux.{id}: actor {a}: cannot rebuild: {e}\n");
                },
            );
            pr_debug!("reflux.{id}: rebuilt {n} actors\n");
        }
        let mut sq = self.sq.lock();
        sq.head = sq_head;
        sq.serving = true;
        Ok(())
    }

    /// Checks the ring at `header` (its geometry as formatted, `tail - head <= entries`) and
    /// returns its `(head, tail)`.
    fn ring_counters(&self, header: u64, entry_size: u32) -> Result<(RingIndex, RingIndex)> {
        let mut image = [0u8; core::mem::size_of::<RingProducer>()];
        self.pmr
            .read_bytes(usize::try_from(header).map_err(|_| EINVAL)?, &mut image)?;
        let producer = RingProducer::from_bytes(&image);
        if producer.entries != self.geometry.capacity() || producer.entry_size != entry_size {
            return Err(EINVAL);
        }
        let tail = RingIndex::new(self.counter(header + TAIL)?.load(Ordering::Acquire));
        let head = RingIndex::new(self.counter(header + HEAD)?.load(Ordering::Acquire));
        self.geometry.used(head, tail).map_err(|_| EINVAL)?;
        Ok((head, tail))
    }

    /// Stops taking requests and waits until the cores have finished the ones they hold: they
    /// complete them (or, with `discard`, drop their completions: the device is being reset).
    /// A flush still waiting for the drain completes with `ECANCELED`.
    pub(crate) fn quiesce(&self, discard: bool) {
        self.cancel.store(true, Ordering::Release);
        if discard {
            self.discard.store(true, Ordering::Release);
        }
        self.sq.lock().serving = false;
        while self.in_flight.load(Ordering::Acquire) != 0 {
            if kthread::should_stop() {
                break;
            }
            kthread::usleep_range(100, 200);
        }
        self.snapshot_actors();
    }

    /// Checkpoints every actor the device holds at its current epoch and drops it: a stopped
    /// device runs nothing, and the next enable rebuilds from these checkpoints.
    fn snapshot_actors(&self) {
        let mut controls = self.controls.lock();
        for id in 1..control::MAX_ACTORS {
            // `MAX_ACTORS <= 256`.
            let id = id as u8;
            let Some(c) = controls.take(id) else {
                continue;
            };
            if !control::owns(&self.pmr, &self.layout, id, SIDE_DEVICE) {
                continue;
            }
            let r = control::epoch(&self.pmr, &self.layout, id)
                .and_then(|e| control::checkpoint(&self.pmr, &self.layout, id, SIDE_DEVICE, e, &c));
            if let Err(e) = r {
                pr_warn_ratelimited!("reflux.{}: actor {id}: checkpoint failed: {e}\n", self.id);
            }
        }
    }
}
