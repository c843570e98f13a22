// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/refluxN/`: `stats`, the driver's counters and the device's telemetry;
//! `actors` and `migrate` (where each actor runs; move one), `migrations` (the phase times of the
//! last migrations), and the test hooks `corrupt_lba`, `peek_lba`/`peek` and `migrate_stop`.
//!
//! One `key value` pair per line, so that tests and tools read it without parsing prose. The
//! telemetry registers are read at every read of the file, as the paper's scheduler reads them
//! over CXL.io.

use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    debugfs::{Dir, SeqWriter, Show, Store},
    kthread::usleep_range,
    new_mutex,
    prelude::*,
    shared_mem::SharedMem,
    sync::{Arc, Mutex},
};

use crate::{
    abi::{self, BlockMeta, Regs},
    actor::control,
    migrator::MigrationLog,
    proto::pipeline::Side,
    queue::RefluxDev,
    regio,
    stats::Counter,
    Owner,
};

/// The device's debugfs directory and its files (`corrupt_lba` only where `caps` has fault
/// injection).
pub(crate) fn dir(dev: &Arc<RefluxDev>, caps: u64) -> Result<Dir<Owner>> {
    let mut dir = Dir::<Owner>::new(&dev.name);
    dir.show_file(
        kernel::c_str!("stats"),
        Arc::new(DevStats { dev: dev.clone() }, GFP_KERNEL)?,
    )?;
    if caps & abi::CAP_FAULT_INJECT != 0 {
        dir.store_file(
            kernel::c_str!("corrupt_lba"),
            Arc::pin_init(
                pin_init!(CorruptLba {
                    dev: dev.clone(),
                    serial <- new_mutex!(()),
                }),
                GFP_KERNEL,
            )?,
        )?;
    }
    let peek = Arc::new(
        Peek {
            dev: dev.clone(),
            lba: core::sync::atomic::AtomicU64::new(0),
        },
        GFP_KERNEL,
    )?;
    dir.store_file(kernel::c_str!("peek_lba"), peek.clone())?;
    dir.show_file(kernel::c_str!("peek"), peek)?;
    let mig = Arc::new(Migration { dev: dev.clone() }, GFP_KERNEL)?;
    dir.show_file(kernel::c_str!("actors"), mig.clone())?;
    dir.store_file(kernel::c_str!("migrate"), mig.clone())?;
    dir.show_store_file(
        kernel::c_str!("migrate_stop"),
        Arc::new(MigrateStop { dev: dev.clone() }, GFP_KERNEL)?,
    )?;
    dir.show_file(
        kernel::c_str!("migrations"),
        Arc::new(Migrations { dev: dev.clone() }, GFP_KERNEL)?,
    )?;
    dir.show_file(
        kernel::c_str!("sched"),
        Arc::new(Sched { dev: dev.clone() }, GFP_KERNEL)?,
    )?;
    Ok(dir)
}

