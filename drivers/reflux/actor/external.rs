// SPDX-License-Identifier: GPL-2.0

//! A write's steps run by an engine outside the context that holds the request:
//! the software device's compression engine (`tools/testing/reflux/engine_abi.rs`).
//!
//! The context keeps everything but the arithmetic: [`begin`] checks the run as
//! [`run_stages`](super::exec::run_stages) would and describes each block (its buffer and blob
//! entry); the engine computes each block's new length, checksum and flags, and the compressed
//! bytes into memory of its own; [`check`] refuses results that do not follow from the inputs,
//! and [`finish`] copies the compressed bytes into the buffers, updates the blob and the
//! actors' statistics, as the local run would have. The engine never writes the PMR, so a
//! context that gives up on it (it stopped answering, or its results were refused) runs the
//! request itself with nothing to undo.
//!
//! Every step of a write or a read is external (crc32c, lz4, aes-xts with the actor's key): a
//! fixed-function unit's job. What stays with the context: a read's final check that nothing is
//! left undone, and the device's undoing of transforms a read's pipeline has no stage for
//! (`undo_unrouted`, at load). An engine that finds a block corrupt answers so, and the
//! context runs the request itself, to report the same error it would have found.

use kernel::{prelude::*, shared_mem::SharedMem};

use super::exec::{
    at, check_undone, entry_ok, report_stats, ExecError, Plan, RunOutput, Scratch, StageObserver,
    StageStats, BLOB_FLAGS, REQ_STATE_BYTES,
};
use crate::abi::{
    PmrLayout, ReqState, BLOCK_SIZE, MAX_REQ_BLOCKS, META_CHECKSUMMED, META_COMPRESSED,
    META_ENCRYPTED, XTS_KEY_SIZE,
};
use crate::proto::pipeline::{Direction, Stage, MAX_STAGES};
use crate::proto::request::Request;

const BLOCK: usize = BLOCK_SIZE as usize;
const MAX_BLOCKS: usize = MAX_REQ_BLOCKS as usize;

/// One block as the engine gets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockIn {
    /// Offset of its buffer in the PMR.
    pub offset: usize,
    /// Live bytes.
    pub len: u16,
    /// `META_*` flags so far.
    pub flags: u16,
    /// crc32c so far.
    pub crc: u32,
}

/// One block as the engine leaves it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockOut {
    /// Live bytes.
    pub len: u16,
    /// crc32c.
    pub crc: u32,
    /// `META_*` flags.
    pub flags: u16,
    /// Live bytes after each step.
    pub len_after: [u16; MAX_STAGES],
    /// Where the live bytes are in the engine's memory, if they are no longer the buffer's.
    pub output: Option<usize>,
}

/// A run the engine can do, checked and described.
///
/// # Invariants
///
/// `nr <= MAX_BLOCKS`; `stages[..]` are the plan's steps (of a write) in order; `blocks[..nr]`
/// are the request's blocks with entries that `entry_ok` accepts; `key` is set if a step is
/// aes-xts.
pub struct ExternalRun {
    blob: ReqState,
    blob_at: usize,
    nr: usize,
    stages: [Option<Stage>; MAX_STAGES],
    blocks: [BlockIn; MAX_BLOCKS],
    lba: u64,
    key: Option<[u8; XTS_KEY_SIZE]>,
    dir: Direction,
    /// A read whose run has the last step: it hands over the data, nothing may be left undone.
    finishes_read: bool,
}

impl ExternalRun {
    /// The steps, in order (`None` after the last).
    pub fn stages(&self) -> [Option<Stage>; MAX_STAGES] {
        self.stages
    }

    /// The blocks.
    pub fn blocks(&self) -> &[BlockIn] {
        self.blocks.get(..self.nr).unwrap_or(&[])
    }

    /// The LBA of the first block (block `b`'s is `lba + b`, its XTS data unit).
    pub fn lba(&self) -> u64 {
        self.lba
    }

    /// The AES-XTS key, if a step is aes-xts.
    pub fn key(&self) -> Option<&[u8; XTS_KEY_SIZE]> {
        self.key.as_ref()
    }

