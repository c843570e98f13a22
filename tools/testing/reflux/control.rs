// SPDX-License-Identifier: GPL-2.0

//! The controller: the device's firmware thread.
//!
//! Every turn (about a millisecond) it follows `DEV_CTRL` through the ABI's lifecycle (enable
//! handshake, disable, reset level, fatal errors), serves `FAULT_INJECT`, announces completions
//! an outstanding interrupt held back, drains the PMR write cache toward NAND at the modelled
//! bandwidth, and beats the heartbeat while ready. Every 10 ms (the paper's scheduling epoch) it
//! ticks the thermal model with the cores' busy time and publishes the telemetry registers.
//!
//! It also serves the migration mailbox (`REG_MIG_SEQ`), as a controller's management core
//! would: while the host has it armed (`REG_MIG_ARM`, set for the length of a migration) a turn
//! lasts tens of microseconds instead of a millisecond, so that the checkpoint or rebuild the host
//! asks for after its drain is done at once, beside the rings and the requests queued in them.
//! Once the host says the command is imminent (`MIG_ARM_SOON`: it comes after the runs in
//! progress), it polls the mailbox without sleeping, for at most 10 ms from then or from the
//! cores' last completion: waking from even a short sleep takes this emulated core hundreds of
//! microseconds, up to milliseconds, when the CPUs are busy.
//!
//! It is the only writer of `DEV_STATUS` and `DEV_ERROR`, so the status a host reads is always
//! one the controller decided, after the cores have settled.

use core::sync::atomic::Ordering;

use kernel::{kthread, prelude::*, shared_mem::SharedMem, sync::Arc, types::ARef};

use crate::abi;
use crate::cores::now_ns;
use crate::dev::Dev;
use crate::proto::pacing::effective_speed_permille;
use crate::proto::thermal::{Thermal, ThermalParams, ThrottleChange};

/// The telemetry period: the paper's 10 ms scheduling epoch.
const TICK_NS: u64 = 10_000_000;

/// The longest the controller polls the mailbox without pause while the host says the command
/// is imminent (`MIG_ARM_SOON`): on this emulated device the management core is a host CPU, taken
/// from everything else while it spins. Long enough for the last request of a drain and the
/// host's answer to it (a sleeping controller wakes up to a millisecond late on the emulator's
/// busy CPUs: the hand-overs that waited for it took 1-3 ms with a 2 ms window).
const SOON_SPIN_NS: u64 = 10_000_000;

/// One turn's spin on the mailbox while the command is imminent: the turn's other work (the
/// lifecycle, interrupts held back, the NAND drain) waits at most this long.
const SOON_TURN_NS: u64 = 50_000;

/// The controller's configuration.
pub(crate) struct ControlConfig {
    /// The thermal model.
    pub(crate) thermal: ThermalParams,
    /// The NAND bandwidth the write cache drains at, in MB/s.
    pub(crate) nand_mbps: u32,
}

/// Where the device is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Not ready: the host owns the PMR (after load, after a disable, after a reset).
    Off,
    /// Enabled and serving the rings.
    Ready,
    /// Stopped by an error until the host resets the device.
    Fatal,
    /// Held in reset by `DEV_CTRL_RESET`.
    InReset,
}

/// A `DEV_ERR_*` code's meaning, for the log.
fn error_name(code: u32) -> &'static str {
    match code {
        abi::DEV_ERR_SUPERBLOCK => "no valid superblock at enable",
        abi::DEV_ERR_RING => "the ring counters do not form a valid ring",
        abi::DEV_ERR_BACKING => "the PMR's backing store failed",
        _ => "unknown error",
    }
}

struct Controller {
    dev: Arc<Dev>,
    mode: Mode,
    thermal: Thermal,
    nand_mbps: u64,
    last_tick: u64,
    last_busy: u64,
    last_drain: u64,
    /// `nand_mbps * ns` not yet turned into whole drained bytes (units of 1/1000 byte).
    drain_carry: u64,
    /// The last value of `thermal_set_mc` acted on.
    set_seen: u32,
    /// The configured engine speed (the last valid value of `speed_permille`).
    speed: u32,
    /// The last value of `speed_permille` seen, valid or not (to warn once per bad value).
    speed_seen: u32,
    /// The last `REG_MIG_SEQ` answered (or skipped at enable).
    mig_seen: u32,
    /// Since when the host has said the command is imminent (`MIG_ARM_SOON`), if it does.
    soon_since: Option<u64>,
    /// The last `REG_MIG_ARM` acted on, as published in `REG_MIG_ARM_SEEN`.
    arm_seen: u32,
}

