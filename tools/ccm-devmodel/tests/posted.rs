//! The modelled DMA engine's posted writes: when batches land, and the tail stores held until
//! then.

use ccm_devmodel::dma_plan::SegAddr;
use ccm_devmodel::posted::{land_ns, PostedStore, PostedTails, POSTED_CAPACITY};
use proptest::prelude::*;

fn store(due_ns: u64, value: u32) -> PostedStore {
    PostedStore {
        due_ns,
        dst: SegAddr::default(),
        value,
        ends_batch: value % 2 == 1,
    }
}

#[test]
fn batches_overlap_and_only_the_link_is_shared() {
    // Alone, a batch lands after its latency and its transfer.
    assert_eq!(land_ns(1000, 2000, 100, 0), 3100);
    // Batches issued back to back overlap: the next lands a transfer later, not a latency.
    let mut q = PostedTails::new();
    assert_eq!(q.book(1000, 2000, 100), 3100);
    assert_eq!(q.book(1010, 2000, 100), 3200);
    assert_eq!(q.book(1020, 2000, 100), 3300);
    // A batch issued after the engine went quiet pays its whole latency again.
    assert_eq!(q.book(10_000, 2000, 100), 12_100);
    // Saturates.
    assert_eq!(land_ns(u64::MAX - 1, 5, 5, 0), u64::MAX);
}

#[test]
fn stores_leave_in_order_once_due() {
    let mut q = PostedTails::new();
    assert_eq!(q.next_due(), None);
    q.post(store(100, 1)).unwrap();
    q.post(store(100, 2)).unwrap();
    q.post(store(200, 3)).unwrap();
    assert_eq!(q.next_due(), Some(100));
    assert_eq!(q.pop_due(99), None);
    assert_eq!(q.pop_due(150).map(|s| s.value), Some(1));
    assert_eq!(q.pop_due(150).map(|s| s.value), Some(2));
    assert_eq!(q.pop_due(150), None);
    // A store posted with an earlier time still waits for the one before it.
    q.post(store(50, 4)).unwrap();
    assert_eq!(q.pop_due(60), None);
    assert_eq!(q.pop_due(200).map(|s| s.value), Some(3));
    assert_eq!(q.pop_due(200).map(|s| (s.value, s.due_ns)), Some((4, 200)));
    assert!(q.is_empty());
}

#[test]
fn a_full_queue_gives_the_store_back() {
    let mut q = PostedTails::new();
    for i in 0..POSTED_CAPACITY as u32 {
        q.post(store(u64::from(i), i)).unwrap();
    }
    assert_eq!(q.post(store(1000, 99)), Err(store(1000, 99)));
    assert_eq!(q.pop().map(|s| s.value), Some(0));
    q.post(store(1000, 99)).unwrap();
}

proptest! {
    /// Against a simple queue: every store comes out once, in posting order, never before its
    /// time nor before an earlier store.
    #[test]
    fn matches_a_fifo(ops in prop::collection::vec((any::<bool>(), 0u64..1000), 0..300)) {
        let mut q = PostedTails::new();
        let mut model = std::collections::VecDeque::new();
        let (mut now, mut next) = (0u64, 0u32);
        for (push, dt) in ops {
            now += dt;
            if push {
                let s = store(now + dt, next);
                match q.post(s) {
                    Ok(()) => {
                        let floor = model.back().map_or(0, |b: &PostedStore| b.due_ns);
                        model.push_back(PostedStore { due_ns: s.due_ns.max(floor), ..s });
                        next += 1;
                    }
                    Err(back) => {
                        prop_assert_eq!(back, s);
                        prop_assert_eq!(model.len(), POSTED_CAPACITY);
                    }
                }
            } else {
                let got = q.pop_due(now);
                let want = model.front().filter(|s| s.due_ns <= now).copied();
                if want.is_some() {
                    model.pop_front();
                }
                prop_assert_eq!(got, want);
            }
            prop_assert_eq!(q.next_due(), model.front().map(|s| s.due_ns));
        }
    }
}
