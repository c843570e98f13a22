// SPDX-License-Identifier: GPL-2.0

//! The bandwidth workers: each thread reads and writes blocks of its own part of the buffer,
//! sequentially or at random, in the requested mix, optionally paced by a token bucket.
//!
//! Reads are summed into a checksum that is returned (so they cannot be optimized away); writes
//! store a per-operation value into every word of the block through a pointer the compiler must
//! assume escapes, so they reach memory. Time is read once per batch of operations (64 KiB or
//! one block), and [`accounting_cost`] measures what that bookkeeping costs per operation.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::bucket::TokenBucket;
use crate::mix::Mix;
use crate::numa::NodeBuffer;

/// What the workers do.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// Bytes per operation.
    pub block: u64,
    /// Random block order instead of sequential.
    pub random: bool,
    /// Reads in percent.
    pub read_percent: u32,
    /// Worker threads.
    pub threads: u32,
    /// How long to run.
    pub duration: Duration,
    /// Total bandwidth cap in bytes per second, shared equally by the threads.
    pub rate: Option<u64>,
}

/// What they did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Operations (blocks).
    pub ops: u64,
    /// The longest thread's running time.
    pub elapsed_ns: u64,
    /// The sum of every word read.
    pub checksum: u64,
}

impl Outcome {
    /// Bytes per second, reads and writes together.
    pub fn bandwidth(&self) -> f64 {
        (self.read_bytes + self.write_bytes) as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
}

/// A thread's random block choice (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n.max(1)
    }
}

/// Operations between two reads of the clock.
fn batch(block: u64) -> u64 {
    (65536 / block).max(1)
}

/// Reads every word of the block into `sum`.
///
/// # Safety
///
/// `p` points to `block` readable bytes, 8-byte aligned, that no other thread writes.
unsafe fn read_block(p: *const u8, block: u64, sum: u64) -> u64 {
    // SAFETY: by the caller's contract.
    let words = unsafe { std::slice::from_raw_parts(p.cast::<u64>(), block as usize / 8) };
    words.iter().fold(sum, |s, w| s.wrapping_add(*w))
}

/// Stores `v` into every word of the block.
///
/// # Safety
///
/// `p` points to `block` writable bytes, 8-byte aligned, that no other thread accesses.
unsafe fn write_block(p: *mut u8, block: u64, v: u64) {
    // SAFETY: by the caller's contract.
    let words = unsafe { std::slice::from_raw_parts_mut(p.cast::<u64>(), block as usize / 8) };
    words.fill(v);
    black_box(p);
}

/// Runs `job` on `buf` until its duration has passed or `stop` is set.
pub fn run(buf: &NodeBuffer, job: &Job, stop: Option<&AtomicBool>) -> Outcome {
    run_counted(buf, job, stop, None)
}

/// As [`run`], and each thread adds 1 to `working` once it has done its first batch: a
/// measurement under this load waits for that, or it could run before the load has started.
pub fn run_counted(
    buf: &NodeBuffer,
    job: &Job,
    stop: Option<&AtomicBool>,
    working: Option<&AtomicUsize>,
) -> Outcome {
    let threads = job.threads.max(1) as usize;
    let part = (buf.len() / threads) as u64 / job.block * job.block;
    let blocks = (part / job.block).max(1);
    let base = buf.as_ptr() as usize;
    let start = Barrier::new(threads);
    let results: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let start = &start;
                s.spawn(move || {
                    let mine = base + i * part as usize;
                    worker(mine, blocks, i as u32, job, start, stop, working)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    results.iter().fold(Outcome::default(), |a, r| Outcome {
        read_bytes: a.read_bytes + r.read_bytes,
        write_bytes: a.write_bytes + r.write_bytes,
        ops: a.ops + r.ops,
        elapsed_ns: a.elapsed_ns.max(r.elapsed_ns),
        checksum: a.checksum.wrapping_add(r.checksum),
    })
}

fn worker(
    base: usize,
    blocks: u64,
    index: u32,
    job: &Job,
    start: &Barrier,
    stop: Option<&AtomicBool>,
    working: Option<&AtomicUsize>,
) -> Outcome {
    let mut mix = Mix::new(job.read_percent, index.wrapping_mul(37));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (u64::from(index) + 1));
    let per_thread_rate = job.rate.map(|r| (r / u64::from(job.threads.max(1))).max(1));
    // A burst of 10 ms of the rate, at least one batch.
    let mut bucket = per_thread_rate
        .and_then(|r| TokenBucket::new(r, (r / 100).max(batch(job.block) * job.block), 0));
    let limit = job.duration.as_nanos() as u64;
    let mut out = Outcome::default();
    let mut next = 0u64;
    let mut sum = 0u64;
    start.wait();
    let t0 = Instant::now();
    let mut now = 0u64;
    while now < limit && !stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
        if let Some(b) = bucket.as_mut() {
            while let Err(wait) = b.take(batch(job.block) * job.block, now) {
                std::thread::sleep(Duration::from_nanos(wait.min(limit.saturating_sub(now))));
                now = t0.elapsed().as_nanos() as u64;
                if now >= limit {
                    break;
                }
            }
        }
        for _ in 0..batch(job.block) {
            let idx = if job.random {
                rng.below(blocks)
            } else {
                let b = next;
                next = (next + 1) % blocks;
                b
            };
            let p = (base + (idx * job.block) as usize) as *mut u8;
            if mix.next_is_read() {
                // SAFETY: block `idx` of this thread's part, inside the buffer; only this thread
                // touches the part; mmap memory is page- (so 8-byte-) aligned and blocks are
                // multiples of 64 bytes.
                sum = unsafe { read_block(p, job.block, sum) };
                out.read_bytes += job.block;
            } else {
                // SAFETY: as above.
                unsafe { write_block(p, job.block, out.ops) };
                out.write_bytes += job.block;
            }
            out.ops += 1;
        }
        if let Some(w) = working.filter(|_| out.ops == batch(job.block)) {
            w.fetch_add(1, Ordering::Relaxed);
        }
        now = t0.elapsed().as_nanos() as u64;
    }
    out.elapsed_ns = now;
    out.checksum = black_box(sum);
    out
}

/// Nanoseconds per operation of everything but the memory access (the mix, the block choice, the
/// clock once per batch), measured on one thread for `for_how_long`.
pub fn accounting_cost(job: &Job, for_how_long: Duration) -> f64 {
    let mut mix = Mix::new(job.read_percent, 0);
    let mut rng = Rng(1);
    let (mut ops, mut acc, mut next) = (0u64, 0u64, 0u64);
    let t0 = Instant::now();
    let limit = for_how_long.as_nanos() as u64;
    let mut now = 0;
    while now < limit {
        for _ in 0..batch(job.block) {
            let idx = if job.random {
                rng.below(1 << 20)
            } else {
                next = (next + 1) % (1 << 20);
                next
            };
            acc = acc.wrapping_add(idx ^ u64::from(mix.next_is_read()));
            ops += 1;
        }
        black_box(acc);
        now = t0.elapsed().as_nanos() as u64;
    }
    now as f64 / ops.max(1) as f64
}
