//! Eventual fairness (DESIGN.md: "a waiter is handed the lock directly at
//! least about once a millisecond per bucket, so nobody starves"), checked so
//! that it fails for a lock without it. In a file of its own, so that no other
//! test's threads share the CPU it pins its threads to.
#![cfg(all(target_os = "linux", not(loom)))]

use parklot::toy_locks::{CascadeLock, PauseSpinLock, RawLock, ThunderLock, YieldSpinLock};
use parklot::{Instant, Lock};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
use common::{never_preempt_on_wakeup, pin_to_one_cpu, NEGATIVE_ROUNDS, STARVED};

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
fn starvation_check<L: RawLock + 'static>(
    rounds: usize,
    limit: Duration,
) -> Result<Duration, String> {
    let lock = Arc::new(L::new());
    let mut longest = Duration::ZERO;
    pin_to_one_cpu(); // this test's thread: the holder
    for round in 0..rounds {
        let asking = Arc::new(AtomicBool::new(false));
        let got = Arc::new(AtomicBool::new(false));
        lock.lock();
        let (l2, a2, g2) = (lock.clone(), asking.clone(), got.clone());
        let asker = thread::spawn(move || {
            pin_to_one_cpu();
            never_preempt_on_wakeup();
            a2.store(true, Ordering::SeqCst);
            l2.lock();
            g2.store(true, Ordering::SeqCst);
            // SAFETY (test): locked just above, on this thread.
            unsafe { l2.unlock() };
        });
        while !asking.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        thread::sleep(Duration::from_millis(5)); // let it spin and park
        let asked = Instant::now();
        let mut x = 1.0f64;
        let mut waited = Duration::ZERO;
        while !got.load(Ordering::Relaxed) && waited <= limit {
            for _ in 0..64 {
                // SAFETY (test): this thread holds the lock.
                unsafe { lock.unlock() };
                lock.lock();
                for _ in 0..100 {
                    x = std::hint::black_box(x * 1.000001 + 0.5); // the critical section
                }
            }
            waited = Instant::now().saturating_duration_since(asked);
        }
        // SAFETY (test): this thread holds the lock.
        unsafe { lock.unlock() };
        asker.join().unwrap();
        if waited > limit {
            return Err(format!(
                "{}: round {round}: the asking thread waited over {limit:?} and never got the lock",
                L::NAME
            ));
        }
        longest = longest.max(waited);
    }
    Ok(longest)
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
