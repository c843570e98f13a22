// SPDX-License-Identifier: GPL-2.0

//! The near-memory engine's µthreads: N worker threads that compute chunks (AXLE §IV-B, "the
//! CCM scheduler partitions the task such that each µthread processes a fixed-size input
//! vector").
//!
//! The device's engine thread dispatches work items from each tenant's scheduler into a shared
//! queue of [`Ticket`]s; a worker takes one, runs the kernel over device memory (input to
//! output) and queues a [`Done`] with the chunk's checksum; the engine collects completions and
//! hands them to the tenant's DMA executor. Workers finish in any order, which is one source of
//! out-of-order results (round-robin scheduling is the other).
//!
//! A ticket carries its tenant's *generation*: a tenant disabled while its chunks are computed
//! is gone when they complete, and a later tenant in the same slot has another generation, so
//! stale completions are dropped rather than streamed into the wrong rings.

use kernel::{
    kthread::{self, KThread},
    memremap::MemRemap,
    new_condvar, new_mutex,
    prelude::*,
    shared_mem::SharedMem,
    sync::{Arc, CondVar, Mutex},
};

use crate::abi;
use crate::abi::SLS_MAX_DIM;
use crate::model::attention::{Attention, RowBuffers, OUT_BYTES};
use crate::model::graph::{Graph, Pass, SUM_BYTES};
use crate::model::kernel::Kernel;
use crate::model::knn::{distance_piece, Knn, DISTANCE_BYTES};
use crate::model::scheduler::WorkItem;
use crate::model::sls::{add_piece, Sls, WORD_BYTES};
use crate::model::ssb::{Ssb, PARTIAL_BYTES, ROW_BYTES};
use crate::model::xform::{Xform, CRC_START};

/// Bytes a worker moves per step: the kernel streams a chunk through a buffer on its stack.
const PIECE: usize = 256;
/// Tickets a worker takes per lock round trip (fewer if fewer are queued).
const GRAB: usize = 8;

/// One chunk to compute.
#[derive(Clone, Copy)]
pub(crate) struct Ticket {
    pub(crate) tenant: u32,
    pub(crate) generation: u64,
    pub(crate) item: WorkItem,
    pub(crate) kernel: Kernel,
    /// Device-memory offsets of the launch's input and of this chunk's output.
    pub(crate) input_base: u64,
    pub(crate) output: u64,
    /// Byte offset of the chunk in the launch's output.
    pub(crate) offset: u32,
    pub(crate) length: u32,
    /// When the modelled CCM would have finished the chunk ([`crate::ccm_clock`]), ns: its
    /// result does not leave the device before. `None` if the device does not model its compute.
    pub(crate) ready_ns: Option<u64>,
}

/// A computed chunk: its CRC32C, or the status it failed with.
#[derive(Clone, Copy)]
pub(crate) struct Done {
    pub(crate) ticket: Ticket,
    pub(crate) result: core::result::Result<u32, u16>,
    /// When the µthread finished it, ns.
    pub(crate) finished_ns: u64,
}

/// A bounded FIFO on the heap.
///
/// # Invariants
///
/// `slots[(head + i) % slots.len()]` is `Some` exactly for `i < len`.
struct Fifo<T> {
    slots: KVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T: Copy> Fifo<T> {
    fn new(capacity: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(capacity, GFP_KERNEL)?;
        for _ in 0..capacity {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    fn push(&mut self, v: T) -> core::result::Result<(), T> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(v);
        }
        let at = (self.head + self.len) % cap;
        match self.slots.get_mut(at) {
            Some(slot) => {
                *slot = Some(v);
                self.len += 1;
                Ok(())
            }
            None => Err(v),
        }
    }

    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.slots.get_mut(self.head).and_then(Option::take);
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        v
    }
}

struct Queues {
    todo: Fifo<Ticket>,
    done: Fifo<Done>,
}

/// The work queues shared by the engine and the workers.
#[pin_data]
pub(crate) struct Pool {
    #[pin]
    queues: Mutex<Queues>,
    #[pin]
    work: CondVar,
    mem: Arc<MemRemap>,
    /// No workers: the engine computes each batch itself when it kicks ([`Pool::kick`]).
    inline: bool,
}

impl Pool {
    /// A pool for `capacity` tickets in flight over device memory `mem`; `inline`: no workers
    /// serve it, the engine computes on its own thread.
    pub(crate) fn new(capacity: usize, mem: Arc<MemRemap>, inline: bool) -> Result<Arc<Self>> {
        let queues = Queues {
            todo: Fifo::new(capacity)?,
            done: Fifo::new(capacity)?,
        };
        Arc::pin_init(
            pin_init!(Pool {
                queues <- new_mutex!(queues),
                work <- new_condvar!(),
                mem,
                inline,
            }),
            GFP_KERNEL,
        )
    }

