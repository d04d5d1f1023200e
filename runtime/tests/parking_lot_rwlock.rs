//! parking_lot's own reader-writer lock tests, run against [`parklot::RwLock`].
//!
//! Ported from parking_lot 0.13.0 (`src/rwlock.rs`, 23 tests; `test_serde`
//! and `test_issue_430` need parking_lot's `serde` and `arc_lock` features,
//! which parklot does not have) and, for `read_recursive`, which 0.13 moved
//! to a separate `RecursiveRwLock`: `test_rwlock_recursive` from parking_lot
//! 0.12 and `recursive_read_with_waiting_writer` from 0.13's
//! `src/recursive_rwlock.rs`. parking_lot is Copyright 2016 Amanieu d'Antras,
//! under the MIT or Apache-2.0 license, as parklot is. Changes: parklot's
//! names (`has_parked`, the [`ReadRecursive`] trait), no `rand` (a xorshift
//! instead), waiting for a writer to park instead of sleeping, and the
//! repeated bodies written once (the no-poison, writer-and-children and
//! try-in-each-mode tests share helpers; the threads are scoped).

use parklot::{
    ReadRecursive, RwLock, RwLockReadGuard, RwLockUpgradableReadGuard, RwLockWriteGuard,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

#[derive(Eq, PartialEq, Debug)]
struct NonCopy(i32);

/// A thread that waits for the write lock (and lets go at once), returned
/// once it is parked.
fn parked_writer<T: Send + Sync + 'static>(lock: &Arc<RwLock<T>>) -> thread::JoinHandle<()> {
    let lock2 = Arc::clone(lock);
    let writer = thread::spawn(move || drop(lock2.write()));
    // SAFETY: only a snapshot of the raw lock's word is read.
    while !unsafe { lock.raw() }.has_parked() {
        thread::yield_now();
    }
    writer
}

#[test]
fn smoke() {
    let l = RwLock::new(());
    drop(l.read());
    drop(l.write());
    drop(l.upgradable_read());
    drop((l.read(), l.read()));
    drop((l.read(), l.upgradable_read()));
    drop(l.write());
}

#[test]
fn frob() {
    const N: u32 = 10;
    const M: u32 = if cfg!(miri) { 100 } else { 1000 };

    let r = Arc::new(RwLock::new(()));

    let mut threads = Vec::new();
    for seed in 0..N {
        let r = r.clone();
        threads.push(thread::spawn(move || {
            let mut x = 0x9E37_79B9u32 ^ (seed + 1).wrapping_mul(0x85EB_CA6B);
            for _ in 0..M {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if x.is_multiple_of(N) {
                    drop(r.write());
                } else {
                    drop(r.read());
                }
            }
        }));
    }
    for thread in threads {
        thread.join().unwrap();
    }
}

/// parking_lot's no-poison tests: a thread panics while `hold` holds the
/// lock; `then` takes it again, and finds the value unharmed.
fn no_poison(hold: fn(&RwLock<i32>), then: fn(&RwLock<i32>) -> i32) {
    let lock = RwLock::new(1);
    let _: Result<(), _> = thread::scope(|s| s.spawn(|| hold(&lock)).join());
    assert_eq!(then(&lock), 1);
}

fn panic_writing(lock: &RwLock<i32>) {
    let _lock = lock.write();
    panic!();
}

fn panic_reading(lock: &RwLock<i32>) {
    let _lock = lock.read();
    panic!();
}

/// The four no-poison tests: `name: hold, then` each.
macro_rules! no_poison_tests {
    ($($name:ident: $hold:ident, $then:expr;)*) => {
        $(
            #[test]
            fn $name() {
                no_poison($hold, $then);
            }
        )*
    };
}

no_poison_tests! {
    test_rw_arc_no_poison_wr: panic_writing, |l| *l.read();
    test_rw_arc_no_poison_ww: panic_writing, |l| *l.write();
    test_rw_arc_no_poison_rr: panic_reading, |l| *l.read();
    test_rw_arc_no_poison_rw: panic_reading, |l| *l.write();
}

/// Sets `value` to -1, yields, then to its old value plus one: a thread that
/// looks in between sees -1.
fn bump(value: &mut isize) {
    let tmp = *value;
    *value = -1;
    thread::yield_now();
    *value = tmp + 1;
}

/// A thread of [`writer_and_children`].
type Child = fn(&RwLock<isize>);

