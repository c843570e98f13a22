// SPDX-License-Identifier: GPL-2.0

//! Drain-and-switch migration of one actor between host and device (§4.3), with the two-phase
//! commit of §4.5, and the settling of actors at mount.
//!
//! A migration of actor `a` at even epoch `e`, from side S to side D:
//!
//! 0. **Wake**: with a migration mailbox, the device's firmware is told a migration's command
//!    is imminent (`abi::MIG_ARM_SOON`: the drain that comes first is as short as the runs in
//!    progress, step 3) and the host waits, at most 5 ms, until it says it watches (`abi::REG_MIG_ARM_SEEN`): a
//!    firmware core that sleeps between looks is awake before any request waits on it.
//! 1. **Switch**: `a` is marked migrating in the routing table; from now on every new request that
//!    needs `a` is parked for D (it runs there once D is active).
//! 2. The epoch becomes `e + 1` (odd) in the PMR. S checks a request's epochs before it runs
//!    any of it: a run of `a` that has not started by now is refused (nothing of it ran) and
//!    routed again, which parks it for D.
//! 3. **Drain**: wait until no request that needs `a` is in flight on S: the runs S started
//!    before step 2 finish there, the others are refused. The thread sleeps on `drain_wq`
//!    until the completion path says the count is down to none.
//! 4. **Checkpoint**: S serialises `a`'s control state into the PMR and stores "ready"
//!    (`ckpt_epoch = e + 1`). The host does it itself, or asks the device: through the migration
//!    mailbox (`abi::REG_MIG_ARM`), imminent from step 0, so that the device's firmware polls it
//!    without pause when the command comes, or, on a device without one, with a `DIR_MIGRATE` descriptor, which waits in the SQ
//!    behind the requests queued before it.
//! 5. **Rebuild**: D rebuilds `a` from the checkpoint, writes `owner = D` and stores "active"
//!    (`active_epoch = e + 1`).
//! 6. The epoch becomes `e + 2`, the routing table says D, the parked requests go.
//!
//! No request is dropped or run twice: the drain finishes every run S started, a refused run did
//! nothing, and the parked requests are routed only after step 6. Refusing what has not started
//! makes the drain as long as the runs in progress, not as long as S's queue (a device's SQ
//! holds up to the queue depth). The time of each phase is recorded.
//!
//! **Fault injection**: `migrate_stop` (debugfs) pauses a migration at a phase, so that a test can
//! cut the power there: 1 after the drain (the epoch is odd; before "ready"), 2 after "ready"
//! (before "active"), 3 after "active" (before the epoch is even again). A paused migration
//! waits until the knob is cleared or the device goes away.

use core::sync::atomic::Ordering;

use kernel::{kthread::usleep_range, pr_warn_ratelimited, prelude::*, shared_mem::SharedMem};

use crate::abi::{self, SubmissionDescriptor, SIDE_HOST};
use crate::actor::control::{self, Controls, MAX_ACTORS};
use crate::actor::exec::now_ns;
use crate::proto::checkpoint::{recover, Outcome};
use crate::proto::pipeline::Side;
use crate::proto::request::epoch_tag;
use crate::queue::RefluxDev;
use crate::stats::Counter;

/// Requests per side request-level dispatch profiles before its cost model is fixed.
const DISPATCH_PROFILE: u32 = 32;

/// Migrations remembered for the `migrations` file.
pub(crate) const LOG_LEN: usize = 256;
/// The longest drain a migration waits for, by default (`migrate_drain_timeout_ms`).
pub(crate) const DRAIN_TIMEOUT_MS: u32 = 5_000;

/// The longest `migrate_drain_timeout_ms`.
pub(crate) const MAX_DRAIN_TIMEOUT_MS: u32 = 60_000;
/// The longest the device may take to answer a migration command.
const DEVICE_TIMEOUT_NS: u64 = 2_000_000_000;
/// How long the host spins for the device's answer to a migration command before it sleeps
/// between looks.
const COMMAND_SPIN_NS: u64 = 500_000;
/// How long a migration waits, before it starts, for the device's firmware to say it watches
/// the mailbox; past it, the migration goes on (the command is then taken later, not lost).
const WAKE_TIMEOUT_NS: u64 = 5_000_000;

