// SPDX-License-Identifier: GPL-2.0

//! The thermal-aware per-stage scheduler (§4.4): a kernel thread per device that wakes every
//! scheduling epoch, samples the host and the device's telemetry registers, asks
//! `proto::sched::Scheduler` for a decision and carries it out: at most one drain-and-switch
//! migration, and the permitted number of requests in flight.
//!
//! # What is sampled
//!
//! - Device: the controller temperature (`TEMP_MILLI_C`) and the engine utilisation
//!   (`CORE_UTIL_PERMILLE`), read over CXL.io as the paper's scheduler does. An actor's device
//!   queue depth is the requests with its step still to run while it is on the device (the
//!   routing table counts them). Its share of the device's engine time over the epoch (the
//!   `dev_busy_ns` the device adds up in each actor's shared state) goes with it, for the
//!   engine-share weighting (`sched_engine_share`, `proto::sched::queue_depth`): the stages of
//!   one pipeline all see the same requests, and the weight is what tells the compute-heavy
//!   stage (LZ4) from the light one (crc32c).
//! - Host: the paper's host CPU utilisation, the busy fraction of the host's CPUs over the
//!   epoch: the CPU time the kernel accounted to anything but idle and iowait (user, nice,
//!   system, irq, softirq, steal; `kernel::cpustat`) over the CPUs general work runs on, those
//!   online and not isolated (`isolcpus=`, `nohz_full=`, an isolated cpuset). The benchmark's
//!   `REFLUX_DEVCPU=1` isolates CPU 1 (`isolcpus=1`) and pins the software device's threads
//!   (and this one) there: the host is CPU 0 then, and the device's work is not counted as the
//!   host's, as a real device's cores would not be. Without it the software device's
//!   engine threads share the host's CPUs and count as host load: the host looks busy when the
//!   device works. `sched_u_reflux_only` (ours, off by default) counts instead the CPU time
//!   ReFlux spent running host-placed stages, over the epoch and the possible CPUs. Unless the
//!   kernel accounts CPU time precisely (`CONFIG_VIRT_CPU_ACCOUNTING_GEN`, not in our kernels),
//!   it does so at the tick, 4 ms at `HZ=250`: a 10 ms epoch holds two or three ticks per CPU,
//!   so on one or two CPUs the measure moves in steps of a sixth to a half and is right only
//!   on average. An epoch
//!   in which no counter moved, or one went backwards (a CPU went offline), keeps the last
//!   measure; a CPU coming online skews one epoch. Where cpufreq manages the CPUs, the
//!   utilisation is scaled by their current frequency in permille of their hardware maximum
//!   (`kernel::cpufreq_quick`; `proto::sched::u_host_permille`); the VM's CPUs have no cpufreq
//!   driver, so there it is taken as measured, and the decision log shows no `host_freq`. RAPL
//!   (package power) is not sampled: the VM has none, and the kernel gives a module no
//!   interface to it (powercap is a sysfs interface for user space).
//!
//! Every decision (scores, move, throttle level) goes into a log of the last
//! [`LOG_LEN`](crate::sched_state::LOG_LEN) epochs, shown by the `sched` debugfs file; every
//! migration it makes is also logged to the kernel log.

use core::sync::atomic::Ordering;

use kernel::{
    cpustat::{self, CpuTime},
    dev_info, dev_warn,
    kthread::{self, KThread},
    pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
    sync::Arc,
};

use crate::abi::{self, Regs};
use crate::actor::control::MAX_ACTORS;
use crate::actor::exec::now_ns;
use crate::host::possible_cpus;
use crate::proto::pipeline::Side;
use crate::proto::sched::{
    busy_permille, ActorView, Decision, Move, Sample, Scheduler, MAX_LOGGED,
};
use crate::queue::RefluxDev;
use crate::regio;
use crate::stats::Counter;

/// The busy fraction of the host's CPUs from one epoch to the next (see the module
/// documentation).
struct HostLoad {
    last: CpuTime,
    permille: u32,
}

impl HostLoad {
    fn new() -> Self {
        Self {
            last: cpustat::housekeeping_time(),
            permille: 0,
        }
    }

    /// The busy fraction since the last call, in permille; the last one if no counter moved or
    /// one went backwards.
    fn sample(&mut self) -> u32 {
        let now = cpustat::housekeeping_time();
        let busy = now.busy_ns.checked_sub(self.last.busy_ns);
        let idle = now.idle_ns.checked_sub(self.last.idle_ns);
        if let (Some(busy), Some(idle)) = (busy, idle) {
            if let Some(p) = busy_permille(busy, idle) {
                self.permille = p;
            }
        }
        self.last = now;
        self.permille
    }
}

/// Whether `dev`'s scheduler thread runs.
pub(crate) fn running(dev: &RefluxDev) -> bool {
    dev.sched.thread.lock().is_some()
}