    /// Whether the run is a write's (else a read's).
    pub fn is_write(&self) -> bool {
        self.dir == Direction::Write
    }
}

/// The run of `plan` as an external job, or `None` if it is not one an engine does (not a
/// write or a read, or no step). Errors are what [`run_stages`](super::exec::run_stages) would answer before
/// touching a block.
pub fn begin(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    req: &Request,
    plan: &Plan,
) -> Result<Option<ExternalRun>, ExecError> {
    let route = req.route();
    let dir = route.direction();
    if !matches!(dir, Direction::Write | Direction::Read) || plan.run().is_empty() {
        return Ok(None);
    }
    let mut stages = [None; MAX_STAGES];
    for (slot, step) in stages.iter_mut().zip(plan.steps.iter()) {
        *slot = step.map(|s| s.stage);
    }
    let aes = stages.contains(&Some(Stage::AesXts));
    if aes && plan.key.is_none() {
        return Err(ExecError::Key);
    }
    let desc = req.descriptor();
    let nr = usize::from(desc.nr_blocks);
    if nr > MAX_BLOCKS {
        return Err(ExecError::BadState { block: 0 });
    }
    let blob_at = at(layout.req_state(desc.state))?;
    let mut image = [0u8; REQ_STATE_BYTES];
    pmr.read_bytes(blob_at, &mut image)
        .map_err(|_| ExecError::Pmr)?;
    let blob = ReqState::from_bytes(&image);
    let fresh = dir == Direction::Write && plan.run().start == 0;
    let mut blocks = [BlockIn::default(); MAX_BLOCKS];
    for (b, blk) in (0u8..).zip(blocks.iter_mut().take(nr)) {
        let i = usize::from(b);
        let (len, crc, flags) = if fresh {
            (BLOCK as u16, 0, 0)
        } else {
            let (Some(&len), Some(&crc), Some(&flags)) =
                (blob.len.get(i), blob.crc.get(i), blob.flags.get(i))
            else {
                return Err(ExecError::BadState { block: b });
            };
            if !entry_ok(len, u16::from(flags)) {
                return Err(ExecError::BadState { block: b });
            }
            (len, crc, u16::from(flags))
        };
        // LZ4 and AES-XTS take raw blocks only, and so run first (a checksum step sets a
        // flag, and one transform is all a pipeline has).
        let raw = flags == 0 && usize::from(len) == BLOCK;
        let transform = stages
            .iter()
            .position(|s| matches!(s, Some(Stage::Lz4 | Stage::AesXts)));
        if dir == Direction::Write && transform.is_some_and(|k| k != 0 || !raw) {
            return Err(ExecError::BadState { block: b });
        }
        *blk = BlockIn {
            offset: at(layout.buffer(desc.buf_index.wrapping_add(u32::from(b))))?,
            len,
            flags,
            crc,
        };
    }
    // INVARIANT: `nr <= MAX_BLOCKS`, the plan's steps, entries checked above.
    Ok(Some(ExternalRun {
        blob,
        blob_at,
        nr,
        stages,
        blocks,
        lba: desc.lba,
        key: if aes { plan.key } else { None },
        dir,
        finishes_read: dir == Direction::Read && plan.run().end == route.steps(),
    }))
}

