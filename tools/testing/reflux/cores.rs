// SPDX-License-Identifier: GPL-2.0

//! The engine cores: the device's embedded CPUs that run device-placed stages.
//!
//! Each core is a kernel thread that takes descriptors from the SQ (the cores share the one SQ
//! consumer role under the device's `sq` lock), validates them, and runs the device's part of
//! the request (`Route::run(Side::Device, stage_start)`): load, the device-placed steps through
//! the shared actor engines, commit; or, for a flush, waits until every write committed before
//! it has drained to NAND. It answers every descriptor with exactly one completion: the host's
//! next step, or done with a status. A descriptor that does not validate is answered with
//! `EINVAL`; nothing in it is trusted before that.
//!
//! Speed: the cores run on host CPUs, so after each step on each block they owe the difference
//! between the host's time and the modelled engine's ([`Pacer`], at the controller's current
//! speed, halved while throttled) and sleep it off. The time from taking a request to completing
//! it, sleeps included, is the core's busy time, the thermal model's heat.
//!
//! With the compression engine ([`crate::engine`]) a write's crc32c and LZ4 steps run there,
//! off the guest's CPUs, and the core owes the whole modelled time of each step instead (the
//! engine's wait counts towards it). If the engine is gone, late or wrong, the core runs the
//! steps itself: the engine wrote nothing the core must undo.
//!
//! When the SQ is empty a core polls it with short sleeps and, after a while without work, with
//! millisecond naps (hardware would watch the doorbell; the tail in the PMR is what the doorbell
//! announces). A core asked to stop finishes the request it holds, completion included, and
//! exits: nothing is left half-done, and requests still in the SQ stay there for the host.

use core::sync::atomic::Ordering;

use kernel::{kthread, pr_warn_ratelimited, prelude::*, shared_mem::SharedMem, sync::Arc};

use crate::abi::{self, SubmissionDescriptor, BLOCK_SIZE, NEXT_STAGE_DONE};
use crate::actor::exec::{self, ExecError, Plan, RunOutput, Scratch, StageObserver};
use crate::actor::external;
use crate::dev::{Completion, Dev};
use crate::engine::EngineCore;
use crate::proto::pacing::{device_ns, Pacer, PacerParams};
use crate::proto::pipeline::{Direction, Hop, Side, Stage, MAX_STAGES};
use crate::proto::request::Request;
use crate::store;

/// Idle polls (of 10–50 µs) before a core naps a millisecond at a time: about 50 ms.
const IDLE_POLLS_BEFORE_NAP: u32 = 2_000;

/// A core that ran out of work spins this long before it sleeps between polls: a command that
/// follows a burst (a migration's checkpoint or rebuild right after its drain) is picked up at
/// once rather than after a timer wake-up, as a controller's firmware polls its queues.
const IDLE_SPIN_NS: u64 = 200_000;

pub(crate) use crate::actor::exec::now_ns;

/// Paces a core and accounts its busy time, step by step.
struct Busy<'a> {
    dev: &'a Dev,
    pacer: &'a mut Pacer,
    /// Busy time is accounted up to here.
    mark: u64,
}

impl Busy<'_> {
    /// Adds the time since the last mark to the device's busy time.
    fn account(&mut self) {
        let now = now_ns();
        self.dev
            .busy_ns
            .fetch_add(now.saturating_sub(self.mark), Ordering::Relaxed);
        self.mark = now;
    }
}

impl Busy<'_> {
    /// Step `stage`, `host_ns` of host-CPU work of which the core spent `spent_ns` itself:
    /// charges the actor its engine time and pays the rest of the modelled time by sleeping.
    fn paced(&mut self, stage: Stage, host_ns: u64, spent_ns: u64) {
        let speed = self.dev.speed_permille.load(Ordering::Relaxed);
        // The actor's share of the engine, at the engine's speed, for the host's scheduler.
        let engine_ns = device_ns(host_ns, speed);
        if let Some(at) = self
            .dev
            .layout
            .actor_shared(crate::actor::default_actor(stage))
            .and_then(|o| usize::try_from(o).ok())
        {
            if let Ok(c) = self
                .dev
                .pmr
                .atomic_u64(at + core::mem::offset_of!(abi::ActorShared, dev_busy_ns))
            {
                c.fetch_add(engine_ns, Ordering::Relaxed);
            }
        }
        if let Some(owed) = self.pacer.owe(engine_ns.saturating_sub(spent_ns)) {
            let t0 = now_ns();
            let us = owed / 1000;
            // The range lets the timer coalesce; oversleep is credited by the pacer. A stop
            // request wakes the sleep early; the pacer then still owes the rest, which no one
            // collects.
            kthread::usleep_range(us, us + us / 8 + 10);
            self.pacer.paid(now_ns().saturating_sub(t0));
        }
        // Per step, not per request: a long request heats the device while it runs.
        self.account();
    }
}

