// SPDX-License-Identifier: GPL-2.0

//! The migrator of one device: the state a migration keeps outside the routing table and the
//! PMR, and the device's half of the hand-over (the migration mailbox or the command tag).
//!
//! It holds: whether the device takes migrations and how (`CAP_MIGRATE`,
//! `CAP_MIGRATE_MAILBOX`); the command tag and the completion of the command in flight; the
//! drain's timeout and the wait queue a drain sleeps on; the migration lock (one migration at
//! a time) with the list its parked requests are taken into; the log of the last migrations;
//! the fault-injection knob `migrate_stop` and the phase a migration is paused at; and
//! `stopping`, set when the device goes away. The protocol that uses it with the routing table,
//! the actors' control state and the rings is `migrate.rs`.
//!
//! Lock order: `migration` (a mutex, held through a whole migration) comes first: the routing
//! table's lock, the actors' control state and `log` are taken inside it, never the other way
//! round. `ctrl_done` and `log` are taken alone, with nothing inside them.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{
    io_mem::IoMem,
    kthread::usleep_range,
    new_mutex, new_spinlock, new_wait_queue, pr_warn_ratelimited,
    prelude::*,
    sync::{
        lock::{mutex::MutexBackend, Guard},
        Mutex, SpinLock,
    },
    wait::WaitQueue,
};

use crate::abi::{self, CompletionEntry, Regs};
use crate::actor::exec::now_ns;
use crate::proto::pipeline::Side;
use crate::proto::request::epoch_tag;
use crate::regio::reg;

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

/// The last [`LOG_LEN`] migrations (on the heap: too big for a stack frame).
pub(crate) struct MigrationLog {
    records: KVec<Record>,
    /// Migrations ever recorded; the newest is at `(count - 1) % LOG_LEN`.
    count: u64,
}

impl MigrationLog {
    fn new() -> Result<Self> {
        Ok(Self {
            records: KVec::from_elem(Record::default(), LOG_LEN, GFP_KERNEL)?,
            count: 0,
        })
    }

    fn push(&mut self, r: Record) {
        // `LOG_LEN` is small: the index fits.
        if let Some(slot) = self.records.get_mut((self.count % LOG_LEN as u64) as usize) {
            *slot = r;
        }
        self.count += 1;
    }

    /// Migrations ever recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// How many migrations the log still holds.
    pub(crate) fn held(&self) -> u64 {
        self.count.min(self.records.len() as u64)
    }

    /// The migrations still held, oldest first.
    pub(crate) fn records(&self) -> impl Iterator<Item = &Record> {
        let len = self.records.len() as u64;
        (self.count - self.held()..self.count).filter_map(move |i| {
            let slot = i.checked_rem(len).unwrap_or(0);
            self.records.get(slot as usize)
        })
    }
}

/// The migration state of one device.
#[pin_data]
pub(crate) struct Migrator {
    /// Whether the device takes migrations (`CAP_MIGRATE`).
    can_migrate: bool,
    /// Whether it takes them through the migration mailbox (`CAP_MIGRATE_MAILBOX`) rather than
    /// as `DIR_MIGRATE` descriptors in the SQ.
    mailbox: bool,
    /// The tag of migration commands: one past the blk-mq tags.
    ctrl_tag: u16,
    /// The completion of the migration command in flight.
    #[pin]
    ctrl_done: SpinLock<Option<CompletionEntry>>,
    /// How long a migration waits for its source to drain, in nanoseconds.
    drain_timeout_ns: u64,
    /// Where a migration sleeps while its source drains: woken when a request leaves the
    /// migrating actor with none in flight (`Routing::pass`).
    #[pin]
    drain_wq: WaitQueue,
    /// Migrations, one at a time. The guard holds the list a migration takes its parked
    /// requests into, with room for every tag from bind on, so that a switch allocates nothing.
    #[pin]
    migration: Mutex<KVec<(u16, u8)>>,
    /// The phase times of the last migrations.
    #[pin]
    log: SpinLock<MigrationLog>,
    /// The fault-injection knob: pause a migration at this phase (0: never).
    stop_at: AtomicU32,
    /// The phase a migration is paused at (0: none).
    paused: AtomicU32,
    /// Set when the device is going away: migrations give up, parked requests fail.
    stopping: AtomicBool,
}

