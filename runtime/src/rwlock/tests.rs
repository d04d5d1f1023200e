use super::*;
use crate::parking_lot::{self, AsyncWaiter};
use crate::test_threads::{contend, waits_awake, with_threads};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

const BOTH: [RwLockPolicy; 2] = [RwLockPolicy::PreferWriters, RwLockPolicy::PreferReaders];

/// Runs `test` on a new lock (writer-preferring), then checks that it left
/// the lock idle.
fn on_a_new_lock(test: impl FnOnce(&Arc<RawRwLock>)) {
    let l = Arc::new(RawRwLock::new());
    test(&l);
    assert_eq!(state(&l), PREFER_WRITERS, "left idle");
}

/// Runs `test` on a fresh lock of each policy, then checks that it left the
/// lock idle: nothing but the policy's bit.
fn in_both_policies(test: impl Fn(&Arc<RawRwLock>, RwLockPolicy)) {
    for policy in BOTH {
        let l = Arc::new(RawRwLock::with_policy(policy));
        test(&l, policy);
        assert_eq!(state(&l), policy_bits(policy), "{policy:?}: left idle");
    }
}

/// Lets go of `n` reads.
///
/// # Safety
/// `l` is read-locked that many times.
unsafe fn unlock_reads(l: &RawRwLock, n: usize) {
    for _ in 0..n {
        // SAFETY: forwarded from the caller.
        unsafe { l.unlock_shared() };
    }
}

fn state(l: &RawRwLock) -> u32 {
    l.state.load(Ordering::Relaxed)
}

/// A reader that leaves while others read and writers are parked may
/// set `WRITER_FIRST` when the writers' fairness timer fires. If the
/// word it decided on is stale (the writers, or the other readers, left
/// in between), nobody else would act on the bit, and new readers would
/// wait for a writer that is not there (a deadlock seen in the wasm
/// benchmark). Here the stale word is handed in directly.
#[test]
fn writer_first_on_a_stale_word_is_not_left_behind() {
    let l = RawRwLock::with_policy(RwLockPolicy::PreferReaders);
    l.lock_shared();
    let stale = state(&l) | WRITERS_PARKED | ONE_READER; // one more reader, a parked writer
                                                         // The writers' timer fires a random 0-1 ms after it last did: by now it is due.
    std::thread::sleep(std::time::Duration::from_micros(1500));
    l.reader_left_with(stale, false);
    assert_eq!(
        state(&l) & WRITER_FIRST,
        0,
        "WRITER_FIRST left set with no writer parked"
    );
    assert!(
        l.try_lock_shared(),
        "a new reader is kept out of a read-held lock"
    );
    // SAFETY: two reads are held, taken above.
    unsafe {
        l.unlock_shared();
        l.unlock_shared()
    };
}

/// Waits until `n` threads are queued under `class`'s address.
fn wait_queued(l: &RawRwLock, class: Class, n: usize) {
    while parking_lot::parked_count(l.key(class)) != n {
        std::thread::yield_now();
    }
}

#[test]
fn is_four_bytes() {
    assert_eq!(core::mem::size_of::<RawRwLock>(), 4);
    assert_eq!(core::mem::size_of::<RwLock<()>>(), 4);
}

#[test]
fn readers_share_writers_exclude() {
    in_both_policies(|l, policy| {
        assert_eq!(l.policy(), policy);
        assert!(l.try_lock_shared() && l.try_lock_shared());
        assert_eq!(l.reader_count(), 2);
        assert!(!l.try_lock_exclusive());
        unsafe { l.unlock_shared() };
        unsafe { l.unlock_shared() };
        assert!(l.try_lock_exclusive());
        assert!(!l.try_lock_shared() && !l.try_lock_upgradable() && !l.try_lock_exclusive());
        unsafe { l.unlock_exclusive() };
    });
}