/// One finished migration.
#[derive(Clone, Copy, Default)]
pub(crate) struct Record {
    pub(crate) actor: u8,
    pub(crate) to_device: bool,
    /// Waking the device's firmware before the switch (no request waits for it).
    pub(crate) wake_ns: u64,
    pub(crate) drain_ns: u64,
    pub(crate) ckpt_ns: u64,
    pub(crate) handover_ns: u64,
    pub(crate) rebuild_ns: u64,
    /// The device's command as the host saw it, from posting it to seeing the answer: the
    /// device's own time for it (`ckpt_ns` or `rebuild_ns`) plus its pick-up and the answer's
    /// notice, which are most of the hand-over.
    pub(crate) command_ns: u64,
    pub(crate) total_ns: u64,
    /// When it ended (monotonic ms), to place it on a timeline.
    pub(crate) end_ms: u64,
}

/// The clock readings of one migration's phases and the device's own times, in nanoseconds:
/// what its [`Record`] is computed from.
#[derive(Default)]
struct Times {
    /// The switch, then the end of the drain.
    start: u64,
    drained: u64,
    /// The start and end of the checkpoint ("ready").
    ckpt0: u64,
    ready: u64,
    /// The start and end of the rebuild ("active").
    rebuild0: u64,
    active: u64,
    /// The end of the migration: the actor active where the table routes it.
    end: u64,
    /// The device's own time for its checkpoint or rebuild, where it did one.
    dev_ckpt_ns: u64,
    dev_rebuild_ns: u64,
    /// The round trip of the last device command.
    command_ns: u64,
}

impl Times {
    /// The record of migrating actor `id` from `from` to `to`. The device's own part of a
    /// command is its checkpoint or rebuild; the rest of the command's round trip is the
    /// hand-over (doorbell, pick-up, completion).
    fn record(&self, id: u8, from: Side, to: Side) -> Record {
        let ckpt_ns = match from {
            Side::Host => self.ready - self.ckpt0,
            Side::Device => self.dev_ckpt_ns,
        };
        let rebuild_ns = match to {
            Side::Host => self.active - self.rebuild0,
            Side::Device => self.dev_rebuild_ns,
        };
        let total_ns = self.end - self.start;
        let drain_ns = self.drained - self.start;
        Record {
            actor: id,
            to_device: matches!(to, Side::Device),
            // Set by the caller, which woke the device.
            wake_ns: 0,
            drain_ns,
            ckpt_ns,
            handover_ns: total_ns.saturating_sub(drain_ns + ckpt_ns + rebuild_ns),
            rebuild_ns,
            command_ns: self.command_ns,
            total_ns,
            end_ms: self.end / 1_000_000,
        }
    }
}

/// The last [`LOG_LEN`] migrations (on the heap: too big for a stack frame).
pub(crate) struct MigrationLog {
    pub(crate) records: KVec<Record>,
    /// Migrations ever recorded; the newest is at `(count - 1) % LOG_LEN`.
    pub(crate) count: u64,
}

impl MigrationLog {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            records: KVec::from_elem(Record::default(), LOG_LEN, GFP_KERNEL)?,
            count: 0,
        })
    }

    pub(crate) fn push(&mut self, r: Record) {
        // `LOG_LEN` is small: the index fits.
        if let Some(slot) = self.records.get_mut((self.count % LOG_LEN as u64) as usize) {
            *slot = r;
        }
        self.count += 1;
    }
}

impl RefluxDev {
    /// Waits while `migrate_stop` asks to pause at `phase`; `Err` if the device goes away.
    fn pause_at(&self, phase: u32, id: u8) -> Result {
        if self.migrate_stop.load(Ordering::Acquire) != phase {
            return Ok(());
        }
        pr_info!(
            "{}: migration of actor {id} paused at phase {phase}\n",
            &*self.name
        );
        self.migrate_phase.store(phase, Ordering::Release);
        while self.migrate_stop.load(Ordering::Acquire) == phase {
            if self.stopping.load(Ordering::Acquire) {
                return Err(kernel::errno::eshutdown());
            }
            usleep_range(1000, 2000);
        }
        self.migrate_phase.store(0, Ordering::Release);
        Ok(())
    }

