// SPDX-License-Identifier: GPL-2.0

//! Executing a run of pipeline stages over a request's blocks, on whichever side holds it.
//!
//! A side that holds a request (the device after taking it from the SQ, the host after a
//! completion with `next_stage != DONE`) computes its run with `Route::run` and then:
//!
//! 1. [`Plan::new`] checks the run against the PMR before anything is touched: each stage's
//!    actor epoch against the one the host routed the request in (`EAGAIN` if the actor is
//!    migrating or has moved, so the request can be resubmitted unchanged), each actor's kind
//!    against the stage (`EINVAL`), and fetches the AES-XTS key from the actor's shared state;
//! 2. the device loads a read's blocks (its own code: the data store is device-internal);
//! 3. [`run_stages`] runs the steps over the blocks;
//! 4. the device commits a write's blocks.
//!
//! # What a step does to a block
//!
//! Block `i` of the request is data buffer `buf_index + i` of the PMR, and its entry `i` in the
//! request's [`ReqState`] blob says how many bytes of the buffer are live (`len`), their crc32c
//! and what has been done to them (`META_*` flags). The blob is how one side tells the other
//! where the block stands when the request changes hands.
//!
//! | stage | write | read |
//! | --- | --- | --- |
//! | crc32c | `crc = crc32c(bytes)`, set `CHECKSUMMED` | if `CHECKSUMMED`: compare, `EIO` on mismatch; clear it |
//! | lz4 | compress; if it shrinks, keep the compressed bytes and set `COMPRESSED` | if `COMPRESSED`: decompress to exactly one block (`EIO` otherwise); clear it |
//! | aes-xts | encrypt (data unit = LBA), set `ENCRYPTED` | if `ENCRYPTED`: decrypt; clear it |
//!
//! A read step whose flag is absent does nothing: the block was written by a pipeline without
//! that stage, or never written (it loads as zeros). A read whose last step has run checks that
//! nothing is left undone (no `COMPRESSED` or `ENCRYPTED`, a whole block): a block in a form the
//! read could not undo is `EIO`, never returned as if it were the data.
//!
//! Stored blocks describe themselves (their [`BlockMeta`](crate::abi::BlockMeta) flags), so data
//! written with one pipeline stays readable with another (the driver's pipeline is a load-time
//! choice, and the PMR outlives it): when the device loads a block stored with a transform the
//! read's pipeline has no stage for, [`undo_unrouted`] undoes it there and then, with the
//! default actor of that kind (after verifying the block's checksum, which covers the stored
//! bytes). The read's own stages then see the block in the form they expect.
//!
//! A write's run that starts at step 0 takes the buffers as raw blocks and (re)initialises their
//! blob entries; any other run validates the entries it inherits (`EINVAL` for an impossible
//! one: the other side broke the protocol).
//!
//! Each block is read from its buffer into the scratch once, runs all the steps of the run there,
//! and is written back once; the blob is read once and written back once per request.
//!
//! Neither [`Plan::new`] nor [`run_stages`] sleeps or allocates (the observer aside), so a host
//! may run them under a spinlock or in its completion path.

use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;

use kernel::{prelude::*, shared_mem::SharedMem, time::Ktime};

use super::{aes::XtsCache, crc::crc32c, lz4};
use crate::abi::{
    ActorShared, PmrLayout, ReqState, SubmissionDescriptor, BLOCK_SIZE, META_CHECKSUMMED,
    META_COMPRESSED, META_ENCRYPTED, XTS_KEY_SIZE,
};
use crate::proto::block_meta::BlockInfo;
use crate::proto::pipeline::{Direction, Route, Run, Stage, MAX_STAGES};
use crate::proto::request::{check_epoch, epoch_tag, EpochCheck, Request};

pub use super::error::ExecError;

/// Bytes of one block.
pub const BLOCK: usize = BLOCK_SIZE as usize;