#[test]
fn upgradable_excludes_upgradable_and_writers_but_not_readers() {
    on_a_new_lock(|l| {
        assert!(l.try_lock_upgradable());
        assert!(!l.try_lock_upgradable() && !l.try_lock_exclusive());
        assert!(l.try_lock_shared());
        assert!(!unsafe { l.try_upgrade() }, "a reader is still in");
        unsafe { l.unlock_shared() };
        assert!(unsafe { l.try_upgrade() });
        assert!(l.is_locked_exclusive() && l.reader_count() == 0);
        unsafe { l.downgrade_to_upgradable() };
        assert!(l.try_lock_shared());
        unsafe { l.downgrade_upgradable() };
        assert!(l.try_lock_upgradable(), "the upgradable slot is free again");
        unsafe {
            l.unlock_upgradable();
            unlock_reads(l, 2);
        }
        l.lock_exclusive();
        unsafe { l.downgrade() };
        assert_eq!(l.reader_count(), 1);
        unsafe { l.unlock_shared() };
    });
}

#[test]
fn timeouts_give_up_and_leave_no_parked_bit() {
    in_both_policies(|l, policy| {
        l.lock_exclusive();
        let start = Instant::now();
        assert!(!l.try_lock_shared_for(Duration::from_millis(10)));
        assert!(!l.try_lock_exclusive_for(Duration::from_millis(10)));
        assert!(!l.try_lock_upgradable_for(Duration::from_millis(10)));
        assert!(Instant::now() - start >= Duration::from_millis(30));
        unsafe { l.unlock_exclusive() };
        assert_eq!(state(l), policy_bits(policy), "{policy:?}");
        l.lock_shared();
        assert!(!l.try_lock_exclusive_until(Instant::now() + Duration::from_millis(5)));
        unsafe { l.unlock_shared() };
    });
}

#[test]
fn a_timed_out_upgrade_keeps_the_upgradable_read_and_lets_readers_in() {
    on_a_new_lock(|l| {
        l.lock_upgradable();
        l.lock_shared(); // another reader, that stays
        assert!(!unsafe { l.try_upgrade_for(Duration::from_millis(10)) });
        assert!(!l.is_locked_exclusive());
        assert!(l.try_lock_shared(), "readers enter again");
        unsafe {
            unlock_reads(l, 2);
            l.upgrade();
            l.unlock_exclusive();
        }
    });
}

#[test]
fn an_upgrade_waits_for_the_readers_and_blocks_new_ones() {
    on_a_new_lock(|l| {
        l.lock_shared();
        let l2 = l.clone();
        let upgraded = Arc::new(AtomicBool::new(false));
        let u2 = upgraded.clone();
        let t = std::thread::spawn(move || {
            l2.lock_upgradable();
            unsafe { l2.upgrade() };
            u2.store(true, Ordering::SeqCst);
            unsafe { l2.unlock_exclusive() };
        });
        while !l.is_locked_exclusive() {
            std::thread::yield_now();
        }
        assert!(
            !l.try_lock_shared(),
            "an upgrade in progress stops new readers"
        );
        assert!(!upgraded.load(Ordering::SeqCst));
        unsafe { l.unlock_shared() };
        t.join().unwrap();
        assert!(upgraded.load(Ordering::SeqCst));
    });
}

#[test]
fn a_writers_unlock_wakes_every_parked_reader() {
    in_both_policies(|l, _| {
        l.lock_exclusive();
        let inside = AtomicUsize::new(0);
        let reader = |_| {
            l.lock_shared();
            inside.fetch_add(1, Ordering::SeqCst);
            // Stay until all three are in: they must share.
            while inside.load(Ordering::SeqCst) < 3 {
                std::thread::yield_now();
            }
            unsafe { l.unlock_shared() };
        };
        with_threads(3, reader, || {
            wait_queued(l, Class::Reader, 3);
            unsafe { l.unlock_exclusive() };
        });
    });
}