    /// Sends the device its part of the migration of `id` at `epoch` and waits for the answer;
    /// returns the device's own time for it and the command's round trip.
    fn device_step(&self, id: u8, epoch: u64, to: Side) -> Result<(u64, u64)> {
        let t0 = now_ns();
        let (status, dev_ns) = if self.mig_mailbox {
            let answer = self.mailbox_step(id, epoch, to);
            // A migration has one command: none is imminent any more (the device stops polling
            // for one), though the migration goes on until its end.
            self.arm_mailbox(abi::MIG_ARM_ON);
            answer?
        } else {
            self.command_step(id, epoch, to)?
        };
        let round_ns = now_ns().saturating_sub(t0);
        if status != abi::STATUS_OK {
            pr_warn_ratelimited!(
                "{}: the device refused its part of migrating actor {id}: {status}\n",
                &*self.name
            );
            return Err(EIO);
        }
        Ok((dev_ns, round_ns))
    }

    /// Waits for `answered` to give the device's answer, spinning at first; `ETIMEDOUT` after
    /// [`DEVICE_TIMEOUT_NS`].
    fn await_device<T>(&self, id: u8, mut answered: impl FnMut() -> Option<T>) -> Result<T> {
        let t0 = now_ns();
        loop {
            if let Some(a) = answered() {
                return Ok(a);
            }
            let waited = now_ns().saturating_sub(t0);
            if waited > DEVICE_TIMEOUT_NS {
                pr_warn_ratelimited!(
                    "{}: the device did not answer the migration of actor {id}\n",
                    &*self.name
                );
                return Err(kernel::errno::etimedout());
            }
            // The answer usually comes within microseconds (the device polls): spin a little
            // before sleeping between looks, whose wake-up would dwarf it.
            if waited < COMMAND_SPIN_NS {
                core::hint::spin_loop();
                kernel::kthread::cond_resched();
            } else {
                usleep_range(2, 10);
            }
        }
    }

    /// The device's part through the migration mailbox: `(status, device time)`.
    fn mailbox_step(&self, id: u8, epoch: u64, to: Side) -> Result<(i32, u64)> {
        let reg = |o| self.regs.atomic_u32(o);
        let mut cmd = u32::from(id);
        if matches!(to, Side::Device) {
            cmd |= abi::MIG_CMD_TO_DEVICE;
        }
        // The host is the only writer of `mig_seq`: its last value is the register's.
        let seq = reg(abi::REG_MIG_SEQ)?
            .load(Ordering::Relaxed)
            .wrapping_add(1);
        reg(abi::REG_MIG_CMD)?.store(cmd, Ordering::Relaxed);
        reg(abi::REG_MIG_EPOCH)?.store(epoch_tag(epoch), Ordering::Relaxed);
        // Release: the command before the sequence that posts it.
        reg(abi::REG_MIG_SEQ)?.store(seq, Ordering::Release);
        let done = reg(abi::REG_MIG_DONE_SEQ)?;
        self.await_device(id, || {
            // Acquire: the status and time the device wrote before the sequence.
            (done.load(Ordering::Acquire) == seq).then(|| {
                let r = |o| reg(o).map_or(0, |r| r.load(Ordering::Relaxed));
                (
                    r(abi::REG_MIG_STATUS) as i32,
                    u64::from(r(abi::REG_MIG_DEV_NS)),
                )
            })
        })
    }