/// The `stats` file of one device.
pub(crate) struct DevStats {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for DevStats {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let dev = &self.dev;
        let s = &dev.stats;
        for (k, v) in [
            ("submitted", s.get(Counter::Submitted)),
            ("completed", s.get(Counter::Completed)),
            ("errors", s.get(Counter::Errors)),
            ("polled", s.get(Counter::Polled)),
            ("host_runs", s.get(Counter::HostRuns)),
            ("parked", s.get(Counter::Parked)),
            ("reroutes", s.get(Counter::Reroutes)),
            ("migrations", s.get(Counter::Migrations)),
            ("migrate_phase", u64::from(dev.migrator.paused_phase())),
            ("written_bytes", s.get(Counter::WrittenBytes)),
            ("stored_bytes", s.get(Counter::StoredBytes)),
            ("attachments", dev.attach.table().len() as u64),
            (
                "pagecache_node",
                dev.pagecache.node().map_or(u64::MAX, |n| n as u64),
            ),
            ("pagecache_tagged", dev.pagecache.tagged()),
            ("irq_polled", s.get(Counter::IrqPolled)),
            ("host_deferred", s.get(Counter::HostDeferred)),
            ("host_shared_scratch", s.get(Counter::HostSharedScratch)),
            ("pagecache_stale", dev.pagecache.stale()),
        ] {
            writeln!(out, "{k} {v}")?;
        }
        // Written under the switch's lock (the seq_file buffer does not sleep).
        dev.with_poll_switch(|s| {
            writeln!(
                out,
                "irq_wait {}\nirq_wait_switches {}\nirq_gap_ewma_ns {}",
                if matches!(s.mode(), crate::proto::poll_switch::WaitMode::Poll) {
                    "poll"
                } else {
                    "sleep"
                },
                s.switches(),
                s.ewma_ns()
            )
        })
        .transpose()?;
        // `None`: the register block does not hold the register (printed as "?", below).
        let regs = &self.dev.regs;
        let r32 = |r| regio::read(regs, r).ok().map(u64::from);
        for (k, v) in [
            ("dev_status", r32(Regs::REG_DEV_STATUS)),
            ("temp_milli_c", r32(Regs::REG_TEMP_MILLI_C)),
            ("throttled", r32(Regs::REG_THROTTLED)),
            (
                "throttle_events",
                regio::read(regs, Regs::REG_THROTTLE_EVENTS).ok(),
            ),
            ("core_util_permille", r32(Regs::REG_CORE_UTIL_PERMILLE)),
            ("queue_depth", r32(Regs::REG_QUEUE_DEPTH)),
            ("speed_permille", r32(Regs::REG_SPEED_PERMILLE)),
            (
                "drain_backlog",
                regio::read(regs, Regs::REG_DRAIN_BACKLOG).ok(),
            ),
        ] {
            // A report: an unreadable register prints "?" (not a 0 that reads as a value) and
            // the other lines still print.
            match v {
                Some(v) => writeln!(out, "{k} {v}")?,
                None => writeln!(out, "{k} ?")?,
            }
        }
        Ok(())
    }
}

/// Parses a decimal logical block number (a trailing newline allowed) below `capacity`.
fn parse_lba(input: &[u8], capacity: u64) -> Result<u64> {
    let text = core::str::from_utf8(input).map_err(|_| EINVAL)?.trim();
    let lba: u64 = text.parse().map_err(|_| EINVAL)?;
    if lba >= capacity {
        return Err(EINVAL);
    }
    Ok(lba)
}

/// `corrupt_lba` (write-only): a test hook. Writing a block number asks the device, through its
/// fault-injection register, to flip the first byte of that block's stored data in the PMR, as
/// a media error would; a checksummed read of the block must then fail with `EIO`.
#[pin_data]
pub(crate) struct CorruptLba {
    pub(crate) dev: Arc<RefluxDev>,
    /// Held from the check that the register is idle to the device's answer.
    #[pin]
    serial: Mutex<()>,
}

impl Store for CorruptLba {
    fn store(&self, input: &[u8]) -> Result {
        let lba = parse_lba(input, self.dev.capacity_blocks)?;
        let off = self.dev.layout.block_data(lba).ok_or(EINVAL)?;
        let reg = regio::reg(&self.dev.regs, Regs::REG_FAULT_INJECT)?;
        // One injection at a time: the device writes the idle value back when it has flipped.
        // Two writers that both saw it idle would otherwise both store, and the first would
        // report an injection the second overwrote.
        let _serial = self.serial.lock();
        for _ in 0..100 {
            if reg.load() == abi::FAULT_INJECT_IDLE {
                reg.store(off);
                for _ in 0..100 {
                    if reg.load() == abi::FAULT_INJECT_IDLE {
                        return Ok(());
                    }
                    usleep_range(1000, 1000);
                }
                return Err(ETIMEDOUT);
            }
            usleep_range(1000, 1000);
        }
        Err(EBUSY)
    }
}

/// `peek_lba` (write-only) and `peek` (read): a test hook showing what the device stored for a
/// block — its metadata entry and its stored bytes in hex — so that a test can check that an
/// encrypted block holds no plaintext and a compressed one fewer bytes.
pub(crate) struct Peek {
    pub(crate) dev: Arc<RefluxDev>,
    pub(crate) lba: AtomicU64,
}

impl Store for Peek {
    fn store(&self, input: &[u8]) -> Result {
        let lba = parse_lba(input, self.dev.capacity_blocks)?;
        self.lba.store(lba, Ordering::Relaxed);
        Ok(())
    }
}