#[test]
fn writer_preference_stops_new_readers_reader_preference_does_not() {
    in_both_policies(|l, policy| {
        l.lock_shared();
        let w = queued_writer(l, || ());
        let reader_enters = l.try_lock_shared();
        assert_eq!(reader_enters, policy == RwLockPolicy::PreferReaders);
        if reader_enters {
            unsafe { l.unlock_shared() };
        }
        unsafe { l.unlock_shared() };
        w.join().unwrap();
    });
}

/// A thread that queues for the write lock and, once it has it, runs `hold`
/// and lets go; returned once it is queued.
fn queued_writer(
    l: &Arc<RawRwLock>,
    hold: impl FnOnce() + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let l2 = l.clone();
    let w = std::thread::spawn(move || {
        l2.lock_exclusive();
        hold();
        // SAFETY: locked just above.
        unsafe { l2.unlock_exclusive() };
    });
    wait_queued(l, Class::Writer, 1);
    w
}

/// A thread that parks for the write lock and holds it, once it has it,
/// until `release` is set.
fn parked_writer(l: &Arc<RawRwLock>) -> (std::thread::JoinHandle<()>, Arc<AtomicBool>) {
    let release = Arc::new(AtomicBool::new(false));
    let r2 = release.clone();
    let w = queued_writer(l, move || {
        while !r2.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    });
    (w, release)
}

#[test]
fn a_fair_unlock_hands_the_lock_to_a_parked_writer() {
    on_a_new_lock(|l| {
        l.lock_exclusive();
        let (w, release) = parked_writer(l);
        unsafe { l.unlock_exclusive_fair() };
        assert!(
            !l.try_lock_exclusive() && !l.try_lock_shared(),
            "handed over"
        );
        release.store(true, Ordering::SeqCst);
        w.join().unwrap();
    });
}

#[test]
fn a_fair_read_unlock_hands_the_lock_to_a_parked_writer() {
    let l = Arc::new(RawRwLock::with_policy(RwLockPolicy::PreferReaders));
    l.lock_shared();
    let (w, release) = parked_writer(&l);
    unsafe { l.unlock_shared_fair() };
    assert!(
        !l.try_lock_shared(),
        "handed to the writer: no reader barges in"
    );
    release.store(true, Ordering::SeqCst);
    w.join().unwrap();
    let m = RwLock::new(1);
    let g = m.read();
    RwLockReadGuard::unlock_fair(g);
    assert_eq!(state(&l), 0);
}

#[test]
fn rwlock_guards_data() {
    for policy in BOTH {
        let m = RwLock::from_raw(RawRwLock::with_policy(policy), 0u64);
        let threads = if cfg!(miri) { 2 } else { 4 };
        let per = if cfg!(miri) { 20 } else { 5_000 };
        contend(threads, per, |i, j| {
            if (i + j) % 2 == 0 {
                *m.write() += 1;
            } else if j % 3 == 0 {
                let up = m.upgradable_read();
                let mut w = RwLockUpgradableReadGuard::upgrade(up);
                *w += 1;
            } else {
                let r = m.read();
                assert!(*r <= (threads * per) as u64);
            }
        });
        let writes: u64 = (0..threads)
            .map(|i| (0..per).filter(|j| (i + j) % 2 == 0 || j % 3 == 0).count() as u64)
            .sum();
        assert_eq!(*m.read(), writes);
        assert_eq!(
            unsafe { m.raw() }.state.load(Ordering::Relaxed),
            policy_bits(policy)
        );
    }
}

