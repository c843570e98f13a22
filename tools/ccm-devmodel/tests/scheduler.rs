//! Unit tests of `scheduler`: FIFO and round-robin dispatch order, completion order across tags,
//! sequence numbers, and errors.

use ccm_devmodel::scheduler::{Completion, JobId, Policy, SchedError, Scheduler, WorkItem};

fn job(tag: u32) -> JobId {
    JobId { tenant: 0, tag }
}

/// Dispatches everything; returns `(tag, chunk)` in dispatch order.
fn drain<const C: usize>(s: &mut Scheduler<C>) -> Vec<(u32, u32)> {
    let mut order = Vec::new();
    while let Some(item) = s.dispatch() {
        order.push((item.job.tag, item.chunk));
    }
    order
}

/// Dispatches everything and completes each item right away (work items complete in dispatch
/// order); returns the tags of the jobs in the order they completed.
fn job_completion_order<const C: usize>(s: &mut Scheduler<C>) -> Vec<u32> {
    let mut done = Vec::new();
    while let Some(item) = s.dispatch() {
        if s.complete(item.job).unwrap().job_done {
            done.push(item.job.tag);
        }
    }
    done
}

#[test]
fn fifo_finishes_a_job_before_the_next() {
    let mut s = Scheduler::<4>::new(Policy::Fifo);
    s.submit(job(10), 3).unwrap();
    s.submit(job(11), 2).unwrap();
    assert_eq!(drain(&mut s), [(10, 0), (10, 1), (10, 2), (11, 0), (11, 1)]);
}

#[test]
fn round_robin_interleaves_jobs() {
    let mut s = Scheduler::<4>::new(Policy::RoundRobin);
    s.submit(job(1), 2).unwrap();
    s.submit(job(2), 3).unwrap();
    s.submit(job(3), 1).unwrap();
    assert_eq!(
        drain(&mut s),
        [(1, 0), (2, 0), (3, 0), (1, 1), (2, 1), (2, 2)]
    );
}

#[test]
fn fifo_completes_in_order_round_robin_out_of_order() {
    let mut fifo = Scheduler::<4>::new(Policy::Fifo);
    let mut rr = Scheduler::<4>::new(Policy::RoundRobin);
    for s in [&mut fifo, &mut rr] {
        s.submit(job(100), 3).unwrap();
        s.submit(job(101), 1).unwrap();
    }
    assert_eq!(job_completion_order(&mut fifo), [100, 101]);
    // RR: 100/0, 101/0 (job 101 done), 100/1, 100/2: the later tag completes first.
    assert_eq!(job_completion_order(&mut rr), [101, 100]);
    assert!(fifo.is_empty() && rr.is_empty());
}

#[test]
fn round_robin_takes_new_jobs_in_turn() {
    let mut s = Scheduler::<4>::new(Policy::RoundRobin);
    s.submit(job(1), 3).unwrap();
    assert_eq!(s.dispatch().map(|i| (i.job.tag, i.chunk)), Some((1, 0)));
    s.submit(job(2), 2).unwrap();
    assert_eq!(drain(&mut s), [(2, 0), (1, 1), (2, 1), (1, 2)]);
}

#[test]
fn work_items_carry_sequence_and_last_flag() {
    let mut s = Scheduler::<4>::new(Policy::RoundRobin);
    s.reset_tenant(0, u32::MAX - 1).unwrap();
    s.reset_tenant(1, 7).unwrap();
    s.submit(job(5), 2).unwrap();
    s.submit(JobId { tenant: 1, tag: 5 }, 2).unwrap();
    let peeked = s.peek();
    let items: Vec<WorkItem> = std::iter::from_fn(|| s.dispatch()).collect();
    assert_eq!(peeked, Some(items[0]));
    let got: Vec<(u16, u32, u32, bool)> = items
        .iter()
        .map(|i| (i.job.tenant, i.chunk, i.seq, i.last))
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, u32::MAX - 1, false),
            (1, 0, 7, false),
            (0, 1, u32::MAX, true),
            (1, 1, 8, true)
        ]
    );
    assert_eq!(s.next_seq(0), Some(0), "wraps");
    assert_eq!(s.next_seq(16), None);
}

#[test]
fn completion_counts_and_removal() {
    let mut s = Scheduler::<2>::new(Policy::Fifo);
    s.submit(job(1), 2).unwrap();
    assert_eq!(s.complete(job(1)), Err(SchedError::NothingOutstanding));
    s.dispatch().unwrap();
    s.dispatch().unwrap();
    assert_eq!(
        s.complete(job(1)),
        Ok(Completion {
            completed: 1,
            job_done: false
        })
    );
    assert_eq!(s.len(), 1);
    assert_eq!(
        s.complete(job(1)),
        Ok(Completion {
            completed: 2,
            job_done: true
        })
    );
    assert!(s.is_empty());
    assert_eq!(s.complete(job(1)), Err(SchedError::UnknownJob));
    assert_eq!(s.dispatch(), None);
}

#[test]
fn submit_errors() {
    let mut s = Scheduler::<2>::new(Policy::Fifo);
    assert_eq!(s.submit(job(1), 0), Err(SchedError::EmptyJob));
    assert_eq!(
        s.submit(JobId { tenant: 16, tag: 1 }, 1),
        Err(SchedError::BadTenant)
    );
    s.submit(job(1), 1).unwrap();
    assert_eq!(s.submit(job(1), 1), Err(SchedError::DuplicateJob));
    s.submit(JobId { tenant: 1, tag: 1 }, 1).unwrap();
    assert_eq!(s.submit(job(2), 1), Err(SchedError::Full));
    assert_eq!(s.len(), 2);
    assert_eq!(s.reset_tenant(16, 0), Err(SchedError::BadTenant));
}

#[test]
fn reset_tenant_drops_only_its_jobs() {
    let mut s = Scheduler::<4>::new(Policy::Fifo);
    s.submit(job(1), 2).unwrap();
    s.submit(JobId { tenant: 3, tag: 1 }, 1).unwrap();
    s.submit(job(2), 1).unwrap();
    assert_eq!(s.reset_tenant(0, 0), Ok(2));
    assert_eq!(s.len(), 1);
    assert_eq!(s.complete(job(1)), Err(SchedError::UnknownJob));
    assert_eq!(drain(&mut s), [(1, 0)]);
}

#[test]
fn policy_can_change_between_dispatches() {
    let mut s = Scheduler::<4>::new(Policy::Fifo);
    assert_eq!(s.policy(), Policy::Fifo);
    s.submit(job(1), 3).unwrap();
    s.submit(job(2), 3).unwrap();
    s.dispatch().unwrap();
    s.set_policy(Policy::RoundRobin);
    assert_eq!(drain(&mut s), [(2, 0), (1, 1), (2, 1), (1, 2), (2, 2)]);
}

#[test]
fn records_outside_the_engine_take_a_sequence_number() {
    let mut s = Scheduler::<4>::new(Policy::Fifo);
    s.reset_tenant(2, u32::MAX).unwrap();
    s.submit(JobId { tenant: 2, tag: 1 }, 1).unwrap();
    assert_eq!(s.dispatch().map(|i| i.seq), Some(u32::MAX));
    assert_eq!(s.take_seq(2), Ok(0));
    s.submit(JobId { tenant: 2, tag: 3 }, 1).unwrap();
    assert_eq!(s.dispatch().map(|i| i.seq), Some(1));
    assert_eq!(s.take_seq(16), Err(SchedError::BadTenant));
}
