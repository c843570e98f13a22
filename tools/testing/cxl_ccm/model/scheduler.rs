// SPDX-License-Identifier: GPL-2.0

//! The near-memory engine's scheduler (AXLE §IV-B: "the CCM scheduler partitions the task such
//! that each µthread processes a fixed-size input vector"; Table III: round-robin).
//!
//! A launched kernel is a *job* split into *chunks* (for STREAM_XFORM, one chunk per result
//! record). The engine's N µthread workers repeatedly ask the scheduler for the next *work item*
//! (one chunk of one job), run it, and report its completion. The scheduler only decides the
//! order; it holds no data and takes no lock (the device calls it under its own lock).
//!
//! - [`Policy::Fifo`] dispatches every chunk of the oldest job before any chunk of a younger one:
//!   jobs complete in launch order as long as work items complete in dispatch order.
//! - [`Policy::RoundRobin`] dispatches one chunk of each job with chunks left, in turn: a short
//!   job launched after a long one completes first, so results come out of order across tags
//!   (the case the paper's OoO streaming exists for).
//!
//! Each dispatched item carries a per-tenant *dispatch sequence number* ([`WorkItem::seq`]),
//! consecutive from the tenant's `index_base`. In-order streaming releases results in that order
//! (it is the key of the DMA executor's reorder buffer): within a job it is chunk order, i.e.
//! `result_offset` order, whatever the policy.
//!
//! # Job lifetime
//!
//! A job occupies one of the `CAP` slots from [`Scheduler::submit`] until its last chunk
//! completes ([`Completion::job_done`]). Completions are counted, not identified: the engine must
//! complete each dispatched item exactly once (workers are the device's own threads, not input).

use core::fmt;

use crate::abi::MAX_TENANTS;

/// The scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// First in, first out: the oldest job's chunks first.
    Fifo,
    /// One chunk per job with chunks left, in turn.
    RoundRobin,
}

/// Identifies a job: the tenant and its launch tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JobId {
    /// The tenant, below [`MAX_TENANTS`].
    pub tenant: u16,
    /// The launch tag.
    pub tag: u32,
}

/// One chunk of one job, handed to a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorkItem {
    /// The job.
    pub job: JobId,
    /// The chunk index, in `0..chunks`.
    pub chunk: u32,
    /// The tenant's dispatch sequence number (the in-order streaming key).
    pub seq: u32,
    /// Whether this is the job's last chunk (`chunk == chunks - 1`): with in-order streaming,
    /// the record that carries `MD_FLAG_FINAL`.
    pub last: bool,
}

/// What a completion did to its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Completion {
    /// Chunks of the job completed so far, this one included.
    pub completed: u32,
    /// Whether this was the job's last outstanding chunk: the job left the scheduler. With
    /// out-of-order streaming, this record carries `MD_FLAG_FINAL`.
    pub job_done: bool,
}

/// Errors of the scheduler. Every error leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedError {
    /// Every job slot is taken.
    Full,
    /// A job of zero chunks (the device completes an empty launch without the engine, with a
    /// sequence number from [`Scheduler::take_seq`]).
    EmptyJob,
    /// A job with this tenant and tag is already queued.
    DuplicateJob,
    /// The tenant is not below [`MAX_TENANTS`].
    BadTenant,
    /// No queued job has this id (it completed, or was cancelled).
    UnknownJob,
    /// The job has no dispatched chunk left to complete.
    NothingOutstanding,
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::Full => "job queue is full",
            Self::EmptyJob => "job has no chunk",
            Self::DuplicateJob => "job is already queued",
            Self::BadTenant => "tenant out of range",
            Self::UnknownJob => "no such job",
            Self::NothingOutstanding => "job has no outstanding chunk",
        };
        f.write_str(msg)
    }
}

/// One queued job.
///
/// # Invariants
///
/// `completed <= dispatched <= chunks` and `completed < chunks`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Job {
    id: JobId,
    chunks: u32,
    dispatched: u32,
    completed: u32,
    /// Submission number: strictly increasing along the queue.
    order: u64,
}

impl Job {
    fn has_undispatched(&self) -> bool {
        self.dispatched < self.chunks
    }
}

/// The engine scheduler over at most `CAP` queued jobs.
///
/// # Invariants
///
/// `jobs[..len]` are the queued jobs in submission order (strictly increasing `order`), with
/// pairwise different ids; `len <= CAP`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scheduler<const CAP: usize> {
    policy: Policy,
    jobs: [Job; CAP],
    len: usize,
    next_order: u64,
    /// Round-robin: the `order` of the job picked last.
    cursor: Option<u64>,
    /// Per tenant: the next dispatch sequence number.
    seq: [u32; MAX_TENANTS as usize],
}

impl<const CAP: usize> Scheduler<CAP> {
    /// An empty scheduler. Every tenant's sequence numbers start at 0
    /// ([`Scheduler::reset_tenant`] changes that).
    pub const fn new(policy: Policy) -> Self {
        // INVARIANT: no job queued.
        Self {
            policy,
            jobs: [Job {
                id: JobId { tenant: 0, tag: 0 },
                chunks: 0,
                dispatched: 0,
                completed: 0,
                order: 0,
            }; CAP],
            len: 0,
            next_order: 0,
            cursor: None,
            seq: [0; MAX_TENANTS as usize],
        }
    }

