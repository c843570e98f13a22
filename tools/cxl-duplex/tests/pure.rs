// SPDX-License-Identifier: GPL-2.0

//! The pure parts of cxl-duplex: token bucket, read/write mix, sweep planner, parsers.

use cxl_duplex::bucket::TokenBucket;
use cxl_duplex::mix::Mix;
use cxl_duplex::plan::{parse_list, parse_node_list, parse_size, sweep, PlanError, Point};

/// Runs a greedy consumer of `block`-byte operations for one simulated second, sleeping exactly
/// as the bucket says; returns the bytes taken.
fn consume_one_second(rate: u64, block: u64) -> u64 {
    let burst = (rate / 100).max(block);
    let mut b = TokenBucket::new(rate, burst, 0).unwrap();
    let (mut now, mut taken) = (0u64, 0u64);
    while now < 1_000_000_000 {
        match b.take(block, now) {
            Ok(()) => taken += block,
            Err(wait) => now += wait,
        }
    }
    taken
}

#[test]
fn bucket_rate_within_two_percent_over_a_second() {
    // Up to about a million operations per case (the test runs unoptimized).
    for (rate, block) in [
        (1 << 20, 64),
        (10_000_000, 64),
        (10_000_000, 4096),
        (1 << 30, 4096),
        (3_333_333_333, 1 << 20),
        (1 << 20, 1 << 20),
    ] {
        {
            let taken = consume_one_second(rate, block) as f64;
            // The initial burst is extra by design: at most 1 % of the rate, or one block.
            let err = (taken - rate as f64).abs() / rate as f64;
            assert!(
                err <= 0.02 || taken - (rate as f64) <= block as f64,
                "rate {rate} block {block}: took {taken} ({:.2} %)",
                err * 100.0
            );
        }
    }
}

#[test]
fn bucket_paces_and_refuses_nonsense() {
    assert!(TokenBucket::new(0, 10, 0).is_none());
    assert!(TokenBucket::new(10, 0, 0).is_none());
    let mut b = TokenBucket::new(1000, 100, 0).unwrap();
    assert_eq!(b.take(100, 0), Ok(()));
    // Empty: 50 bytes need 50 ms at 1000 B/s.
    assert_eq!(b.take(50, 0), Err(50_000_000));
    assert_eq!(b.take(50, 50_000_000), Ok(()));
    // A request above the burst waits for a full bucket, then empties it.
    let mut b = TokenBucket::new(1000, 100, 0).unwrap();
    assert_eq!(b.take(100, 0), Ok(()));
    assert!(b.take(500, 10).is_err());
    assert_eq!(b.take(500, 100_000_000), Ok(()));
    assert!(b.take(1, 100_000_000).is_err());
    // Time going backwards adds nothing.
    let mut b = TokenBucket::new(1000, 100, 1_000_000_000).unwrap();
    assert_eq!(b.take(100, 0), Ok(()));
    assert!(b.take(1, 0).is_err());
}

#[test]
fn mix_is_exact_and_interleaved() {
    for percent in 0..=100 {
        for phase in [0, 37, 99, 12345] {
            let mut m = Mix::new(percent, phase);
            let ops: Vec<bool> = (0..1000).map(|_| m.next_is_read()).collect();
            let reads = ops.iter().filter(|r| **r).count() as u32;
            assert!(
                reads.abs_diff(percent * 10) <= 1,
                "{percent} % phase {phase}: {reads}"
            );
            // No run of reads longer than needed: at 50 % they alternate.
            if percent == 50 {
                assert!(ops.windows(2).all(|w| w[0] != w[1]));
            }
        }
    }
    // Out of range counts as all reads.
    let mut m = Mix::new(250, 0);
    assert!((0..10).all(|_| m.next_is_read()));
}

#[test]
fn sweeps_are_planned_and_checked() {
    let p = sweep(&[0, 50, 100], &[1, 4], 4096, 1 << 20).unwrap();
    assert_eq!(p.len(), 6);
    assert_eq!(
        p[0],
        Point {
            read_percent: 0,
            threads: 1
        }
    );
    assert_eq!(
        p[5],
        Point {
            read_percent: 100,
            threads: 4
        }
    );
    assert_eq!(sweep(&[101], &[1], 64, 64), Err(PlanError::BadRatio(101)));
    assert_eq!(sweep(&[50], &[0], 64, 64), Err(PlanError::BadThreads(0)));
    assert_eq!(
        sweep(&[50], &[513], 64, 1 << 30),
        Err(PlanError::BadThreads(513))
    );
    assert_eq!(
        sweep(&[50], &[1], 96, 1 << 20),
        Err(PlanError::BadBlock(96))
    );
    assert_eq!(
        sweep(&[50], &[1], 32, 1 << 20),
        Err(PlanError::BadBlock(32))
    );
    assert_eq!(
        sweep(&[50], &[1], 2 << 20, 1 << 30),
        Err(PlanError::BadBlock(2 << 20))
    );
    assert_eq!(
        sweep(&[50], &[8], 1 << 20, 4 << 20),
        Err(PlanError::BufferTooSmall {
            buffer: 4 << 20,
            needed: 8 << 20
        })
    );
    assert_eq!(sweep(&[], &[1], 64, 64), Err(PlanError::Empty));
}

#[test]
fn parsers() {
    assert_eq!(parse_list("0-100:25"), Some(vec![0, 25, 50, 75, 100]));
    assert_eq!(parse_list("1,2,8"), Some(vec![1, 2, 8]));
    assert_eq!(parse_list("0-10:3,50"), Some(vec![0, 3, 6, 9, 50]));
    assert_eq!(parse_list("5-1:1"), None);
    assert_eq!(parse_list("0-10:0"), None);
    assert_eq!(parse_list("x"), None);
    assert_eq!(parse_list(""), None);
    assert_eq!(parse_size("4K"), Some(4096));
    assert_eq!(parse_size("256M"), Some(256 << 20));
    assert_eq!(parse_size("1g"), Some(1 << 30));
    assert_eq!(parse_size("64"), Some(64));
    assert_eq!(parse_size("99999999999G"), None);
    assert_eq!(parse_size("M"), None);
    assert_eq!(parse_node_list("0-1"), Some(vec![0, 1]));
    assert_eq!(parse_node_list("0,2-3"), Some(vec![0, 2, 3]));
    assert_eq!(parse_node_list(""), Some(vec![]));
    assert_eq!(parse_node_list("a"), None);
}