impl Show for Peek {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let lba = self.lba.load(Ordering::Relaxed);
        let layout = &self.dev.layout;
        let (Some(meta_at), Some(data_at)) = (layout.block_meta(lba), layout.block_data(lba))
        else {
            return writeln!(out, "lba {lba} out of range");
        };
        let mut raw = [0u8; core::mem::size_of::<BlockMeta>()];
        if self.dev.pmr.read_bytes(meta_at as usize, &mut raw).is_err() {
            return writeln!(out, "lba {lba} unreadable");
        }
        let meta = BlockMeta::from_bytes(&raw);
        writeln!(
            out,
            "lba {lba} stored_len {} flags {:#x} crc {:#010x} generation {} page_tag {:#010x}",
            meta.stored_len,
            meta.flags,
            meta.crc,
            meta.generation,
            self.dev.pagecache.recorded(lba)
        )?;
        let mut chunk = [0u8; 64];
        let len = usize::from(meta.stored_len).min(abi::BLOCK_SIZE as usize);
        let mut done = 0;
        while done < len {
            let n = (len - done).min(chunk.len());
            if self
                .dev
                .pmr
                .read_bytes(data_at as usize + done, &mut chunk[..n])
                .is_err()
            {
                return writeln!(out, "unreadable");
            }
            for b in &chunk[..n] {
                write!(out, "{b:02x}")?;
            }
            done += n;
        }
        writeln!(out)
    }
}

const fn kind_name(kind: u32) -> &'static str {
    match kind {
        abi::ACTOR_KIND_CRC32C => "crc32c",
        abi::ACTOR_KIND_LZ4 => "lz4",
        abi::ACTOR_KIND_AES_XTS => "aes-xts",
        _ => "unknown",
    }
}

/// `actors` (read): one line per registered actor — where it runs, its epoch, its control
/// state's generation and run count (the host's live state; the device's as it rebuilt it from
/// the last checkpoint) and the shared state's invocation count. `migrate` (write): `<actor> host|device`
/// migrates an actor now; the write returns when the migration is done.
pub(crate) struct Migration {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for Migration {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let (pmr, layout) = (&self.dev.pmr, &self.dev.layout);
        for id in 1..control::MAX_ACTORS {
            let id = id as u8;
            let Ok(sh) = control::header(pmr, layout, id) else {
                continue;
            };
            let Some(a) = self.dev.routing.lock().actor(id).copied() else {
                continue;
            };
            // The host's live state, or the state the device runs with: its live state is on
            // the device, so it is the last checkpoint as the device rebuilt it (a hand-over
            // from the host counts one generation, as in the device's own rebuild).
            let owner = match a.side {
                Side::Host => abi::SIDE_HOST,
                Side::Device => abi::SIDE_DEVICE,
            };
            let ctl = self.dev.controls.lock().get(id).or_else(|| {
                control::load(pmr, layout, id, None)
                    .ok()
                    .map(|c| c.rebuild(owner))
            });
            let (generation, runs) = ctl.map_or((0, 0), |c| (c.generation, c.runs));
            writeln!(
                out,
                "actor {id} kind {} owner {} epoch {} generation {generation} ctl_runs {runs} invocations {} pinned {}",
                kind_name(sh.kind),
                a.side.name(),
                control::epoch(pmr, layout, id).unwrap_or(0),
                sh.invocations,
                u8::from(a.pinned),
            )?;
        }
        Ok(())
    }
}

impl Store for Migration {
    fn store(&self, input: &[u8]) -> Result {
        let text = core::str::from_utf8(input).map_err(|_| EINVAL)?.trim();
        let mut words = text.split_ascii_whitespace();
        let (Some(id), Some(side), None) = (words.next(), words.next(), words.next()) else {
            return Err(EINVAL);
        };
        let id: u8 = id.parse().map_err(|_| EINVAL)?;
        let to = match side {
            "host" => Side::Host,
            "device" => Side::Device,
            _ => return Err(EINVAL),
        };
        let r = self.dev.migrate(id, to)?;
        pr_debug!(
            "{}: actor {id} to the {}: {} ns\n",
            &*self.dev.name,
            to.name(),
            r.total_ns
        );
        Ok(())
    }
}

