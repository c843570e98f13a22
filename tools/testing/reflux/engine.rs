// SPDX-License-Identifier: GPL-2.0

//! The compression engine, seen from the device: the window laid out at load, one slot per
//! engine core, the cost model the cores pace engine work by, and giving up on an engine that
//! stopped answering. The interface and why the engine exists: [`crate::engine_abi`].
//!
//! # The cost model
//!
//! A core that runs a step itself measures the host time it took and pays the difference to
//! the modelled engine speed ([`crate::proto::pacing`]). A step the engine ran took the guest no
//! time to measure, so its host time is modelled: at load the device times crc32c and LZ4 on a
//! block half of random bytes and half zeros (the benchmark's data: fio's
//! `buffer_compress_percentage=50`) and keeps the fastest of [`CALIBRATION_RUNS`] runs, in
//! picoseconds per input byte. The core then owes the whole modelled engine time,
//! `device_ns(host_ns, speed)`, at the same `speed_permille` and thermal factor as local work.
//! A speed above 1000 permille is now reachable: an engine faster than a host CPU.

use core::mem::{offset_of, size_of};
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    kthread,
    memremap::{MapMode, MemRemap},
    platform::MemResource,
    pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
};

use crate::actor::{
    aes::AesCtx,
    crc::crc32c,
    exec::now_ns,
    external::{self, BlockOut, ExternalRun},
    lz4,
};
use crate::engine_abi::{self as eabi, Header, Slot};
use crate::proto::pipeline::{Stage, MAX_STAGES};
use crate::proto::xts::Xts;

/// Timed runs of each stage at load; the fastest counts.
const CALIBRATION_RUNS: u32 = 16;
/// An engine whose heartbeat has not moved for this long is treated as gone.
const STALE_NS: u64 = 100_000_000;
/// A job not finished within this long is given up on (the core runs the request itself).
const JOB_TIMEOUT_NS: u64 = 100_000_000;

const BLOCK: usize = eabi::BLOCK;

/// The engine's window and the model of its work.
pub(crate) struct Engine {
    window: MemRemap,
    /// Host-CPU picoseconds per input byte of crc32c, LZ4 compression and AES-XTS encryption.
    ps_per_byte: [u64; 3],
    /// Requests whose steps the engine ran.
    pub(crate) jobs: AtomicU64,
    /// Requests a core ran itself because the engine was gone, busy or late.
    pub(crate) fallbacks: AtomicU64,
    /// Requests whose engine status or results the core refused (and ran itself; counted in
    /// `fallbacks` too).
    pub(crate) refused: AtomicU64,
}

/// The engine's results for a job's blocks.
pub(crate) struct Results {
    out: [BlockOut; eabi::MAX_BLOCKS],
    nr: usize,
}

impl Results {
    /// One per block of the job.
    pub(crate) fn blocks(&self) -> &[BlockOut] {
        self.out.get(..self.nr).unwrap_or(&[])
    }
}

/// A core's view of the engine.
pub(crate) struct EngineCore {
    slot: u32,
    /// The heartbeat last seen, and when it was seen to change.
    heartbeat: u64,
    heartbeat_seen_ns: u64,
}

impl EngineCore {
    /// The view of core `index` (its slot).
    pub(crate) fn new(index: u32) -> Self {
        Self {
            slot: index,
            heartbeat: 0,
            heartbeat_seen_ns: 0,
        }
    }
}

/// A block half random, half zeros in every 512 bytes.
fn calibration_block(b: &mut [u8; BLOCK]) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for (k, byte) in b.iter_mut().enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *byte = if k % 512 < 256 { (x >> 32) as u8 } else { 0 };
    }
}

/// The host CPU's picoseconds per byte of crc32c, LZ4 compression and AES-XTS encryption.
fn calibrate() -> Result<[u64; 3]> {
    let mut src: KBox<[u8; BLOCK]> = KBox::init(kernel::init::zeroed(), GFP_KERNEL)?;
    let mut dst: KBox<[u8; BLOCK]> = KBox::init(kernel::init::zeroed(), GFP_KERNEL)?;
    let mut ws = lz4::Workspace::new()?;
    // Any key: the cost does not depend on it.
    let key = [0x5au8; eabi::KEY_BYTES];
    let (k1, k2) = key.split_at(eabi::KEY_BYTES / 2);
    let xts = Xts::new(AesCtx::new(k1)?, AesCtx::new(k2)?);
    calibration_block(&mut src);
    let mut best = [u64::MAX; 3];
    let mut sink = 0u32;
    for _ in 0..CALIBRATION_RUNS {
        let t0 = now_ns();
        sink ^= crc32c(0, &src[..]);
        let t1 = now_ns();
        if let lz4::Compressed::Stored(n) = lz4::compress(&mut ws, &src, &mut dst) {
            sink ^= u32::from(n);
        }
        let t2 = now_ns();
        dst.copy_from_slice(&src[..]);
        if xts.encrypt(0, &mut dst[..]).is_ok() {
            sink ^= u32::from(dst[0]);
        }
        let t3 = now_ns();
        let times = [
            t1.saturating_sub(t0),
            t2.saturating_sub(t1),
            t3.saturating_sub(t2),
        ];
        for (b, t) in best.iter_mut().zip(times) {
            *b = (*b).min(t);
        }
        kthread::cond_resched();
    }
    pr_debug!("reflux engine calibration checksum {sink:#x}\n");
    Ok(best.map(|ns| ns.max(1).saturating_mul(1000) / BLOCK as u64))
}

