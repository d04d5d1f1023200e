//! The physical floor (experiment f): what no lock can beat on this machine.
//!
//! - uncontended: one compare-and-swap plus one store on a byte, the least an
//!   uncontended lock + unlock can cost, and what each lock really costs;
//! - contended: a cache line bounced between two threads and back, the least
//!   any handoff from one thread to another can cost.

use crate::runner::Line;
use parklot::toy_locks::RawLock;
use std::hint::{black_box, spin_loop};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// Nanoseconds per `compare_exchange(0, 1)` + `store(0)` on an `AtomicU8`,
/// from one thread, over `iterations` pairs.
pub fn cas_store_ns(iterations: u64) -> f64 {
    let byte = AtomicU8::new(0);
    let start = Instant::now();
    for _ in 0..iterations {
        // black_box: keep the loop from being collapsed to one CAS.
        let byte = black_box(&byte);
        let _ = black_box(byte.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed));
        byte.store(0, Ordering::Release);
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

/// Nanoseconds per uncontended `lock` + `unlock` of a fresh `L`, from one
/// thread, over `iterations` pairs.
pub fn uncontended_ns<L: RawLock>(iterations: u64) -> f64 {
    let lock = L::new();
    let start = Instant::now();
    for _ in 0..iterations {
        let lock = black_box(&lock);
        lock.lock();
        // SAFETY: locked just above, on this thread, in place.
        unsafe { lock.unlock() };
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

/// Nanoseconds per round trip of a cache line between two threads, over
/// `duration`: one writes an odd number and waits for the next even one, the
/// other answers each odd number with the next even one. A contended lock
/// handoff needs at least half a round trip (the line moves to the next
/// holder). Bounded by time, not trips: on a machine whose second core is
/// busy elsewhere a trip takes a time slice, not 100 ns.
pub fn ping_pong_ns(duration: Duration) -> f64 {
    // The ball: 2i+1 after the first thread's i-th serve, 2i+2 after the
    // answer, STOP at the end. Each side only stores after seeing the other's
    // value, so the line moves exactly twice per round trip.
    const STOP: u64 = u64::MAX;
    let ball = Line(AtomicU64::new(0));
    let ready = Barrier::new(2);
    thread::scope(|scope| {
        let (ball, ready) = (&ball.0, &ready);
        scope.spawn(move || {
            ready.wait();
            for i in 0.. {
                if wait_for(ball, 2 * i + 1, STOP) == STOP {
                    break;
                }
                ball.store(2 * i + 2, Ordering::Release);
            }
        });
        ready.wait();
        let start = Instant::now();
        let mut trips = 0u64;
        // Read the clock every 256 trips only: it costs as much as a trip.
        while !trips.is_multiple_of(256) || start.elapsed() < duration {
            ball.store(2 * trips + 1, Ordering::Release);
            wait_for(ball, 2 * trips + 2, STOP);
            trips += 1;
        }
        let ns = start.elapsed().as_nanos() as f64 / trips as f64;
        ball.store(STOP, Ordering::Release);
        ns
    })
}

/// Spins until `ball` reads `value` or `stop`; returns which. Yields now and
/// then, so that a machine with a single free core still makes progress (on
/// two idle cores a wait lasts far less than 4096 spins).
#[inline]
fn wait_for(ball: &AtomicU64, value: u64, stop: u64) -> u64 {
    let mut spins = 0u32;
    loop {
        let seen = ball.load(Ordering::Acquire);
        if seen == value || seen == stop {
            return seen;
        }
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(4096) {
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LOCKS;

    #[test]
    fn floors_are_positive_and_finite() {
        for ns in [cas_store_ns(10_000), ping_pong_ns(Duration::from_millis(2))] {
            assert!(ns.is_finite() && ns > 0.0, "{ns}");
        }
        for peer in LOCKS {
            let ns = (peer.uncontended_ns)(10_000);
            assert!(ns.is_finite() && ns > 0.0, "{}: {ns}", peer.name);
        }
    }
}
