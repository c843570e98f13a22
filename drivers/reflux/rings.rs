// SPDX-License-Identifier: GPL-2.0

//! The rings of one device: the submission ring's tail, the completion ring's head, the table of
//! requests in flight (by tag), the admission throttle and the interrupt path's sleep/poll
//! switch.
//!
//! The submission ring has one producer across the link (this driver; CPUs submitting at once
//! serialize on `sq`), the completion ring one consumer (the interrupt thread and the pollers
//! serialize on `cq`). Lock order: `cq`, then `inflight`, then `sq`; `irq_wait` is taken alone.
//! The routing table's lock is never held with `inflight`: callers copy what they need out of
//! the table first.
//!
//! The table is generic over the request handle `R` it keeps (the block layer's request), so
//! that it needs nothing of the device that owns it.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    io_mem::IoMem, memremap::MemRemap, new_spinlock, pr_warn_ratelimited, prelude::*,
    shared_mem::SharedMem, sync::SpinLock,
};

use crate::abi::{self, CompletionEntry, PmrLayout, Regs, SubmissionDescriptor};
use crate::actor::exec::now_ns;
use crate::hw;
use crate::proto::poll_switch::{PollSwitch, PollSwitchParams, WaitMode};
use crate::regio;

/// A request the device or the driver is working on.
struct Inflight<R> {
    rq: R,
    desc: SubmissionDescriptor,
    /// Counted in the routing table (not parked, not between a refusal and its re-route).
    routed: bool,
    /// When `routed`: counted in the actors of its steps from this one on (it has run those
    /// before; `Routing::pass`).
    counted: u8,
    /// When it arrived (monotonic ns): request-level dispatch profiles service times.
    t0_ns: u64,
    /// Times a side refused it with `EAGAIN` (an actor moved since it was routed).
    reroutes: u8,
    /// Of those, the refusals no migration under way explains: bounded, so that a side that
    /// lost an actor cannot bounce a request forever.
    strays: u8,
}

/// A request taken out of the table to be ended.
pub(crate) struct Ended<R> {
    pub(crate) rq: R,
    pub(crate) desc: SubmissionDescriptor,
    /// `Some(step)` when it was counted in the routing table from `step` on.
    pub(crate) counted: Option<u8>,
    /// When it arrived (monotonic ns).
    pub(crate) t0_ns: u64,
}

/// The interrupt path's sleep/poll switch (`proto::poll_switch`) and the time of the last
/// completion it was told of.
struct IrqWait {
    switch: Option<PollSwitch>,
    last_ns: u64,
}

/// The interrupt path's sleep/poll switch, if `irq_poll` asks for one.
pub(crate) fn irq_poll_switch(
    name: &CStr,
    irq_poll: Option<PollSwitchParams>,
) -> Result<Option<PollSwitch>> {
    match irq_poll.map(PollSwitch::new) {
        None => Ok(None),
        Some(Ok(s)) => Ok(Some(s)),
        Some(Err(e)) => {
            pr_err!("{}: interrupt polling: {e}\n", name);
            Err(EINVAL)
        }
    }
}

/// The queue depth: `want` (`queue_depth`, checked to be in `1..=256`), at most what the PMR's
/// `layout` has room for.
pub(crate) fn queue_depth(name: &CStr, layout: &PmrLayout, want: u32) -> Result<u32> {
    let p = layout.params();
    // Every tag needs its own state blob, ring entry and MAX_REQ_BLOCKS buffers.
    // (One ring entry stays for the migration command.)
    let fit = p
        .ring_entries
        .saturating_sub(1)
        .min(p.nr_buffers / abi::MAX_REQ_BLOCKS)
        .min(u32::from(u16::MAX) - 1);
    if !(1..=256).contains(&want) {
        pr_err!("{}: queue_depth={want} is out of range 1..=256\n", name);
        return Err(EINVAL);
    }
    Ok(want.min(fit))
}

/// An empty in-flight table of `depth` slots.
fn empty_table<R>(depth: u32) -> Result<KVec<Option<Inflight<R>>>> {
    let mut inflight = KVec::with_capacity(depth as usize, GFP_KERNEL)?;
    for _ in 0..depth {
        inflight.push(None, GFP_KERNEL)?;
    }
    Ok(inflight)
}