#[test]
fn async_read_and_write_queue_then_acquire_and_cancel_cleanly() {
    in_both_policies(|l, _| {
        let w = AsyncWaiter::new();
        assert!(
            unsafe { l.lock_exclusive_async_begin(&w) },
            "free: taken at once"
        );
        let r = AsyncWaiter::new();
        assert!(!unsafe { l.lock_shared_async_begin(&r) });
        assert_eq!(parking_lot::parked_count(l.key(Class::Reader)), 1);
        // Cancelled while still queued: nothing held, nothing left.
        assert!(!unsafe { l.lock_shared_async_cancel(&r) });
        assert_eq!(parking_lot::parked_count(l.key(Class::Reader)), 0);
        // Queued again, then the writer leaves: the reader's word turns.
        assert!(!unsafe { l.lock_shared_async_begin(&r) });
        unsafe { l.unlock_exclusive() };
        while r.poll().is_none() {
            std::thread::yield_now();
        }
        assert!(unsafe { l.lock_shared_async_resume(&r) });
        assert_eq!(l.reader_count(), 1);
        // A writer queues behind the reader; a fair handoff is not needed.
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            let w2 = AsyncWaiter::new();
            if unsafe { l2.lock_exclusive_async_begin(&w2) } {
                unsafe { l2.unlock_exclusive() };
                return;
            }
            loop {
                while w2.poll().is_none() {
                    std::thread::yield_now();
                }
                if unsafe { l2.lock_exclusive_async_resume(&w2) } {
                    break;
                }
            }
            unsafe { l2.unlock_exclusive() };
        });
        wait_queued(l, Class::Writer, 1);
        unsafe { l.unlock_shared() };
        t.join().unwrap();
    });
}

#[test]
fn a_reaped_queued_waiter_owes_nothing_and_is_never_handed_the_lock() {
    on_a_new_lock(|l| {
        l.lock_shared();
        let gone = AsyncWaiter::new();
        assert!(!unsafe { l.lock_exclusive_async_begin(&gone) });
        // SAFETY (test): nobody uses `gone` again.
        unsafe { parking_lot::abandon_async(&gone) };
        assert_eq!(parking_lot::parked_count(l.key(Class::Writer)), 0);
        unsafe { l.unlock_shared() };
    });
}

#[test]
fn a_handoff_the_reaped_owner_never_took_is_released() {
    for class in [Class::Reader, Class::Writer] {
        let l = RawRwLock::new();
        l.lock_exclusive();
        let gone = AsyncWaiter::new();
        assert!(!unsafe { l.async_begin(class, &gone) });
        unsafe { l.unlock_exclusive_fair() }; // hands it to the record
        assert!(l.is_locked(), "{class:?}: handed over");
        // SAFETY (test): nobody uses `gone` again.
        unsafe { parking_lot::abandon_async(&gone) };
        assert_eq!(
            state(&l),
            PREFER_WRITERS,
            "{class:?}: released for the gone owner"
        );
    }
}

#[test]
fn a_thread_that_may_not_block_waits_awake_for_a_held_lock() {
    let l = RawRwLock::new();
    l.lock_exclusive();
    let reader = || {
        l.lock_shared();
        unsafe { l.unlock_shared() };
    };
    waits_awake(reader, || unsafe { l.unlock_exclusive() });
    assert!(l.try_lock_exclusive());
    unsafe { l.unlock_exclusive() };
}

// ----- recursive reads -----

#[test]
fn a_recursive_read_enters_whenever_a_read_is_held() {
    let enter = |s| Class::RecursiveReader.enter(s);
    let (one, two) = (ONE_READER, 2 * ONE_READER);
    // A read is held: in, past a parked writer (writer preference) or an owed one.
    assert_eq!(
        enter(PREFER_WRITERS | WRITERS_PARKED | one),
        Some(PREFER_WRITERS | WRITERS_PARKED | two)
    );
    assert_eq!(
        enter(WRITERS_PARKED | WRITER_FIRST | one),
        Some(WRITERS_PARKED | WRITER_FIRST | two)
    );
    // An upgrade waits: in only if someone besides the upgrader reads.
    let upgrading = PREFER_WRITERS | WRITER | UPGRADABLE | UPGRADE_PARKED;
    assert_eq!(enter(upgrading | one), None);
    assert_eq!(enter(upgrading | two), Some(upgrading | (3 * ONE_READER)));
    // Nobody reads: as a plain reader.
    for s in [
        PREFER_WRITERS | WRITER,
        PREFER_WRITERS | WRITERS_PARKED,
        WRITER_FIRST,
        0,
    ] {
        assert_eq!(enter(s), Class::Reader.enter(s), "{s:#x}");
    }
    assert_eq!(enter(READERS_MASK), None, "the count is full");
}