/// Whether `out` (one per block) is what `run`'s steps can make of its blocks: the flags they
/// add and no others, a compressed block shorter than a block and an encrypted one a whole
/// block, both in the engine's memory, an untransformed one unchanged in its buffer, and
/// lengths step by step to match. The checksum and the bytes themselves are the engine's word.
pub fn check(run: &ExternalRun, out: &[BlockOut]) -> bool {
    if out.len() != run.nr {
        return false;
    }
    let has = |stage| run.stages.contains(&Some(stage));
    let (crc, lz4, aes) = (has(Stage::Crc32c), has(Stage::Lz4), has(Stage::AesXts));
    run.blocks().iter().zip(out).all(|(i, o)| {
        let (want, len_ok) = if run.is_write() {
            let compressed = lz4 && o.flags & META_COMPRESSED != 0;
            let mut want = i.flags;
            if crc {
                want |= META_CHECKSUMMED;
            }
            if compressed {
                want |= META_COMPRESSED;
            }
            if aes {
                want |= META_ENCRYPTED;
            }
            let len_ok = if compressed {
                o.len > 0 && usize::from(o.len) < BLOCK && o.output.is_some()
            } else if aes {
                usize::from(o.len) == BLOCK && o.output.is_some()
            } else {
                o.len == i.len && o.output.is_none()
            };
            (want, len_ok)
        } else {
            // A read step clears its flag if the block has it (and undoes its transform).
            let mut want = i.flags;
            let mut undone = false;
            if crc {
                want &= !META_CHECKSUMMED;
            }
            for (stage, flag) in [
                (Stage::Lz4, META_COMPRESSED),
                (Stage::AesXts, META_ENCRYPTED),
            ] {
                if has(stage) && i.flags & flag != 0 {
                    want &= !flag;
                    undone = true;
                }
            }
            let len_ok = if undone {
                usize::from(o.len) == BLOCK && o.output.is_some()
            } else {
                o.len == i.len && o.output.is_none()
            };
            (want, len_ok)
        };
        // A write's steps all end at the final length (crc32c runs last); a read's lengths
        // change at the transform, which `len_ok` checks.
        let steps_ok = !run.is_write()
            || run
                .stages
                .iter()
                .zip(o.len_after.iter())
                .all(|(s, &l)| s.is_none() || l == o.len);
        o.flags == want && o.flags & !BLOB_FLAGS == 0 && len_ok && steps_ok && {
            entry_ok(o.len, o.flags)
        }
    })
}

/// Makes `out` (accepted by [`check`]) the request's: the compressed bytes (in `engine`'s
/// memory) into the buffers, the blob, the actors' statistics; `obs` hears of every step on
/// every block as [`StageObserver::stage_elsewhere`].
#[allow(clippy::too_many_arguments)]
pub fn finish(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    plan: &Plan,
    mut run: ExternalRun,
    out: &[BlockOut],
    engine: &impl SharedMem,
    scratch: &mut Scratch,
    obs: &mut impl StageObserver,
) -> Result<RunOutput, ExecError> {
    let mut stats = [StageStats::default(); MAX_STAGES];
    let mut output = RunOutput::default();
    let buf = scratch.block();
    for (b, (i, o)) in (0u8..).zip(run.blocks.iter().take(run.nr).zip(out)) {
        let mut bytes_in = usize::from(i.len);
        for ((stage, s), &after) in run.stages.iter().zip(stats.iter_mut()).zip(&o.len_after) {
            let Some(stage) = stage else {
                continue;
            };
            s.invocations += 1;
            s.bytes_in += bytes_in as u64;
            s.bytes_out += u64::from(after);
            obs.stage_elsewhere(*stage, bytes_in);
            bytes_in = usize::from(after);
        }
        if let Some(src) = o.output {
            let dst = buf
                .get_mut(..usize::from(o.len))
                .ok_or(ExecError::BadState { block: b })?;
            engine.read_bytes(src, dst).map_err(|_| ExecError::Pmr)?;
            pmr.write_bytes(i.offset, dst).map_err(|_| ExecError::Pmr)?;
        }
        let e = usize::from(b);
        let (Some(len), Some(crc), Some(flags)) = (
            run.blob.len.get_mut(e),
            run.blob.crc.get_mut(e),
            run.blob.flags.get_mut(e),
        ) else {
            return Err(ExecError::BadState { block: b });
        };
        *len = o.len;
        *crc = o.crc;
        // `check` kept the flags within `BLOB_FLAGS`, which fit in the blob's byte.
        *flags = o.flags as u8;
        if run.finishes_read {
            check_undone(b, o.len, o.flags)?;
        }
        output.bytes += u64::from(o.len);
    }
    report_stats(pmr, layout, plan, &stats, obs);
    pmr.write_bytes(run.blob_at, &run.blob.to_bytes())
        .map_err(|_| ExecError::Pmr)?;
    Ok(output)
}