    /// The policy in effect.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Changes the policy; queued jobs are dispatched under the new policy from now on.
    pub fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// Number of queued jobs (with chunks not yet completed).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no job is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The next dispatch sequence number of `tenant`.
    pub fn next_seq(&self, tenant: u16) -> Option<u32> {
        self.seq.get(usize::from(tenant)).copied()
    }

    /// Takes the next dispatch sequence number of `tenant` for a record that does not go through
    /// the engine: the single final record of a launch that has no chunk (an empty input) or
    /// that failed validation (`MD_FLAG_ERROR`). In-order streaming then places it after every
    /// item dispatched before it.
    pub fn take_seq(&mut self, tenant: u16) -> Result<u32, SchedError> {
        let seq = self
            .seq
            .get_mut(usize::from(tenant))
            .ok_or(SchedError::BadTenant)?;
        let taken = *seq;
        *seq = seq.wrapping_add(1);
        Ok(taken)
    }

    /// Drops every job of `tenant` and restarts its sequence numbers at `index_base` (tenant
    /// enable or disable). Returns the number of jobs dropped; completions of their items still
    /// in flight then fail with [`SchedError::UnknownJob`].
    pub fn reset_tenant(&mut self, tenant: u16, index_base: u32) -> Result<usize, SchedError> {
        let seq = self
            .seq
            .get_mut(usize::from(tenant))
            .ok_or(SchedError::BadTenant)?;
        *seq = index_base;
        let mut kept = 0;
        for i in 0..self.len {
            let job = self.jobs[i];
            if job.id.tenant != tenant {
                self.jobs[kept] = job;
                kept += 1;
            }
        }
        let dropped = self.len - kept;
        // INVARIANT: the kept jobs keep their relative order.
        self.len = kept;
        Ok(dropped)
    }

    /// Queues a job of `chunks` chunks.
    pub fn submit(&mut self, id: JobId, chunks: u32) -> Result<(), SchedError> {
        if u32::from(id.tenant) >= MAX_TENANTS {
            return Err(SchedError::BadTenant);
        }
        if chunks == 0 {
            return Err(SchedError::EmptyJob);
        }
        if self.find(id).is_some() {
            return Err(SchedError::DuplicateJob);
        }
        let slot = self.jobs.get_mut(self.len).ok_or(SchedError::Full)?;
        // INVARIANT: appended with the largest `order` so far and an id not yet queued.
        *slot = Job {
            id,
            chunks,
            dispatched: 0,
            completed: 0,
            order: self.next_order,
        };
        self.len += 1;
        self.next_order += 1;
        Ok(())
    }

    /// The index in `jobs` of the job the next dispatch takes a chunk from, without changing
    /// anything.
    fn pick(&self) -> Option<usize> {
        let queued = &self.jobs[..self.len];
        let first = queued.iter().position(Job::has_undispatched);
        match (self.policy, self.cursor) {
            (Policy::Fifo, _) | (Policy::RoundRobin, None) => first,
            (Policy::RoundRobin, Some(last)) => queued
                .iter()
                .position(|j| j.order > last && j.has_undispatched())
                .or(first),
        }
    }

    /// The work item the next [`Scheduler::dispatch`] would return (the pure policy decision).
    pub fn peek(&self) -> Option<WorkItem> {
        let job = self.jobs.get(self.pick()?)?;
        let seq = *self.seq.get(usize::from(job.id.tenant))?;
        Some(WorkItem {
            job: job.id,
            chunk: job.dispatched,
            seq,
            last: job.dispatched + 1 == job.chunks,
        })
    }

    /// Takes the next work item according to the policy, if any chunk is left to dispatch.
    pub fn dispatch(&mut self) -> Option<WorkItem> {
        let item = self.peek()?;
        let i = self.pick()?;
        let job = self.jobs.get_mut(i)?;
        // INVARIANT: `pick` only returns a job with `dispatched < chunks`.
        job.dispatched += 1;
        self.cursor = Some(job.order);
        let seq = self.seq.get_mut(usize::from(item.job.tenant))?;
        *seq = seq.wrapping_add(1);
        Some(item)
    }

    /// Records that a dispatched chunk of `id` completed; the job leaves the scheduler with its
    /// last chunk.
    pub fn complete(&mut self, id: JobId) -> Result<Completion, SchedError> {
        let i = self.find(id).ok_or(SchedError::UnknownJob)?;
        let job = &mut self.jobs[i];
        if job.completed == job.dispatched {
            return Err(SchedError::NothingOutstanding);
        }
        job.completed += 1;
        let completion = Completion {
            completed: job.completed,
            job_done: job.completed == job.chunks,
        };
        if completion.job_done {
            // INVARIANT: removing keeps the order of the others.
            self.jobs.copy_within(i + 1..self.len, i);
            self.len -= 1;
        }
        Ok(completion)
    }

    fn find(&self, id: JobId) -> Option<usize> {
        self.jobs[..self.len].iter().position(|j| j.id == id)
    }
}
