//! Unit tests of `toy_locks.rs`.

use super::*;
use crate::parking_lot::parked_count;
use crate::test_threads::{contend, with_threads};
use core::cell::UnsafeCell;
use std::sync::Arc;

struct Guarded<L> {
    lock: L,
    count: UnsafeCell<u64>,
}

// SAFETY: `count` is only touched while `lock` is held (RawLock's contract).
unsafe impl<L: RawLock> Sync for Guarded<L> {}

impl<L: RawLock> Guarded<L> {
    fn new() -> Self {
        Guarded {
            lock: L::new(),
            count: UnsafeCell::new(0),
        }
    }

    /// Takes the lock, bumps the count, lets go.
    fn bump(&self) {
        self.lock.lock();
        // SAFETY: we hold the lock; it was acquired just above and is
        // released once, right after.
        unsafe {
            *self.count.get() += 1;
            self.lock.unlock();
        }
    }
}

/// The lost-update check: a plain counter, incremented under the lock by
/// several threads, must come out exact (and Miri sees any data race).
fn counter_stays_exact<L: RawLock + 'static>() {
    let threads = if cfg!(miri) { 2 } else { 4 };
    let per = if cfg!(miri) { 50 } else { 20_000 };
    let g = Guarded::<L>::new();
    contend(threads, per, |_, _| g.bump());
    assert_eq!(g.count.into_inner(), (threads * per) as u64, "{}", L::NAME);
}

/// Holds the lock until `WAITERS` threads are parked on it, then lets
/// go: each must get it once (the slow paths of the lock and the unlock,
/// which the counter test rarely reaches with tiny critical sections).
/// Returns the lock, idle again, for the caller to inspect.
fn parked_waiters_all_get_the_lock<L: RawLock + 'static>() -> L {
    // 3: enough that a wakeup can leave others queued (Cascade's chain,
    // Thunder's herd re-parking, may_have_more).
    const WAITERS: usize = 3;
    let g = Guarded::<L>::new();
    // Every lock here parks under its own address (Lock and the toys are
    // repr(transparent) over their state byte).
    let key = &g.lock as *const L as usize;
    g.lock.lock();
    with_threads(
        WAITERS,
        |_| g.bump(),
        || {
            while parked_count(key) != WAITERS {
                std::thread::yield_now();
            }
            // SAFETY: locked above, before the waiters started.
            unsafe { g.lock.unlock() };
        },
    );
    assert_eq!(g.count.into_inner(), WAITERS as u64, "{}", L::NAME);
    g.lock
}

/// A test that `$lock` keeps the counter exact and, given `|l| check`, that
/// its parked waiters all get it, leaving `l` (the lock, idle) to `check`.
macro_rules! excludes {
    ($name:ident, $lock:ty) => {
        #[test]
        fn $name() {
            counter_stays_exact::<$lock>();
        }
    };
    ($name:ident, $lock:ty, |$l:ident| $check:expr) => {
        #[test]
        fn $name() {
            counter_stays_exact::<$lock>();
            let $l = parked_waiters_all_get_the_lock::<$lock>();
            $check;
        }
    };
}

excludes!(lock_excludes, Lock, |l| assert!(
    !l.is_locked() && !l.has_parked()
));
excludes!(word_lock_excludes, WordLock);
excludes!(yield_spin_lock_excludes, YieldSpinLock);
excludes!(pause_spin_lock_excludes, PauseSpinLock);
excludes!(thunder_lock_excludes_and_wakes_its_herd, ThunderLock, |l| {
    assert_eq!(l.state.into_inner(), UNLOCKED)
});
excludes!(
    cascade_lock_excludes_and_wakes_down_the_chain,
    CascadeLock,
    |l| { assert_eq!(l.state.into_inner(), UNLOCKED) }
);
excludes!(handoff_lock_excludes_and_hands_over, HandoffLock, |l| {
    assert_eq!(l.state.into_inner(), 0)
});

#[test]
fn barging_lock_excludes_and_wakes_its_parked() {
    counter_stays_exact::<BargingLock>();
    // No spinning: every contended lock parks at once.
    counter_stays_exact::<BargingLock<0>>();
    let l = parked_waiters_all_get_the_lock::<BargingLock<0>>();
    assert!(!l.lock.is_locked() && !l.lock.has_parked());
}

#[test]
fn handoff_lock_serves_waiters_in_queue_order() {
    let n = if cfg!(miri) { 3 } else { 6 };
    let lock = Arc::new(HandoffLock::new());
    let key = key(&lock.state);
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    lock.lock();
    let hs: Vec<_> = (0..n)
        .map(|i| {
            let (lock, order) = (lock.clone(), order.clone());
            let h = std::thread::spawn(move || {
                lock.lock();
                order.lock().unwrap().push(i);
                // SAFETY: locked just above.
                unsafe { lock.unlock() };
            });
            // Queue them one at a time so that the queue order is known.
            while parked_count(key) != i + 1 {
                std::thread::yield_now();
            }
            h
        })
        .collect();
    // SAFETY: locked above, before any thread started.
    unsafe { lock.unlock() };
    // Arriving now, we must queue behind every one of them: no barging.
    lock.lock();
    order.lock().unwrap().push(n);
    // SAFETY: locked just above.
    unsafe { lock.unlock() };
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..=n).collect::<Vec<_>>());
    assert_eq!(lock.state.load(Ordering::Relaxed), 0);
}

#[test]
fn every_toy_is_one_byte() {
    assert_eq!(core::mem::size_of::<YieldSpinLock>(), 1);
    assert_eq!(core::mem::size_of::<PauseSpinLock>(), 1);
    assert_eq!(core::mem::size_of::<ThunderLock>(), 1);
    assert_eq!(core::mem::size_of::<CascadeLock>(), 1);
    assert_eq!(core::mem::size_of::<HandoffLock>(), 1);
    assert_eq!(core::mem::size_of::<BargingLock>(), 1);
}

#[test]
fn barging_lock_names_its_spin_limit() {
    assert_eq!(<BargingLock as RawLock>::NAME, "BargingLock<40>");
    assert_eq!(<BargingLock<0> as RawLock>::NAME, "BargingLock<0>");
    assert_eq!(
        <BargingLock<{ u32::MAX }> as RawLock>::NAME,
        "BargingLock<4294967295>"
    );
}