impl Engine {
    /// Maps the window at `res`, lays it out for `nr_slots` cores and a PMR of `pmr_size`
    /// bytes, and calibrates the model.
    pub(crate) fn new(res: MemResource, pmr_size: u64, nr_slots: u32) -> Result<Self> {
        let window = MemRemap::new(res, MapMode::WriteBack)?;
        let h = |off: usize, v: u32| {
            window
                .atomic_u32(off)
                .map(|a| a.store(v, Ordering::Relaxed))
        };
        h(offset_of!(Header, version), eabi::VERSION)?;
        h(offset_of!(Header, nr_slots), nr_slots.min(eabi::SLOTS))?;
        h(offset_of!(Header, slot_stride), eabi::SLOT_STRIDE as u32)?;
        window
            .atomic_u64(offset_of!(Header, pmr_size))?
            .store(pmr_size, Ordering::Relaxed);
        // Release: the layout before the magic the engine waits for. `seq`, `done` and the
        // heartbeat are left as they are: they only ever move forward.
        window
            .atomic_u32(offset_of!(Header, magic))?
            .store(eabi::MAGIC, Ordering::Release);
        let ps_per_byte = calibrate()?;
        pr_info!(
            "reflux engine window at {:#x}: {} slots; model: crc32c {} ps/B, lz4 {} ps/B, aes-xts {} ps/B of a host CPU\n",
            res.start,
            nr_slots,
            ps_per_byte[0],
            ps_per_byte[1],
            ps_per_byte[2]
        );
        Ok(Self {
            window,
            ps_per_byte,
            jobs: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    /// The host time the model gives `stage` on `bytes` input bytes.
    pub(crate) fn model_host_ns(&self, stage: Stage, bytes: usize) -> u64 {
        let ps = match stage {
            Stage::Crc32c => self.ps_per_byte[0],
            Stage::Lz4 => self.ps_per_byte[1],
            Stage::AesXts => self.ps_per_byte[2],
        };
        crate::proto::pacing::host_ns_for_bytes(bytes as u64, ps)
    }

    fn u32_at(&self, off: usize) -> Option<&core::sync::atomic::AtomicU32> {
        self.window.atomic_u32(off).ok()
    }

    /// Whether the engine has beaten its heartbeat lately (as `core` has watched it).
    fn alive(&self, core: &mut EngineCore, now: u64) -> bool {
        let Ok(hb) = self.window.atomic_u64(offset_of!(Header, heartbeat)) else {
            return false;
        };
        let hb = hb.load(Ordering::Acquire);
        if hb != core.heartbeat {
            core.heartbeat = hb;
            core.heartbeat_seen_ns = now;
        }
        hb != 0 && now.saturating_sub(core.heartbeat_seen_ns) < STALE_NS
    }

    /// Has the engine run `run` in `core`'s slot: the blocks' results, checked
    /// (`external::check`), or `None` if the core must run it itself (the engine is gone, the
    /// slot still holds a job it gave up on, the job timed out, the engine reported an error or
    /// its results were refused).
    pub(crate) fn run(&self, core: &mut EngineCore, run: &ExternalRun) -> Option<Results> {
        let r = self.try_run(core, run);
        if r.is_none() {
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    fn try_run(&self, core: &mut EngineCore, run: &ExternalRun) -> Option<Results> {
        let t0 = now_ns();
        // The fault injection, passed on before every job (a module parameter has no notifier).
        if let Some(p) = self.u32_at(offset_of!(Header, pause)) {
            p.store(u32::from(crate::ENGINE_PAUSE.get()), Ordering::Release);
        }
        if core.slot >= eabi::SLOTS || !self.alive(core, t0) {
            return None;
        }
        let s = eabi::slot_offset(core.slot);
        let seq_at = self.u32_at(s + offset_of!(Slot, seq))?;
        let done_at = self.u32_at(s + offset_of!(Slot, done))?;
        // This core is `seq`'s only writer.
        let seq = seq_at.load(Ordering::Relaxed);
        if done_at.load(Ordering::Acquire) != seq {
            return None;
        }
        self.write_job(s, run)?;
        let next = seq.wrapping_add(1);
        // Release: the job before its number.
        seq_at.store(next, Ordering::Release);
        loop {
            if done_at.load(Ordering::Acquire) == next {
                break;
            }
            if now_ns().saturating_sub(t0) > JOB_TIMEOUT_NS {
                return None;
            }
            kthread::usleep_range(50, 100);
        }
        if self
            .u32_at(s + offset_of!(Slot, status))?
            .load(Ordering::Relaxed)
            != eabi::STATUS_OK
        {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let out = self.read_results(core.slot, run.blocks().len())?;
        if !external::check(run, out.blocks()) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            pr_warn_ratelimited!(
                "reflux engine: slot {}: the results do not follow from the job; the core runs it\n",
                core.slot
            );
            return None;
        }
        self.jobs.fetch_add(1, Ordering::Relaxed);
        Some(out)
    }

    /// Writes `run` as a job into the slot at window offset `s`: its block count, operations,
    /// LBA, key and input blocks. `None` if the window refuses a write.
    fn write_job(&self, s: usize, run: &ExternalRun) -> Option<()> {
        let blocks = run.blocks();
        let ops = job_ops(run);
        self.u32_at(s + offset_of!(Slot, nr_blocks))?
            .store(blocks.len() as u32, Ordering::Relaxed);
        self.window
            .write_bytes(s + offset_of!(Slot, ops), &ops)
            .ok()?;
        self.window
            .atomic_u64(s + offset_of!(Slot, lba))
            .ok()?
            .store(run.lba(), Ordering::Relaxed);
        let key = run.key().copied().unwrap_or([0; eabi::KEY_BYTES]);
        self.window
            .write_bytes(s + offset_of!(Slot, key), &key)
            .ok()?;
        for (b, blk) in blocks.iter().enumerate() {
            let mut e = [0u8; size_of::<eabi::BlockIn>()];
            e[0..8].copy_from_slice(&(blk.offset as u64).to_le_bytes());
            e[8..10].copy_from_slice(&blk.len.to_le_bytes());
            e[10..12].copy_from_slice(&blk.flags.to_le_bytes());
            e[12..16].copy_from_slice(&blk.crc.to_le_bytes());
            let at = s + offset_of!(Slot, blocks_in) + b * e.len();
            self.window.write_bytes(at, &e).ok()?;
        }
        Some(())
    }

    /// The first `nr` output blocks the engine left in slot `slot`, unchecked. `None` if the
    /// window refuses a read.
    fn read_results(&self, slot: u32, nr: usize) -> Option<Results> {
        let s = eabi::slot_offset(slot);
        let mut out = Results {
            out: [BlockOut::default(); eabi::MAX_BLOCKS],
            nr,
        };
        for (b, o) in out.out.iter_mut().enumerate().take(nr) {
            let mut e = [0u8; size_of::<eabi::BlockOut>()];
            let at = s + offset_of!(Slot, blocks_out) + b * e.len();
            self.window.read_bytes(at, &mut e).ok()?;
            let u16_at = |k: usize| u16::from_le_bytes([e[k], e[k + 1]]);
            let mut len_after = [0u16; MAX_STAGES];
            for (k, l) in len_after.iter_mut().enumerate() {
                *l = u16_at(8 + 2 * k);
            }
            *o = BlockOut {
                crc: u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                len: u16_at(4),
                flags: u16_at(6),
                len_after,
                output: (u16_at(12) != 0).then(|| eabi::output_offset(slot, b)),
            };
        }
        Some(out)
    }

    /// The window, where the engine left a job's output blocks.
    pub(crate) fn memory(&self) -> &MemRemap {
        &self.window
    }
}

/// The engine's operation for each stage of `run`, in order: a write's transforms, or a read's
/// inverses.
fn job_ops(run: &ExternalRun) -> [u8; 8] {
    let mut ops = [eabi::OP_NONE; 8];
    for (op, stage) in ops.iter_mut().zip(run.stages().iter()) {
        *op = match stage {
            Some(Stage::Crc32c) if run.is_write() => eabi::OP_CRC32C,
            Some(Stage::Lz4) if run.is_write() => eabi::OP_LZ4_COMPRESS,
            Some(Stage::AesXts) if run.is_write() => eabi::OP_XTS_ENCRYPT,
            Some(Stage::Crc32c) => eabi::OP_CRC32C_VERIFY,
            Some(Stage::Lz4) => eabi::OP_LZ4_DECOMPRESS,
            Some(Stage::AesXts) => eabi::OP_XTS_DECRYPT,
            None => eabi::OP_NONE,
        };
    }
    ops
}

// The engine's interface has one slot per core, and a core's job is a request.
const _: () = assert!(eabi::MAX_BLOCKS == crate::abi::MAX_REQ_BLOCKS as usize);
const _: () = assert!(eabi::MAX_OPS == MAX_STAGES);
const _: () = assert!(eabi::KEY_BYTES == crate::abi::XTS_KEY_SIZE);
const _: () = assert!(size_of::<eabi::BlockIn>() == 16 && size_of::<eabi::BlockOut>() == 16);