    /// Queues a ticket; gives it back if the queue is full (the engine bounds what it has in
    /// flight, so this means a bookkeeping bug). Workers see it after [`Pool::kick`].
    pub(crate) fn submit(&self, t: Ticket) -> core::result::Result<(), Ticket> {
        self.queues.lock().todo.push(t)
    }

    /// Wakes the workers for the tickets submitted since the last kick: one wake-up per batch
    /// rather than per ticket. Without workers, computes them here instead: when the device
    /// model has a single CPU (bench mode), workers on that CPU would only add a context switch
    /// per batch each way, which under emulation costs more than a small chunk's compute.
    pub(crate) fn kick(&self) {
        if self.inline {
            self.compute_queued();
        } else {
            self.work.notify_all();
        }
    }

    /// Computes every queued ticket on the calling thread (the engine's, in inline mode).
    fn compute_queued(&self) {
        loop {
            let Some(ticket) = self.queues.lock().todo.pop() else {
                return;
            };
            let done = self.run(&ticket);
            // Cannot be full: `done` has room for every ticket in flight.
            let _ = self.queues.lock().done.push(done);
        }
    }

    /// Computes one ticket.
    fn run(&self, ticket: &Ticket) -> Done {
        Done {
            ticket: *ticket,
            result: compute(&self.mem, ticket),
            finished_ns: crate::pacer::now_ns(),
        }
    }

    /// Takes the next completion.
    pub(crate) fn collect(&self) -> Option<Done> {
        self.queues.lock().done.pop()
    }

    /// A worker's loop: compute tickets, a few per lock round trip, until asked to stop.
    fn serve(&self) -> i32 {
        let mut batch = [None; GRAB];
        loop {
            {
                let mut q = self.queues.lock();
                loop {
                    if kthread::should_stop() {
                        return 0;
                    }
                    if q.todo.len > 0 {
                        break;
                    }
                    // `kthread_stop` wakes the thread; the timeout only bounds a lost wake-up.
                    let _ = self.work.wait_interruptible_timeout(&mut q, 100);
                }
                for slot in batch.iter_mut() {
                    *slot = q.todo.pop();
                }
            }
            let mut out = [None; GRAB];
            for (t, o) in batch.iter().zip(out.iter_mut()) {
                if let Some(ticket) = t {
                    *o = Some(self.run(ticket));
                    // The µthreads compute on the host's CPUs, whose kernel may not preempt
                    // (PREEMPT_NONE): a worker that always finds work would otherwise hold its
                    // CPU for as long as its queue lasts, and a host task (one killed in a
                    // wait, say) would not run until then.
                    kthread::cond_resched();
                }
            }
            // Device memory is write-combining: the outputs leave this CPU's buffers before the
            // engine, on another CPU, announces them (an unlock is a plain store on x86).
            kernel::barrier::wmb();
            let mut q = self.queues.lock();
            // Cannot be full: `done` has room for every ticket in flight.
            for d in out.into_iter().flatten() {
                let _ = q.done.push(d);
            }
        }
    }
}

/// Runs the kernel over one chunk: input to output in device memory, piece by piece; returns
/// the CRC32C of the chunk's output.
fn compute(mem: &MemRemap, t: &Ticket) -> core::result::Result<u32, u16> {
    match t.kernel {
        Kernel::Xform(x) => compute_xform(mem, t, &x),
        Kernel::Knn(k) => compute_knn(mem, t, &k),
        Kernel::Ssb(q) => compute_ssb(mem, t, &q),
        Kernel::Sls(l) => compute_sls(mem, t, &l),
        Kernel::Graph(g) => compute_graph(mem, t, &g),
        Kernel::Attention(a) => compute_attention(mem, t, &a),
    }
}

// SAFETY: `RowBuffers` holds only integer arrays, for which all-zero bytes are a valid value.
unsafe impl kernel::init::Zeroable for RowBuffers {}

