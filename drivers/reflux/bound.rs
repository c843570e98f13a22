// SPDX-License-Identifier: GPL-2.0

//! A bound device: the steps of probe from the enable on, and their undoing.
//!
//! Each step that changes the device or makes it visible is owned by a value whose drop undoes
//! it. Probe makes them in its order; [`Bound`] keeps them in the reverse order, which is the
//! teardown order (fields drop in declaration order). So an unbind, a probe that fails at any
//! step (the values made so far drop, locals in the reverse order of their declaration) and a
//! probe whose last allocation fails (a whole [`Bound`] drops) all undo the same steps in the
//! same order, and there is no hand-written error path.

use kernel::{
    block::mq::{gen_disk::GenDisk, TagSet},
    configfs::GroupRegistration,
    debugfs::Dir,
    dev_err, dev_info, dev_warn,
    irq::Registration,
    prelude::*,
    sync::Arc,
};

use crate::{
    abi,
    attach::AttachItem,
    debugfs, hw, pagecache,
    policy::DevPolicy,
    queue::{DevIrq, Queue, RefluxDev},
    scheduler, Owner, Shared, POLL_QUEUES, SCHED,
};

/// A bound device. Teardown is its field order:
///
/// 0. `_stop`: migrations give up, and none starts any more. First, because the removals
///    below wait for callers that may sit in a migration: a `placement` write (the configfs
///    directory's removal waits for it), the scheduler thread (`kthread_stop` waits for it),
///    a `migrate` write (the debugfs directory's). A migration paused by `migrate_stop` or
///    asleep in its drain would hold each of them until the knob is cleared;
/// 1. `_policy`: the device's configfs directory goes; no write to it runs after this (one
///    could start the scheduler, whose migrations now give up at once);
/// 2. `_published`: no attachment names the device, the page-cache hook stops seeing its disk;
/// 3. `_sched`: the scheduler thread stops;
/// 4. `_quiesce`: the requests still parked are routed (or fail, should one still wait for a
///    migration);
/// 5. `_disk`: `del_gendisk`, which waits for every request in flight;
/// 6. `irq`: the interrupt is masked at the device, then freed;
/// 7. `_enabled`: the host stages drain, the device is disabled, the PMR unmounted, the requests
///    the device abandoned fail;
/// 8. `_debugfs`: the debugfs directory goes, after the device stopped.
pub(crate) struct Bound {
    _stop: StopMigrations,
    /// `None` if an attachment already has the device's name.
    _policy: Option<Pin<KBox<GroupRegistration<AttachItem, DevPolicy>>>>,
    _published: Published,
    _sched: SchedStop,
    _quiesce: Quiesce,
    _disk: GenDisk<Queue>,
    irq: Irq,
    _enabled: Enabled,
    _debugfs: Dir<Owner>,
}

impl Bound {
    /// Enables `dev` and makes it a disk: unmasks its interrupt `irq_line` (without one,
    /// completions are polled), adds the disk, the debugfs directory (of the features in `caps`)
    /// and the scheduler thread, and publishes the device.
    ///
    /// A failure undoes the steps taken, in the teardown order of [`Bound`], and leaves the
    /// device disabled as probe found it (`hw::enable` itself disables it again if it fails).
    pub(crate) fn new(
        dev: &Arc<RefluxDev>,
        irq_line: Option<u32>,
        caps: u64,
        shared: &Shared,
    ) -> Result<Self> {
        // Declared first so that, made after the disk, it still goes last on a failure, after
        // the device stopped, as on unbind: a `migrate` write sleeping in its drain is woken by
        // `Quiesce` before the directory's removal waits for it.
        #[allow(clippy::needless_late_init)]
        let debugfs;
        let enabled = Enabled::new(dev)?;
        let irq = Irq::new(dev, irq_line)?;
        let disk = add_disk(dev)?;
        debugfs = debugfs::dir(dev, caps)?;
        let quiesce = Quiesce(dev.clone());
        let sched = start_scheduler(dev)?;
        // Made after the scheduler, so that a failure below stops migrations before it stops
        // the thread, as unbind does.
        let stop = StopMigrations(dev.clone());
        let published = Published::new(dev, &disk, shared)?;
        let policy = DevPolicy { dev: dev.clone() };
        let policy = match shared
            .policy
            .register(&dev.name, Arc::new(policy, GFP_KERNEL)?)
        {
            Ok(p) => Some(p),
            // The administrator's directories and the devices' share the subsystem's root.
            Err(e) if e == EEXIST => {
                dev_warn!(
                    &dev.device,
                    "configfs: an attachment is named {}: no policy directory\n",
                    &*dev.name
                );
                None
            }
            Err(e) => return Err(e),
        };
        Ok(Self {
            _stop: stop,
            _policy: policy,
            _published: published,
            _sched: sched,
            _quiesce: quiesce,
            _disk: disk,
            irq,
            _enabled: enabled,
            _debugfs: debugfs,
        })
    }