    /// The device's part as a `DIR_MIGRATE` descriptor in the SQ: `(status, device time)`.
    fn command_step(&self, id: u8, epoch: u64, to: Side) -> Result<(i32, u64)> {
        let d = SubmissionDescriptor {
            tag: self.ctrl_tag,
            opcode: abi::opcode(abi::PIPELINE_PASSTHROUGH, abi::DIR_MIGRATE),
            placement: u8::from(matches!(to, Side::Device)),
            actors: [id, 0],
            state: self.ctrl_tag,
            epochs: [epoch_tag(epoch), 0],
            ..Default::default()
        };
        *self.ctrl_done.lock() = None;
        self.submit(&d)?;
        self.await_device(id, || {
            // Reap here too: with interrupts the handler may get there first, either is fine.
            self.reap();
            self.ctrl_done
                .lock()
                .take()
                .map(|e| (e.status, u64::from(e.stored_bytes)))
        })
    }

    /// Arms the mailbox with `arm` and waits until the device's firmware says it acts on it
    /// (`abi::REG_MIG_ARM_SEEN`), sleeping between looks, at most [`WAKE_TIMEOUT_NS`]; returns
    /// the time it took. Nothing waits on it but the migration.
    fn wake_device(&self, arm: u32) -> u64 {
        if !self.mig_mailbox {
            return 0;
        }
        let t0 = now_ns();
        self.arm_mailbox(arm);
        if let Ok(seen) = self.regs.atomic_u32(abi::REG_MIG_ARM_SEEN) {
            while seen.load(Ordering::Acquire) != arm
                && now_ns().saturating_sub(t0) < WAKE_TIMEOUT_NS
                && !self.stopping.load(Ordering::Acquire)
            {
                usleep_range(10, 20);
            }
        }
        now_ns().saturating_sub(t0)
    }

    /// Tells the device a migration is under way (its firmware then watches the mailbox
    /// closely), that its command is imminent, or that it is over (`abi::MIG_ARM_*`).
    fn arm_mailbox(&self, arm: u32) {
        if self.mig_mailbox {
            if let Ok(r) = self.regs.atomic_u32(abi::REG_MIG_ARM) {
                r.store(arm, Ordering::Release);
            }
        }
    }

    /// Migrates actor `id` to `to` (see the module documentation).
    pub(crate) fn migrate(&self, id: u8, to: Side) -> Result<Record> {
        if !self.can_migrate {
            return Err(kernel::errno::eopnotsupp());
        }
        if self.health.is_dead() {
            return Err(ENODEV);
        }
        // One at a time; the guard holds the list the parked requests are taken into.
        let mut parked = self.migration.lock();
        {
            let routing = self.routing.lock();
            let a = routing.actor(id).ok_or(EINVAL)?;
            if a.pinned {
                return Err(EPERM);
            }
            if a.side == to {
                return Err(kernel::errno::ealready());
            }
        }
        // 0. Wake the device's firmware, before any request waits. The command is imminent
        // from the start: the drain refuses what the source has not started, so it lasts as
        // long as the runs in progress. (Marked imminent only at the drain's last request, the
        // command often came before the firmware had looked again: 5 of 11 slow pick-ups in a
        // measured run.)
        let wake_ns = self.wake_device(abi::MIG_ARM_SOON);
        let t0 = now_ns();
        // 1. Switch. Only this thread migrates (the lock): the checks above still hold.
        let (from, epoch) = {
            let mut routing = self.routing.lock();
            let Some(a) = routing.actor_mut(id) else {
                drop(routing);
                self.arm_mailbox(abi::MIG_ARM_OFF);
                return Err(EINVAL);
            };
            let from = a.side;
            a.side = to;
            a.migrating = true;
            (from, a.epoch)
        };
        let result = self.migrate_locked(id, from, to, epoch, t0, &mut parked);
        self.arm_mailbox(abi::MIG_ARM_OFF);
        let r = match result {
            Ok(r) => Record { wake_ns, ..r },
            Err(e) => {
                if !self.stopping.load(Ordering::Acquire) {
                    // Not reached "active": the source keeps the actor (a drain timeout or a
                    // refused command); the epoch stays odd until the next mount settles it
                    // or goes on to the next even value now.
                    self.abort(id, from, epoch, &mut parked);
                }
                return Err(e);
            }
        };
        self.migration_log.lock().push(r);
        self.stats.inc(Counter::Migrations);
        Ok(r)
    }