/// Bytes of a [`ReqState`] blob's wire image.
pub(super) const REQ_STATE_BYTES: usize = size_of::<ReqState>();

/// The `META_*` bits a blob entry may carry. `META_VALID` describes a stored block, not a
/// buffer; a blob entry with it (or anything unknown) is refused.
pub const BLOB_FLAGS: u16 = META_CHECKSUMMED | META_COMPRESSED | META_ENCRYPTED;

/// The transforms a finished read must have undone.
const TRANSFORMS: u16 = META_COMPRESSED | META_ENCRYPTED;

/// Converts a PMR offset of the layout into a mapping offset.
pub(super) fn at(offset: Option<u64>) -> Result<usize, ExecError> {
    offset
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(ExecError::Pmr)
}

/// Monotonic time in nanoseconds (`ktime_get`): the clock of every duration both sides measure.
pub fn now_ns() -> u64 {
    u64::try_from(Ktime::ktime_get().to_ns()).unwrap_or(0)
}

/// The memory one engine context works in: two block buffers, the LZ4 workspace and the XTS
/// key cache, about 25 KiB. Allocated once per device core or host context; used by one request
/// at a time (`&mut`).
pub struct Scratch {
    data: KBox<[u8; BLOCK]>,
    out: KBox<[u8; BLOCK]>,
    lz4: lz4::Workspace,
    xts: KBox<XtsCache>,
}

impl Scratch {
    /// Allocates the scratch.
    pub fn new() -> Result<Self> {
        Ok(Self {
            data: KBox::init(kernel::init::zeroed(), GFP_KERNEL)?,
            out: KBox::init(kernel::init::zeroed(), GFP_KERNEL)?,
            lz4: lz4::Workspace::new()?,
            xts: XtsCache::new()?,
        })
    }

    /// A block-sized buffer for the caller's own copies (the device's load and commit), free
    /// between runs.
    pub fn block(&mut self) -> &mut [u8; BLOCK] {
        &mut self.data
    }
}

/// Told about each block each step processed, e.g. to pace a slower engine or to account busy
/// time. `()` ignores everything.
pub trait StageObserver {
    /// Step `stage` processed `bytes` input bytes of one block in `host_ns` nanoseconds.
    fn stage_done(&mut self, stage: Stage, bytes: usize, host_ns: u64);

    /// Actor `actor` ran on `blocks` blocks of the request (failures included), exactly the
    /// count added to its shared [`ActorShared::invocations`]: the side's control state of the
    /// actor counts the same runs.
    fn actor_ran(&mut self, _actor: u8, _blocks: u64) {}

    /// Step `stage` processed `bytes` input bytes of one block on an engine outside this
    /// context ([`super::external`]): no time of this context was spent on it.
    fn stage_elsewhere(&mut self, _stage: Stage, _bytes: usize) {}
}

impl StageObserver for () {
    fn stage_done(&mut self, _stage: Stage, _bytes: usize, _host_ns: u64) {}
}

/// One step of a plan: the stage and its actor.
#[derive(Clone, Copy, Debug)]
pub(super) struct PlannedStep {
    pub(super) stage: Stage,
    pub(super) actor: u8,
}

/// A run checked against the actor and epoch tables, ready to execute.
///
/// # Invariants
///
/// `steps[..len]` are the run's steps in execution order, `len == run.end - run.start`; every
/// step's actor exists and is of the step's kind; `key` is set if a step is AES-XTS.
pub struct Plan {
    run: Run,
    pub(super) steps: [Option<PlannedStep>; MAX_STAGES],
    epochs: [u32; MAX_STAGES],
    pub(super) key: Option<[u8; XTS_KEY_SIZE]>,
}

