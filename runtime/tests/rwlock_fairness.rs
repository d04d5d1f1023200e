//! Neither readers nor writers starve on a [`parklot::RawRwLock`], in either
//! policy; checked so that it fails for a reader-preferring lock without
//! hand-off ([`ThunderRwLock`]). The technique of `fairness.rs`, in a file of
//! its own for the same reason: its threads share one pinned CPU.
#![cfg(all(target_os = "linux", not(loom)))]

use parklot::toy_locks::{PolicyRwLock, RawRw, ThunderRwLock};
use parklot::Instant;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
use common::pin_to_one_cpu;

/// Takes `L` in one mode or the other.
fn take<L: RawRw>(lock: &L, write: bool) {
    if write {
        lock.lock_exclusive()
    } else {
        lock.lock_shared()
    }
}

/// Releases what [`take`] took.
///
/// # Safety
/// The caller holds `lock` in that mode.
unsafe fn release<L: RawRw>(lock: &L, write: bool) {
    // SAFETY: forwarded from the caller.
    unsafe {
        if write {
            lock.unlock_exclusive()
        } else {
            lock.unlock_shared()
        }
    }
}

/// Two threads share one CPU: one holds `L` almost all the time in one mode
/// (`holder_writes`), releasing and retaking it at once; the other asks for
/// it once in the other mode. Returns the longest of `rounds` waits, or
/// `Err` for the first that passed `limit`.
fn starvation_check<L: RawRw + 'static>(
    holder_writes: bool,
    rounds: usize,
    limit: Duration,
) -> Result<Duration, String> {
    let lock = Arc::new(L::new());
    let mut longest = Duration::ZERO;
    pin_to_one_cpu(); // this test's thread: the holder
    let asker_writes = !holder_writes;
    for round in 0..rounds {
        let asking = Arc::new(AtomicBool::new(false));
        let got = Arc::new(AtomicBool::new(false));
        take(&*lock, holder_writes);
        let (l2, a2, g2) = (lock.clone(), asking.clone(), got.clone());
        let asker = thread::spawn(move || {
            pin_to_one_cpu();
            a2.store(true, Ordering::SeqCst);
            take(&*l2, asker_writes);
            g2.store(true, Ordering::SeqCst);
            // SAFETY (test): taken just above, on this thread.
            unsafe { release(&*l2, asker_writes) };
        });
        while !asking.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        // Let it spin and park: on a busy machine 5 ms may not be enough for
        // the asker to run, and an asker still spinning yields a whole time
        // slice per spin to the holder, whatever the lock.
        let since = Instant::now();
        while !lock.has_parked() && Instant::now() - since < Duration::from_secs(1) {
            thread::sleep(Duration::from_millis(1));
        }
        thread::sleep(Duration::from_millis(2));
        let asked = Instant::now();
        let mut x = 1.0f64;
        let mut waited = Duration::ZERO;
        while !got.load(Ordering::Relaxed) && waited <= limit {
            for _ in 0..64 {
                // SAFETY (test): this thread holds the lock in that mode.
                unsafe { release(&*lock, holder_writes) };
                take(&*lock, holder_writes);
                for _ in 0..100 {
                    x = std::hint::black_box(x * 1.000001 + 0.5); // the critical section
                }
            }
            waited = Instant::now().saturating_duration_since(asked);
        }
        // SAFETY (test): this thread holds the lock in that mode.
        unsafe { release(&*lock, holder_writes) };
        asker.join().unwrap();
        if waited > limit {
            let (holder, asker) = if holder_writes {
                ("writer", "reader")
            } else {
                ("reader", "writer")
            };
            return Err(format!(
                "{}: round {round}: a {asker} waited over {limit:?} for a {holder} and never got in",
                L::NAME
            ));
        }
        longest = longest.max(waited);
    }
    Ok(longest)
}

/// As in `fairness.rs`: a fair lock lets the asker in after about a
/// millisecond; this leaves room for a busy machine.
const STARVED: Duration = Duration::from_millis(250);

/// As in `fairness.rs`: a round can let the asker in by luck.
const NEGATIVE_ROUNDS: usize = 60;

#[test]
fn neither_readers_nor_writers_starve_in_either_policy() {
    // One test: the checks pin their threads to the same CPU and must not
    // run side by side.
    for holder_writes in [false, true] {
        let side = if holder_writes {
            "a reader behind a writer"
        } else {
            "a writer behind a reader"
        };
        let longest = starvation_check::<PolicyRwLock<true>>(holder_writes, 20, STARVED).unwrap();
        eprintln!("writer-preferring: {side} got in after at most {longest:?}");
        let longest = starvation_check::<PolicyRwLock<false>>(holder_writes, 20, STARVED).unwrap();
        eprintln!("reader-preferring: {side} got in after at most {longest:?}");
        // The check must be able to fail: without a hand-off the releasing
        // thread barges back in every time.
        let err = starvation_check::<ThunderRwLock>(holder_writes, NEGATIVE_ROUNDS, STARVED)
            .expect_err("a reader-writer lock without hand-off passed the starvation check");
        eprintln!("{err}");
    }
}
