//! Serving the engine window: the slots' jobs, read from and answered in shared memory.

use std::mem::offset_of;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use crate::engine_abi::{
    output_offset, slot_offset, BlockIn, BlockOut, Header, Slot, BLOCK, MAGIC, MAX_BLOCKS,
    OP_XTS_DECRYPT, OP_XTS_ENCRYPT, SLOTS, SLOT_STRIDE, STATUS_BAD_STATE, STATUS_DATA,
    STATUS_INVALID, STATUS_OK, VERSION, WINDOW_BYTES,
};
use crate::ops::{self, BlockError};

/// Why a mapping cannot be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// The window does not fit in the mapping.
    WindowOutside,
    /// The window is not 8-byte aligned (its atomics would not be).
    Misaligned,
}

/// The engine over one mapping of the shared file: the PMR from offset 0, the window at
/// `window`.
///
/// # Invariants
///
/// `base..base + len` is mapped, readable and writable, for the engine's lifetime;
/// `window + WINDOW_BYTES <= len` and `base + window` is 8-byte aligned.
pub struct Engine {
    base: *mut u8,
    len: usize,
    window: usize,
    /// Jobs finished, per status (ok, bad state, invalid, data error).
    pub jobs: [u64; 4],
    /// Blocks processed.
    pub blocks: u64,
}

impl Engine {
    /// The engine over `len` bytes at `base`, the window at offset `window`.
    ///
    /// # Safety
    ///
    /// `base..base + len` must stay mapped, readable and writable, while the engine lives.
    /// Other processes (the VM) may write it concurrently: the engine reads what they publish
    /// with acquire loads of the interface's counters, and copies every block before it uses
    /// it.
    pub unsafe fn new(base: *mut u8, len: usize, window: usize) -> Result<Self, MapError> {
        if window
            .checked_add(WINDOW_BYTES)
            .map_or(true, |end| end > len)
        {
            return Err(MapError::WindowOutside);
        }
        if (base as usize).wrapping_add(window) % 8 != 0 {
            return Err(MapError::Misaligned);
        }
        // INVARIANT: checked above; the mapping's lifetime is the caller's promise.
        Ok(Self {
            base,
            len,
            window,
            jobs: [0; 4],
            blocks: 0,
        })
    }

    /// A pointer to window offset `off` (in bounds: every caller's offset is below
    /// `WINDOW_BYTES`).
    fn at(&self, off: usize) -> *mut u8 {
        debug_assert!(off < WINDOW_BYTES);
        // SAFETY: `window + off < window + WINDOW_BYTES <= len` (the invariant), inside the
        // mapping.
        unsafe { self.base.add(self.window + off) }
    }