    /// Whether completions are announced by the interrupt (else they are polled).
    pub(crate) fn has_irq(&self) -> bool {
        self.irq.reg.is_some()
    }
}

/// The device enabled. Dropping it stops the device: the last step of a teardown, once neither
/// the disk nor the interrupt can hand the device work.
struct Enabled(Arc<RefluxDev>);

impl Enabled {
    fn new(dev: &Arc<RefluxDev>) -> Result<Self> {
        hw::enable(&dev.regs, &dev.device)?;
        Ok(Self(dev.clone()))
    }
}

impl Drop for Enabled {
    fn drop(&mut self) {
        let dev = &self.0;
        // Host stages taken off the interrupt path: none is queued any more (the disk and the
        // interrupt are gone); wait for those running, which hold the device.
        dev.host.drain();
        if hw::disable(&dev.regs, &dev.device).is_ok() {
            // The device checkpointed its actors as it stopped; the host's follow.
            dev.snapshot_host_actors();
            hw::unmount(&dev.pmr);
        }
        // Requests the device abandoned while stopping; none can be in flight here.
        dev.fail_all();
    }
}

/// Masks the device's interrupt when dropped. Made before the handler is registered, so that
/// every teardown masks it, as unbind always did.
struct IrqMask(Arc<RefluxDev>);

impl Drop for IrqMask {
    fn drop(&mut self) {
        let _ = hw::set_irq(&self.0.regs, false);
    }
}

/// The device's interrupt: masked, then its handler freed, then masked again, in field order.
/// The handler's polling loop unmasks the device as it ends: one running while the first mask
/// was stored would leave the device unmasked after `free_irq` without the second.
struct Irq {
    _mask: IrqMask,
    /// `None` without an interrupt line: completions are polled.
    reg: Option<Registration<DevIrq>>,
    _remask: IrqMask,
}

impl Irq {
    /// Registers the handler of interrupt `line`, then unmasks it at the device.
    fn new(dev: &Arc<RefluxDev>, line: Option<u32>) -> Result<Self> {
        let mask = IrqMask(dev.clone());
        let Some(n) = line else {
            dev_info!(&dev.device, "no interrupt: completions are polled\n");
            return Ok(Self {
                _mask: mask,
                reg: None,
                _remask: IrqMask(dev.clone()),
            });
        };
        let handler = Arc::new(DevIrq { dev: dev.clone() }, GFP_KERNEL)?;
        let irq = Self {
            _mask: mask,
            reg: Some(Registration::new(n, &dev.name, handler)?),
            _remask: IrqMask(dev.clone()),
        };
        // A failure drops `irq`: masked, then freed.
        hw::set_irq(&dev.regs, true)?;
        Ok(irq)
    }
}

/// Makes migrations give up when dropped: the first step of a teardown.
struct StopMigrations(Arc<RefluxDev>);

impl Drop for StopMigrations {
    fn drop(&mut self) {
        // A migration asleep in its drain or paused by the fault-injection knob before
        // "ready" gives up (`ESHUTDOWN` to whoever asked for it) and leaves the actor on its
        // source; one paused past "ready" completes (the source let the actor go); a new one
        // is refused.
        self.0.migrator.stop();
    }
}