    fn migrate_locked(
        &self,
        id: u8,
        from: Side,
        to: Side,
        epoch: u64,
        t0: u64,
        parked: &mut KVec<(u16, u8)>,
    ) -> Result<Record> {
        let (pmr, layout) = (&self.pmr, &self.layout);
        // 2. Odd epoch: from now on S refuses a run of the actor that has not started (its
        // epoch check), and the request is routed again, to be parked for D.
        let odd = epoch | 1;
        control::set_epoch(pmr, layout, id, odd)?;
        // 3. Drain: the runs S started.
        self.drain_actor(id, t0)?;
        let mut t = Times {
            start: t0,
            drained: now_ns(),
            ..Times::default()
        };
        self.pause_at(1, id)?;
        // 4. Checkpoint ("ready").
        t.ckpt0 = now_ns();
        self.checkpoint_at_source(id, from, odd, &mut t)?;
        t.ready = now_ns();
        self.pause_at(2, id)?;
        // 5. Rebuild ("active").
        t.rebuild0 = now_ns();
        self.rebuild_at_destination(id, to, odd, &mut t)?;
        t.active = now_ns();
        self.pause_at(3, id)?;
        // 6. Even epoch; the parked requests go.
        let even = odd.wrapping_add(1);
        control::set_epoch(pmr, layout, id, even)?;
        self.switch_over(id, to, even, parked);
        // The migration ends here: the actor is active where the table routes it. Running the
        // requests that waited (their host stages may run in this thread) is their time.
        t.end = now_ns();
        self.resume_parked(parked);
        Ok(t.record(id, from, to))
    }

    /// Step 3 of migrating actor `id`, started at `t0`: waits until no request in flight needs
    /// the actor. The thread sleeps until the completion path wakes it then
    /// (`Routing::pass`); it gives up when the device stops, at the drain timeout or on a
    /// signal.
    fn drain_actor(&self, id: u8, t0: u64) -> Result {
        let inflight = || self.routing.lock().actor(id).map_or(0, |a| a.inflight);
        let deadline = t0.saturating_add(self.drain_timeout_ns);
        let tick_ns = 1_000_000_000 / (kernel::time::msecs_to_jiffies(1000) as u64).max(1);
        loop {
            let n = inflight();
            if n == 0 {
                return Ok(());
            }
            if self.stopping.load(Ordering::Acquire) {
                return Err(kernel::errno::eshutdown());
            }
            let now = now_ns();
            if now >= deadline {
                pr_warn_ratelimited!("{}: actor {id}: {n} requests did not drain\n", &*self.name);
                return Err(kernel::errno::etimedout());
            }
            // Whole ticks that end before the deadline; within a tick of it, short sleeps keep
            // a timeout shorter than a tick (`migrate_drain_timeout_ms=1`) what it says.
            let ticks = (deadline - now) / tick_ns;
            if ticks == 0 {
                usleep_range(5, 20);
                continue;
            }
            let woken = self
                .drain_wq
                .wait_interruptible_timeout(Some(ticks as usize), || {
                    inflight() == 0 || self.stopping.load(Ordering::Acquire)
                });
            if woken.is_err() {
                // A signal to the task that asked for the move (the `migrate` file): it gives
                // up, as on a timeout, and the source keeps the actor.
                return Err(EINTR);
            }
        }
    }

    /// Step 4 of migrating actor `id`: its source side `from` checkpoints it at epoch `odd`. A
    /// device checkpoint's own time and command round trip go into `t`.
    fn checkpoint_at_source(&self, id: u8, from: Side, odd: u64, t: &mut Times) -> Result {
        let (pmr, layout) = (&self.pmr, &self.layout);
        match from {
            Side::Host => {
                let c = self.controls.lock().take(id).ok_or(EIO)?;
                if let Err(e) = control::checkpoint(pmr, layout, id, SIDE_HOST, odd, &c) {
                    // Keep the state where it was: nothing was published.
                    let _ = self.controls.lock().put(id, c);
                    return Err(e.into());
                }
            }
            Side::Device => {
                (t.dev_ckpt_ns, t.command_ns) = self.device_step(id, odd, Side::Host)?
            }
        }
        Ok(())
    }