impl StageObserver for Busy<'_> {
    fn stage_done(&mut self, stage: Stage, _bytes: usize, host_ns: u64) {
        self.paced(stage, host_ns, host_ns);
    }

    fn stage_elsewhere(&mut self, stage: Stage, bytes: usize) {
        let host_ns = self
            .dev
            .engine
            .as_ref()
            .map_or(0, |e| e.model_host_ns(stage, bytes));
        self.paced(stage, host_ns, 0);
    }

    fn actor_ran(&mut self, actor: u8, blocks: u64) {
        self.dev.controls.lock().ran(actor, blocks);
    }
}

/// How a request ends on the device.
struct Outcome {
    status: i32,
    next_stage: u8,
    bytes: u32,
    epochs: [u32; MAX_STAGES],
}

impl Outcome {
    fn failed(status: i32, epochs: [u32; MAX_STAGES]) -> Self {
        Self {
            status,
            next_stage: NEXT_STAGE_DONE,
            bytes: 0,
            epochs,
        }
    }
}

/// The thread body of core `index`.
pub(crate) fn run(dev: Arc<Dev>, index: u32, mut scratch: Scratch) -> i32 {
    let Ok(mut pacer) = Pacer::new(PacerParams::DEFAULT) else {
        return -(kernel::bindings::EINVAL as i32);
    };
    let mut engine = EngineCore::new(index);
    let mut idle = 0u32;
    let mut served = 0u64;
    let mut last_work = now_ns();
    while !kthread::should_stop() {
        // A hung controller (fault injection): nothing is taken.
        if crate::HANG.get() {
            kthread::usleep_range(1000, 2000);
            continue;
        }
        match dev.take() {
            Some(desc) => {
                idle = 0;
                served += 1;
                process(&dev, &desc, &mut scratch, &mut pacer, &mut engine);
                last_work = now_ns();
                kthread::cond_resched();
            }
            None if now_ns().saturating_sub(last_work) < IDLE_SPIN_NS => {
                core::hint::spin_loop();
                kthread::cond_resched();
            }
            None => {
                idle = idle.saturating_add(1);
                if idle < IDLE_POLLS_BEFORE_NAP {
                    kthread::usleep_range(10, 50);
                } else {
                    kthread::usleep_range(1000, 2000);
                }
            }
        }
    }
    pr_debug!("reflux.{}: core {index} served {served} requests\n", dev.id);
    0
}

/// Runs one descriptor and completes it.
fn process(
    dev: &Dev,
    desc: &SubmissionDescriptor,
    scratch: &mut Scratch,
    pacer: &mut Pacer,
    engine: &mut EngineCore,
) {
    let mut busy = Busy {
        dev,
        pacer,
        mark: now_ns(),
    };
    let outcome = match Request::validate(desc, &dev.layout.params()) {
        Err(e) => {
            pr_warn_ratelimited!(
                "reflux.{}: tag {}: invalid descriptor: {e}\n",
                dev.id,
                desc.tag
            );
            Outcome::failed(e.status(), [0; MAX_STAGES])
        }
        Ok(req) => execute(dev, &req, scratch, &mut busy, engine),
    };
    // Before the completion: waiting for room in the CQ is not engine work either.
    busy.account();
    dev.complete(Completion {
        tag: desc.tag,
        next_stage: outcome.next_stage,
        status: outcome.status,
        stored_bytes: outcome.bytes,
        epochs: outcome.epochs,
    });
    // After the completion: quiescing waits for it.
    dev.in_flight.fetch_sub(1, Ordering::AcqRel);
    dev.kick_if_soon();
}

/// Logs a failed run and turns it into an outcome.
fn exec_failed(dev: &Dev, req: &Request, e: ExecError, epochs: [u32; MAX_STAGES]) -> Outcome {
    let desc = req.descriptor();
    match e {
        ExecError::Epoch { epochs, .. } => {
            pr_debug!("reflux.{}: tag {}: {e}\n", dev.id, desc.tag);
            return Outcome::failed(e.status(), epochs);
        }
        _ => pr_warn_ratelimited!(
            "reflux.{}: tag {} (LBA {}, {} blocks): {e}\n",
            dev.id,
            desc.tag,
            desc.lba,
            desc.nr_blocks
        ),
    }
    Outcome::failed(e.status(), epochs)
}