/// One block of query rows of one head: every row attends to its keys, read a vector at a time.
fn compute_attention(mem: &MemRemap, t: &Ticket, a: &Attention) -> core::result::Result<u32, u16> {
    // 4 KiB of working storage: on the heap, not on a kernel thread's stack.
    let mut buf = KBox::init(kernel::init::zeroed::<RowBuffers>(), GFP_KERNEL)
        .map_err(|_| abi::STATUS_ABORTED)?;
    let (head, first, n) = a.rows_of(t.item.chunk).ok_or(abi::STATUS_BAD_ARGS)?;
    let base = t.input_base as usize;
    let mut read = |at: u64, b: &mut [u8]| mem.read_bytes(base + at as usize, b);
    let dim = a.head_dim() as usize;
    let mut crc = CRC_START;
    for i in 0..n {
        a.attend_row(head, first + i, &mut read, &mut buf)
            .map_err(|_| abi::STATUS_BAD_RANGE)?;
        let out = t.output as usize + i as usize * dim * OUT_BYTES as usize;
        for (k, v) in buf.out[..dim].iter().enumerate() {
            let b = v.to_le_bytes();
            crc = abi::crc32c_update(crc, &b);
            mem.write_bytes(out + k * OUT_BYTES as usize, &b)
                .map_err(|_| abi::STATUS_BAD_RANGE)?;
        }
    }
    Ok(!crc)
}

/// Per vertex: its in-edges folded (PageRank: summed; SSSP: relaxed), sources (and weights)
/// read a piece at a time.
fn compute_graph(mem: &MemRemap, t: &Ticket, p: &Graph) -> core::result::Result<u32, u16> {
    const SOURCES_PER_PIECE: usize = PIECE / 4;
    let mut buf = [0u8; PIECE];
    let mut wbuf = [0u8; PIECE];
    let weighted = p.pass() == Pass::MinPlusWeight;
    let mut crc = CRC_START;
    let first = t.offset / SUM_BYTES;
    let n = t.length / SUM_BYTES;
    let base = t.input_base as usize;
    let fail = |_| abi::STATUS_BAD_RANGE;
    let word = |at: u64| -> core::result::Result<[u8; 8], u16> {
        let mut b = [0u8; 8];
        mem.read_bytes(base + at as usize, &mut b).map_err(fail)?;
        Ok(b)
    };
    for i in 0..n {
        let v = first + i;
        let lo = word(p.offset_at(v))?;
        let (start, end) = (
            u32::from_le_bytes([lo[0], lo[1], lo[2], lo[3]]),
            u32::from_le_bytes([lo[4], lo[5], lo[6], lo[7]]),
        );
        let edges = p.edge_range(start, end);
        let mut sum = p.identity();
        let mut e = edges.start;
        while e < edges.end {
            let k = ((edges.end - e) as usize).min(SOURCES_PER_PIECE);
            let piece = &mut buf[..k * 4];
            mem.read_bytes(base + p.source_at(e) as usize, piece)
                .map_err(fail)?;
            let weights = &mut wbuf[..k * 4];
            if weighted {
                mem.read_bytes(base + p.weight_at(e) as usize, weights)
                    .map_err(fail)?;
            }
            for (src, w) in piece.chunks_exact(4).zip(weights.chunks_exact(4)) {
                let s = u32::from_le_bytes([src[0], src[1], src[2], src[3]]);
                let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let value = u64::from_le_bytes(word(p.value_at(s))?);
                sum = p.fold(sum, value, w);
            }
            e += k as u32;
        }
        let out = sum.to_le_bytes();
        crc = abi::crc32c_update(crc, &out);
        mem.write_bytes(t.output as usize + (i * SUM_BYTES) as usize, &out)
            .map_err(fail)?;
    }
    Ok(!crc)
}

/// Per sample: gather its rows by index (modulo the table) and sum them element-wise.
fn compute_sls(mem: &MemRemap, t: &Ticket, l: &Sls) -> core::result::Result<u32, u16> {
    let mut acc = [0i32; SLS_MAX_DIM as usize];
    let mut buf = [0u8; PIECE];
    let mut crc = CRC_START;
    let vector = (l.dim() * WORD_BYTES) as usize;
    let first = t.offset / (l.dim() * WORD_BYTES);
    let n = t.length / (l.dim() * WORD_BYTES);
    let base = t.input_base as usize;
    let fail = |_| abi::STATUS_BAD_RANGE;
    let acc = acc
        .get_mut(..l.dim() as usize)
        .ok_or(abi::STATUS_BAD_ARGS)?;
    for s in 0..n {
        acc.fill(0);
        for k in 0..l.pooling() {
            let mut idx = [0u8; WORD_BYTES as usize];
            mem.read_bytes(base + l.index_offset(first + s, k) as usize, &mut idx)
                .map_err(fail)?;
            let row = base + l.row_offset(u32::from_le_bytes(idx)) as usize;
            let mut done = 0usize;
            while done < vector {
                let m = (vector - done).min(PIECE);
                mem.read_bytes(row + done, &mut buf[..m]).map_err(fail)?;
                let at = done / WORD_BYTES as usize;
                add_piece(&mut acc[at..], &buf[..m]);
                done += m;
            }
        }
        let out = t.output as usize + s as usize * vector;
        for (i, v) in acc.iter().enumerate() {
            let b = v.to_le_bytes();
            crc = abi::crc32c_update(crc, &b);
            mem.write_bytes(out + i * WORD_BYTES as usize, &b)
                .map_err(fail)?;
        }
    }
    Ok(!crc)
}