impl Migrator {
    /// The migrator of a device with capabilities `caps` and `depth` tags (its command tag is
    /// `depth`, below `u16::MAX`), whose drains wait at most `drain_timeout_ms`.
    pub(crate) fn new(caps: u64, depth: u32, drain_timeout_ms: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            can_migrate: caps & abi::CAP_MIGRATE != 0,
            mailbox: caps & abi::CAP_MIGRATE != 0 && caps & abi::CAP_MIGRATE_MAILBOX != 0,
            // `depth < u16::MAX` (the queue depth fits the ring, less the command's entry).
            ctrl_tag: depth as u16,
            ctrl_done <- new_spinlock!(None),
            drain_timeout_ns: u64::from(drain_timeout_ms) * 1_000_000,
            drain_wq <- new_wait_queue!(),
            migration <- new_mutex!(KVec::with_capacity(depth as usize, GFP_KERNEL)?),
            log <- new_spinlock!(MigrationLog::new()?),
            stop_at: AtomicU32::new(0),
            paused: AtomicU32::new(0),
            stopping: AtomicBool::new(false),
        }? Error)
    }

    /// Whether the device takes migrations.
    pub(crate) fn can_migrate(&self) -> bool {
        self.can_migrate
    }

    /// Whether the device takes its part through the migration mailbox.
    pub(crate) fn has_mailbox(&self) -> bool {
        self.mailbox
    }

    /// The tag of migration commands in the rings.
    pub(crate) fn ctrl_tag(&self) -> u16 {
        self.ctrl_tag
    }

    /// Forgets any earlier command's completion, before a command is posted.
    pub(crate) fn clear_ctrl(&self) {
        *self.ctrl_done.lock() = None;
    }

    /// The completion `e` of the command in flight came.
    pub(crate) fn ctrl_completed(&self, e: CompletionEntry) {
        *self.ctrl_done.lock() = Some(e);
    }

    /// Takes the completion of the command in flight, if it came.
    pub(crate) fn take_ctrl(&self) -> Option<CompletionEntry> {
        self.ctrl_done.lock().take()
    }

    /// Waits for the migration under way, then holds the migration lock: its guard is the list
    /// the parked requests are taken into.
    pub(crate) fn lock(&self) -> Guard<'_, KVec<(u16, u8)>, MutexBackend> {
        self.migration.lock()
    }

    /// Adds `r` to the log.
    pub(crate) fn record(&self, r: Record) {
        self.log.lock().push(r);
    }

    /// Runs `f` on the log under its lock (it is too big to copy onto the stack).
    pub(crate) fn with_log<T>(&self, f: impl FnOnce(&MigrationLog) -> T) -> T {
        f(&self.log.lock())
    }

    /// The phase `migrate_stop` pauses migrations at (0: none).
    pub(crate) fn stop_at(&self) -> u32 {
        self.stop_at.load(Ordering::Acquire)
    }

    /// Sets `migrate_stop`; 0 lets a paused migration go on.
    pub(crate) fn set_stop_at(&self, phase: u32) {
        self.stop_at.store(phase, Ordering::Release);
    }

    /// The phase a migration is paused at (0: none), for the `stats` file.
    pub(crate) fn paused_phase(&self) -> u32 {
        self.paused.load(Ordering::Relaxed)
    }

    /// Whether the device is going away.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// The device is going away: migrations give up, and one asleep in its drain wakes.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.drain_wq.wake_all();
    }

    /// Wakes the migration waiting for its drain if the routing table said it `ended` (the
    /// routing lock is dropped by now).
    pub(crate) fn drain_ended(&self, ended: bool) {
        if ended {
            self.drain_wq.wake_all();
        }
    }

    /// Waits while `migrate_stop` asks to pause at `phase` (a migration of actor `id` of the
    /// device `name`); `Err` if the device goes away.
    pub(crate) fn pause_at(&self, name: &CStr, phase: u32, id: u8) -> Result {
        if self.stop_at.load(Ordering::Acquire) != phase {
            return Ok(());
        }
        pr_info!(
            "{}: migration of actor {id} paused at phase {phase}\n",
            name
        );
        self.paused.store(phase, Ordering::Release);
        while self.stop_at.load(Ordering::Acquire) == phase {
            if self.is_stopping() {
                return Err(ESHUTDOWN);
            }
            usleep_range(1000, 2000);
        }
        self.paused.store(0, Ordering::Release);
        Ok(())
    }

    /// Waits, for a migration of actor `id` started at `t0`, until `inflight` (its requests in
    /// flight) is zero. The thread sleeps until the completion path wakes it then
    /// ([`Self::drain_ended`]); it gives up when the device stops, at the drain timeout or on a
    /// signal.
    pub(crate) fn wait_drained(
        &self,
        name: &CStr,
        id: u8,
        t0: u64,
        inflight: impl Fn() -> u32,
    ) -> Result {
        let deadline = t0.saturating_add(self.drain_timeout_ns);
        // At least 1 (`HZ` is far below 10^9): the division below cannot fault.
        let tick_ns = (1_000_000_000 / (kernel::time::msecs_to_jiffies(1000) as u64).max(1)).max(1);
        loop {
            let n = inflight();
            if n == 0 {
                return Ok(());
            }
            if self.is_stopping() {
                return Err(ESHUTDOWN);
            }
            let now = now_ns();
            if now >= deadline {
                pr_warn_ratelimited!("{}: actor {id}: {n} requests did not drain\n", name);
                return Err(ETIMEDOUT);
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
                    inflight() == 0 || self.is_stopping()
                });
            if woken.is_err() {
                // A signal to the task that asked for the move (the `migrate` file): it gives
                // up, as on a timeout, and the source keeps the actor.
                return Err(EINTR);
            }
        }
    }

    /// Waits for `answered` to give the device's answer about actor `id`, spinning at first;
    /// `ETIMEDOUT` after [`DEVICE_TIMEOUT_NS`].
    pub(crate) fn await_device<T>(
        &self,
        name: &CStr,
        id: u8,
        mut answered: impl FnMut() -> Option<T>,
    ) -> Result<T> {
        let t0 = now_ns();
        loop {
            if let Some(a) = answered() {
                return Ok(a);
            }
            let waited = now_ns().saturating_sub(t0);
            if waited > DEVICE_TIMEOUT_NS {
                pr_warn_ratelimited!(
                    "{}: the device did not answer the migration of actor {id}\n",
                    name
                );
                return Err(ETIMEDOUT);
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

    /// The device's part of migrating actor `id` at `epoch` to `to`, through the migration
    /// mailbox in `regs`: `(status, device time)`.
    pub(crate) fn mailbox_step(
        &self,
        regs: &IoMem,
        name: &CStr,
        id: u8,
        epoch: u64,
        to: Side,
    ) -> Result<(i32, u64)> {
        let mut cmd = u32::from(id);
        if matches!(to, Side::Device) {
            cmd |= abi::MIG_CMD_TO_DEVICE;
        }
        // The host is the only writer of `mig_seq`: its last value is the register's.
        let seq = reg(regs, Regs::REG_MIG_SEQ)?.load().wrapping_add(1);
        reg(regs, Regs::REG_MIG_CMD)?.store(cmd);
        reg(regs, Regs::REG_MIG_EPOCH)?.store(epoch_tag(epoch));
        // MMIO stores reach the device in program order: the command before the sequence
        // that posts it.
        reg(regs, Regs::REG_MIG_SEQ)?.store(seq);
        let done = reg(regs, Regs::REG_MIG_DONE_SEQ)?;
        let (status, dev_ns) = (
            reg(regs, Regs::REG_MIG_STATUS)?,
            reg(regs, Regs::REG_MIG_DEV_NS)?,
        );
        self.await_device(name, id, || {
            // MMIO loads in program order: the status and time the device wrote before the
            // sequence.
            (done.load() == seq).then(|| (status.load() as i32, u64::from(dev_ns.load())))
        })
    }

    /// Arms the mailbox in `regs` with `arm` and waits until the device's firmware says it acts
    /// on it (`abi::REG_MIG_ARM_SEEN`), sleeping between looks, at most [`WAKE_TIMEOUT_NS`];
    /// returns the time it took. Nothing waits on it but the migration.
    pub(crate) fn wake_device(&self, regs: &IoMem, arm: u32) -> u64 {
        if !self.mailbox {
            return 0;
        }
        let t0 = now_ns();
        self.arm_mailbox(regs, arm);
        if let Ok(seen) = reg(regs, Regs::REG_MIG_ARM_SEEN) {
            while seen.load() != arm
                && now_ns().saturating_sub(t0) < WAKE_TIMEOUT_NS
                && !self.is_stopping()
            {
                usleep_range(10, 20);
            }
        }
        now_ns().saturating_sub(t0)
    }

    /// Tells the device (registers `regs`) a migration is under way (its firmware then watches
    /// the mailbox closely), that its command is imminent, or that it is over
    /// (`abi::MIG_ARM_*`).
    pub(crate) fn arm_mailbox(&self, regs: &IoMem, arm: u32) {
        if self.mailbox {
            if let Ok(r) = reg(regs, Regs::REG_MIG_ARM) {
                r.store(arm);
            }
        }
    }
}