/// Runs `f` while `dev`'s scheduler thread is off and cannot start (`set_running` waits for
/// `f`): `EBUSY` if it runs. A placement is one decision, made whole by one writer while the
/// scheduler does not own it.
pub(crate) fn unless_running<T>(dev: &RefluxDev, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let thread = dev.sched.thread.lock();
    if thread.is_some() {
        return Err(EBUSY);
    }
    let r = f();
    drop(thread);
    r
}

/// Starts (`on`) or stops `dev`'s scheduler thread, if it is not so already: `EOPNOTSUPP` to
/// start it on a device that cannot migrate. Stopping waits for the thread's current epoch,
/// and a migration it began, to end.
pub(crate) fn set_running(dev: &Arc<RefluxDev>, on: bool) -> Result {
    let mut thread = dev.sched.thread.lock();
    match (on, thread.is_some()) {
        (true, false) if !dev.migrator.can_migrate() => return Err(EOPNOTSUPP),
        (true, false) => *thread = Some(spawn(dev.clone())?),
        // `KThread`'s drop stops the thread and waits for it.
        (false, true) => drop(thread.take()),
        _ => {}
    }
    Ok(())
}

/// Starts the scheduler thread of `dev`.
fn spawn(dev: Arc<RefluxDev>) -> Result<KThread> {
    let d = dev.clone();
    let t = KThread::spawn(kernel::fmt!("{}-sched", &*dev.name), move || run(d))?;
    // Real-time (the lowest priority): the epoch is kept on a loaded machine, and a migration's
    // hand-over is not stretched by waiting for a CPU. It sleeps between epochs and through a
    // drain (woken when it ends); it spins only while the device answers a migration command
    // (at most `migrate::COMMAND_SPIN_NS`).
    t.set_fifo_low();
    Ok(t)
}

fn run(dev: Arc<RefluxDev>) -> i32 {
    let mut sched = Scheduler::new();
    let mut sampler = Sampler::new(&dev);
    // A drain waits only for the runs the source started: at most one per engine core. The
    // count probe read (a failed read failed the probe); a device reporting none still runs one.
    let cores = dev.nr_cores.max(1);
    let mut views = [ActorView {
        id: 0,
        side: Side::Host,
        pinned: true,
        dev_queue: 0,
        engine_share_permille: 0,
        inflight: 0,
        last_move_ns: None,
    }; MAX_LOGGED];
    while !kthread::should_stop() {
        // The administrator may change them at any time (configfs): read at each epoch.
        let params = dev.sched.params();
        let epoch_us = u64::from(params.epoch_ms) * 1000;
        kthread::usleep_range(epoch_us, epoch_us + epoch_us / 10);
        if kthread::should_stop() {
            break;
        }
        // The device's telemetry (its registers, the actors' shared state) is the decision's
        // input: an epoch whose input cannot be read decides nothing, and says so.
        let (Ok(sample), Ok(shares)) = (sampler.sample(&dev), sampler.engine_shares(&dev)) else {
            pr_warn_ratelimited!(
                "{}: cannot read the device's telemetry: epoch skipped\n",
                &*dev.name
            );
            continue;
        };
        let n = actor_views(&dev, &shares, cores, &mut views);
        let decision = sched.step(&params, &sample, &views[..n]);
        let before = dev.inflight_permille();
        dev.set_inflight_permille(decision.inflight_permille);
        let after = dev.inflight_permille();
        if after != before {
            crate::trace::reflux_throttle(dev.nr, before, after, sample.temp_milli_c);
        }
        if let Some(m) = decision.migrate {
            carry_out(&dev, &mut sched, m, &decision);
        }
        log_decision(&dev, sample.now_ns, decision, sched);
    }
    0
}

/// What the scheduler thread keeps from one epoch to the next to measure the host and the
/// device over the epoch.
struct Sampler {
    /// The host executor's busy time at the last epoch, and when it was read.
    busy0: u64,
    t0: u64,
    host: HostLoad,
    /// Each actor's device busy time at the last epoch, by id.
    busy_prev: [u64; MAX_ACTORS],
}

impl Sampler {
    fn new(dev: &RefluxDev) -> Self {
        Self {
            busy0: dev.host.busy_ns(),
            t0: now_ns(),
            host: HostLoad::new(),
            busy_prev: [0u64; MAX_ACTORS],
        }
    }