/// Fails the requests parked for a migration when dropped: the step before the disk goes.
struct Quiesce(Arc<RefluxDev>);

impl Drop for Quiesce {
    fn drop(&mut self) {
        // Migrations gave up (`StopMigrations`, or a probe that failed before it was made:
        // then this stops them), settling their actors. A request still parked is routed, or
        // fails if it would wait for a migration again (never acknowledged, so nothing
        // acknowledged is lost): `del_gendisk` after this waits for every request.
        self.0.migrator.stop();
        self.0.release_parked();
    }
}

/// The device named in the module's attachment registry and its disk seen by the page-cache
/// hook. Dropping it takes the device out of both: the first step of a teardown.
struct Published {
    dev: Arc<RefluxDev>,
    shared: Shared,
}

impl Published {
    fn new(dev: &Arc<RefluxDev>, disk: &GenDisk<Queue>, shared: &Shared) -> Result<Self> {
        // Made first: a failure to add drops it (taking out a device not in is harmless).
        let published = Self {
            dev: dev.clone(),
            shared: shared.clone(),
        };
        shared.registry.add(dev.attach.clone())?;
        let Some(pages) = &shared.pages else {
            return Ok(published);
        };
        if pagecache::publish(pages, dev, disk.mapping_addr()).is_err() {
            dev_warn!(
                &dev.device,
                "too many disks: the page cache is not placed nor tagged\n"
            );
        }
        Ok(published)
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        // No attachment names the device from now on.
        self.shared.registry.remove(&self.dev.attach);
        // The page-cache hook stops seeing the disk.
        if let Some(pages) = &self.shared.pages {
            pagecache::unpublish(pages, &self.dev);
        }
    }
}

/// Adds the device's disk, with `poll_queues` hardware queues for polled I/O.
fn add_disk(dev: &Arc<RefluxDev>) -> Result<GenDisk<Queue>> {
    let poll_queues = POLL_QUEUES.get();
    if poll_queues > 1 {
        dev_err!(
            &dev.device,
            "poll_queues={poll_queues} is out of range 0..=1\n"
        );
        return Err(EINVAL);
    }
    let tagset = Arc::pin_init(
        TagSet::new_with_poll_queues(1 + poll_queues, dev.depth(), poll_queues),
        GFP_KERNEL,
    )?;
    kernel::block::mq::gen_disk::GenDiskBuilder::new()
        .logical_block_size(abi::BLOCK_SIZE)?
        .physical_block_size(abi::BLOCK_SIZE)?
        .capacity_sectors(dev.capacity_blocks << (abi::BLOCK_SHIFT - 9))
        .max_hw_sectors(abi::MAX_REQ_BLOCKS << (abi::BLOCK_SHIFT - 9))
        // No request crosses a 128 KiB boundary, so none straddles two attachments.
        .chunk_sectors(abi::MAX_REQ_BLOCKS << (abi::BLOCK_SHIFT - 9))
        .build(Owner, kernel::fmt!("{}", &*dev.name), tagset, dev.clone())
}

/// Stops the scheduler thread, if it runs, when dropped.
struct SchedStop(Arc<RefluxDev>);

impl Drop for SchedStop {
    fn drop(&mut self) {
        // Stopping cannot fail.
        let _ = scheduler::set_running(&self.0, false);
    }
}

/// Starts the scheduler thread if `sched=1` and the device can migrate; the administrator can
/// start and stop it later (configfs `sched`).
fn start_scheduler(dev: &Arc<RefluxDev>) -> Result<SchedStop> {
    let stop = SchedStop(dev.clone());
    if SCHED.get() != 1 {
        return Ok(stop);
    }
    if !dev.migrator.can_migrate() {
        dev_warn!(&dev.device, "the device cannot migrate: no scheduler\n");
        return Ok(stop);
    }
    scheduler::set_running(dev, true)?;
    Ok(stop)
}
