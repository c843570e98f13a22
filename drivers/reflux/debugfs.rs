// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/refluxN/`: `stats`, the driver's counters and the device's telemetry; and
//! two test hooks, `corrupt_lba` and `peek_lba`/`peek`.
//!
//! One `key value` pair per line, so that tests and tools read it without parsing prose. The
//! telemetry registers are read at every read of the file, as the paper's scheduler reads them
//! over CXL.io.

use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    debugfs::{SeqWriter, Show, Store},
    kthread::usleep_range,
    prelude::*,
    shared_mem::SharedMem,
    sync::Arc,
};

use crate::{
    abi::{self, BlockMeta},
    queue::RefluxDev,
};

/// The `stats` file of one device.
pub(crate) struct DevStats {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Show for DevStats {
    fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
        let s = &self.dev.stats;
        let get = |c: &core::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        for (k, v) in [
            ("submitted", get(&s.submitted)),
            ("completed", get(&s.completed)),
            ("errors", get(&s.errors)),
            ("polled", get(&s.polled)),
            ("host_runs", get(&s.host_runs)),
            ("written_bytes", get(&s.written_bytes)),
            ("stored_bytes", get(&s.stored_bytes)),
        ] {
            writeln!(out, "{k} {v}")?;
        }
        let r32 = |o: usize| {
            self.dev
                .regs
                .atomic_u32(o)
                .map_or(0, |r| u64::from(r.load(Ordering::Acquire)))
        };
        let r64 = |o: usize| {
            self.dev
                .regs
                .atomic_u64(o)
                .map_or(0, |r| r.load(Ordering::Acquire))
        };
        for (k, v) in [
            ("dev_status", r32(abi::REG_DEV_STATUS)),
            ("temp_milli_c", r32(abi::REG_TEMP_MILLI_C)),
            ("throttled", r32(abi::REG_THROTTLED)),
            ("throttle_events", r64(abi::REG_THROTTLE_EVENTS)),
            ("core_util_permille", r32(abi::REG_CORE_UTIL_PERMILLE)),
            ("queue_depth", r32(abi::REG_QUEUE_DEPTH)),
            ("speed_permille", r32(abi::REG_SPEED_PERMILLE)),
            ("drain_backlog", r64(abi::REG_DRAIN_BACKLOG)),
        ] {
            writeln!(out, "{k} {v}")?;
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
pub(crate) struct CorruptLba {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Store for CorruptLba {
    fn store(&self, input: &[u8]) -> Result {
        let lba = parse_lba(input, self.dev.capacity_blocks)?;
        let off = self.dev.layout.block_data(lba).ok_or(EINVAL)?;
        let reg = self.dev.regs.atomic_u64(abi::REG_FAULT_INJECT)?;
        // One injection at a time: the device writes the idle value back when it has flipped.
        for _ in 0..100 {
            if reg.load(Ordering::Acquire) == abi::FAULT_INJECT_IDLE {
                reg.store(off, Ordering::Release);
                for _ in 0..100 {
                    if reg.load(Ordering::Acquire) == abi::FAULT_INJECT_IDLE {
                        return Ok(());
                    }
                    usleep_range(1000, 1000);
                }
                return Err(kernel::errno::etimedout());
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
            "lba {lba} stored_len {} flags {:#x} crc {:#010x} generation {}",
            meta.stored_len, meta.flags, meta.crc, meta.generation
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