/// The rings of one device and the requests in flight through them.
///
/// # Invariants
///
/// `inflight` has `depth` slots, one per tag; `active` counts the requests admitted and not
/// finished.
#[pin_data]
pub(crate) struct Rings<R> {
    depth: u32,
    /// The SQ tail this driver publishes next.
    #[pin]
    sq: SpinLock<u32>,
    /// The CQ head: the next completion to consume.
    #[pin]
    cq: SpinLock<u32>,
    /// Indexed by tag.
    #[pin]
    inflight: SpinLock<KVec<Option<Inflight<R>>>>,
    /// Whether the interrupt thread polls on (completions close together) or sleeps.
    #[pin]
    irq_wait: SpinLock<IrqWait>,
    /// Requests admitted and not finished.
    active: AtomicU32,
    /// The scheduler's throttle: at most this many requests admitted (`depth` unthrottled).
    inflight_limit: AtomicU32,
}

impl<R> Rings<R> {
    /// Rings for `depth` tags, unthrottled, with the interrupt path's `switch`.
    pub(crate) fn new(depth: u32, switch: Option<PollSwitch>) -> impl PinInit<Self, Error> {
        // INVARIANT: one slot per tag; nothing admitted yet.
        try_pin_init!(Self {
            depth,
            sq <- new_spinlock!(0),
            cq <- new_spinlock!(0),
            inflight <- new_spinlock!(empty_table(*depth)?),
            irq_wait <- new_spinlock!(IrqWait {
                switch,
                last_ns: now_ns(),
            }),
            active: AtomicU32::new(0),
            inflight_limit: AtomicU32::new(*depth),
        }? Error)
    }