/// The chunk's rows through the filter, into one partial (revenue, matches).
fn compute_ssb(mem: &MemRemap, t: &Ticket, q: &Ssb) -> core::result::Result<u32, u16> {
    const ROWS_PER_PIECE: usize = PIECE / ROW_BYTES as usize;
    let mut buf = [0u8; PIECE];
    let (first, n) = q.rows_of(t.offset / PARTIAL_BYTES);
    let fail = |_| abi::STATUS_BAD_RANGE;
    let mut partial = (0u64, 0u64);
    let mut done = 0usize;
    while done < n as usize {
        let k = (n as usize - done).min(ROWS_PER_PIECE);
        let at = t.input_base as usize + (first as usize + done) * ROW_BYTES as usize;
        let piece = &mut buf[..k * ROW_BYTES as usize];
        mem.read_bytes(at, piece).map_err(fail)?;
        for row in piece.chunks_exact(ROW_BYTES as usize) {
            partial = q.accumulate(row, partial);
        }
        done += k;
    }
    let mut out = [0u8; PARTIAL_BYTES as usize];
    out[..8].copy_from_slice(&partial.0.to_le_bytes());
    out[8..].copy_from_slice(&partial.1.to_le_bytes());
    mem.write_bytes(t.output as usize, &out).map_err(fail)?;
    Ok(abi::crc32c(&out))
}

fn compute_xform(mem: &MemRemap, t: &Ticket, x: &Xform) -> core::result::Result<u32, u16> {
    let mut input = [0u8; PIECE];
    let mut output = [0u8; PIECE];
    let mut crc = CRC_START;
    let mut done = 0usize;
    let len = t.length as usize;
    let src = (t.input_base + u64::from(t.offset)) as usize;
    let dst = t.output as usize;
    while done < len {
        let n = (len - done).min(PIECE);
        mem.read_bytes(src + done, &mut input[..n])
            .map_err(|_| abi::STATUS_BAD_RANGE)?;
        crc = x
            .apply_piece(&input[..n], &mut output[..n], crc)
            .map_err(|e| e.status())?;
        mem.write_bytes(dst + done, &output[..n])
            .map_err(|_| abi::STATUS_BAD_RANGE)?;
        done += n;
    }
    Ok(!crc)
}

/// One distance per row of the chunk: the query and the row streamed through two buffers.
fn compute_knn(mem: &MemRemap, t: &Ticket, k: &Knn) -> core::result::Result<u32, u16> {
    let mut query = [0u8; PIECE];
    let mut row = [0u8; PIECE];
    let mut crc = CRC_START;
    let first = t.offset / DISTANCE_BYTES;
    let rows = t.length / DISTANCE_BYTES;
    let vec_bytes = k.row_offset(0) as usize;
    let fail = |_| abi::STATUS_BAD_RANGE;
    for i in 0..rows {
        let at = (t.input_base + k.row_offset(first + i)) as usize;
        let q = t.input_base as usize;
        let mut acc = 0u64;
        let mut done = 0usize;
        while done < vec_bytes {
            let n = (vec_bytes - done).min(PIECE);
            mem.read_bytes(q + done, &mut query[..n]).map_err(fail)?;
            mem.read_bytes(at + done, &mut row[..n]).map_err(fail)?;
            acc = distance_piece(&query[..n], &row[..n], acc);
            done += n;
        }
        let bytes = acc.to_le_bytes();
        crc = abi::crc32c_update(crc, &bytes);
        mem.write_bytes(t.output as usize + (i * DISTANCE_BYTES) as usize, &bytes)
            .map_err(fail)?;
    }
    Ok(!crc)
}

/// The worker threads of one device (none in inline mode); stopping them (drop) waits for each
/// to finish its chunk.
pub(crate) struct UThreads {
    _threads: KVec<KThread>,
}

impl UThreads {
    /// Starts `n` workers on `pool`.
    pub(crate) fn start(n: u32, device: u32, pool: &Arc<Pool>) -> Result<Self> {
        let mut threads = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for i in 0..n {
            let p = pool.clone();
            let t = KThread::spawn(kernel::fmt!("cxl_ccm.{device}/u{i}"), move || p.serve())?;
            threads.push(t, GFP_KERNEL)?;
        }
        Ok(Self { _threads: threads })
    }
}