/// The thread body.
pub(crate) fn run(dev: Arc<Dev>, cfg: ControlConfig) -> i32 {
    let Ok(thermal) = Thermal::new(cfg.thermal) else {
        return -(kernel::bindings::EINVAL as i32);
    };
    // The cores wake it when a migration's command may be about to come.
    dev.set_controller(Some(ARef::from(&*kernel::current!())));
    let now = now_ns();
    let busy = dev.busy_ns.load(Ordering::Relaxed);
    let mut c = Controller {
        speed: dev.speed_permille.load(Ordering::Relaxed),
        speed_seen: dev.speed_permille.load(Ordering::Relaxed),
        dev,
        mode: Mode::Off,
        thermal,
        nand_mbps: u64::from(cfg.nand_mbps),
        last_tick: now,
        last_busy: busy,
        last_drain: now,
        drain_carry: 0,
        set_seen: 0,
        mig_seen: 0,
        soon_since: None,
        arm_seen: abi::MIG_ARM_OFF,
    };
    while !kthread::should_stop() {
        c.follow_ctrl();
        c.fault_inject();
        c.dev.kick_irq();
        let now = now_ns();
        c.drain(now);
        // A hung controller (fault injection) stops beating.
        if c.mode == Mode::Ready && !crate::HANG.get() {
            if let Ok(beat) = c.dev.regs.atomic_u32(abi::REG_HEARTBEAT) {
                beat.fetch_add(1, Ordering::Release);
            }
        }
        c.dev.set_reg32(
            abi::REG_QUEUE_DEPTH,
            c.dev.in_flight.load(Ordering::Relaxed),
            Ordering::Relaxed,
        );
        if now.saturating_sub(c.last_tick) >= TICK_NS {
            c.tick(now);
        }
        match c.mailbox() {
            abi::MIG_ARM_OFF => {
                c.soon_since = None;
                kthread::usleep_range(500, 1000);
            }
            abi::MIG_ARM_SOON if c.spin_soon(now) => {}
            _ => kthread::usleep_range(10, 20),
        }
    }
    // The module is going away (its cores are stopped): not ready any more.
    c.dev.set_reg32(abi::REG_DEV_STATUS, 0, Ordering::Release);
    c.dev.set_controller(None);
    0
}

impl Controller {
    /// Follows `DEV_CTRL` (ABI lifecycle, steps 3 and 5, and the reset level).
    fn follow_ctrl(&mut self) {
        let dev = &self.dev;
        // Acquire: what the host wrote before setting the bits (ring counters, superblock).
        let ctrl = dev.reg32(abi::REG_DEV_CTRL, Ordering::Acquire);
        if ctrl & abi::DEV_CTRL_RESET != 0 {
            if self.mode != Mode::InReset {
                // Abandon everything: the host rewrites the rings before the next enable.
                dev.quiesce(true);
                dev.set_reg32(abi::REG_DEV_ERROR, abi::DEV_ERR_NONE, Ordering::Relaxed);
                dev.set_reg32(
                    abi::REG_DEV_STATUS,
                    abi::DEV_STATUS_IN_RESET,
                    Ordering::Release,
                );
                self.mode = Mode::InReset;
                pr_info!("reflux.{}: held in reset\n", dev.id);
            }
            return;
        }
        match self.mode {
            Mode::InReset => {
                dev.set_reg32(abi::REG_DEV_STATUS, 0, Ordering::Release);
                self.mode = Mode::Off;
                pr_info!("reflux.{}: out of reset\n", dev.id);
            }
            // A stalled controller (fault injection) leaves the enable pending: once the stall
            // ends it comes up, unless the host withdrew the enable meanwhile.
            Mode::Off if ctrl & abi::DEV_CTRL_ENABLE != 0 && !crate::STALL_ENABLE.get() => {
                match dev.enable() {
                    Ok(()) => {
                        dev.set_reg32(abi::REG_DEV_ERROR, abi::DEV_ERR_NONE, Ordering::Relaxed);
                        dev.set_reg32(
                            abi::REG_DEV_STATUS,
                            abi::DEV_STATUS_READY,
                            Ordering::Release,
                        );
                        self.mode = Mode::Ready;
                        // A command posted before this enable is not for this mount.
                        self.mig_seen = dev.reg32(abi::REG_MIG_SEQ, Ordering::Acquire);
                        pr_info!("reflux.{}: enabled\n", dev.id);
                    }
                    Err(code) => self.fail(code),
                }
            }
            Mode::Ready => {
                if let Some(code) = dev.take_fatal() {
                    dev.quiesce(false);
                    self.fail(code);
                } else if ctrl & abi::DEV_CTRL_ENABLE == 0 {
                    // Finish what the cores hold (their completions are published), then say so.
                    dev.quiesce(false);
                    dev.set_reg32(abi::REG_DEV_STATUS, 0, Ordering::Release);
                    self.mode = Mode::Off;
                    pr_info!("reflux.{}: disabled\n", dev.id);
                }
            }
            Mode::Off | Mode::Fatal => {}
        }
    }