/// An upgradable reader that tries to catch the writer in the act and also
/// tries to touch the value.
fn upgrader(lock: &RwLock<isize>) {
    let lock = lock.upgradable_read();
    let tmp = *lock;
    assert!(tmp >= 0);
    thread::yield_now();
    let mut lock = RwLockUpgradableReadGuard::upgrade(lock);
    assert_eq!(tmp, *lock);
    bump(&mut lock);
}

/// A reader that tries to catch the writers in the act.
fn reader(lock: &RwLock<isize>) {
    let lock = lock.read();
    assert!(*lock >= 0);
}

/// A writer bumps the value 10 times, taking the lock for each bump or
/// (`holds`) once for all, while each of `children` runs on a thread of its
/// own. Returns the value at the end.
fn writer_and_children(holds: bool, children: &[Child]) -> isize {
    let lock = RwLock::new(0);
    thread::scope(|s| {
        let writer = s.spawn(|| {
            if holds {
                let mut lock = lock.write();
                (0..10).for_each(|_| bump(&mut lock));
            } else {
                (0..10).for_each(|_| bump(&mut lock.write()));
            }
        });
        let children: Vec<_> = children.iter().map(|c| s.spawn(|| c(&lock))).collect();
        // Wait for children to pass their asserts
        for r in children {
            assert!(r.join().is_ok());
        }
        // Wait for writer to finish
        writer.join().unwrap();
    });
    let value = *lock.read();
    value
}

#[test]
fn test_ruw_arc() {
    let children = [[upgrader as Child; 5], [reader as Child; 5]].concat();
    assert_eq!(writer_and_children(false, &children), 15);
}

#[test]
fn test_rw_arc() {
    assert_eq!(writer_and_children(true, &[reader as Child; 5]), 10);
}

#[test]
fn test_rw_arc_access_in_unwind() {
    let arc = Arc::new(RwLock::new(1));
    let arc2 = arc.clone();
    let _ = thread::spawn(move || {
        struct Unwinder {
            i: Arc<RwLock<isize>>,
        }
        impl Drop for Unwinder {
            fn drop(&mut self) {
                let mut lock = self.i.write();
                *lock += 1;
            }
        }
        let _u = Unwinder { i: arc2 };
        panic!();
    })
    .join();
    let lock = arc.read();
    assert_eq!(*lock, 2);
}

#[test]
fn test_rwlock_unsized() {
    let rw: &RwLock<[i32]> = &RwLock::new([1, 2, 3]);
    {
        let b = &mut *rw.write();
        b[0] = 4;
        b[2] = 5;
    }
    let comp: &[i32] = &[4, 2, 5];
    assert_eq!(&*rw.read(), comp);
}

#[test]
fn test_read_with_waiting_writer() {
    let lock = Arc::new(RwLock::new(()));
    let reader = lock.read();
    let writer = parked_writer(&lock);

    // A waiting writer blocks new readers even though no writer holds the lock.
    assert!(lock.try_read().is_none());

    drop(reader);
    writer.join().unwrap();
}

/// How a test holds the lock.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    Read,
    Upgradable,
    Write,
}

/// Holds `lock` in each of `modes` in turn and runs `check` meanwhile, with
/// the guard's name (`read_guard`, `upgrade_guard`, `write_guard`). Each
/// tuple takes the guard first and drops it after `check`.
fn while_held(lock: &RwLock<isize>, modes: &[Held], check: impl Fn(Held, &str)) {
    for &mode in modes {
        match mode {
            Held::Read => drop((lock.read(), check(mode, "read_guard"))),
            Held::Upgradable => drop((lock.upgradable_read(), check(mode, "upgrade_guard"))),
            Held::Write => drop((lock.write(), check(mode, "write_guard"))),
        }
    }
}

const EVERY_MODE: [Held; 3] = [Held::Read, Held::Upgradable, Held::Write];

/// "succeed" or "fail", as the messages of parking_lot's try tests say.
fn outcome(succeeds: bool) -> &'static str {
    if succeeds {
        "succeed"
    } else {
        "fail"
    }
}

#[test]
fn test_rwlock_try_read() {
    let lock = RwLock::new(0isize);
    while_held(&lock, &EVERY_MODE, |mode, guard| {
        let read_result = lock.try_read();
        let succeeds = mode != Held::Write;
        assert_eq!(
            read_result.is_some(),
            succeeds,
            "try_read should {} while {guard} is in scope",
            outcome(succeeds)
        );
    });
}

#[test]
fn test_rwlock_try_write() {
    let lock = RwLock::new(0isize);
    while_held(&lock, &EVERY_MODE, |mode, guard| {
        let write_result = lock.try_write();
        assert!(
            write_result.is_none(),
            "try_write should fail while {guard} is in scope"
        );
        assert!(lock.is_locked());
        assert_eq!(lock.is_locked_exclusive(), mode == Held::Write);
    });
}

