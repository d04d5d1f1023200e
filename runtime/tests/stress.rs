//! Stress tests with invariant checks: many threads (more than this machine's
//! cores), real parking, and an assertion that breaks if a lock ever lets two
//! threads in, a wakeup is lost, a message is duplicated, or a timeout lies.
//!
//! `PARKLOT_STRESS_SCALE` (default 1.0) scales the iteration counts; the ARM64
//! run under qemu uses a smaller one.
#![cfg(not(loom))]

mod common;

use common::scaled;
use parklot::parking_lot::parked_count;
use parklot::{futex, Condition, Instant, Lock, Mutex, WaitResult};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// The timeout slack the machine allows: generous, because CI has 2 cores and
/// runs ARM64 under emulation; what is asserted is that it is bounded.
fn slack() -> Duration {
    if common::stress_scale() < 1.0 {
        Duration::from_secs(3)
    } else {
        Duration::from_millis(750)
    }
}

/// A plain counter, deliberately not atomic: only a lock keeps it exact.
struct Guarded<T> {
    lock: Lock,
    value: UnsafeCell<T>,
}

// SAFETY (test): `value` is only touched while `lock` is held.
unsafe impl<T: Send> Sync for Guarded<T> {}

impl<T> Guarded<T> {
    fn new(value: T) -> Self {
        Guarded {
            lock: Lock::new(),
            value: UnsafeCell::new(value),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock.lock();
        // SAFETY (test): we hold the lock.
        let r = f(unsafe { &mut *self.value.get() });
        self.lock.unlock();
        r
    }
}

fn run_threads(n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    let f = Arc::new(f);
    let hs: Vec<_> = (0..n)
        .map(|i| {
            let f = f.clone();
            thread::spawn(move || f(i))
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
fn counter_is_exact_with_2_to_16_threads_on_one_lock() {
    for threads in [2, 3, 4, 8, 16] {
        let per_thread = scaled(200_000) / threads;
        let g = Arc::new(Guarded::new(0u64));
        let g2 = g.clone();
        run_threads(threads, move |_| {
            for _ in 0..per_thread {
                g2.with(|v| *v += 1);
            }
        });
        assert_eq!(
            g.with(|v| *v),
            (threads * per_thread) as u64,
            "{threads} threads"
        );
        assert!(!g.lock.is_locked() && !g.lock.has_parked());
    }
}

#[test]
fn counters_are_exact_on_1000_locks() {
    const LOCKS: usize = 1000;
    for threads in [2, 4, 16] {
        let per_thread = scaled(200_000) / threads;
        let locks: Arc<Vec<Guarded<u64>>> = Arc::new((0..LOCKS).map(|_| Guarded::new(0)).collect());
        let expected: Arc<Vec<AtomicU64>> =
            Arc::new((0..LOCKS).map(|_| AtomicU64::new(0)).collect());
        let (l2, e2) = (locks.clone(), expected.clone());
        run_threads(threads, move |t| {
            // A cheap per-thread random walk over the locks, with hot spots:
            // a quarter of all acquisitions go to the first 8 locks.
            let mut x = 0x9E37_79B9u32 ^ (t as u32 + 1);
            for _ in 0..per_thread {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let i = if x.is_multiple_of(4) {
                    (x as usize >> 8) % 8
                } else {
                    (x as usize >> 8) % LOCKS
                };
                l2[i].with(|v| *v += 1);
                e2[i].fetch_add(1, Ordering::Relaxed);
            }
        });
        for (i, (g, e)) in locks.iter().zip(expected.iter()).enumerate() {
            assert_eq!(
                g.with(|v| *v),
                e.load(Ordering::Relaxed),
                "lock {i} with {threads} threads"
            );
        }
    }
}

#[test]
fn fair_unlocks_timed_locks_and_try_locks_mixed_keep_the_counter_exact() {
    let threads = 6;
    let per_thread = scaled(60_000) / threads;
    let g = Arc::new(Guarded::new(0u64));
    let acquired = Arc::new(AtomicU64::new(0));
    let (g2, a2) = (g.clone(), acquired.clone());
    run_threads(threads, move |t| {
        for i in 0..per_thread {
            let got = match (t + i) % 4 {
                0 | 1 => {
                    g2.lock.lock();
                    true
                }
                2 => g2.lock.try_lock_for(Duration::from_micros(50)),
                _ => g2.lock.try_lock(),
            };
            if got {
                // SAFETY (test): we hold the lock.
                unsafe { *g2.value.get() += 1 };
                a2.fetch_add(1, Ordering::Relaxed);
                if i % 3 == 0 {
                    g2.lock.unlock_fair();
                } else {
                    g2.lock.unlock();
                }
            }
        }
    });
    assert_eq!(g.with(|v| *v), acquired.load(Ordering::Relaxed));
    assert!(!g.lock.has_parked(), "a stale PARKED bit was left behind");
}

/// A bounded queue in the style users write: one lock, two conditions.
struct BoundedQueue {
    items: Mutex<VecDeque<u64>>,
    not_empty: Condition,
    not_full: Condition,
    capacity: usize,
}

fn producer_consumer(producers: usize, consumers: usize, per_producer: u64, notify_all: bool) {
    let q = Arc::new(BoundedQueue {
        items: Mutex::new(VecDeque::new()),
        not_empty: Condition::new(),
        not_full: Condition::new(),
        capacity: 8,
    });
    let total = producers as u64 * per_producer;
    let taken = Arc::new(AtomicU64::new(0));
    let received: Arc<Vec<AtomicU64>> = Arc::new((0..total).map(|_| AtomicU64::new(0)).collect());
    let mut hs = Vec::new();
    for p in 0..producers as u64 {
        let q = q.clone();
        hs.push(thread::spawn(move || {
            for i in 0..per_producer {
                let mut items = q.items.lock();
                while items.len() == q.capacity {
                    q.not_full.wait(&mut items);
                }
                items.push_back(p * per_producer + i);
                drop(items);
                if notify_all {
                    q.not_empty.notify_all();
                } else {
                    q.not_empty.notify_one();
                }
            }
        }));
    }
    for _ in 0..consumers {
        let (q, taken, received) = (q.clone(), taken.clone(), received.clone());
        hs.push(thread::spawn(move || loop {
            let mut items = q.items.lock();
            let msg = loop {
                if let Some(m) = items.pop_front() {
                    break Some(m);
                }
                if taken.load(Ordering::SeqCst) == total {
                    break None;
                }
                // A bounded wait, so that consumers notice the end; any
                // wakeup without a notify would show up as `false` here.
                q.not_empty.wait_for(&mut items, Duration::from_millis(20));
            };
            drop(items);
            let Some(msg) = msg else { return };
            if notify_all {
                q.not_full.notify_all();
            } else {
                q.not_full.notify_one();
            }
            received[msg as usize].fetch_add(1, Ordering::SeqCst);
            taken.fetch_add(1, Ordering::SeqCst);
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    let dupes: Vec<usize> = (0..total as usize)
        .filter(|&i| received[i].load(Ordering::SeqCst) != 1)
        .collect();
    assert!(
        dupes.is_empty(),
        "messages lost or duplicated: {} of {total}, e.g. {:?}",
        dupes.len(),
        &dupes[..dupes.len().min(5)]
    );
    assert!(q.items.lock().is_empty());
}

#[test]
fn producer_consumer_notify_one_delivers_every_message_once() {
    producer_consumer(3, 3, scaled(20_000) as u64, false);
}

#[test]
fn producer_consumer_notify_all_delivers_every_message_once() {
    producer_consumer(2, 4, scaled(10_000) as u64, true);
}

#[test]
fn condition_wait_without_timeout_never_loses_a_wakeup() {
    // Ping-pong through one condition with untimed waits: a lost wakeup hangs
    // the test (and the harness reports it), a spurious one breaks the turn check.
    let rounds = scaled(20_000) as u64;
    let state = Arc::new((Mutex::new(0u64), Condition::new()));
    let s2 = state.clone();
    let t = thread::spawn(move || {
        for r in 0..rounds {
            let mut turn = s2.0.lock();
            while *turn != 2 * r + 1 {
                s2.1.wait(&mut turn);
            }
            *turn += 1;
            s2.1.notify_one();
        }
    });
    for r in 0..rounds {
        let mut turn = state.0.lock();
        assert_eq!(*turn, 2 * r);
        *turn += 1;
        state.1.notify_one();
        while *turn != 2 * r + 2 {
            state.1.wait(&mut turn);
        }
    }
    t.join().unwrap();
}

#[test]
fn notify_wakes_waiters_in_fifo_order() {
    let word = Arc::new(AtomicI32::new(0));
    let key = Arc::as_ptr(&word) as usize;
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut hs = Vec::new();
    for i in 0..8 {
        let (word, order) = (word.clone(), order.clone());
        hs.push(thread::spawn(move || {
            assert_eq!(futex::wait32(&word, 0, None), WaitResult::Ok);
            order.lock().unwrap().push(i);
        }));
        // Queue them one at a time, so the queue order is 0, 1, ..., 7.
        while parked_count(key) != i + 1 {
            thread::yield_now();
        }
    }
    for i in 0..8 {
        assert_eq!(futex::notify(&*word, 1), 1);
        // Wait for the woken thread to record itself before waking the next.
        while order.lock().unwrap().len() != i + 1 {
            thread::yield_now();
        }
    }
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
    assert_eq!(futex::notify(&*word, futex::NOTIFY_ALL), 0);
}

#[test]
fn notify_count_wakes_exactly_that_many() {
    let word = Arc::new(AtomicI32::new(7));
    let key = Arc::as_ptr(&word) as usize;
    let woken = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..5)
        .map(|_| {
            let (word, woken) = (word.clone(), woken.clone());
            thread::spawn(move || {
                assert_eq!(futex::wait32(&word, 7, None), WaitResult::Ok);
                woken.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    while parked_count(key) != 5 {
        thread::yield_now();
    }
    assert_eq!(futex::notify(&*word, 2), 2);
    assert_eq!(futex::notify(&*word, 0), 0);
    while woken.load(Ordering::SeqCst) != 2 {
        thread::yield_now();
    }
    assert_eq!(parked_count(key), 3);
    assert_eq!(futex::notify(&*word, 10), 3);
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
fn timeouts_never_return_early_and_return_within_a_bounded_slack() {
    // 8 threads each make 25 timed waits of 1–16 ms on words nobody notifies,
    // while a ninth hammers a lock to keep the machine busy.
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let noise = thread::spawn(move || {
        let g = Guarded::new(0u64);
        while !s2.load(Ordering::Relaxed) {
            g.with(|v| *v += 1);
        }
    });
    let worst = Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let w2 = worst.clone();
    run_threads(8, move |t| {
        let word = AtomicI32::new(0);
        let lock = Lock::new();
        let cond = Condition::new();
        for i in 0..25u64 {
            let timeout = Duration::from_millis(1 + (t as u64 * 7 + i * 3) % 16);
            let start = Instant::now();
            let result = match i % 3 {
                0 => futex::wait32(&word, 0, Some(timeout)) == WaitResult::TimedOut,
                1 => {
                    lock.lock();
                    let notified = unsafe { cond.wait_raw(&lock, Some(start + timeout)) };
                    lock.unlock();
                    !notified
                }
                _ => {
                    let held = Lock::new();
                    held.lock();
                    !held.try_lock_for(timeout)
                }
            };
            let elapsed = Instant::now() - start;
            assert!(result, "kind {} did not time out", i % 3);
            assert!(
                elapsed >= timeout,
                "kind {}: returned after {elapsed:?}, before its {timeout:?}",
                i % 3
            );
            let over = elapsed - timeout;
            let mut w = w2.lock().unwrap();
            *w = (*w).max(over);
        }
    });
    stop.store(true, Ordering::Relaxed);
    noise.join().unwrap();
    let worst = *worst.lock().unwrap();
    assert!(worst < slack(), "a timeout overshot by {worst:?}");
}

#[test]
fn a_waiter_that_times_out_leaves_no_stale_queue_entry() {
    let word = Arc::new(AtomicI32::new(0));
    let key = Arc::as_ptr(&word) as usize;
    run_threads(6, {
        let word = word.clone();
        move |_| {
            for _ in 0..scaled(50) {
                assert_eq!(
                    futex::wait32(&word, 0, Some(Duration::from_micros(200))),
                    WaitResult::TimedOut
                );
            }
        }
    });
    assert_eq!(parked_count(key), 0);
    assert_eq!(futex::notify(&*word, futex::NOTIFY_ALL), 0);
}

#[test]
fn a_thread_that_cannot_block_and_blocking_threads_share_one_lock_fairly() {
    // One thread is marked unable to block and only ever uses the async
    // protocol, polling its waiter's word the way an event loop would; four
    // others block. Counter exact, nobody starves, nothing left queued.
    use parklot::parking_lot::AsyncWaiter;
    let g = Arc::new(Guarded::new(0u64));
    let stop = Arc::new(AtomicBool::new(false));
    let counts: Arc<Vec<AtomicU64>> = Arc::new((0..5).map(|_| AtomicU64::new(0)).collect());
    let mut hs = Vec::new();
    {
        let (g, stop, counts) = (g.clone(), stop.clone(), counts.clone());
        hs.push(thread::spawn(move || {
            parklot::set_thread_may_block(false);
            let waiter = AsyncWaiter::new();
            let mut cancelled = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let mut held = unsafe { g.lock.lock_async_begin(&waiter) };
                let start = Instant::now();
                while !held {
                    // The event loop: wait for the word, then resume. Every
                    // 16th attempt gives up after 50 µs, as a timeout would.
                    if waiter.poll().is_some() {
                        held = unsafe { g.lock.lock_async_resume(&waiter) };
                    } else if cancelled.is_multiple_of(16)
                        && Instant::now() - start > Duration::from_micros(50)
                    {
                        cancelled += 1;
                        held = unsafe { g.lock.lock_async_cancel(&waiter) };
                        if !held {
                            held = unsafe { g.lock.lock_async_begin(&waiter) };
                        }
                    } else {
                        thread::yield_now();
                    }
                }
                // SAFETY (test): we hold the lock.
                unsafe { *g.value.get() += 1 };
                counts[0].fetch_add(1, Ordering::Relaxed);
                g.lock.unlock();
            }
        }));
    }
    for t in 1..5 {
        let (g, stop, counts) = (g.clone(), stop.clone(), counts.clone());
        hs.push(thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                g.with(|v| *v += 1);
                counts[t].fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    thread::sleep(Duration::from_millis(400));
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let per: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    assert!(per.iter().all(|&c| c > 0), "someone starved: {per:?}");
    assert_eq!(g.with(|v| *v), per.iter().sum::<u64>());
    assert!(!g.lock.has_parked() && !g.lock.is_locked());
    assert_eq!(parked_count(&g.lock as *const Lock as usize), 0);
}