    /// The queue depth: the number of tags.
    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// Admits one more request, unless the scheduler's throttle holds it back (`false`). An
    /// admitted request is counted until [`Self::leave`].
    pub(crate) fn admit(&self) -> bool {
        if self.active.fetch_add(1, Ordering::AcqRel) >= self.inflight_limit.load(Ordering::Relaxed)
        {
            self.active.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// An admitted request is finished (or was never submitted).
    pub(crate) fn leave(&self) {
        self.active.fetch_sub(1, Ordering::AcqRel);
    }

    /// Applies the scheduler's throttle: `permille` of the queue depth may be in flight.
    pub(crate) fn set_inflight_permille(&self, permille: u32) {
        let limit = (u64::from(self.depth) * u64::from(permille.min(1000)) / 1000).max(1);
        // At most `depth`.
        self.inflight_limit.store(limit as u32, Ordering::Relaxed);
    }

    /// The throttle level now, in permille of the queue depth.
    pub(crate) fn inflight_permille(&self) -> u32 {
        let l = u64::from(self.inflight_limit.load(Ordering::Relaxed));
        (l * 1000 / u64::from(self.depth.max(1))) as u32
    }

    /// Takes the in-flight slot of `d.tag` for `rq`. A taken slot means blk-mq handed out a tag
    /// this driver still holds, a broken invariant: the new request fails, the old one is left
    /// alone.
    pub(crate) fn claim(&self, d: SubmissionDescriptor, rq: R) -> Result {
        let mut inflight = self.inflight.lock();
        let Some(slot) = inflight.get_mut(usize::from(d.tag)) else {
            return Err(EINVAL);
        };
        if slot.is_some() {
            kernel::warn_on!(true);
            return Err(EIO);
        }
        *slot = Some(Inflight {
            rq,
            desc: d,
            routed: false,
            counted: 0,
            t0_ns: now_ns(),
            reroutes: 0,
            strays: 0,
        });
        Ok(())
    }

    /// Runs `f` on the request `tag` in flight, under the table's lock; `None` if there is none.
    fn with<T>(&self, tag: u16, f: impl FnOnce(&mut Inflight<R>) -> T) -> Option<T> {
        match self.inflight.lock().get_mut(usize::from(tag)) {
            Some(Some(i)) => Some(f(i)),
            _ => None,
        }
    }

    /// The descriptor of the request `tag` in flight.
    pub(crate) fn desc(&self, tag: u16) -> Option<SubmissionDescriptor> {
        self.with(tag, |f| f.desc)
    }

    /// The descriptor of the request `tag` and whether it is routed for the first time (a
    /// request the device refused was routed before: it keeps its dispatch side).
    pub(crate) fn to_route(&self, tag: u16) -> Option<(SubmissionDescriptor, bool)> {
        self.with(tag, |f| (f.desc, f.reroutes == 0))
    }

    /// The request `tag` was routed as `d`, counted in its actors from `step` on.
    pub(crate) fn routed(&self, tag: u16, d: SubmissionDescriptor, step: u8) {
        self.with(tag, |f| {
            f.desc = d;
            f.routed = true;
            f.counted = step;
        });
    }

    /// The request `tag` continues at `step` (its descriptor's `stage_start`); returns its
    /// descriptor.
    pub(crate) fn start_at(&self, tag: u16, step: u8) -> Option<SubmissionDescriptor> {
        self.with(tag, |f| {
            f.desc.stage_start = step;
            f.desc
        })
    }

    /// A side refused the request `tag`: it is no longer counted in the routing table. Returns
    /// the step it was refused at and, if it was counted, its descriptor and the step it was
    /// counted from (for the caller to release it from the routing table).
    pub(crate) fn unroute(&self, tag: u16) -> Option<(u8, Option<(SubmissionDescriptor, u8)>)> {
        self.with(tag, |f| {
            let routed = core::mem::replace(&mut f.routed, false);
            (f.desc.stage_start, routed.then_some((f.desc, f.counted)))
        })
    }

    /// Counts a refusal of the request `tag`, a stray one unless a migration under way
    /// explains it (`moving`); whether it was refused more than `max` times for no reason.
    pub(crate) fn refused(&self, tag: u16, moving: bool, max: u8) -> Option<bool> {
        self.with(tag, |f| {
            f.reroutes = f.reroutes.saturating_add(1);
            if !moving {
                f.strays = f.strays.saturating_add(1);
            }
            f.strays > max
        })
    }

    /// The request `tag` has run every step before `step`: if it is counted in the routing
    /// table from an earlier step, moves its count to `step` and returns its descriptor and the
    /// step it was counted from.
    pub(crate) fn pass(&self, tag: u16, step: u8) -> Option<(SubmissionDescriptor, u8)> {
        self.with(tag, |f| {
            if !f.routed || f.counted >= step {
                return None;
            }
            Some((f.desc, core::mem::replace(&mut f.counted, step)))
        })
        .flatten()
    }

    /// Takes the request `tag` out of the table, to end it.
    pub(crate) fn take(&self, tag: u16) -> Option<Ended<R>> {
        let f = self
            .inflight
            .lock()
            .get_mut(usize::from(tag))
            .and_then(Option::take)?;
        Some(Ended {
            rq: f.rq,
            desc: f.desc,
            counted: f.routed.then_some(f.counted),
            t0_ns: f.t0_ns,
        })
    }

    /// Publishes `d` in the submission ring of `pmr` (laid out as `layout`) and rings the
    /// doorbell in `regs`.
    pub(crate) fn submit(
        &self,
        pmr: &MemRemap,
        regs: &IoMem,
        layout: &PmrLayout,
        d: &SubmissionDescriptor,
    ) -> Result {
        let entries = layout.params().ring_entries;
        let hdr = layout.sq_header() as usize;
        let mut tail = self.sq.lock();
        // Acquire: the device has read the entries below its head.
        let head = pmr.atomic_u32(hdr + hw::HEAD)?.load(Ordering::Acquire);
        if tail.wrapping_sub(head) >= entries {
            // Cannot happen with at most `entries` requests in flight; retry later if it does.
            return Err(EBUSY);
        }
        let off = layout.sq_entry(*tail & (entries - 1)).ok_or(EINVAL)?;
        pmr.write_bytes(off as usize, &d.to_bytes())?;
        *tail = tail.wrapping_add(1);
        // Release: the descriptor (and the buffers and state it names) before the tail.
        pmr.atomic_u32(hdr + hw::TAIL)?
            .store(*tail, Ordering::Release);
        regio::reg(regs, Regs::REG_SQ_DOORBELL)?.store(*tail);
        Ok(())
    }

    /// Consumes every completion published in the completion ring of `pmr` (laid out as
    /// `layout`; `name` for the log), in batches handed to `each` with no lock held, and tells
    /// the sleep/poll switch; returns how many.
    pub(crate) fn reap(
        &self,
        pmr: &MemRemap,
        layout: &PmrLayout,
        name: &CStr,
        mut each: impl FnMut(&[CompletionEntry]),
    ) -> u32 {
        const BATCH: usize = 16;
        let entries = layout.params().ring_entries;
        let hdr = layout.cq_header() as usize;
        let (Ok(tail_reg), Ok(head_reg)) = (
            pmr.atomic_u32(hdr + hw::TAIL),
            pmr.atomic_u32(hdr + hw::HEAD),
        ) else {
            return 0;
        };
        let mut total = 0;
        loop {
            let mut batch = [CompletionEntry::default(); BATCH];
            let mut n = 0;
            {
                let mut head = self.cq.lock();
                // Acquire: the entries below the tail were written before it.
                let tail = tail_reg.load(Ordering::Acquire);
                while *head != tail && n < BATCH {
                    let mut raw = [0u8; core::mem::size_of::<CompletionEntry>()];
                    let ok = layout
                        .cq_entry(*head & (entries - 1))
                        .map(|o| pmr.read_bytes(o as usize, &mut raw));
                    let e = CompletionEntry::from_bytes(&raw);
                    if !matches!(ok, Some(Ok(()))) || e.seq != *head {
                        pr_warn_ratelimited!(
                            "{}: completion slot {} holds sequence {}\n",
                            name,
                            *head,
                            e.seq
                        );
                    }
                    batch[n] = e;
                    n += 1;
                    *head = head.wrapping_add(1);
                }
                // Release: the entries are read before the device may reuse their slots.
                head_reg.store(*head, Ordering::Release);
            }
            each(&batch[..n]);
            self.note_completions(n as u64);
            total += n as u32;
            if n < BATCH {
                return total;
            }
        }
    }

    /// Feeds the sleep/poll switch `n` completions found now: their gaps are taken as the time
    /// since the last completion, spread evenly (a batch means they came close together).
    fn note_completions(&self, n: u64) {
        if n == 0 {
            return;
        }
        let now = now_ns();
        let mut w = self.irq_wait.lock();
        let gap = now.saturating_sub(w.last_ns) / n;
        w.last_ns = now;
        if let Some(s) = w.switch.as_mut() {
            for _ in 0..n {
                s.record_gap(gap);
            }
        }
    }

    /// The switch's mode and its sleep threshold, if it is on.
    pub(crate) fn irq_wait_mode(&self) -> Option<(WaitMode, u64)> {
        let w = self.irq_wait.lock();
        w.switch
            .as_ref()
            .map(|s| (s.mode(), s.params().sleep_above_ns))
    }

    /// Runs `f` on the sleep/poll switch under its lock, if it is on.
    pub(crate) fn with_switch<T>(&self, f: impl FnOnce(&PollSwitch) -> T) -> Option<T> {
        self.irq_wait.lock().switch.as_ref().map(f)
    }

    /// Changes the sleep/poll switch's thresholds with `f`, in one critical section (two writers
    /// of different thresholds cannot undo each other): `EOPNOTSUPP` without a switch, `EINVAL`
    /// (nothing changed) if the result is not valid.
    pub(crate) fn update_switch_params(&self, f: impl FnOnce(&mut PollSwitchParams)) -> Result {
        let mut wait = self.irq_wait.lock();
        let switch = wait.switch.as_mut().ok_or(EOPNOTSUPP)?;
        let mut params = switch.params();
        f(&mut params);
        switch.set_params(params).map_err(|_| EINVAL)
    }
}
