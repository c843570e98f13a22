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
//!    before step 2 finish there, the others are refused. The thread sleeps on the migrator's
//!    drain wait queue until the completion path says the count is down to none.
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

use kernel::{dev_info, dev_warn, pr_warn_ratelimited, prelude::*};

use crate::abi::{self, SubmissionDescriptor, SIDE_HOST};
use crate::actor::control::{self, Controls, MAX_ACTORS};
use crate::actor::exec::now_ns;
use crate::migrator::Record;
use crate::proto::checkpoint::{recover, Outcome};
use crate::proto::pipeline::Side;
use crate::proto::request::epoch_tag;
use crate::queue::RefluxDev;
use crate::stats::Counter;

/// Requests per side request-level dispatch profiles before its cost model is fixed.
const DISPATCH_PROFILE: u32 = 32;

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

impl RefluxDev {
    /// Sends the device its part of the migration of `id` at `epoch` and waits for the answer;
    /// returns the device's own time for it and the command's round trip.
    fn device_step(&self, id: u8, epoch: u64, to: Side) -> Result<(u64, u64)> {
        let t0 = now_ns();
        let m = &self.migrator;
        let (status, dev_ns) = if m.has_mailbox() {
            let answer = m.mailbox_step(&self.regs, &self.name, id, epoch, to);
            // A migration has one command: none is imminent any more (the device stops polling
            // for one), though the migration goes on until its end.
            m.arm_mailbox(&self.regs, abi::MIG_ARM_ON);
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

    /// The device's part as a `DIR_MIGRATE` descriptor in the SQ: `(status, device time)`.
    fn command_step(&self, id: u8, epoch: u64, to: Side) -> Result<(i32, u64)> {
        let d = SubmissionDescriptor {
            tag: self.migrator.ctrl_tag(),
            opcode: abi::opcode(abi::PIPELINE_PASSTHROUGH, abi::DIR_MIGRATE),
            placement: u8::from(matches!(to, Side::Device)),
            actors: [id, 0],
            state: self.migrator.ctrl_tag(),
            epochs: [epoch_tag(epoch), 0],
            ..Default::default()
        };
        self.migrator.clear_ctrl();
        self.submit(&d)?;
        self.migrator.await_device(&self.name, id, || {
            // Reap here too: with interrupts the handler may get there first, either is fine.
            self.reap();
            self.migrator
                .take_ctrl()
                .map(|e| (e.status, u64::from(e.stored_bytes)))
        })
    }

    /// Migrates actor `id` to `to` (see the module documentation).
    pub(crate) fn migrate(&self, id: u8, to: Side) -> Result<Record> {
        let m = &self.migrator;
        if !m.can_migrate() {
            return Err(EOPNOTSUPP);
        }
        if self.health.is_dead() {
            return Err(ENODEV);
        }
        // One at a time; the guard holds the list the parked requests are taken into.
        let mut parked = m.lock();
        // The device is going away: no migration starts (the teardown waits for its callers).
        if m.is_stopping() {
            return Err(ESHUTDOWN);
        }
        {
            let routing = self.routing.lock();
            let a = routing.actor(id).ok_or(EINVAL)?;
            if a.pinned {
                return Err(EPERM);
            }
            if a.side == to {
                return Err(EALREADY);
            }
        }
        // 0. Wake the device's firmware, before any request waits. The command is imminent
        // from the start: the drain refuses what the source has not started, so it lasts as
        // long as the runs in progress. (Marked imminent only at the drain's last request, the
        // command often came before the firmware had looked again: 5 of 11 slow pick-ups in a
        // measured run.)
        let wake_ns = m.wake_device(&self.regs, abi::MIG_ARM_SOON);
        let t0 = now_ns();
        // 1. Switch. Only this thread migrates (the lock): the checks above still hold.
        let (from, epoch) = {
            let mut routing = self.routing.lock();
            let Some(a) = routing.actor_mut(id) else {
                drop(routing);
                m.arm_mailbox(&self.regs, abi::MIG_ARM_OFF);
                return Err(EINVAL);
            };
            let from = a.side;
            a.side = to;
            a.migrating = true;
            (from, a.epoch)
        };
        let result = self.migrate_locked(id, from, to, epoch, t0, &mut parked);
        m.arm_mailbox(&self.regs, abi::MIG_ARM_OFF);
        let r = match result {
            Ok(r) => Record { wake_ns, ..r },
            Err(e) => {
                // Not reached "active": the source keeps the actor (a drain timeout, a refused
                // command, a signal, or the device going away before "ready": it is still
                // enabled, and the requests that wait for the actor must run, the writeback of
                // an unbind's `del_gendisk` among them); the epoch goes on to the next even
                // value. (A rebuild that fails past "ready" also lands here, though a device
                // source let the actor go at "ready": a known gap, see Documentation/reflux.rst.)
                self.abort(id, from, epoch, &mut parked);
                return Err(e);
            }
        };
        m.record(r);
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
        self.migrator.pause_at(&self.name, 1, id)?;
        // 4. Checkpoint ("ready").
        t.ckpt0 = now_ns();
        self.checkpoint_at_source(id, from, odd, &mut t)?;
        t.ready = now_ns();
        // Past "ready" the source let the actor go (a device no longer runs it): a pause here
        // that the device's unbind ends goes on to "active", since rolling back would need the
        // source to rebuild it. The destination is still enabled: the unbind stops it later.
        let _ = self.migrator.pause_at(&self.name, 2, id);
        // 5. Rebuild ("active").
        t.rebuild0 = now_ns();
        self.rebuild_at_destination(id, to, odd, &mut t)?;
        t.active = now_ns();
        // Past "active" the move is done but for its epoch: a pause here that the device's
        // unbind ends completes it, as the next mount would (a power cut rolls it forward).
        let _ = self.migrator.pause_at(&self.name, 3, id);
        // 6. Even epoch; the parked requests go.
        let even = odd.wrapping_add(1);
        control::set_epoch(pmr, layout, id, even)?;
        self.switch_over(id, to, even, parked);
        // The migration ends here: the actor is active where the table routes it. Running the
        // requests that waited (their host stages may run in this thread) is their time.
        t.end = now_ns();
        self.trace_phases(id, from, to, &t);
        self.resume_parked(parked);
        Ok(t.record(id, from, to))
    }

    /// Traces the phases of a migration that completed, with their times `t`.
    fn trace_phases(&self, id: u8, from: Side, to: Side, t: &Times) {
        use crate::trace::phase::{CHECKPOINT, DRAIN, HANDOVER, REBUILD};
        for (phase, begin, end) in [
            (DRAIN, t.start, t.drained),
            (CHECKPOINT, t.ckpt0, t.ready),
            (REBUILD, t.rebuild0, t.active),
            (HANDOVER, t.active, t.end),
        ] {
            crate::trace::reflux_migrate_phase(
                self.nr,
                u32::from(id),
                crate::trace::side(from),
                crate::trace::side(to),
                phase,
                end.saturating_sub(begin),
            );
        }
    }

    /// Step 3 of migrating actor `id`, started at `t0`: waits until no request in flight needs
    /// the actor. The thread sleeps until the completion path wakes it then
    /// (`Routing::pass`); it gives up when the device stops, at the drain timeout or on a
    /// signal (`Migrator::wait_drained`).
    fn drain_actor(&self, id: u8, t0: u64) -> Result {
        let inflight = || self.routing.lock().actor(id).map_or(0, |a| a.inflight);
        self.migrator.wait_drained(&self.name, id, t0, inflight)
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

    /// Routes the requests still parked once migrations stopped (`stopping` is set): waits for a
    /// migration under way to give up first. A migration that gives up settles its actor on
    /// the source, so none should be left; one that would park again fails (`resume_with`).
    pub(crate) fn release_parked(&self) {
        let mut parked = self.migrator.lock();
        empty(&mut parked);
        self.routing.lock().unpark(&mut parked);
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
                dev_warn!(&self.device, "actor {id}: checkpoint failed: {e}\n");
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
            Outcome::RolledBack | Outcome::RolledForward => dev_info!(
                &dev.device,
                "actor {id} was migrating at the crash (epoch {}): {} to the {}\n",
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
    let device = &dev.device;
    control::rebuild_owned(pmr, layout, SIDE_HOST, &mut controls, |a, e| {
        dev_warn!(device, "actor {a}: cannot rebuild on the host: {e}\n");
    });
    Ok(())
}