#[test]
fn test_rwlock_try_upgrade() {
    let lock = RwLock::new(0isize);
    while_held(&lock, &EVERY_MODE, |mode, guard| {
        let upgrade_result = lock.try_upgradable_read();
        let succeeds = mode == Held::Read;
        assert_eq!(
            upgrade_result.is_some(),
            succeeds,
            "try_upgradable_read should {} while {guard} is in scope",
            outcome(succeeds)
        );
    });
}

#[test]
fn test_into_inner() {
    let m = RwLock::new(NonCopy(10));
    assert_eq!(m.into_inner(), NonCopy(10));
}

#[test]
fn test_into_inner_drop() {
    struct Foo(Arc<AtomicUsize>);
    impl Drop for Foo {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let num_drops = Arc::new(AtomicUsize::new(0));
    let m = RwLock::new(Foo(num_drops.clone()));
    assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    {
        let _inner = m.into_inner();
        assert_eq!(num_drops.load(Ordering::SeqCst), 0);
    }
    assert_eq!(num_drops.load(Ordering::SeqCst), 1);
}

#[test]
fn test_get_mut() {
    let mut m = RwLock::new(NonCopy(10));
    *m.get_mut() = NonCopy(20);
    assert_eq!(m.into_inner(), NonCopy(20));
}

#[test]
fn test_rwlockguard_sync() {
    fn sync<T: Sync>(_: T) {}

    let rwlock = RwLock::new(());
    sync(rwlock.read());
    sync(rwlock.write());
}

#[test]
fn test_rwlock_downgrade() {
    let x = Arc::new(RwLock::new(0));
    let mut handles = Vec::new();
    for _ in 0..8 {
        let x = x.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..100 {
                let mut writer = x.write();
                *writer += 1;
                let cur_val = *writer;
                let reader = RwLockWriteGuard::downgrade(writer);
                assert_eq!(cur_val, *reader);
            }
        }));
    }
    for handle in handles {
        handle.join().unwrap()
    }
    assert_eq!(*x.read(), 800);
}

#[test]
fn test_rwlock_debug() {
    let x = RwLock::new(vec![0u8, 10]);

    assert_eq!(format!("{:?}", x), "RwLock { data: [0, 10] }");
    let _lock = x.write();
    assert_eq!(format!("{:?}", x), "RwLock { data: <locked> }");
}

#[test]
fn test_clone_through_guard() {
    let rwlock = RwLock::new(Arc::new(1));
    let a = rwlock.read();
    // This must clone the protected Arc, not the read guard.
    let b = a.clone();
    assert_eq!(Arc::strong_count(&b), 2);
}

#[test]
fn test_issue_203() {
    struct Bar(RwLock<()>);

    impl Drop for Bar {
        fn drop(&mut self) {
            let _n = self.0.write();
        }
    }

    thread_local! {
        static B: Bar = const { Bar(RwLock::new(())) };
    }

    thread::spawn(|| {
        B.with(|_| ());

        let a = RwLock::new(());
        let _a = a.read();
    })
    .join()
    .unwrap();
}

#[test]
fn test_rw_write_is_locked() {
    let lock = RwLock::new(0isize);
    while_held(&lock, &[Held::Read, Held::Write], |mode, _| {
        assert!(lock.is_locked());
        assert_eq!(lock.is_locked_exclusive(), mode == Held::Write);
    });
}

// ----- read_recursive -----

/// parking_lot 0.12's `test_rwlock_recursive`.
#[test]
fn test_rwlock_recursive() {
    let arc = Arc::new(RwLock::new(1));
    let lock1 = arc.read();
    let t = parked_writer(&arc);

    // A normal read would block here since there is a pending writer
    let lock2 = arc.read_recursive();

    // Unblock the thread and join it.
    drop(lock1);
    drop(lock2);
    t.join().unwrap();
}

/// parking_lot 0.13's `recursive_read_with_waiting_writer`, whose
/// `RecursiveRwLock::try_read` is `try_read_recursive` here.
#[test]
fn recursive_read_with_waiting_writer() {
    let lock = Arc::new(RwLock::new(()));
    let first = lock.read_recursive();
    let second = lock.read_recursive();
    let writer = parked_writer(&lock);

    assert!(lock.try_read_recursive().is_some());
    let mut second = second;
    RwLockReadGuard::bump(&mut second);

    drop(first);
    drop(second);
    writer.join().unwrap();
}
