// SPDX-License-Identifier: GPL-2.0

//! Load-to-use latency of a node's memory by pointer chasing: every cache line of the buffer
//! holds the offset of the next, in one random cycle through all of them (Sattolo's algorithm),
//! so each load depends on the previous one and neither the prefetchers nor out-of-order
//! execution can hide it. Idle: the chase alone. Loaded: the chase while bandwidth workers run on
//! a second buffer on the same node.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Nanoseconds per dependent load over `loads` loads (after one warm-up lap of the chain).
pub fn chase(buf: &NodeBuffer, loads: u64) -> f64 {
    let base = buf.as_ptr();
    let lines = (buf.len() / LINE) as u64;
    let step = |off: u64| -> u64 {
        // SAFETY: every line holds the offset of a line of the buffer (build_chain), so `off`
        // is always inside it and 8-byte aligned.
        unsafe { base.add(off as usize).cast::<u64>().read_volatile() }
    };
    let mut off = 0u64;
    for _ in 0..lines.min(loads) {
        off = step(off);
    }
    let t0 = Instant::now();
    for _ in 0..loads {
        off = step(off);
    }
    let ns = t0.elapsed().as_nanos() as f64;
    black_box(off);
    ns / loads.max(1) as f64
}

/// The chase while `job` runs on `load`: the latency, and what the load achieved meanwhile.
pub fn loaded(chain: &NodeBuffer, loads: u64, load: &NodeBuffer, job: &Job) -> (f64, Outcome) {
    let stop = AtomicBool::new(false);
    let mut long = *job;
    long.duration = Duration::from_secs(3600);
    std::thread::scope(|s| {
        let bg = s.spawn(|| workers::run(load, &long, Some(&stop)));
        // Let the workers get going before measuring.
        std::thread::sleep(Duration::from_millis(20));
        let ns = chase(chain, loads);
        stop.store(true, Ordering::Relaxed);
        let out = bg.join().unwrap_or_default();
        (ns, out)
    })
}
