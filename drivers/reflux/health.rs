// SPDX-License-Identifier: GPL-2.0

//! What the request timeout knows of the device: whether it still answers.
//!
//! A request that times out asks the device's heartbeat: a device that still beats gets more
//! time; one whose heartbeat has not moved for [`DEAD_AFTER_NS`] (or that reports a fatal error
//! or stopped being ready) is declared dead, once and for good.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{dev_err, dev_warn_ratelimited, device::Device, io_mem::IoMem};

use crate::abi::{self, Regs};
use crate::actor::exec::now_ns;
use crate::regio;

/// A device whose heartbeat has not moved for this long when a request times out is dead.
const DEAD_AFTER_NS: u64 = 1_000_000_000;

/// Whether the device still answers.
pub(crate) struct Health {
    /// The device stopped answering (its heartbeat stalled while a request timed out): every
    /// request fails at once, completions are no longer read.
    dead: AtomicBool,
    /// The heartbeat as last seen by a timeout, and when it last changed (monotonic ns).
    beat_seen: AtomicU32,
    beat_changed_ns: AtomicU64,
}

impl Health {
    /// A device taken to be alive, its heartbeat last seen moving now.
    pub(crate) fn new() -> Self {
        Self {
            dead: AtomicBool::new(false),
            beat_seen: AtomicU32::new(0),
            beat_changed_ns: AtomicU64::new(now_ns()),
        }
    }

    /// Whether the device was declared dead. Acquire: pairs with the declaration, so that
    /// whoever sees it also sees the requests failed before it.
    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// Request `tag` timed out: whether the device (registers `regs`, logged as `device`) is still
    /// alive and the request gets more time. `false` when it was dead already or is declared
    /// dead now (logged once): the caller then fails every request it holds.
    pub(crate) fn still_alive(&self, regs: &IoMem, device: &Device, tag: i32) -> bool {
        if self.is_dead() {
            return false;
        }
        let now = now_ns();
        let (Ok(beat), Ok(status)) = (
            regio::reg(regs, Regs::REG_HEARTBEAT),
            regio::reg(regs, Regs::REG_DEV_STATUS),
        ) else {
            // A register block without the liveness registers cannot show the device alive: it
            // is declared dead, said so, rather than judged on a status read as 0.
            if !self.dead.swap(true, Ordering::AcqRel) {
                dev_err!(
                    device,
                    "cannot read the heartbeat and status registers: failing its requests\n"
                );
            }
            return false;
        };
        let (beat, status) = (beat.load(), status.load());
        if self.beat_seen.swap(beat, Ordering::AcqRel) != beat {
            self.beat_changed_ns.store(now, Ordering::Release);
        }
        let still = now.saturating_sub(self.beat_changed_ns.load(Ordering::Acquire)) / 1_000_000;
        let alive = status & abi::DEV_STATUS_FATAL == 0
            && status & abi::DEV_STATUS_READY != 0
            && still * 1_000_000 < DEAD_AFTER_NS;
        if alive {
            dev_warn_ratelimited!(
                device,
                "request {tag} timed out; the device is alive (heartbeat {beat}): waiting on\n"
            );
            return true;
        }
        if !self.dead.swap(true, Ordering::AcqRel) {
            dev_err!(
                device,
                "the device stopped answering (status {status:#x}, heartbeat {beat} unchanged for {still} ms): failing its requests\n"
            );
        }
        false
    }
}