    /// While the host says the command is imminent, and for at most [`SOON_SPIN_NS`] in a row,
    /// polls the mailbox's sequence without pause for up to [`SOON_TURN_NS`] (a turn's other
    /// work then gets done); returns whether it did.
    fn spin_soon(&mut self, now: u64) -> bool {
        // From the later of the first look at it and the last completion since (a core's kick).
        let since = (*self.soon_since.get_or_insert(now))
            .max(self.dev.soon_kick_ns.load(Ordering::Acquire));
        if now.saturating_sub(since) > SOON_SPIN_NS {
            return false;
        }
        let dev = &self.dev;
        while now_ns().saturating_sub(now) < SOON_TURN_NS
            && dev.reg32(abi::REG_MIG_SEQ, Ordering::Relaxed) == self.mig_seen
            && dev.reg32(abi::REG_MIG_ARM, Ordering::Relaxed) == abi::MIG_ARM_SOON
        {
            core::hint::spin_loop();
        }
        true
    }

    /// Serves a command posted in the migration mailbox while the device is ready; returns
    /// the host's `REG_MIG_ARM` (`MIG_ARM_OFF` when the mailbox is not served).
    fn mailbox(&mut self) -> u32 {
        let dev = &self.dev;
        if !crate::MIGRATE_MAILBOX.get() || self.mode != Mode::Ready || crate::HANG.get() {
            return abi::MIG_ARM_OFF;
        }
        // Acquire: the command and epoch the host wrote before the sequence.
        let seq = dev.reg32(abi::REG_MIG_SEQ, Ordering::Acquire);
        if seq != self.mig_seen {
            let cmd = dev.reg32(abi::REG_MIG_CMD, Ordering::Relaxed);
            let epoch = dev.reg32(abi::REG_MIG_EPOCH, Ordering::Relaxed);
            // The two reads before the sequence's second read. A host that gave up on a command
            // (its timeout) may post the next one while this reads: then the sequence moved,
            // and the command is read again, whole, at the next turn.
            core::sync::atomic::fence(Ordering::Acquire);
            if dev.reg32(abi::REG_MIG_SEQ, Ordering::Relaxed) != seq {
                return abi::MIG_ARM_ON;
            }
            self.mig_seen = seq;
            let t0 = now_ns();
            let status = crate::migrate::serve_mailbox(dev, cmd, epoch);
            let ns = u32::try_from(now_ns().saturating_sub(t0)).unwrap_or(u32::MAX);
            // `STATUS_*` as the register's bits.
            dev.set_reg32(abi::REG_MIG_STATUS, status as u32, Ordering::Relaxed);
            dev.set_reg32(abi::REG_MIG_DEV_NS, ns, Ordering::Relaxed);
            // Release: the answer before the sequence that says it is there.
            dev.set_reg32(abi::REG_MIG_DONE_SEQ, seq, Ordering::Release);
        }
        let arm = dev.reg32(abi::REG_MIG_ARM, Ordering::Acquire);
        if arm != self.arm_seen {
            // Release: what this turn did before (an answer) is seen with it.
            dev.set_reg32(abi::REG_MIG_ARM_SEEN, arm, Ordering::Release);
            self.arm_seen = arm;
        }
        arm
    }

    /// Stops with error `code` until the host resets the device.
    fn fail(&mut self, code: u32) {
        let dev = &self.dev;
        dev.set_reg32(abi::REG_DEV_ERROR, code, Ordering::Relaxed);
        dev.set_reg32(
            abi::REG_DEV_STATUS,
            abi::DEV_STATUS_FATAL,
            Ordering::Release,
        );
        self.mode = Mode::Fatal;
        pr_err!(
            "reflux.{}: fatal error {code}: {}; reset the device\n",
            dev.id,
            error_name(code)
        );
    }