/// The device's part of a validated request.
fn execute(
    dev: &Dev,
    req: &Request,
    scratch: &mut Scratch,
    busy: &mut Busy<'_>,
    engine: &mut EngineCore,
) -> Outcome {
    let route = req.route();
    let desc = req.descriptor();
    if route.direction() == Direction::Flush {
        let outcome = flush(dev);
        // Waiting for the NAND drain is not engine work: it does not heat the engine.
        busy.mark = now_ns();
        return outcome;
    }
    if route.direction() == Direction::Migrate {
        let t0 = now_ns();
        let status = crate::migrate::serve(dev, req);
        // Not engine work either: the thermal model is heated by stages only.
        busy.mark = now_ns();
        return Outcome {
            status,
            next_stage: NEXT_STAGE_DONE,
            // The device's time for its part, for the host's phase accounting.
            bytes: u32::try_from(busy.mark.saturating_sub(t0)).unwrap_or(u32::MAX),
            epochs: desc.epochs,
        };
    }
    let run = match route.run(Side::Device, desc.stage_start) {
        Ok(run) => run,
        // `validate` checked `stage_start`; kept as an answer, not a panic.
        Err(_) => return Outcome::failed(abi::STATUS_EINVAL, [0; MAX_STAGES]),
    };
    let (pmr, layout) = (&dev.pmr, &dev.layout);
    let plan = match Plan::new(pmr, layout, req, run) {
        Ok(plan) => plan,
        Err(e) => return exec_failed(dev, req, e, [0; MAX_STAGES]),
    };
    // A stage runs only where its actor's control state is: the epoch check above makes this
    // hold, the check here makes a broken migration visible instead of running a stray actor.
    {
        let controls = dev.controls.lock();
        if let Some(missing) = plan.actors().find(|a| !controls.holds(*a)) {
            pr_warn_ratelimited!(
                "reflux.{}: tag {}: actor {missing} is not on the device\n",
                dev.id,
                desc.tag
            );
            return Outcome::failed(abi::STATUS_EAGAIN, plan.epochs());
        }
    }
    if run.load {
        if let Err(e) = store::load(pmr, layout, &dev.blocks, req, scratch, busy) {
            pr_warn_ratelimited!("reflux.{}: tag {}: {e}\n", dev.id, desc.tag);
            return Outcome::failed(e.status(), plan.epochs());
        }
    }
    if let Err(e) = run_steps(dev, req, &plan, scratch, busy, engine) {
        return exec_failed(dev, req, e, plan.epochs());
    }
    let bytes = if run.commit {
        match store::commit(pmr, layout, &dev.blocks, req, scratch.block()) {
            Ok(stored) => {
                dev.committed.fetch_add(stored, Ordering::AcqRel);
                stored
            }
            Err(e) => {
                pr_warn_ratelimited!("reflux.{}: tag {}: {e}\n", dev.id, desc.tag);
                return Outcome::failed(e.status(), plan.epochs());
            }
        }
    } else if run.next == Hop::Done {
        // A finished read: the blocks delivered.
        u64::from(desc.nr_blocks) * u64::from(BLOCK_SIZE)
    } else {
        // A hand-over.
        0
    };
    Outcome {
        status: abi::STATUS_OK,
        next_stage: run.next.next_stage(),
        // At most `MAX_REQ_BLOCKS * BLOCK_SIZE`, which fits (an ABI assertion).
        bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
        epochs: plan.epochs(),
    }
}

/// Runs the plan's steps: on the compression engine if the device has one and it takes the
/// run, here otherwise (also when the engine fails it: it wrote nothing the core must undo).
fn run_steps(
    dev: &Dev,
    req: &Request,
    plan: &Plan,
    scratch: &mut Scratch,
    busy: &mut Busy<'_>,
    core: &mut EngineCore,
) -> Result<RunOutput, ExecError> {
    let (pmr, layout) = (&dev.pmr, &dev.layout);
    if let Some(engine) = dev.engine.as_ref() {
        if let Some(run) = external::begin(pmr, layout, req, plan)? {
            let t0 = now_ns();
            if let Some(results) = engine.run(core, &run) {
                // The wait was the engine's time: credit against the modelled time.
                busy.pacer.paid(now_ns().saturating_sub(t0));
                return external::finish(
                    pmr,
                    layout,
                    plan,
                    run,
                    results.blocks(),
                    engine.memory(),
                    scratch,
                    busy,
                );
            }
        }
    }
    exec::run_stages(pmr, layout, req, plan, scratch, busy)
}

/// A flush: completes once every byte committed before it has drained to NAND (the paper's GPF
/// barrier), or with `ECANCELED` if the device is stopped first.
fn flush(dev: &Dev) -> Outcome {
    let target = dev.committed.load(Ordering::Acquire);
    loop {
        if dev.drained.load(Ordering::Acquire) >= target {
            return Outcome {
                status: abi::STATUS_OK,
                next_stage: NEXT_STAGE_DONE,
                bytes: 0,
                epochs: [0; MAX_STAGES],
            };
        }
        if dev.cancelled() || kthread::should_stop() {
            return Outcome::failed(abi::STATUS_ECANCELED, [0; MAX_STAGES]);
        }
        kthread::usleep_range(200, 500);
    }
}
