//! Stress tests of [`parklot::RwLock`] with invariant checks: many threads
//! (more than this machine's cores), real parking, both policies, and
//! assertions that break if a writer ever overlaps anyone, an upgrade lets a
//! write in between its read and its write, a wakeup is lost (the test hangs)
//! or a timeout lies.
#![cfg(not(loom))]

mod common;

use common::scaled;
use parklot::{
    Instant, RawRwLock, RwLock, RwLockPolicy, RwLockUpgradableReadGuard, RwLockWriteGuard,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

const BOTH: [RwLockPolicy; 2] = [RwLockPolicy::PreferWriters, RwLockPolicy::PreferReaders];

/// Who is inside, counted by the threads themselves: writers in the high
/// half, readers in the low half, so that one load sees both.
struct Occupancy(AtomicUsize);

const ONE_WRITER: usize = 1 << 32;

impl Occupancy {
    fn enter_read(&self) {
        let before = self.0.fetch_add(1, Ordering::SeqCst);
        assert!(before < ONE_WRITER, "a reader got in beside a writer");
    }
    fn leave_read(&self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
    fn enter_write(&self) {
        let before = self.0.fetch_add(ONE_WRITER, Ordering::SeqCst);
        assert_eq!(before, 0, "a writer got in beside someone");
    }
    fn leave_write(&self) {
        self.0.fetch_sub(ONE_WRITER, Ordering::SeqCst);
    }
}

/// `threads` threads mix reads, writes, upgradable reads with upgrades,
/// downgrades and timed attempts on one lock; the guarded counter counts the
/// writes exactly, and nobody ever overlaps a writer.
fn mixed(policy: RwLockPolicy, threads: usize, per_thread: usize) {
    let lock = Arc::new(RwLock::from_raw(RawRwLock::with_policy(policy), 0u64));
    let inside = Arc::new(Occupancy(AtomicUsize::new(0)));
    let writes = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (lock, inside, writes) = (lock.clone(), inside.clone(), writes.clone());
            thread::spawn(move || {
                let mut x = t as u64 + 1;
                for _ in 0..per_thread {
                    // xorshift: each thread its own mix of operations.
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 8 {
                        0..=3 => {
                            let g = lock.read();
                            inside.enter_read();
                            if x & 16 != 0 {
                                // Hold it across a switch now and then: otherwise
                                // each thread runs alone in its time slice.
                                thread::yield_now();
                            }
                            std::hint::black_box(*g);
                            inside.leave_read();
                        }
                        4 | 5 => {
                            let mut g = lock.write();
                            inside.enter_write();
                            *g += 1;
                            if x & 16 != 0 {
                                thread::yield_now();
                            }
                            writes.fetch_add(1, Ordering::Relaxed);
                            inside.leave_write();
                            if x & 256 != 0 {
                                // Downgrade: still nobody writes beside us.
                                let r = RwLockWriteGuard::downgrade(g);
                                inside.enter_read();
                                std::hint::black_box(*r);
                                inside.leave_read();
                            }
                        }
                        6 => {
                            let up = lock.upgradable_read();
                            inside.enter_read();
                            let seen = *up;
                            inside.leave_read();
                            let mut g = RwLockUpgradableReadGuard::upgrade(up);
                            inside.enter_write();
                            assert_eq!(*g, seen, "a write slipped in during an upgrade");
                            *g += 1;
                            writes.fetch_add(1, Ordering::Relaxed);
                            inside.leave_write();
                        }
                        _ => {
                            let timeout = Duration::from_micros(x % 200);
                            if x & 512 != 0 {
                                if let Some(mut g) = lock.try_write_for(timeout) {
                                    inside.enter_write();
                                    *g += 1;
                                    writes.fetch_add(1, Ordering::Relaxed);
                                    inside.leave_write();
                                }
                            } else if let Some(g) = lock.try_read_for(timeout) {
                                inside.enter_read();
                                std::hint::black_box(*g);
                                inside.leave_read();
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*lock.read() as usize, writes.load(Ordering::Relaxed));
    // SAFETY (test): only looked at.
    let raw = unsafe { lock.raw() };
    assert!(!raw.is_locked() && !raw.has_parked(), "{raw:?}");
}

#[test]
fn nobody_overlaps_a_writer_with_2_to_16_threads() {
    for policy in BOTH {
        for threads in [2, 4, 8, 16] {
            mixed(policy, threads, scaled(200_000) / threads);
        }
    }
}

#[test]
fn timed_attempts_do_not_return_early_and_leave_no_parked_bit() {
    for policy in BOTH {
        let lock = Arc::new(RawRwLock::with_policy(policy));
        lock.lock_exclusive();
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let lock = lock.clone();
                thread::spawn(move || {
                    let start = Instant::now();
                    let timeout = Duration::from_millis(10 + 5 * i);
                    let got = if i % 2 == 0 {
                        lock.try_lock_shared_for(timeout)
                    } else {
                        lock.try_lock_exclusive_for(timeout)
                    };
                    assert!(!got, "got a lock that was held throughout");
                    assert!(Instant::now() - start >= timeout, "returned early");
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY (test): locked above, on this thread.
        unsafe { lock.unlock_exclusive() };
        assert!(!lock.is_locked() && !lock.has_parked(), "{lock:?}");
    }
}

/// How a thread of [`async_mix`] takes a hold: blocking, or with an async
/// record it polls (as a browser page's thread does through `waitAsync`).
#[derive(Clone, Copy)]
enum Taker {
    Blocking,
    Async,
}

/// Waits out an async attempt that `begin` started: polls the record until
/// it is claimed, then resumes (which may queue it again).
fn finish_async(w: &parklot::parking_lot::AsyncWaiter, begun: bool, resume: impl Fn() -> bool) {
    let mut taken = begun;
    // SAFETY: the record's word is a live, aligned 32-bit atomic.
    let word = unsafe { &*(w.word_address() as *const std::sync::atomic::AtomicU32) };
    while !taken {
        while word.load(Ordering::Acquire) != 0 {
            thread::yield_now();
        }
        taken = resume();
    }
}

/// Blocking and async takers mix reads, upgradable reads with upgrades and
/// writes, releasing with the checked unlocks (as C and JS do): a release
/// that finds the word without the hold fails the test.
fn async_mix(policy: RwLockPolicy, takers: &[Taker], per_thread: usize) {
    let lock = Arc::new(RawRwLock::with_policy(policy));
    let inside = Arc::new(Occupancy(AtomicUsize::new(0)));
    let hs: Vec<_> = takers
        .iter()
        .map(|&taker| {
            let (l, inside) = (lock.clone(), inside.clone());
            thread::spawn(move || {
                let w = parklot::parking_lot::AsyncWaiter::new();
                // SAFETY (all the async calls): `w` is this thread's own, used
                // for one attempt at a time, each finished before the next.
                let read = || match taker {
                    Taker::Blocking => l.lock_shared(),
                    Taker::Async => unsafe {
                        finish_async(&w, l.lock_shared_async_begin(&w), || {
                            l.lock_shared_async_resume(&w)
                        })
                    },
                };
                let write = || match taker {
                    Taker::Blocking => l.lock_exclusive(),
                    Taker::Async => unsafe {
                        finish_async(&w, l.lock_exclusive_async_begin(&w), || {
                            l.lock_exclusive_async_resume(&w)
                        })
                    },
                };
                let upgradable = || match taker {
                    Taker::Blocking => l.lock_upgradable(),
                    Taker::Async => unsafe {
                        finish_async(&w, l.lock_upgradable_async_begin(&w), || {
                            l.lock_upgradable_async_resume(&w)
                        })
                    },
                };
                // SAFETY: called with the upgradable read held.
                let upgrade = || match taker {
                    Taker::Blocking => unsafe { l.upgrade() },
                    Taker::Async => unsafe {
                        finish_async(&w, l.upgrade_async_begin(&w), || l.upgrade_async_resume(&w))
                    },
                };
                for i in 0..per_thread {
                    match i % 4 {
                        0 => {
                            upgradable();
                            inside.enter_read();
                            inside.leave_read();
                            if i % 8 == 0 {
                                upgrade();
                                inside.enter_write();
                                inside.leave_write();
                                l.checked_unlock_exclusive()
                                    .expect("the upgraded write is held");
                            } else {
                                l.checked_unlock_upgradable()
                                    .expect("the upgradable read is held");
                            }
                        }
                        1 => {
                            write();
                            inside.enter_write();
                            if i % 3 == 0 {
                                thread::yield_now();
                            }
                            inside.leave_write();
                            l.checked_unlock_exclusive().expect("the write is held");
                        }
                        _ => {
                            read();
                            inside.enter_read();
                            if i % 3 == 0 {
                                // Hold it across a switch now and then.
                                thread::yield_now();
                            }
                            inside.leave_read();
                            l.checked_unlock_shared().expect("the read is held");
                        }
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert!(!lock.is_locked() && !lock.has_parked(), "{lock:?}");
}

#[test]
fn blocking_and_async_takers_mix_and_every_checked_release_finds_its_hold() {
    use Taker::*;
    for policy in BOTH {
        async_mix(policy, &[Blocking, Blocking, Async, Async], scaled(40_000));
    }
}