impl Plan {
    /// Checks `run` (computed by `req.route().run(side, ..)`) against the PMR: every stage's
    /// actor epoch (all of them are recorded for the completion; those of the run's steps must
    /// be current), the run's actors' kinds, and the AES-XTS key. Touches nothing.
    pub fn new(
        pmr: &impl SharedMem,
        layout: &PmrLayout,
        req: &Request,
        run: Run,
    ) -> Result<Self, ExecError> {
        let route = req.route();
        let mut epochs = [0u32; MAX_STAGES];
        let mut current = [0u64; MAX_STAGES];
        for ((index, tag), full) in (0..route.steps())
            .zip(epochs.iter_mut())
            .zip(current.iter_mut())
        {
            let id = req.actor(index).ok_or(ExecError::Pmr)?;
            let epoch = pmr
                .atomic_u64(at(layout.epoch(id))?)
                .map_err(|_| ExecError::Pmr)?
                // Acquire: what the scheduler wrote before bumping the epoch (the actor's new
                // placement) is visible with the new epoch.
                .load(Ordering::Acquire);
            *full = epoch;
            *tag = epoch_tag(epoch);
        }
        let mut steps = [None; MAX_STAGES];
        let mut key = None;
        for (slot, step) in steps.iter_mut().zip(run.start..run.end) {
            let index = route.stage_index(step).ok_or(ExecError::Pmr)?;
            let stage = route.stage_at(step).ok_or(ExecError::Pmr)?;
            let actor = req.actor(index).ok_or(ExecError::Pmr)?;
            let routed = req.routed_epoch(index).ok_or(ExecError::Pmr)?;
            let now = current.get(usize::from(index)).copied().unwrap_or(0);
            let check = check_epoch(routed, now);
            if check != EpochCheck::Current {
                return Err(ExecError::Epoch {
                    stage: index,
                    check,
                    epochs,
                });
            }
            let shared = at(layout.actor_shared(actor))?;
            let kind = pmr
                .atomic_u32(shared + offset_of!(ActorShared, kind))
                .map_err(|_| ExecError::Pmr)?
                .load(Ordering::Acquire);
            if kind != stage.actor_kind() {
                return Err(ExecError::ActorKind {
                    stage: index,
                    id: actor,
                    kind,
                });
            }
            if matches!(stage, Stage::AesXts) {
                let mut k = [0u8; XTS_KEY_SIZE];
                pmr.read_bytes(shared + offset_of!(ActorShared, params), &mut k)
                    .map_err(|_| ExecError::Pmr)?;
                key = Some(k);
            }
            *slot = Some(PlannedStep { stage, actor });
        }
        // INVARIANT: one step per step of the run (`MAX_STAGES` bounds both), each checked.
        Ok(Self {
            run,
            steps,
            epochs,
            key,
        })
    }

    /// The run.
    pub fn run(&self) -> Run {
        self.run
    }