    /// Serves `FAULT_INJECT`: flips the PMR byte the host named, then reads idle again.
    fn fault_inject(&self) {
        let dev = &self.dev;
        // Acquire: pairs with the host's store of the offset.
        let off = dev.reg64(abi::REG_FAULT_INJECT, Ordering::Acquire);
        if off == abi::FAULT_INJECT_IDLE {
            return;
        }
        match usize::try_from(off) {
            Ok(at) if off < dev.pmr_size => {
                let mut byte = [0u8; 1];
                if dev.pmr.read_bytes(at, &mut byte).is_ok() {
                    byte[0] ^= 0xFF;
                    let _ = dev.pmr.write_bytes(at, &byte);
                    pr_info!("reflux.{}: fault injected at PMR offset {off:#x}\n", dev.id);
                }
            }
            _ => pr_warn!(
                "reflux.{}: fault injection at {off:#x} ignored: past the PMR\n",
                dev.id
            ),
        }
        // Release: the flipped byte is in the PMR before the register reads idle.
        dev.set_reg64(
            abi::REG_FAULT_INJECT,
            abi::FAULT_INJECT_IDLE,
            Ordering::Release,
        );
    }

    /// Drains the write cache toward NAND at the modelled bandwidth and publishes the backlog.
    fn drain(&mut self, now: u64) {
        let dt = now.saturating_sub(self.last_drain);
        self.last_drain = now;
        // MB/s is bytes per microsecond, so `mbps * ns / 1000` bytes; the remainder carries.
        self.drain_carry = self
            .drain_carry
            .saturating_add(self.nand_mbps.saturating_mul(dt));
        let bytes = self.drain_carry / 1000;
        self.drain_carry %= 1000;
        let dev = &self.dev;
        let committed = dev.committed.load(Ordering::Acquire);
        let drained = dev.drained.load(Ordering::Relaxed);
        let now_drained = committed.min(drained.saturating_add(bytes));
        // Release: a flush that sees the drain past its target completes.
        dev.drained.store(now_drained, Ordering::Release);
        dev.set_reg64(
            abi::REG_DRAIN_BACKLOG,
            committed - now_drained,
            Ordering::Relaxed,
        );
    }

    /// The 10 ms tick: the thermal model and the telemetry registers.
    fn tick(&mut self, now: u64) {
        let dt_us = now.saturating_sub(self.last_tick) / 1000;
        self.last_tick = now;
        let dev = &self.dev;
        let busy = dev.busy_ns.load(Ordering::Relaxed);
        let busy_us = busy.saturating_sub(self.last_busy) / 1000;
        self.last_busy = self.last_busy.saturating_add(busy_us * 1000);

        let set = crate::THERMAL_SET_MC.get();
        if set != self.set_seen {
            self.set_seen = set;
            if set != 0 {
                self.thermal.set_temp_milli_c(set);
                pr_info!("reflux.{}: temperature set to {set} m°C\n", dev.id);
            }
        }
        match self.thermal.tick(dt_us, busy_us) {
            Some(ThrottleChange::Throttled) => pr_info!(
                "reflux.{}: throttled at {} m°C\n",
                dev.id,
                self.thermal.temp_milli_c()
            ),
            Some(ThrottleChange::Unthrottled) => pr_info!(
                "reflux.{}: unthrottled at {} m°C\n",
                dev.id,
                self.thermal.temp_milli_c()
            ),
            None => {}
        }
        // `speed_permille` is writable at run time; a bad value is refused once, and ignored.
        let speed = crate::SPEED_PERMILLE.get();
        if speed != self.speed_seen {
            self.speed_seen = speed;
            if crate::SPEED_RANGE.contains(&speed) {
                self.speed = speed;
            } else {
                pr_warn!(
                    "reflux.{}: speed_permille={speed} is out of range {}..={}; keeping {}\n",
                    dev.id,
                    crate::SPEED_RANGE.start(),
                    crate::SPEED_RANGE.end(),
                    self.speed
                );
            }
        }
        let effective = effective_speed_permille(self.speed, self.thermal.speed_permille());
        dev.speed_permille.store(effective, Ordering::Relaxed);

        let t = &self.thermal;
        dev.set_reg32(abi::REG_TEMP_MILLI_C, t.temp_milli_c(), Ordering::Relaxed);
        dev.set_reg32(
            abi::REG_THROTTLED,
            u32::from(t.throttled()),
            Ordering::Relaxed,
        );
        dev.set_reg64(
            abi::REG_THROTTLE_EVENTS,
            t.throttle_events(),
            Ordering::Relaxed,
        );
        dev.set_reg32(
            abi::REG_CORE_UTIL_PERMILLE,
            t.util_permille(),
            Ordering::Relaxed,
        );
        dev.set_reg32(abi::REG_SPEED_PERMILLE, effective, Ordering::Relaxed);
    }
}
