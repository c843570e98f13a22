// SPDX-License-Identifier: GPL-2.0

//! Load-to-use latency of a node's memory by pointer chasing: every cache line of the buffer
//! holds the offset of the next, in one random cycle through all of them (Sattolo's algorithm),
//! so each load depends on the previous one and neither the prefetchers nor out-of-order
//! execution can hide it. Idle: the chase alone. Loaded: the chase while bandwidth workers run on
//! a second buffer on the same node.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::numa::NodeBuffer;
use crate::workers::{self, Job, Outcome};

/// Bytes per chased element: one cache line.
pub const LINE: usize = 64;

/// Links the buffer's lines into one random cycle.
pub fn build_chain(buf: &NodeBuffer, seed: u64) {
    let lines = buf.len() / LINE;
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x = seed | 1;
    // Sattolo: a uniformly random cyclic permutation (one cycle through every line).
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        order.swap(i, j);
    }
    let base = buf.as_ptr();
    for w in 0..lines {
        let (from, to) = (order[w], order[(w + 1) % lines]);
        // SAFETY: both line indices are below `lines`, so inside the buffer; 8-byte aligned.
        unsafe {
            base.add(from * LINE)
                .cast::<u64>()
                .write((to * LINE) as u64)
        };
    }
}

/// Loads between two reads of the clock: a fraction of a millisecond at any latency, so a
/// chase stops close to its deadline, and the clock's cost is negligible beside them.
const BATCH: u64 = 1024;

/// What a chase measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Chase {
    /// Nanoseconds per dependent load.
    pub ns_per_load: f64,
    /// Dependent loads made.
    pub loads: u64,
    /// Nanoseconds they took.
    pub elapsed_ns: u64,
}

/// Follows the chain from `off` in batches of [`BATCH`] until `limit` has passed or `max_loads`
/// are made (whole batches, at least one); returns where it stopped and what it measured.
fn follow(buf: &NodeBuffer, mut off: u64, limit: Duration, max_loads: u64) -> (u64, Chase) {
    let base = buf.as_ptr();
    let step = |off: u64| -> u64 {
        // SAFETY: every line holds the offset of a line of the buffer (build_chain), so `off`
        // is always inside it and 8-byte aligned.
        unsafe { base.add(off as usize).cast::<u64>().read_volatile() }
    };
    let mut loads = 0u64;
    let t0 = Instant::now();
    loop {
        for _ in 0..BATCH {
            off = step(off);
        }
        loads += BATCH;
        if t0.elapsed() >= limit || loads >= max_loads {
            break;
        }
    }
    let elapsed_ns = t0.elapsed().as_nanos() as u64;
    let ns_per_load = elapsed_ns as f64 / loads as f64;
    let chase = Chase {
        ns_per_load,
        loads,
        elapsed_ns,
    };
    (black_box(off), chase)
}

/// The dependent-load latency measured for `duration` (--duration-ms, "per measurement"), after
/// a warm-up lap of the chain bounded to a tenth of that, so that neither the measurement nor
/// the warm-up grows with the buffer.
pub fn chase(buf: &NodeBuffer, duration: Duration) -> Chase {
    let lines = (buf.len() / LINE) as u64;
    let (off, _) = follow(buf, 0, duration / 10, lines);
    follow(buf, off, duration, u64::MAX).1
}

/// The chase while `job` runs on `load`: the latency, and what the load achieved meanwhile.
/// The chase lasts `job.duration`; the workers run from a little before it until it ends.
pub fn loaded(chain: &NodeBuffer, load: &NodeBuffer, job: &Job) -> (Chase, Outcome) {
    let (stop, working) = (AtomicBool::new(false), AtomicUsize::new(0));
    let mut long = *job;
    long.duration = Duration::from_secs(3600);
    std::thread::scope(|s| {
        let bg = s.spawn(|| workers::run_counted(load, &long, Some(&stop), Some(&working)));
        wait_until_working(&working, job.threads.max(1) as usize);
        // Let the workers get going before measuring: 20 ms, less for a short measurement, whose
        // length the load's elapsed time must stay close to.
        std::thread::sleep((job.duration / 10).min(Duration::from_millis(20)));
        // No warm-up lap: the idle chase just walked the chain.
        let c = follow(chain, 0, job.duration, u64::MAX).1;
        stop.store(true, Ordering::Relaxed);
        let out = bg.join().unwrap_or_default();
        (c, out)
    })
}

/// Waits until `threads` workers have done work (on a busy machine they may start late, and a
/// short chase would then measure no load at all), for at most a second.
fn wait_until_working(working: &AtomicUsize, threads: usize) {
    let t0 = Instant::now();
    while working.load(Ordering::Relaxed) < threads && t0.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_micros(100));
    }
}