    /// Step 5 of migrating actor `id`: its destination side `to` rebuilds it from the
    /// checkpoint of epoch `odd` and makes it active. A device rebuild's own time and command
    /// round trip go into `t`.
    fn rebuild_at_destination(&self, id: u8, to: Side, odd: u64, t: &mut Times) -> Result {
        let (pmr, layout) = (&self.pmr, &self.layout);
        match to {
            Side::Host => {
                let ckpt = control::load(pmr, layout, id, Some(odd))?;
                self.controls.lock().put(id, ckpt.rebuild(SIDE_HOST))?;
                control::activate(pmr, layout, id, SIDE_HOST, odd)?;
            }
            Side::Device => {
                (t.dev_rebuild_ns, t.command_ns) = self.device_step(id, odd, Side::Device)?;
            }
        }
        Ok(())
    }

    /// Ends a migration: the routing table says where the actor is, the parked requests go.
    fn settle(&self, id: u8, side: Side, epoch: u64, parked: &mut KVec<(u16, u8)>) {
        self.switch_over(id, side, epoch, parked);
        self.resume_parked(parked);
    }

    /// Routes actor `id` to `side` at `epoch` from now on and takes the requests parked for it
    /// into `parked` (the migration lock's list, which has room for every tag: nothing is
    /// allocated between "active" and the end of the migration).
    fn switch_over(&self, id: u8, side: Side, epoch: u64, parked: &mut KVec<(u16, u8)>) {
        empty(parked);
        let mut routing = self.routing.lock();
        if let Some(a) = routing.actor_mut(id) {
            a.side = side;
            a.epoch = epoch;
            a.migrating = false;
            a.last_move_ns = Some(now_ns());
        }
        routing.unpark(parked);
    }

    /// Routes the requests [`Self::switch_over`] took.
    fn resume_parked(&self, parked: &KVec<(u16, u8)>) {
        for (tag, step) in parked.iter() {
            self.resume(*tag, *step);
        }
    }

    /// A migration failed before "active": the source keeps the actor. The checkpoint, if it was
    /// written, is rebuilt on the source (the host), or the device keeps what it held.
    fn abort(&self, id: u8, from: Side, epoch: u64, parked: &mut KVec<(u16, u8)>) {
        let (pmr, layout) = (&self.pmr, &self.layout);
        if matches!(from, Side::Host) && !self.controls.lock().holds(id) {
            if let Ok(c) = control::load(pmr, layout, id, None) {
                let _ = self.controls.lock().put(id, c.rebuild(SIDE_HOST));
            }
        }
        // Back to even, past the odd epoch: requests routed before are refused and re-routed.
        let next = (epoch | 1).wrapping_add(1);
        let _ = control::set_epoch(pmr, layout, id, next);
        self.settle(id, from, next, parked);
    }

    /// Fails the requests parked for a migration that will not finish (the device is going,
    /// `stopping` is set): waits for a migration under way to give up first.
    pub(crate) fn fail_parked(&self) {
        let mut parked = self.migration.lock();
        empty(&mut parked);
        self.routing.lock().unpark(&mut parked);
        // `stopping` is set: `resume` fails each.
        self.resume_parked(&parked);
    }

    /// Checkpoints the actors the host holds (at unmount: the next mount rebuilds from them).
    pub(crate) fn snapshot_host_actors(&self) {
        let (pmr, layout) = (&self.pmr, &self.layout);
        let mut controls = self.controls.lock();
        for id in 1..MAX_ACTORS {
            let id = id as u8;
            let Some(c) = controls.take(id) else {
                continue;
            };
            if !control::owns(pmr, layout, id, SIDE_HOST) {
                continue;
            }
            let r = control::epoch(pmr, layout, id)
                .and_then(|e| control::checkpoint(pmr, layout, id, SIDE_HOST, e, &c));
            if let Err(e) = r {
                pr_warn!("{}: actor {id}: checkpoint failed: {e}\n", &*self.name);
            }
        }
    }
}

