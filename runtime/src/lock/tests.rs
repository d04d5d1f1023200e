//! Unit tests of `lock.rs`.

use super::*;
use crate::test_threads::{contend, waits_awake};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[test]
fn is_one_byte() {
    assert_eq!(core::mem::size_of::<Lock>(), 1);
    assert_eq!(core::mem::align_of::<Lock>(), 1);
    assert_eq!(core::mem::size_of::<Mutex<()>>(), 1);
}

#[test]
fn lock_unlock_try_lock() {
    let l = Lock::new();
    assert!(!l.is_locked());
    l.lock();
    assert!(l.is_locked());
    assert!(!l.try_lock());
    l.unlock();
    assert!(l.try_lock());
    l.unlock_fair();
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

#[test]
#[should_panic(expected = "not locked")]
fn unlock_of_an_unlocked_lock_panics() {
    Lock::new().unlock();
}

#[test]
fn checked_unlock_reports_and_changes_nothing() {
    let l = Lock::new();
    assert_eq!(l.checked_unlock(), Err(NotLocked));
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
    l.lock();
    assert_eq!(l.checked_unlock(), Ok(()));
    assert_eq!(l.checked_unlock(), Err(NotLocked));
}

#[test]
fn try_lock_for_times_out_without_returning_early() {
    let l = Lock::new();
    l.lock();
    let start = Instant::now();
    assert!(!l.try_lock_for(Duration::from_millis(20)));
    assert!(Instant::now() - start >= Duration::from_millis(20));
    // The timed-out waiter was the only one: PARKED must be clear again,
    // so that the next unlock takes the fast path.
    assert!(!l.has_parked());
    l.unlock();
    assert!(l.try_lock_for(Duration::from_millis(1)));
    l.unlock();
}

#[test]
fn a_parked_waiter_gets_the_lock() {
    let l = Arc::new(Lock::new());
    l.lock();
    let got = Arc::new(AtomicBool::new(false));
    let (l2, got2) = (l.clone(), got.clone());
    let t = std::thread::spawn(move || {
        l2.lock();
        got2.store(true, Ordering::SeqCst);
        l2.unlock();
    });
    while crate::parking_lot::parked_count(l.key()) == 0 {
        std::thread::yield_now();
    }
    assert!(!got.load(Ordering::SeqCst));
    l.unlock();
    t.join().unwrap();
    assert!(got.load(Ordering::SeqCst));
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

#[test]
fn unlock_fair_hands_the_lock_to_the_parked_thread() {
    let l = Arc::new(Lock::new());
    let checked = Arc::new(AtomicBool::new(false));
    l.lock();
    let (l2, c2) = (l.clone(), checked.clone());
    let t = std::thread::spawn(move || {
        l2.lock();
        // Hold it until the main thread has looked.
        while !c2.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        l2.unlock();
    });
    while crate::parking_lot::parked_count(l.key()) == 0 {
        std::thread::yield_now();
    }
    l.unlock_fair();
    // With a handoff the lock never looks free in between, so barging fails.
    assert!(!l.try_lock());
    checked.store(true, Ordering::SeqCst);
    t.join().unwrap();
    assert!(l.try_lock());
    l.unlock();
}

#[test]
fn mutex_guards_data() {
    let m = Mutex::new(0u64);
    let threads = if cfg!(miri) { 2 } else { 4 };
    let per = if cfg!(miri) { 20 } else { 10_000 };
    contend(threads, per, |_, _| *m.lock() += 1);
    assert_eq!(*m.lock(), (threads * per) as u64);
}

#[test]
fn a_thread_that_may_not_block_waits_awake_for_a_held_lock() {
    let l = Lock::new();
    l.lock();
    let waiter = || {
        // Uncontended paths work as anywhere...
        assert!(!l.try_lock());
        // ...and a lock() that must wait queues and stays awake (the
        // parkers' `stay_awake`) until it is handed the lock.
        l.lock();
        l.unlock();
    };
    waits_awake(waiter, || l.unlock_fair());
    assert!(!l.is_locked());
}

#[test]
fn async_lock_queues_then_acquires_when_released() {
    let l = Arc::new(Lock::new());
    let w = AsyncWaiter::new();
    assert!(
        unsafe { l.lock_async_begin(&w) },
        "a free lock is taken at once"
    );
    // Now held by "us"; another thread's async attempt queues.
    let l2 = l.clone();
    let t = std::thread::spawn(move || {
        let w2 = AsyncWaiter::new();
        assert!(!unsafe { l2.lock_async_begin(&w2) });
        // Wait for the word, as Atomics.waitAsync would.
        while w2.poll().is_none() {
            std::thread::yield_now();
        }
        while !unsafe { l2.lock_async_resume(&w2) } {
            while w2.poll().is_none() {
                std::thread::yield_now();
            }
        }
        l2.unlock();
    });
    while crate::parking_lot::parked_count(l.key()) == 0 {
        std::thread::yield_now();
    }
    l.unlock();
    t.join().unwrap();
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

/// Takes `l` and queues `w` for it.
fn queue_behind_the_holder(l: &Lock, w: &AsyncWaiter) {
    l.lock();
    assert!(!unsafe { l.lock_async_begin(w) });
}

#[test]
fn async_lock_cancel_leaves_no_queue_entry_and_no_parked_bit() {
    let (l, w) = (Lock::new(), AsyncWaiter::new());
    queue_behind_the_holder(&l, &w);
    assert_eq!(crate::parking_lot::parked_count(l.key()), 1);
    assert!(!unsafe { l.lock_async_cancel(&w) });
    assert_eq!(crate::parking_lot::parked_count(l.key()), 0);
    assert!(!l.has_parked());
    l.unlock();
    // The record is reusable.
    assert!(unsafe { l.lock_async_begin(&w) });
    l.unlock();
}

#[test]
fn async_lock_cancel_after_a_fair_handoff_owns_the_lock() {
    let (l, w) = (Lock::new(), AsyncWaiter::new());
    queue_behind_the_holder(&l, &w);
    l.unlock_fair(); // hands the lock to the queued async waiter
    assert!(
        unsafe { l.lock_async_cancel(&w) },
        "the handed-over lock must be reported"
    );
    assert!(l.is_locked());
    l.unlock();
}

/// `gone` queued first, a live thread parked behind it.
fn gone_record_then_live_thread(l: &Arc<Lock>, gone: &AsyncWaiter) -> std::thread::JoinHandle<()> {
    l.lock();
    assert!(!unsafe { l.lock_async_begin(gone) });
    let l2 = l.clone();
    let live = std::thread::spawn(move || {
        l2.lock();
        l2.unlock();
    });
    while crate::parking_lot::parked_count(l.key()) != 2 {
        std::thread::yield_now();
    }
    live
}

#[test]
fn a_reaped_queued_waiter_is_never_handed_the_lock() {
    let l = Arc::new(Lock::new());
    let gone = AsyncWaiter::new();
    let live = gone_record_then_live_thread(&l, &gone);
    // SAFETY: nobody uses `gone` again.
    unsafe { crate::parking_lot::abandon_async(&gone) };
    assert_eq!(
        crate::parking_lot::parked_count(l.key()),
        1,
        "only the live thread is queued"
    );
    l.unlock_fair();
    live.join().unwrap();
    assert_eq!(crate::parking_lot::parked_count(l.key()), 0);
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

#[test]
fn a_handoff_the_reaped_owner_never_took_passes_to_the_next_waiter() {
    let l = Arc::new(Lock::new());
    let gone = AsyncWaiter::new();
    let live = gone_record_then_live_thread(&l, &gone);
    l.unlock_fair(); // hands the lock to the record, whose owner is gone
    assert!(l.is_locked());
    // SAFETY: nobody uses `gone` again.
    unsafe { crate::parking_lot::abandon_async(&gone) };
    live.join().unwrap();
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

/// A thread parked on a held lock; `forge` then makes the byte look as a
/// release that woke another thread (since dead, before it ran) left it;
/// a release must wake nobody, and the dead thread's reaper, handed its
/// `token`, must pass the wake on to the parked one.
fn a_reaped_woken_thread_passes_on_its_wake(forge: impl Fn(&Lock), token: UnparkToken) {
    let l = Arc::new(Lock::new());
    l.lock();
    let l2 = l.clone();
    let live = std::thread::spawn(move || {
        l2.lock();
        l2.checked_unlock().unwrap();
    });
    while crate::parking_lot::parked_count(l.key()) == 0 {
        std::thread::yield_now();
    }
    forge(&l);
    l.checked_unlock().unwrap();
    assert_eq!(
        crate::parking_lot::parked_count(l.key()),
        1,
        "a release woke the parked thread"
    );
    (LOCK_ABANDON.claimed)((&*l as *const Lock).cast(), token);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !live.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "the parked thread was never woken"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    live.join().unwrap();
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
}

#[test]
fn a_woken_thread_reaped_before_it_ran_does_not_stop_the_wakes() {
    // The mark stands: a release wakes nobody until the reaper clears it.
    a_reaped_woken_thread_passes_on_its_wake(
        |l| {
            l.state.fetch_or(WAKING, Ordering::Relaxed);
        },
        TOKEN_RETRY,
    );
}

#[test]
fn a_woken_thread_reaped_before_it_ran_passes_on_the_parked_bit_it_carried() {
    // The dead thread carried PARKED: the byte does not say that the
    // other one is queued, until the reaper sets the bit.
    a_reaped_woken_thread_passes_on_its_wake(
        |l| {
            l.state.fetch_and(!PARKED, Ordering::Relaxed);
        },
        TOKEN_RETRY_CARRY,
    );
}

/// Both wake policies are exact: with either set (the test may flip it
/// under others running, which is allowed at any time), threads that
/// contend through both unlocks all get in and leave the byte clean.
#[test]
fn both_wake_policies_exclude_and_leave_nothing_parked() {
    let before = carry_parked();
    for carry in [true, false] {
        set_carry_parked(carry);
        let l = Lock::new();
        let counter = AtomicU32::new(0);
        let threads = if cfg!(miri) { 3 } else { 6 };
        let per = if cfg!(miri) { 10 } else { 20_000 };
        contend(threads, per, |t, i| {
            l.lock();
            // A plain read-then-write: a broken lock loses updates.
            let c = counter.load(Ordering::Relaxed);
            counter.store(c + 1, Ordering::Relaxed);
            if (t + i) % 2 == 0 {
                l.unlock();
            } else {
                l.checked_unlock().unwrap();
            }
        });
        assert_eq!(
            counter.load(Ordering::Relaxed),
            (threads * per) as u32,
            "carry {carry}"
        );
        assert_eq!(l.state.load(Ordering::Relaxed), 0, "carry {carry}");
        assert_eq!(crate::parking_lot::parked_count(l.key()), 0);
    }
    set_carry_parked(before);
}

#[test]
fn a_lock_released_for_a_dead_owner_reports_it_once() {
    let l = Lock::new();
    l.lock();
    // SAFETY (test): stands for a reaper releasing a dead thread's lock.
    unsafe { l.unlock_owner_died() }.unwrap();
    assert!(!l.is_locked());
    assert_eq!(l.lock_checked(), Err(OwnerDied));
    assert!(
        l.is_locked(),
        "the lock is held by the caller after OwnerDied"
    );
    l.unlock();
    assert_eq!(l.lock_checked(), Ok(()));
    l.unlock();
    assert_eq!(l.state.load(Ordering::Relaxed), 0);
    assert_eq!(unsafe { l.unlock_owner_died() }, Err(NotLocked));
}

#[test]
fn spin_limit_is_configurable() {
    assert_eq!(DEFAULT_SPIN_LIMIT, 40);
    let before = spin_limit();
    set_spin_limit(7);
    assert_eq!(spin_limit(), 7);
    set_spin_limit(before);
}
