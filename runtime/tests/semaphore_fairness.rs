//! A large request on a [`parklot::Semaphore`] is not starved by a stream of
//! small ones: about once a millisecond the oldest waiter gets the turn and
//! the permits it needs, whatever its size. The technique of `fairness.rs`
//! (threads that share one pinned CPU, an asker that a release never lets
//! preempt the holders), in a file of its own for the same reason.
#![cfg(all(target_os = "linux", not(loom)))]

use parklot::{Instant, Semaphore};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
use common::{never_preempt_on_wakeup, pin_to_one_cpu, STARVED};

/// Two holders each keep one of two permits almost all the time (release,
/// take again at once); an asker wants both. It fits only when both are
/// free at once, which barging never leaves; only a turn lets it in.
/// Returns the longest of `rounds` waits, or `Err` for the first that passed
/// `limit`.
fn large_request_check(rounds: usize, limit: Duration) -> Result<Duration, String> {
    let mut longest = Duration::ZERO;
    for round in 0..rounds {
        let sem = Arc::new(Semaphore::new(2));
        let stop = Arc::new(AtomicBool::new(false));
        let holders: Vec<_> = (0..2)
            .map(|_| {
                let (sem, stop) = (sem.clone(), stop.clone());
                thread::spawn(move || {
                    pin_to_one_cpu();
                    let mut x = 1.0f64;
                    sem.acquire(1);
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            sem.release(1);
                            sem.acquire(1);
                            for _ in 0..100 {
                                x = std::hint::black_box(x * 1.000001 + 0.5); // the critical section
                            }
                        }
                    }
                    sem.release(1);
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(5)); // the holders get going
        let got = Arc::new(AtomicBool::new(false));
        let (s2, g2) = (sem.clone(), got.clone());
        let asker = thread::spawn(move || {
            pin_to_one_cpu();
            never_preempt_on_wakeup();
            s2.acquire(2);
            g2.store(true, Ordering::SeqCst);
            s2.release(2);
        });
        let asked = Instant::now();
        while !got.load(Ordering::SeqCst) && Instant::now() - asked <= limit {
            thread::sleep(Duration::from_millis(1));
        }
        let waited = Instant::now() - asked;
        stop.store(true, Ordering::SeqCst);
        for h in holders {
            h.join().unwrap();
        }
        asker.join().unwrap();
        assert_eq!(sem.available(), 2, "every permit came back");
        if waited > limit {
            return Err(format!(
                "round {round}: a request for 2 permits waited over {limit:?} behind requests for 1"
            ));
        }
        longest = longest.max(waited);
    }
    Ok(longest)
}

#[test]
fn a_large_request_is_not_starved_by_small_ones() {
    let longest = large_request_check(20, STARVED).unwrap();
    eprintln!("a request for 2 permits got in after at most {longest:?}");
}
