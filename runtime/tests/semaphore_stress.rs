//! Stress test of [`parklot::Semaphore`] with an invariant check: threads
//! (more than this machine's cores) take and return random numbers of
//! permits, some with timeouts, and count what they hold; the permits held
//! never exceed the bound, and every permit comes back.
#![cfg(not(loom))]

mod common;

use common::scaled;
use parklot::Semaphore;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

#[test]
fn permits_held_never_exceed_the_bound() {
    const BOUND: u32 = 5;
    for threads in [2, 4, 8, 16] {
        let sem = Arc::new(Semaphore::new(BOUND));
        let held = Arc::new(AtomicU32::new(0));
        let taken = Arc::new(AtomicU32::new(0));
        let per_thread = scaled(400_000) / threads;
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (sem, held, taken) = (sem.clone(), held.clone(), taken.clone());
                thread::spawn(move || {
                    let mut x = t as u64 * 7919 + 1;
                    for _ in 0..per_thread {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let n = (x % u64::from(BOUND)) as u32 + 1;
                        let got = if x & 64 != 0 {
                            sem.try_acquire_for(n, Duration::from_micros(x % 100))
                        } else {
                            sem.acquire(n);
                            true
                        };
                        if got {
                            taken.fetch_add(1, Ordering::Relaxed);
                            let now = held.fetch_add(n, Ordering::SeqCst) + n;
                            assert!(now <= BOUND, "{now} permits held of {BOUND}");
                            if x & 3 == 0 {
                                // Hold the permits across a switch now and then:
                                // otherwise each thread runs alone in its time slice.
                                thread::yield_now();
                            }
                            held.fetch_sub(n, Ordering::SeqCst);
                            sem.release(n);
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sem.available(), BOUND);
        assert!(!sem.has_parked(), "{sem:?}");
        assert!(taken.load(Ordering::Relaxed) > 0);
    }
}