    /// Samples the host and the device at the start of an epoch.
    fn sample(&mut self, dev: &RefluxDev) -> Result<Sample> {
        // The registers first: a failed read leaves the epoch's start where it was.
        let (temp_milli_c, dev_util) = (
            regio::read(&dev.regs, Regs::REG_TEMP_MILLI_C)?,
            regio::read(&dev.regs, Regs::REG_CORE_UTIL_PERMILLE)?,
        );
        let now = now_ns();
        let busy = dev.host.busy_ns();
        let span = now.saturating_sub(self.t0).max(1) * possible_cpus();
        let reflux_util = (busy.saturating_sub(self.busy0).saturating_mul(1000) / span).min(1000);
        (self.busy0, self.t0) = (busy, now);
        Ok(Sample {
            now_ns: now,
            temp_milli_c,
            dev_util_permille: dev_util.min(1000),
            host_util_permille: self.host.sample(),
            // At most 1000 (above).
            reflux_util_permille: reflux_util as u32,
            // At most `nr_cpu_ids`, a `u32` in C.
            host_freq_permille: kernel::cpufreq_quick::permille_of_max(possible_cpus() as u32),
            finished: dev.stats.get(Counter::Completed),
        })
    }

    /// The device engine's time each actor of the pipeline used since the last epoch. All are
    /// read before any is kept: a failed read leaves the last epoch's values as they were.
    fn engine_shares(&mut self, dev: &RefluxDev) -> Result<EngineShares> {
        // An actor outside the pipeline keeps its last value: its time this epoch is 0.
        let mut busy = self.busy_prev;
        for id in dev.pipeline_actors() {
            if let Some(b) = busy.get_mut(usize::from(id)) {
                *b = actor_dev_busy_ns(dev, id)?;
            }
        }
        let mut delta = [0u64; MAX_ACTORS];
        for ((d, now), prev) in delta.iter_mut().zip(busy).zip(self.busy_prev) {
            *d = now.saturating_sub(prev);
        }
        self.busy_prev = busy;
        Ok(EngineShares {
            total: delta.iter().sum(),
            delta,
        })
    }
}

/// The device engine's time each actor used over an epoch, by id, and their total, in
/// nanoseconds.
struct EngineShares {
    delta: [u64; MAX_ACTORS],
    total: u64,
}

impl EngineShares {
    /// Actor `id`'s share of the engine's time, in permille: 1000 if the engine did no work.
    fn permille(&self, id: u8) -> u32 {
        if self.total == 0 {
            1000
        } else {
            // At most 1000.
            self.delta
                .get(usize::from(id))
                .map_or(0, |d| d * 1000 / self.total) as u32
        }
    }
}

/// Fills `views` with the actors of the device's pipeline, as the routing table has them, and
/// returns how many it filled. A device-placed actor's queue is its requests in flight; its
/// drain waits for at most one run per engine core (`cores`).
fn actor_views(
    dev: &RefluxDev,
    shares: &EngineShares,
    cores: u32,
    views: &mut [ActorView; MAX_LOGGED],
) -> usize {
    let mut n = 0;
    let routing = dev.routing.lock();
    for id in dev.pipeline_actors() {
        let (Some(a), Some(v)) = (routing.actor(id), views.get_mut(n)) else {
            continue;
        };
        *v = ActorView {
            id,
            side: a.side,
            pinned: a.pinned,
            dev_queue: if matches!(a.side, Side::Device) {
                a.inflight
            } else {
                0
            },
            engine_share_permille: shares.permille(id),
            inflight: if matches!(a.side, Side::Device) {
                a.inflight.min(cores)
            } else {
                a.inflight
            },
            last_move_ns: a.last_move_ns,
        };
        n += 1;
    }
    n
}

/// Performs the migration `m` that `decision` asks for; an upload's time teaches `sched` the
/// lookahead's horizon. A failure is logged and counted, not retried.
fn carry_out(dev: &RefluxDev, sched: &mut Scheduler, m: Move, decision: &Decision) {
    match dev.migrate(m.actor, m.to) {
        Ok(r) => {
            if matches!(m.to, Side::Host) {
                // From the decision until the stage left the device: the wake-up
                // counts, the rebuild on the host does not.
                sched.learn_upload_ns((r.wake_ns + r.total_ns).saturating_sub(r.rebuild_ns));
            }
            dev_info!(
                &dev.device,
                "scheduler moved {m} in {} us: {decision}\n",
                r.total_ns / 1000
            )
        }
        // A migration started by hand between the sample and now, or a drain timeout.
        Err(e) => {
            dev_warn!(&dev.device, "scheduler could not move {m}: {e:?}\n");
            dev.sched.failed_move();
        }
    }
}

/// Records `decision`, taken at `now`, and the scheduler's state `sched` after it in the log of
/// the `sched` file.
fn log_decision(dev: &RefluxDev, now: u64, decision: Decision, sched: Scheduler) {
    dev.sched.record(now, decision, sched);
}

/// The device engine time actor `id` used, from its shared state; `EINVAL` when the layout has
/// no such actor, the mapping's error when the PMR does not hold it.
fn actor_dev_busy_ns(dev: &RefluxDev, id: u8) -> Result<u64> {
    let at = dev
        .layout
        .actor_shared(id)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(EINVAL)?;
    let busy = dev
        .pmr
        .atomic_u64(at + core::mem::offset_of!(abi::ActorShared, dev_busy_ns))?;
    Ok(busy.load(Ordering::Relaxed))
}
