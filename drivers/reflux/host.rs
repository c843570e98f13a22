// SPDX-License-Identifier: GPL-2.0

//! The host executor: where host-placed stages run. A workqueue to run them on (dm-crypt's
//! way with its cipher work, `host_wq`), the scratches they run on, and the time they took.
//!
//! Lock order: a run holds its scratch (a pool slot taken out, or the shared scratch's lock)
//! while the actors' control state is updated (`Controls`, the device's `controls` lock, nests
//! inside `scratch`); the routing table's lock is never taken inside `scratch`. The pool's lock
//! is held only to take a scratch out or put it back.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    new_spinlock,
    owned_wq::{flags as wq_flags, OwnedQueue},
    prelude::*,
    sync::SpinLock,
    workqueue::Queue,
};

use crate::actor::exec::{now_ns, Scratch};

/// Most scratches in the host's pool.
const POOL_MAX: usize = 8;

/// CPUs the machine may have.
pub(crate) fn possible_cpus() -> u64 {
    u64::from(kernel::cpu::nr_cpu_ids().max(1))
}

/// The workqueue host stages run on, if `host_wq` asks for one. Unbound: a stage runs on
/// whichever CPU has room; MEM_RECLAIM: writeback waits on it.
pub(crate) fn host_queue(name: &CStr, host_wq: bool) -> Result<Option<OwnedQueue>> {
    if !host_wq {
        return Ok(None);
    }
    Ok(Some(OwnedQueue::new(
        kernel::fmt!("{}-host", name),
        wq_flags::UNBOUND | wq_flags::MEM_RECLAIM,
        0,
    )?))
}

/// The pool of host scratches: one per possible CPU, at most [`POOL_MAX`].
fn scratch_pool() -> Result<KVec<Option<Scratch>>> {
    let mut pool = KVec::with_capacity(POOL_MAX, GFP_KERNEL)?;
    for _ in 0..possible_cpus().min(POOL_MAX as u64) {
        pool.push(Some(Scratch::new()?), GFP_KERNEL)?;
    }
    Ok(pool)
}

/// Where host-placed stages run.
#[pin_data]
pub(crate) struct HostExec {
    /// Where host stages run (`None`: where they are found, in the submitter's context or the
    /// interrupt thread). Drained at unbind before the device can go: its items hold the
    /// device.
    wq: Option<OwnedQueue>,
    /// A pool of scratches, one per CPU, taken out for a run and put back, so that host stages
    /// run on every CPU at once.
    #[pin]
    pool: SpinLock<KVec<Option<Scratch>>>,
    /// The scratch of a run that finds the pool empty (more runs than CPUs, e.g. preempted
    /// ones): such runs take turns on it.
    #[pin]
    scratch: SpinLock<Scratch>,
    /// Nanoseconds of host-placed stage execution, summed: the scheduler's host load.
    busy_ns: AtomicU64,
}

impl HostExec {
    /// An executor running on `wq` (see [`host_queue`]), with its scratches.
    pub(crate) fn new(wq: Option<OwnedQueue>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            wq,
            pool <- new_spinlock!(scratch_pool()?),
            scratch <- new_spinlock!(Scratch::new()?),
            busy_ns: AtomicU64::new(0),
        }? Error)
    }

    /// The host-stage workqueue, if host stages run on one.
    pub(crate) fn queue(&self) -> Option<&Queue> {
        self.wq.as_ref().map(OwnedQueue::queue)
    }

    /// Waits for the host stages queued or running (at unbind, once none can be queued).
    pub(crate) fn drain(&self) {
        if let Some(wq) = self.wq.as_ref() {
            wq.drain();
        }
    }

    /// Runs `f` on a scratch: one of the pool's, or, when the pool is empty, the shared one
    /// after telling `on_shared`. Its time counts as host busy time.
    pub(crate) fn run<T>(&self, on_shared: impl FnOnce(), f: impl FnOnce(&mut Scratch) -> T) -> T {
        let t0 = now_ns();
        let taken = {
            let mut pool = self.pool.lock();
            pool.iter_mut()
                .enumerate()
                .find_map(|(i, s)| s.take().map(|s| (i, s)))
        };
        let ran = match taken {
            Some((i, mut scratch)) => {
                let ran = f(&mut scratch);
                if let Some(slot) = self.pool.lock().get_mut(i) {
                    *slot = Some(scratch);
                }
                ran
            }
            None => {
                on_shared();
                f(&mut self.scratch.lock())
            }
        };
        self.busy_ns
            .fetch_add(now_ns().saturating_sub(t0), Ordering::Relaxed);
        ran
    }

    /// Nanoseconds of host-placed stage execution so far.
    pub(crate) fn busy_ns(&self) -> u64 {
        self.busy_ns.load(Ordering::Relaxed)
    }
}