/// `migrate_stop` (read-write): `0`..=`3`, the phase a migration pauses at (fault injection for
/// the power-cut tests; see `migrate.rs`). `0` lets a paused migration go on. A read gives the
/// current value, so that a test can check no pause is armed before it migrates.
pub(crate) struct MigrateStop {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for MigrateStop {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        writeln!(out, "{}", self.dev.migrator.stop_at())
    }
}

impl Store for MigrateStop {
    fn store(&self, input: &[u8]) -> Result {
        let text = core::str::from_utf8(input).map_err(|_| EINVAL)?.trim();
        let phase: u32 = text.parse().map_err(|_| EINVAL)?;
        if phase > 3 {
            return Err(EINVAL);
        }
        self.dev.migrator.set_stop_at(phase);
        Ok(())
    }
}

/// `migrations` (read): the phase times of the last migrations, oldest first.
pub(crate) struct Migrations {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for Migrations {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        // Written under the lock (the seq_file buffer does not sleep): the log is too big to
        // copy onto the stack.
        self.dev.migrator.with_log(|log| show_migrations(out, log))
    }
}

/// Writes the migrations of `log` to `out`, oldest first.
fn show_migrations(out: &mut SeqWriter<'_>, log: &MigrationLog) -> core::fmt::Result {
    writeln!(
        out,
        "# {} migrations; the last {} (ns):",
        log.count(),
        log.held()
    )?;
    for r in log.records() {
        let (from, to) = if r.to_device {
            ("host", "device")
        } else {
            ("device", "host")
        };
        writeln!(
            out,
            "actor {} from {from} to {to} wake_ns {} drain_ns {} ckpt_ns {} handover_ns {} rebuild_ns {} command_ns {} total_ns {} t_ms {}",
            r.actor,
            r.wake_ns,
            r.drain_ns,
            r.ckpt_ns,
            r.handover_ns,
            r.rebuild_ns,
            r.command_ns,
            r.total_ns,
            r.end_ms
        )?;
    }
    Ok(())
}

/// `sched` (read): the scheduler's parameters, its counters and its last decisions (one line per
/// epoch, newest last: the inputs, each actor's score, the move and the throttle level).
pub(crate) struct Sched {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for Sched {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let p = self.dev.sched.params();
        writeln!(
            out,
            "epoch_ms {} alpha {} beta {} gamma {} theta {} theta_low {} dwell_ms {} q_full {} host_saturated {} headroom_temp {} headroom_util {} u_reflux_only {} engine_share {} flap_backoff {} flap_window_ms {} max_backoff_ms {} lookahead {} lookahead_max_ms {}",
            p.epoch_ms,
            p.alpha_permille,
            p.beta_permille,
            p.gamma_permille,
            p.theta_permille,
            p.theta_low_permille,
            p.dwell_ms,
            p.q_full,
            p.host_saturated_permille,
            p.headroom_temp_permille,
            p.headroom_util_permille,
            u8::from(p.u_reflux_only),
            u8::from(p.engine_share),
            u8::from(p.flap_backoff),
            p.flap_window_ms,
            p.max_backoff_ms,
            u8::from(p.lookahead),
            p.lookahead_max_ms
        )?;
        // The host frequency the next sample will scale the host's utilisation by.
        match kernel::cpufreq_quick::permille_of_max(crate::host::possible_cpus() as u32) {
            Some(p) => writeln!(out, "host_freq_permille {p}")?,
            None => writeln!(out, "host_freq_permille none")?,
        }
        // Written under the log's lock: the log is too big to copy onto the stack.
        self.dev.sched.with_log(|log| {
            writeln!(
                out,
                "epochs {} failed_moves {} flaps {} inflight_permille {} slope_mc_per_s {} upload_us {} horizon_us {}",
                log.count(),
                log.failed_moves(),
                log.state().flaps(),
                self.dev.inflight_permille(),
                log.state().slope_milli_c_per_s(),
                log.state().upload_ns().map_or(0, |(mean, _)| mean) / 1000,
                log.state().horizon_ns(&p) / 1000
            )?;
            for (t, d) in log.decisions() {
                writeln!(out, "t_ms {} {d}", t / 1_000_000)?;
            }
            Ok(())
        })
    }
}