    /// The actors of the run's steps, in execution order.
    pub fn actors(&self) -> impl Iterator<Item = u8> + '_ {
        self.steps.iter().flatten().map(|s| s.actor)
    }

    /// The low 32 bits of each stage's actor epoch when the plan was made, for the completion.
    pub fn epochs(&self) -> [u32; MAX_STAGES] {
        self.epochs
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOutput {
    /// The blocks' live bytes after the run (what a commit stores).
    pub bytes: u64,
}

/// One stage's statistics over a request, published into its actor's shared state.
#[derive(Clone, Copy, Default)]
pub(super) struct StageStats {
    pub(super) invocations: u64,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
    pub(super) errors: u64,
}

/// A finished read's block: `EIO` ([`ExecError::NotUndone`]) unless it is a whole block with no
/// transform left, the only form a read may hand over.
pub(super) fn check_undone(block: u8, len: u16, flags: u16) -> Result<(), ExecError> {
    if flags & TRANSFORMS != 0 || usize::from(len) != BLOCK {
        return Err(ExecError::NotUndone { block, flags });
    }
    Ok(())
}

/// Publishes a run's statistics ([`publish_stats`]) and tells `obs` which actors ran on how
/// many blocks.
pub(super) fn report_stats(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    plan: &Plan,
    stats: &[StageStats; MAX_STAGES],
    obs: &mut impl StageObserver,
) {
    publish_stats(pmr, layout, plan, stats);
    for (step, st) in plan.steps.iter().zip(stats.iter()) {
        if let Some(step) = step {
            if st.invocations != 0 {
                obs.actor_ran(step.actor, st.invocations);
            }
        }
    }
}

/// Adds `stats[k]` to the statistics line of step `k`'s actor. The line is written by the side
/// that runs the actor; several engine cores of one side may run it at once, hence the atomic
/// additions (in coherent memory shared by that side's cores).
fn publish_stats(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    plan: &Plan,
    stats: &[StageStats; MAX_STAGES],
) {
    for (step, s) in plan.steps.iter().zip(stats.iter()) {
        let Some(step) = step else {
            continue;
        };
        let Ok(shared) = at(layout.actor_shared(step.actor)) else {
            continue;
        };
        for (field, v) in [
            (offset_of!(ActorShared, invocations), s.invocations),
            (offset_of!(ActorShared, bytes_in), s.bytes_in),
            (offset_of!(ActorShared, bytes_out), s.bytes_out),
            (offset_of!(ActorShared, errors), s.errors),
        ] {
            if v != 0 {
                if let Ok(w) = pmr.atomic_u64(shared + field) {
                    w.fetch_add(v, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Whether `(len, flags)` describes a possible buffer: known flags, and a length the flags
/// allow (the rules of a stored block, [`BlockInfo::new`]).
pub(super) fn entry_ok(len: u16, flags: u16) -> bool {
    flags & !BLOB_FLAGS == 0
        && BlockInfo::new(
            len,
            flags & META_COMPRESSED != 0,
            flags & META_ENCRYPTED != 0,
            None,
            0,
        )
        .is_ok()
}

/// A block being processed: its live bytes are `data[..len]`.
struct Block<'a> {
    data: &'a mut KBox<[u8; BLOCK]>,
    out: &'a mut KBox<[u8; BLOCK]>,
    len: u16,
    crc: u32,
    flags: u16,
    /// Whether the bytes changed (and must be written back).
    dirty: bool,
}

impl Block<'_> {
    fn bytes(&self) -> &[u8] {
        self.data.get(..usize::from(self.len)).unwrap_or(&[])
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = usize::from(self.len);
        self.data.get_mut(..len).unwrap_or(&mut [])
    }

    /// Makes the output buffer the data buffer (a pointer swap, not a copy).
    fn take_output(&mut self, len: u16) {
        core::mem::swap(self.data, self.out);
        self.len = len;
        self.dirty = true;
    }
}

/// Runs one step of direction `dir` on block `b` (at LBA `lba`).
fn apply(
    dir: Direction,
    stage: Stage,
    block: &mut Block<'_>,
    b: u8,
    lba: u64,
    lz4_ws: &mut lz4::Workspace,
    xts: Option<&crate::proto::xts::Xts<super::aes::AesCtx>>,
) -> Result<(), ExecError> {
    let raw = block.flags == 0 && usize::from(block.len) == BLOCK;
    match (dir, stage) {
        (Direction::Write, Stage::Crc32c) => {
            block.crc = crc32c(0, block.bytes());
            block.flags |= META_CHECKSUMMED;
        }
        (Direction::Write, Stage::Lz4) => {
            if !raw {
                return Err(ExecError::BadState { block: b });
            }
            if let lz4::Compressed::Stored(n) = lz4::compress(lz4_ws, block.data, block.out) {
                block.take_output(n);
                block.flags |= META_COMPRESSED;
            }
        }
        (Direction::Write, Stage::AesXts) => {
            if !raw {
                return Err(ExecError::BadState { block: b });
            }
            let xts = xts.ok_or(ExecError::Key)?;
            xts.encrypt(lba, block.bytes_mut())
                .map_err(|_| ExecError::BadState { block: b })?;
            block.flags |= META_ENCRYPTED;
            block.dirty = true;
        }
        (Direction::Read, Stage::Crc32c) => {
            if block.flags & META_CHECKSUMMED != 0 {
                let computed = crc32c(0, block.bytes());
                if computed != block.crc {
                    return Err(ExecError::Checksum {
                        block: b,
                        stored: block.crc,
                        computed,
                    });
                }
                // Verified; the bytes about to be transformed no longer have this checksum.
                block.flags &= !META_CHECKSUMMED;
            }
        }
        (Direction::Read, Stage::Lz4) => {
            if block.flags & META_COMPRESSED != 0 {
                // Ciphertext does not decompress: this pipeline cannot read the block.
                if block.flags & META_ENCRYPTED != 0 {
                    return Err(ExecError::Decode { block: b });
                }
                let src = block.data.get(..usize::from(block.len)).unwrap_or(&[]);
                lz4::decompress(src, block.out).map_err(|_| ExecError::Decode { block: b })?;
                block.take_output(BLOCK_SIZE as u16);
                block.flags &= !META_COMPRESSED;
            }
        }
        (Direction::Read, Stage::AesXts) => {
            if block.flags & META_ENCRYPTED != 0 {
                let xts = xts.ok_or(ExecError::Key)?;
                xts.decrypt(lba, block.bytes_mut())
                    .map_err(|_| ExecError::Decode { block: b })?;
                block.flags &= !META_ENCRYPTED;
                block.dirty = true;
            }
        }
        // A flush has no stage (`Route::new` refuses one with stages).
        (Direction::Flush | Direction::Migrate, _) => return Err(ExecError::BadState { block: b }),
    }
    Ok(())
}

/// Runs `plan`'s steps over `req`'s blocks: buffers `buf_index..buf_index + nr_blocks` of the
/// PMR, with their state in the request's blob (see the module documentation). `obs` hears of
/// every step on every block.
///
/// On an error the request is finished (with [`ExecError::status`]); its buffers and blob are
/// then in no particular state, and nothing outside them was changed. A flush runs nothing.
pub fn run_stages(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    req: &Request,
    plan: &Plan,
    scratch: &mut Scratch,
    obs: &mut impl StageObserver,
) -> Result<RunOutput, ExecError> {
    let route = req.route();
    let dir = route.direction();
    let desc = req.descriptor();
    if matches!(dir, Direction::Flush) {
        return Ok(RunOutput::default());
    }
    let run = plan.run;
    let blob_at = at(layout.req_state(desc.state))?;
    let mut image = [0u8; REQ_STATE_BYTES];
    pmr.read_bytes(blob_at, &mut image)
        .map_err(|_| ExecError::Pmr)?;
    let mut blob = ReqState::from_bytes(&image);

    let Scratch {
        data,
        out,
        lz4: lz4_ws,
        xts: xts_cache,
    } = scratch;
    let xts = match &plan.key {
        Some(key) => Some(xts_cache.get(key).map_err(|_| ExecError::Key)?),
        None => None,
    };
    let mut stats = [StageStats::default(); MAX_STAGES];
    let result = BlockRun {
        pmr,
        layout,
        desc,
        plan,
        dir,
        // A write's first run takes the buffers as raw blocks; every other run inherits the blob.
        fresh: matches!(dir, Direction::Write) && run.start == 0,
        // The side that runs a read's last step hands over the data: nothing may be left undone.
        finishes_read: matches!(dir, Direction::Read) && run.end == route.steps(),
        lz4_ws,
        xts,
        stats: &mut stats,
        obs: &mut *obs,
    }
    .blocks(&mut blob, data, out);
    report_stats(pmr, layout, plan, &stats, obs);
    let bytes = result?;
    pmr.write_bytes(blob_at, &blob.to_bytes())
        .map_err(|_| ExecError::Pmr)?;
    Ok(RunOutput { bytes })
}

/// One run of a plan's steps over a request's blocks: what every block's steps share.
struct BlockRun<'a, P: SharedMem, O: StageObserver> {
    pmr: &'a P,
    layout: &'a PmrLayout,
    desc: SubmissionDescriptor,
    plan: &'a Plan,
    dir: Direction,
    /// The blocks start raw, not from the blob: a write's first run.
    fresh: bool,
    /// The run ends a read: every block must come out whole and untransformed.
    finishes_read: bool,
    lz4_ws: &'a mut lz4::Workspace,
    xts: Option<&'a crate::proto::xts::Xts<super::aes::AesCtx>>,
    /// Per step of the plan, what it did, for [`report_stats`].
    stats: &'a mut [StageStats; MAX_STAGES],
    obs: &'a mut O,
}

impl<P: SharedMem, O: StageObserver> BlockRun<'_, P, O> {
    /// Runs the steps over the request's blocks one by one in the scratch buffers `data` and
    /// `out`, each block's state kept in `blob`. Returns the blocks' live bytes; stops at the
    /// first error, with the statistics counted so far.
    fn blocks(
        &mut self,
        blob: &mut ReqState,
        data: &mut KBox<[u8; BLOCK]>,
        out: &mut KBox<[u8; BLOCK]>,
    ) -> Result<u64, ExecError> {
        let mut bytes = 0;
        for b in 0..self.desc.nr_blocks {
            let i = usize::from(b);
            let (Some(len), Some(crc), Some(flags)) = (
                blob.len.get_mut(i),
                blob.crc.get_mut(i),
                blob.flags.get_mut(i),
            ) else {
                return Err(ExecError::BadState { block: b });
            };
            let mut block = if self.fresh {
                Block {
                    data: &mut *data,
                    out: &mut *out,
                    len: BLOCK_SIZE as u16,
                    crc: 0,
                    flags: 0,
                    dirty: false,
                }
            } else {
                let f = u16::from(*flags);
                if !entry_ok(*len, f) {
                    return Err(ExecError::BadState { block: b });
                }
                Block {
                    data: &mut *data,
                    out: &mut *out,
                    len: *len,
                    crc: *crc,
                    flags: f,
                    dirty: false,
                }
            };
            if !self.plan.run.is_empty() {
                self.transform(&mut block, b)?;
            }
            if self.finishes_read {
                check_undone(b, block.len, block.flags)?;
            }
            *len = block.len;
            *crc = block.crc;
            // `BLOB_FLAGS` fit in the blob's byte (checked by `entry_ok` and the steps).
            *flags = block.flags as u8;
            bytes += u64::from(block.len);
        }
        Ok(bytes)
    }

    /// Runs the steps on block `b`: its bytes loaded from its PMR buffer, and stored back if a
    /// step changed them.
    fn transform(&mut self, block: &mut Block<'_>, b: u8) -> Result<(), ExecError> {
        let buf_at = at(self
            .layout
            .buffer(self.desc.buf_index.wrapping_add(u32::from(b))))?;
        if self.pmr.read_bytes(buf_at, block.bytes_mut()).is_err() {
            return Err(ExecError::Pmr);
        }
        let lba = self.desc.lba.wrapping_add(u64::from(b));
        self.steps(block, b, lba)?;
        if block.dirty && self.pmr.write_bytes(buf_at, block.bytes()).is_err() {
            return Err(ExecError::Pmr);
        }
        Ok(())
    }

    /// Applies the plan's steps in order to block `b` (at LBA `lba`): each counted into its
    /// statistics (a failed one too) and, done, told to the observer.
    fn steps(&mut self, block: &mut Block<'_>, b: u8, lba: u64) -> Result<(), ExecError> {
        for (step, s) in self.plan.steps.iter().zip(self.stats.iter_mut()) {
            let Some(step) = step else {
                continue;
            };
            let bytes_in = usize::from(block.len);
            let t0 = now_ns();
            let r = apply(self.dir, step.stage, block, b, lba, self.lz4_ws, self.xts);
            let host_ns = now_ns().saturating_sub(t0);
            s.invocations += 1;
            s.bytes_in += bytes_in as u64;
            if let Err(e) = r {
                s.errors += 1;
                return Err(e);
            }
            s.bytes_out += u64::from(block.len);
            self.obs.stage_done(step.stage, bytes_in, host_ns);
        }
        Ok(())
    }
}

/// The stages `route` has.
fn has_stage(route: &Route, stage: Stage) -> bool {
    let stages = route.stages();
    (0..stages.len()).any(|i| stages.get(i) == Some(stage))
}

/// The key of the default AES-XTS actor ([`super::default_actor`]), if that slot holds one.
fn default_xts_key(pmr: &impl SharedMem, layout: &PmrLayout) -> Option<[u8; XTS_KEY_SIZE]> {
    let shared = at(layout.actor_shared(super::default_actor(Stage::AesXts))).ok()?;
    let kind = pmr
        .atomic_u32(shared + offset_of!(ActorShared, kind))
        .ok()?
        .load(Ordering::Acquire);
    if kind != Stage::AesXts.actor_kind() {
        return None;
    }
    let mut key = [0u8; XTS_KEY_SIZE];
    pmr.read_bytes(shared + offset_of!(ActorShared, params), &mut key)
        .ok()?;
    Some(key)
}

/// A block just loaded for a read of `route`: its stored bytes in the scratch (see
/// [`Scratch::block`]), `len`, `crc` and `flags` from its metadata. Undoes the transforms the
/// read's pipeline has no stage for, in the scratch: the checksum is verified first (it covers
/// the stored bytes; `EIO` on a mismatch), then the block is decrypted with the default AES-XTS
/// actor's key and decompressed, as needed. Does nothing if the pipeline can undo everything
/// itself. `b` and `lba` are the block's index in the request and its LBA.
#[allow(clippy::too_many_arguments)]
pub fn undo_unrouted(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    route: &Route,
    b: u8,
    lba: u64,
    scratch: &mut Scratch,
    entry: (&mut u16, &mut u32, &mut u16),
    obs: &mut impl StageObserver,
) -> Result<(), ExecError> {
    let (len, crc, flags) = entry;
    let undo_aes = *flags & META_ENCRYPTED != 0 && !has_stage(route, Stage::AesXts);
    let undo_lz4 = *flags & META_COMPRESSED != 0 && !has_stage(route, Stage::Lz4);
    if !undo_aes && !undo_lz4 {
        return Ok(());
    }
    if !entry_ok(*len, *flags) {
        return Err(ExecError::Decode { block: b });
    }
    let Scratch {
        data,
        out,
        lz4: lz4_ws,
        xts: xts_cache,
    } = scratch;
    let xts = if undo_aes {
        let key = default_xts_key(pmr, layout).ok_or(ExecError::Decode { block: b })?;
        Some(xts_cache.get(&key).map_err(|_| ExecError::Key)?)
    } else {
        None
    };
    let mut block = Block {
        data,
        out,
        len: *len,
        crc: *crc,
        flags: *flags,
        dirty: false,
    };
    let mut steps = [None; 3];
    steps[0] = Some(Stage::Crc32c);
    if undo_aes {
        steps[1] = Some(Stage::AesXts);
    }
    if undo_lz4 {
        steps[2] = Some(Stage::Lz4);
    }
    for stage in steps.into_iter().flatten() {
        let bytes_in = usize::from(block.len);
        let t0 = now_ns();
        apply(Direction::Read, stage, &mut block, b, lba, lz4_ws, xts)?;
        obs.stage_done(stage, bytes_in, now_ns().saturating_sub(t0));
    }
    *len = block.len;
    *crc = block.crc;
    *flags = block.flags;
    Ok(())
}