#[test]
fn a_recursive_read_passes_a_parked_writer_that_a_plain_read_waits_for() {
    for policy in BOTH {
        let m = Arc::new(RwLock::from_raw(RawRwLock::with_policy(policy), 7));
        let first = m.read();
        let m2 = m.clone();
        let w = std::thread::spawn(move || *m2.write() += 1);
        wait_queued(unsafe { m.raw() }, Class::Writer, 1);
        assert_eq!(
            m.try_read().is_some(),
            policy == RwLockPolicy::PreferReaders,
            "{policy:?}: a plain read waits behind the writer only under writer preference"
        );
        let second = m.read_recursive(); // at once: a read is held
        let third = m.try_read_recursive().expect("a read is held");
        let fourth = m.try_read_recursive_for(Duration::from_secs(5)).unwrap();
        let fifth = m.try_read_recursive_until(Instant::now()).unwrap();
        assert_eq!(unsafe { m.raw() }.reader_count(), 5);
        assert!(!w.is_finished(), "{policy:?}: the writer still waits");
        drop((first, second, third, fourth, fifth));
        w.join().unwrap();
        assert_eq!(*m.read_recursive(), 8);
        assert_eq!(state(unsafe { m.raw() }), policy_bits(policy), "{policy:?}");
    }
}

#[test]
fn a_recursive_read_passes_a_writer_owed_the_lock() {
    let l = Arc::new(RawRwLock::with_policy(RwLockPolicy::PreferReaders));
    l.lock_shared();
    let w = queued_writer(&l, || ());
    // Overlapping reads until a leaving one says the writer is owed the lock.
    while l.try_lock_shared() {
        std::thread::sleep(Duration::from_micros(200));
        unsafe { l.unlock_shared() };
    }
    assert_ne!(state(&l) & WRITER_FIRST, 0);
    assert!(l.try_lock_shared_recursive(), "a read is held");
    unsafe { unlock_reads(&l, 2) };
    w.join().unwrap();
    assert_eq!(state(&l), 0);
}

#[test]
fn a_recursive_read_passes_a_waiting_upgrade_only_for_another_reader() {
    on_a_new_lock(|l| {
        l.lock_shared();
        let l2 = l.clone();
        let u = std::thread::spawn(move || {
            l2.lock_upgradable();
            unsafe {
                l2.upgrade();
                l2.unlock_exclusive();
            }
        });
        wait_queued(l, Class::Upgrade, 1);
        assert!(
            !l.try_lock_shared(),
            "an upgrade in progress stops new readers"
        );
        assert!(l.try_lock_shared_recursive(), "but not a read by a reader");
        unsafe { unlock_reads(l, 2) };
        u.join().unwrap();
    });
}

#[test]
fn a_recursive_read_with_nobody_reading_waits_and_times_out_as_a_read() {
    in_both_policies(|l, policy| {
        l.lock_exclusive();
        assert!(!l.try_lock_shared_recursive());
        assert!(!l.try_lock_shared_recursive_for(Duration::from_millis(5)));
        assert!(!l.try_lock_shared_recursive_until(Instant::now() + Duration::from_millis(5)));
        unsafe { l.unlock_exclusive() };
        assert_eq!(
            state(l),
            policy_bits(policy),
            "{policy:?}: no parked bit left"
        );
        l.lock_shared_recursive();
        unsafe { l.unlock_shared() };
    });
}

#[test]
fn a_bump_with_another_read_held_does_not_wait_for_itself() {
    let m = Arc::new(RwLock::new(()));
    let first = m.read();
    let mut second = m.read_recursive();
    let m2 = m.clone();
    let w = std::thread::spawn(move || drop(m2.write()));
    wait_queued(unsafe { m.raw() }, Class::Writer, 1);
    RwLockReadGuard::bump(&mut second); // a plain re-read would wait for `first`
    drop((first, second));
    w.join().unwrap();
}
