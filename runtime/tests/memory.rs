//! The ParkingLot's memory depends on threads, never on locks: contending
//! 100,000 different locks, each once, with a thread really parked on each,
//! must not allocate a byte, and the table must not grow.
#![cfg(not(loom))]

use parklot::parking_lot::{parked_count, stats};
use parklot::Lock;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts live heap bytes, process-wide.
struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same layout contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn parking_lot_memory_does_not_grow_with_contended_locks() {
    const LOCKS: usize = 100_000;
    let locks: Arc<Vec<Lock>> = Arc::new((0..LOCKS).map(|_| Lock::new()).collect());
    // The main thread holds lock i; the helper contends on it and parks (we
    // wait until it is queued in the ParkingLot); then we release it and move on.
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    // The helper stays alive until the last `stats()`: its exit frees its
    // waiter record, which would change the table's thread count.
    let measured = Arc::new(AtomicBool::new(false));
    let (l2, n2, d2, m2) = (locks.clone(), next.clone(), done.clone(), measured.clone());
    parklot::set_spin_limit(0); // park at once: this test is about parking
    let helper = std::thread::spawn(move || {
        for i in 0..LOCKS {
            while n2.load(Ordering::Acquire) <= i {
                std::hint::spin_loop();
            }
            l2[i].lock();
            l2[i].unlock();
            d2.store(i + 1, Ordering::Release);
        }
        while !m2.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    });

    let contend = |range: std::ops::Range<usize>| {
        for i in range {
            locks[i].lock();
            next.store(i + 1, Ordering::Release);
            while parked_count(&locks[i] as *const Lock as usize) == 0 {
                std::thread::yield_now();
            }
            locks[i].unlock();
            while done.load(Ordering::Acquire) <= i {
                std::thread::yield_now();
            }
        }
    };

    // Warm up: both threads' waiter records and the table exist after this.
    contend(0..1_000);
    let before = (LIVE.load(Ordering::SeqCst), stats());
    contend(1_000..LOCKS);
    let after = (LIVE.load(Ordering::SeqCst), stats());
    measured.store(true, Ordering::Release);
    helper.join().unwrap();

    assert_eq!(before.1, after.1, "the ParkingLot's table changed");
    let grown = after.0 - before.0;
    assert!(grown <= 0, "99,000 contended locks allocated {grown} bytes");
    eprintln!("ParkingLot after {LOCKS} contended locks: {:?}", after.1);
}