/// Empties a list of parked requests, keeping its room (6.12's `KVec` has no `clear`).
fn empty(list: &mut KVec<(u16, u8)>) {
    // SAFETY: 0 is at most the length, and `(u16, u8)` is `Copy`: nothing is left undropped.
    unsafe { list.set_len(0) };
}

/// What the administrator asked for at bind.
pub(crate) struct Registration {
    /// Stage actors the configured placement puts on a side: `(actor, side)`.
    pub(crate) place: [(u8, Side); abi::MAX_STAGES as usize],
    pub(crate) nr_place: usize,
    /// Bit `id`: actor `id` is compute-dominated (pinned).
    pub(crate) pinned: u32,
    /// Request-level dispatch (paradigm B) by this rule: the pipeline's actors run on both
    /// sides.
    pub(crate) dispatch: Option<crate::proto::dispatch::Rule>,
}

/// Settles every actor at mount, before the device is enabled (the host owns the PMR): finishes
/// or rolls back an interrupted migration, applies the administrator's placement and class, and
/// fills the routing table; then rebuilds the host's actors.
pub(crate) fn settle_at_mount(dev: &RefluxDev, reg: &Registration) -> Result {
    let (pmr, layout) = (&dev.pmr, &dev.layout);
    let nr = usize::try_from(layout.params().nr_actors)
        .unwrap_or(0)
        .min(MAX_ACTORS);
    let mut routing = dev.routing.lock();
    routing.dispatch = reg
        .dispatch
        .map(|rule| crate::proto::dispatch::Dispatch::new(DISPATCH_PROFILE, rule));
    for idx in 1..nr {
        let id = idx as u8;
        let Ok(sh) = control::header(pmr, layout, id) else {
            continue;
        };
        let epoch = control::epoch(pmr, layout, id)?;
        let r = recover(epoch, &sh);
        let mut owner = r.owner;
        let mut epoch = r.epoch;
        match r.outcome {
            Outcome::Settled => {}
            Outcome::RolledBack | Outcome::RolledForward => pr_info!(
                "{}: actor {id} was migrating at the crash (epoch {}): {} to the {}\n",
                &*dev.name,
                r.epoch - 1,
                if r.outcome == Outcome::RolledBack {
                    "rolled back"
                } else {
                    "rolled forward"
                },
                Side::from_abi(owner).name()
            ),
        }
        let replicated =
            reg.dispatch.is_some() && reg.place[..reg.nr_place].iter().any(|(a, _)| *a == id);
        let pinned = reg.pinned & (1 << idx) != 0 || replicated;
        if let Some((_, want)) = reg.place[..reg.nr_place].iter().find(|(a, _)| *a == id) {
            if want.abi() != owner {
                // A cold move: nothing runs, the checkpoint stays, the new owner rebuilds.
                owner = want.abi();
                epoch = epoch.wrapping_add(2);
            }
        }
        let class = if replicated {
            abi::ACTOR_CLASS_REPLICATED
        } else if pinned {
            abi::ACTOR_CLASS_COMPUTE
        } else {
            abi::ACTOR_CLASS_IO
        };
        control::register(pmr, layout, id, owner, class)?;
        control::set_epoch(pmr, layout, id, epoch)?;
        let a = &mut routing.actors[idx];
        a.registered = true;
        a.pinned = pinned;
        a.side = Side::from_abi(owner);
        a.epoch = epoch;
        a.migrating = false;
        a.inflight = 0;
        a.last_move_ns = None;
    }
    drop(routing);
    let mut controls = dev.controls.lock();
    *controls = Controls::default();
    let name = &dev.name;
    control::rebuild_owned(pmr, layout, SIDE_HOST, &mut controls, |a, e| {
        pr_warn!("{}: actor {a}: cannot rebuild on the host: {e}\n", &**name);
    });
    Ok(())
}
