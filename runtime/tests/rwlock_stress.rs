//! Stress tests of [`parklot::RwLock`] with invariant checks: many threads
//! (more than this machine's cores), real parking, both policies, and
//! assertions that break if a writer ever overlaps anyone, an upgrade lets a
//! write in between its read and its write, a wakeup is lost (the test hangs)
//! or a timeout lies.
#![cfg(not(loom))]

mod common;

use common::scaled;
use parklot::parking_lot::AsyncWaiter;
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
    /// Enters (as a writer if `write`), stays across a thread switch if
    /// `switch`, and leaves.
    fn stay(&self, write: bool, switch: bool) {
        if write {
            self.enter_write()
        } else {
            self.enter_read()
        }
        if switch {
            thread::yield_now();
        }
        if write {
            self.leave_write()
        } else {
            self.leave_read()
        }
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
fn finish_async(w: &AsyncWaiter, begun: bool, resume: impl Fn() -> bool) {
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

/// What [`take`] takes.
#[derive(Clone, Copy)]
enum Hold {
    Read,
    Write,
    Upgradable,
    /// From the upgradable read to the write.
    Upgrade,
}

/// Takes `hold` on `l` as `taker` does, async ones with the record `w`.
///
/// # Safety
/// `w` is the calling thread's, used for one attempt at a time; for
/// [`Hold::Upgrade`], the upgradable read is held.
unsafe fn take(l: &RawRwLock, w: &AsyncWaiter, taker: Taker, hold: Hold) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match taker {
            Taker::Blocking => match hold {
                Hold::Read => l.lock_shared(),
                Hold::Write => l.lock_exclusive(),
                Hold::Upgradable => l.lock_upgradable(),
                Hold::Upgrade => l.upgrade(),
            },
            Taker::Async => {
                let begun = match hold {
                    Hold::Read => l.lock_shared_async_begin(w),
                    Hold::Write => l.lock_exclusive_async_begin(w),
                    Hold::Upgradable => l.lock_upgradable_async_begin(w),
                    Hold::Upgrade => l.upgrade_async_begin(w),
                };
                finish_async(w, begun, || match hold {
                    Hold::Read => l.lock_shared_async_resume(w),
                    Hold::Write => l.lock_exclusive_async_resume(w),
                    Hold::Upgradable => l.lock_upgradable_async_resume(w),
                    Hold::Upgrade => l.upgrade_async_resume(w),
                })
            }
        }
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
                let w = AsyncWaiter::new();
                // SAFETY (all the takes): `w` is this thread's own, used for
                // one attempt at a time, each finished before the next.
                let read = || unsafe { take(&l, &w, taker, Hold::Read) };
                let write = || unsafe { take(&l, &w, taker, Hold::Write) };
                let upgradable = || unsafe { take(&l, &w, taker, Hold::Upgradable) };
                // SAFETY: called with the upgradable read held.
                let upgrade = || unsafe { take(&l, &w, taker, Hold::Upgrade) };
                for i in 0..per_thread {
                    match i % 4 {
                        0 => {
                            upgradable();
                            inside.stay(false, false);
                            if i % 8 == 0 {
                                upgrade();
                                inside.stay(true, false);
                                l.checked_unlock_exclusive()
                                    .expect("the upgraded write is held");
                            } else {
                                l.checked_unlock_upgradable()
                                    .expect("the upgradable read is held");
                            }
                        }
                        1 => {
                            write();
                            inside.stay(true, i % 3 == 0);
                            l.checked_unlock_exclusive().expect("the write is held");
                        }
                        _ => {
                            read();
                            // Hold it across a switch now and then.
                            inside.stay(false, i % 3 == 0);
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
