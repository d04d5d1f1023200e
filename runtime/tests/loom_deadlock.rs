//! Loom model of deadlock detection (see `loom.rs` for how models run).
//!
//! In a binary of its own: detection is switched process-wide, and every
//! model of `loom.rs`, running in parallel in that process, would take the
//! diagnostics' path on each lock and unlock while it is on (and explode
//! their state space).
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use parklot::Lock;

mod common;
use common::model;

/// Deadlock detection against the waits it judges: two threads each hold
/// one lock and ask for the other's. Whatever the interleaving, the graph's
/// edge and the park are ordered so that the second to ask sees the first
/// waiting: never both refused, and never both asleep (loom would report
/// the hang).
#[test]
fn deadlock_detection_refuses_the_wait_that_closes_a_cycle() {
    // Counted across executions (plain atomics, outside the model): the
    // model must reach the cycle, not only the runs where the threads miss
    // each other.
    static REFUSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    model(|| {
        parklot::deadlock::set_enabled(true);
        let a = Arc::new(Lock::new());
        let b = Arc::new(Lock::new());
        let ask = |mine: Arc<Lock>, other: Arc<Lock>| {
            thread::spawn(move || {
                mine.lock();
                let refused = other.lock_or_deadlock().is_err();
                if !refused {
                    other.unlock();
                }
                mine.unlock();
                refused
            })
        };
        let t1 = ask(a.clone(), b.clone());
        let t2 = ask(b, a);
        let (r1, r2) = (t1.join().unwrap(), t2.join().unwrap());
        assert!(!(r1 && r2), "both refused: one of them was not in a cycle");
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if r1 || r2 {
            REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let refused = REFUSED.load(std::sync::atomic::Ordering::Relaxed);
    let runs = RUNS.load(std::sync::atomic::Ordering::Relaxed);
    println!("{refused} of {runs} executions closed the cycle");
    assert!(refused > 0 && refused < runs);
}
