//! The physical floor: what one uncontended lock-unlock pair costs at the
//! very least on this machine — a compare-and-swap and a store on one byte,
//! from one thread, in a loop. No lock can beat it uncontended.

use std::hint::black_box;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

/// Nanoseconds per `compare_exchange(0, 1)` + `store(0)` on an `AtomicU8`:
/// the best of `reps` loops of `iterations` each.
pub fn cas_store_ns(iterations: u64, reps: u32) -> f64 {
    let byte = AtomicU8::new(0);
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let start = Instant::now();
        for _ in 0..iterations {
            // black_box: keep the loop from being collapsed to one CAS.
            let byte = black_box(&byte);
            let _ = black_box(byte.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed));
            byte.store(0, Ordering::Release);
        }
        let ns = start.elapsed().as_nanos() as f64 / iterations as f64;
        best = best.min(ns);
    }
    best
}