    fn u32_at(&self, off: usize) -> &AtomicU32 {
        // SAFETY: in the mapping (see `at`), 4-byte aligned (every caller's offset is a `u32`
        // field's in a `repr(C)` structure at an 8-byte aligned place), valid for the
        // engine's lifetime; `AtomicU32` has `u32`'s layout.
        unsafe { &*self.at(off).cast::<AtomicU32>() }
    }

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        // SAFETY: as `u32_at`, for an 8-byte aligned `u64` field.
        unsafe { &*self.at(off).cast::<AtomicU64>() }
    }

    /// Whether the device has laid the window out, in this interface's version.
    pub fn attached(&self) -> bool {
        self.u32_at(offset_of!(Header, magic))
            .load(Ordering::Acquire)
            == MAGIC
            && self
                .u32_at(offset_of!(Header, version))
                .load(Ordering::Relaxed)
                == VERSION
            && self
                .u32_at(offset_of!(Header, slot_stride))
                .load(Ordering::Relaxed)
                == SLOT_STRIDE as u32
    }

    /// Whether the device asks the engine to play hung (`Header::pause`).
    pub fn paused(&self) -> bool {
        self.u32_at(offset_of!(Header, pause))
            .load(Ordering::Acquire)
            != 0
    }

    /// Says the engine is alive (and which version it is).
    pub fn beat(&self) {
        self.u32_at(offset_of!(Header, engine_version))
            .store(VERSION, Ordering::Relaxed);
        let hb = self.u64_at(offset_of!(Header, heartbeat));
        // The engine is the field's only writer.
        hb.store(
            hb.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Release,
        );
    }

    /// Serves every slot with a posted job; returns how many it finished.
    pub fn serve(&mut self) -> u32 {
        let slots = self
            .u32_at(offset_of!(Header, nr_slots))
            .load(Ordering::Relaxed)
            .min(SLOTS);
        let mut n = 0;
        for i in 0..slots {
            let s = slot_offset(i);
            let seq = self
                .u32_at(s + offset_of!(Slot, seq))
                .load(Ordering::Acquire);
            if seq
                == self
                    .u32_at(s + offset_of!(Slot, done))
                    .load(Ordering::Relaxed)
            {
                continue;
            }
            self.run_job(i, seq);
            n += 1;
        }
        n
    }

    /// Runs slot `i`'s job `seq` and publishes its result.
    fn run_job(&mut self, i: u32, seq: u32) {
        let t0 = Instant::now();
        let s = slot_offset(i);
        // SAFETY: the slot is in the window (`slot_offset(i) + size_of::<Slot>() <=
        // WINDOW_BYTES` for `i < SLOTS`), 8-byte aligned; the device wrote the job before its
        // release store of `seq`, which the caller loaded with acquire. Volatile: the memory is
        // shared with another process.
        let job: Slot = unsafe { ptr::read_volatile(self.at(s).cast::<Slot>()) };
        let pmr_size = self
            .u64_at(offset_of!(Header, pmr_size))
            .load(Ordering::Relaxed);
        let (status, bad) = match self.check(&job, pmr_size) {
            Err(()) => (STATUS_INVALID, 0),
            Ok(nr) => self.run_blocks(i, &job, nr),
        };
        let w32 = |off: usize, v: u32| self.u32_at(s + off).store(v, Ordering::Relaxed);
        w32(offset_of!(Slot, status), status);
        w32(offset_of!(Slot, bad_block), bad);
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.u64_at(s + offset_of!(Slot, engine_ns))
            .store(ns, Ordering::Relaxed);
        // Release: the outputs and the fields above before `done`.
        self.u32_at(s + offset_of!(Slot, done))
            .store(seq, Ordering::Release);
        let k = match status {
            STATUS_OK => 0,
            STATUS_BAD_STATE => 1,
            STATUS_DATA => 3,
            _ => 2,
        };
        self.jobs[k] += 1;
    }

    /// The job's block count if every block is a whole buffer inside the PMR (and the mapping).
    fn check(&self, job: &Slot, pmr_size: u64) -> Result<usize, ()> {
        let nr = usize::try_from(job.nr_blocks).map_err(|_| ())?;
        if nr == 0 || nr > MAX_BLOCKS {
            return Err(());
        }
        let pmr_end = usize::try_from(pmr_size)
            .unwrap_or(usize::MAX)
            .min(self.window);
        for b in job.blocks_in.iter().take(nr) {
            let off = usize::try_from(b.offset).map_err(|_| ())?;
            let end = off.checked_add(BLOCK).ok_or(())?;
            if end > pmr_end || end > self.len || b.len == 0 || usize::from(b.len) > BLOCK {
                return Err(());
            }
        }
        Ok(nr)
    }

    /// Runs the job's operations on its first `nr` blocks (checked); returns the status and
    /// the bad block.
    fn run_blocks(&mut self, i: u32, job: &Slot, nr: usize) -> (u32, u32) {
        let mut data = [0u8; BLOCK];
        let mut out = [0u8; BLOCK];
        let s = slot_offset(i);
        let xts = job
            .ops
            .iter()
            .any(|o| matches!(*o, OP_XTS_ENCRYPT | OP_XTS_DECRYPT))
            .then(|| ops::xts_context(&job.key));
        for (b, blk) in job.blocks_in.iter().take(nr).enumerate() {
            let BlockIn {
                offset,
                len,
                flags,
                crc,
            } = *blk;
            // SAFETY: `check` put `offset..offset + BLOCK` inside the mapping; `data` is a
            // distinct local buffer. The device does not write the buffer while the job is
            // posted; a device that did would only get wrong results, not unsafety here.
            unsafe {
                ptr::copy_nonoverlapping(self.base.add(offset as usize), data.as_mut_ptr(), BLOCK)
            };
            let lba = job.lba.wrapping_add(b as u64);
            let r = match ops::run_block(
                &job.ops,
                &mut data,
                len,
                flags,
                crc,
                lba,
                xts.as_ref(),
                &mut out,
            ) {
                Ok(r) => r,
                Err(BlockError::BadState) => return (STATUS_BAD_STATE, b as u32),
                Err(BlockError::Checksum | BlockError::Decode) => return (STATUS_DATA, b as u32),
                Err(BlockError::UnknownOp(_)) => return (STATUS_INVALID, b as u32),
            };
            if r.in_output != 0 {
                // SAFETY: output block `b < MAX_BLOCKS` of slot `i < SLOTS` is `BLOCK` bytes
                // inside the window; `out` is a distinct local buffer.
                unsafe {
                    ptr::copy_nonoverlapping(data.as_ptr(), self.at(output_offset(i, b)), BLOCK)
                };
            }
            let at = s + offset_of!(Slot, blocks_out) + b * size_of::<BlockOut>();
            // SAFETY: entry `b < MAX_BLOCKS` of the slot's `blocks_out`, inside the window,
            // 4-byte aligned (`BlockOut` is 16 bytes, the array at an 8-byte aligned offset).
            unsafe { ptr::write_volatile(self.at(at).cast::<BlockOut>(), r) };
            self.blocks += 1;
        }
        (STATUS_OK, 0)
    }
}
