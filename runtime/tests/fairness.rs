//! Eventual fairness (DESIGN.md: "a waiter is handed the lock directly at
//! least about once a millisecond per bucket, so nobody starves"), checked so
//! that it fails for a lock without it. In a file of its own, so that no other
//! test's threads share the CPU it pins its threads to.
#![cfg(all(target_os = "linux", not(loom)))]

use parklot::toy_locks::{CascadeLock, PauseSpinLock, RawLock, ThunderLock, YieldSpinLock};
use parklot::Lock;
use std::thread;
use std::time::Duration;

mod common;
use common::{Contested, NEGATIVE_ROUNDS, STARVED};

/// Eventual fairness, checked so that a lock without it fails. Two threads
/// share one CPU: one holds `L` almost all the time (a short critical
/// section, then unlock and lock again at once), the other asks for it once.
/// The asker runs only when the holder is preempted or blocks, and then
/// almost always finds the lock held: a lock that lets the releasing thread
/// barge starves it, while one that hands itself to a parked waiter about
/// once a millisecond lets it in soon.
///
/// The asker is SCHED_BATCH, so that the scheduler does not run it the moment
/// an unlock wakes it. Otherwise a lock that wakes a parked thread on every
/// contended unlock (CascadeLock, ThunderLock) passes without any fairness of
/// its own: on one CPU the woken thread preempts the holder while the lock is
/// still free (measured: in within 3 ms and 59 ms). Fairness must come from
/// the lock, not from the scheduler's favour to a thread that just woke. With
/// Lock's fairness timer ignored in its unlock, Lock starves too (checked by
/// hand: round 0 waited the whole limit).
///
/// Returns the longest of `rounds` waits, or `Err` for the first that passed
/// `limit`.
fn starvation_check<L: RawLock>(rounds: usize, limit: Duration) -> Result<Duration, String> {
    common::starvation_check(&Exclusive(L::new()), rounds, limit).map_err(|round| {
        format!(
            "{}: round {round}: the asking thread waited over {limit:?} and never got the lock",
            L::NAME
        )
    })
}

/// `L`, held and asked for alike.
struct Exclusive<L>(L);

impl<L: RawLock> Contested for Exclusive<L> {
    fn hold(&self) {
        self.0.lock();
    }
    fn let_go(&self) {
        // SAFETY (test): called only on the holder's thread, after `hold`.
        unsafe { self.0.unlock() };
    }
    fn ask(&self) {
        self.0.lock();
    }
    fn leave(&self) {
        // SAFETY (test): called only on the asker's thread, after `ask`.
        unsafe { self.0.unlock() };
    }
    fn settle(&self) {
        thread::sleep(Duration::from_millis(5)); // let it spin and park
    }
}

#[test]
fn nobody_starves_under_contention() {
    // One test, not three: the checks pin their threads to the same CPU and
    // must not run side by side (nor beside the stress tests: a file of its own).
    let longest = starvation_check::<Lock>(20, STARVED).unwrap();
    eprintln!("parklot::Lock: the asking thread got in after at most {longest:?}");
    // The check must be able to fail: locks that wake a parked thread but let
    // the releasing thread barge, and spinlocks, starve the asker.
    for result in [
        starvation_check::<CascadeLock>(NEGATIVE_ROUNDS, STARVED),
        starvation_check::<ThunderLock>(NEGATIVE_ROUNDS, STARVED),
        starvation_check::<YieldSpinLock>(NEGATIVE_ROUNDS, STARVED),
        starvation_check::<PauseSpinLock>(NEGATIVE_ROUNDS, STARVED),
    ] {
        let err = result.expect_err("a lock without fairness passed the starvation check");
        eprintln!("{err}");
    }
}
