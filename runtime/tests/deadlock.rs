//! Diagnostics: the snapshot, deadlock detection (2-, 3- and N-thread
//! cycles, blocking, async and mixed; none reported where there is none),
//! the reaped leaving the graph, and lock-order checking.

use parklot::diagnostics::{self, Kind};
use parklot::parking_lot::{abandon_thread, AsyncWaiter, ThreadRecord};
use parklot::{deadlock, lock_order, Lock, RawRwLock};
use std::sync::{mpsc, Arc, Barrier, Mutex as StdMutex, MutexGuard as StdGuard};
use std::thread;
use std::time::{Duration, Instant};

/// Diagnostics are process-wide: one test at a time, each starting clean.
fn serial() -> StdGuard<'static, ()> {
    static SERIAL: StdMutex<()> = StdMutex::new(());
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    deadlock::set_enabled(false);
    lock_order::set_enabled(false);
    diagnostics::set_tracking(false);
    lock_order::reset();
    guard
}

/// Runs `f` alone, with deadlock detection on.
fn detecting(f: impl FnOnce()) {
    let _s = serial();
    deadlock::set_enabled(true);
    f();
    deadlock::set_enabled(false);
}

/// Two leaked locks, the first held by the calling thread.
fn two_locks_first_held() -> (&'static Lock, &'static Lock) {
    let (a, b) = (leak(Lock::new()), leak(Lock::new()));
    a.lock();
    (a, b)
}

fn addr(lock: &Lock) -> usize {
    lock as *const Lock as usize
}

/// Waits until `n` waiters are queued on `lock` (a thread reached its park).
fn until_queued(lock: &Lock, n: usize) {
    let start = Instant::now();
    while diagnostics::waiter_count(addr(lock)) < n {
        assert!(start.elapsed() < Duration::from_secs(10), "nobody queued");
        thread::sleep(Duration::from_millis(1));
    }
}

fn leak(lock: Lock) -> &'static Lock {
    Box::leak(Box::new(lock))
}

/// A ring of `n` threads: thread i holds lock i and then takes lock i+1.
/// Threads 0..n-1 block; the last closes the cycle and is refused; it
/// releases its lock, and everyone else finishes.
fn ring(n: usize) {
    detecting(|| {
        let locks: Vec<&'static Lock> = (0..n).map(|_| leak(Lock::new())).collect();
        let held = Arc::new(Barrier::new(n));
        let mut joins = Vec::new();
        for i in 0..n - 1 {
            let (mine, next, held) = (locks[i], locks[i + 1], held.clone());
            joins.push(thread::spawn(move || {
                diagnostics::set_thread_name(&format!("ring-{i}"));
                mine.lock();
                held.wait();
                next.lock();
                next.unlock();
                mine.unlock();
            }));
        }
        let (last, first) = (locks[n - 1], locks[0]);
        let closer = thread::spawn(move || {
            diagnostics::set_thread_name("closer");
            last.lock();
            held.wait();
            for lock in &locks[1..n - 1] {
                until_queued(lock, 1);
            }
            until_queued(last, 1);
            let refused = first.lock_or_deadlock();
            last.unlock();
            (refused, diagnostics::thread_id())
        });
        let (refused, closer_id) = closer.join().unwrap();
        for j in joins {
            j.join().unwrap();
        }
        let error = refused.expect_err("the closing wait is refused");
        let steps = &error.cycle.steps;
        println!("{n} threads: {error}");
        assert_eq!(steps.len(), n);
        assert_eq!(steps[0].thread, closer_id);
        assert_eq!(steps[0].address, addr(first));
        assert_eq!(steps.last().unwrap().holder, closer_id);
        assert!(steps.iter().all(|s| s.kind == Kind::Lock));
        assert!(error.to_string().contains("(closer)"));
    });
}

#[test]
fn a_two_thread_cycle_is_refused_to_the_thread_that_closes_it() {
    ring(2);
}

#[test]
fn a_three_thread_cycle_is_refused() {
    ring(3);
}

#[test]
fn an_eight_thread_cycle_is_refused() {
    ring(8);
}

#[test]
fn relocking_a_held_lock_is_a_cycle_of_one() {
    detecting(|| {
        let lock = Lock::new();
        lock.lock();
        let error = lock.lock_or_deadlock().expect_err("a relock never ends");
        assert_eq!(error.cycle.steps.len(), 1);
        assert_eq!(error.cycle.steps[0].holder, diagnostics::thread_id());
        // The infallible call panics with it.
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lock.lock()));
        let message = *panic.unwrap_err().downcast::<String>().unwrap();
        assert!(message.starts_with("deadlock: thread"), "{message}");
        lock.unlock();
        assert!(!lock.is_locked());
    });
}

#[test]
fn an_async_wait_that_would_close_a_cycle_is_refused_and_not_queued() {
    detecting(|| {
        let (a, b) = two_locks_first_held();
        let (to_main, from_thread) = mpsc::channel();
        let t = thread::spawn(move || {
            b.lock();
            to_main.send(()).unwrap();
            a.lock(); // blocks: the main thread holds it
            a.unlock();
            b.unlock();
        });
        from_thread.recv().unwrap();
        until_queued(a, 1);
        let waiter = AsyncWaiter::new();
        // SAFETY: a new record, alive until the end of the test.
        assert!(!unsafe { b.lock_async_begin(&waiter) });
        let error = deadlock::take_deadlock().expect("refused, not queued");
        assert_eq!(error.cycle.steps.len(), 2);
        assert_eq!(diagnostics::waiter_count(addr(b)), 0);
        a.unlock();
        t.join().unwrap();
    });
}

#[test]
fn a_blocking_wait_closing_a_cycle_through_an_async_waiter_is_refused() {
    detecting(|| {
        let (a, b) = two_locks_first_held();
        let (to_main, from_thread) = mpsc::channel();
        let (to_thread, from_main) = mpsc::channel::<()>();
        let t = thread::spawn(move || {
            b.lock();
            to_main.send(()).unwrap();
            from_main.recv().unwrap();
            let refused = a.lock_or_deadlock();
            b.unlock();
            refused
        });
        from_thread.recv().unwrap();
        let waiter = AsyncWaiter::new();
        // SAFETY: a new record, alive until it is settled below.
        assert!(!unsafe { b.lock_async_begin(&waiter) });
        assert!(deadlock::take_deadlock().is_none(), "queued, not refused");
        to_thread.send(()).unwrap();
        let error = t
            .join()
            .unwrap()
            .expect_err("the blocking wait closes the cycle");
        assert_eq!(error.cycle.steps.len(), 2);
        // The async waiter was untouched, and gets the lock the thread let go.
        let start = Instant::now();
        // SAFETY: queued by lock_async_begin above.
        while !unsafe { b.lock_async_resume(&waiter) } {
            assert!(start.elapsed() < Duration::from_secs(10));
            thread::sleep(Duration::from_millis(1));
        }
        b.unlock();
        a.unlock();
    });
}

#[test]
fn no_cycle_is_reported_while_threads_take_locks_in_one_order() {
    detecting(|| {
        lock_order::set_enabled(true);
        let locks: &'static [Lock] = Box::leak((0..4).map(|_| Lock::new()).collect());
        let stop = Instant::now() + Duration::from_millis(1500);
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                thread::spawn(move || {
                    let mut x = t * 7 + 1;
                    let mut rounds = 0u64;
                    while Instant::now() < stop {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let i = (x % 4) as usize;
                        let j = i + 1 + ((x >> 8) % (4 - i as u64).max(1)) as usize;
                        locks[i].lock();
                        if j < 4 {
                            locks[j].lock();
                            locks[j].unlock();
                        }
                        locks[i].unlock();
                        rounds += 1;
                    }
                    rounds
                })
            })
            .collect();
        let rounds: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        println!("{rounds} acquisitions in one order with detection on");
        assert!(rounds > 1000);
        assert!(deadlock::check_deadlock().is_empty());
        assert!(lock_order::violations().is_empty());
        lock_order::set_enabled(false);
    });
}

#[test]
fn check_deadlock_reports_a_cycle_without_touching_its_threads() {
    let _s = serial();
    diagnostics::set_tracking(true);
    let (a, b) = (leak(Lock::new()), leak(Lock::new()));
    let both = Arc::new(Barrier::new(2));
    let spawn = |mine: &'static Lock, other: &'static Lock, both: Arc<Barrier>| {
        thread::spawn(move || {
            mine.lock();
            both.wait();
            let got = other.try_lock_for(Duration::from_millis(600));
            mine.unlock();
            got
        })
    };
    let t1 = spawn(a, b, both.clone());
    let t2 = spawn(b, a, both);
    until_queued(a, 1);
    until_queued(b, 1);
    let cycles = deadlock::check_deadlock();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].steps.len(), 2);
    // Still queued: reporting took nobody out.
    assert_eq!(diagnostics::waiter_count(addr(a)), 1);
    assert_eq!(diagnostics::waiter_count(addr(b)), 1);
    // Timed waits: one gives up first, and its release may let the other in.
    let (got1, got2) = (t1.join().unwrap(), t2.join().unwrap());
    assert!(!(got1 && got2));
    assert!(deadlock::check_deadlock().is_empty());
    diagnostics::set_tracking(false);
}

#[test]
fn the_snapshot_shows_waiters_holds_and_names_with_detection_off() {
    let _s = serial();
    let lock = leak(Lock::new());
    // Holds are known only while tracked; waiters always.
    lock.lock();
    let t = thread::spawn(move || {
        diagnostics::set_thread_name("waiter");
        let id = diagnostics::thread_id();
        assert!(lock.try_lock_for(Duration::from_secs(30)));
        lock.unlock();
        id
    });
    until_queued(lock, 1);
    let snap = diagnostics::snapshot();
    assert!(!snap.detecting && !snap.tracking);
    let w: Vec<_> = snap
        .waiters
        .iter()
        .filter(|w| w.address == addr(lock))
        .collect();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, Kind::Lock);
    assert!(w[0].blocking);
    let deadline = w[0].deadline_ns.expect("a timed wait");
    assert!(deadline > w[0].since_ns);
    assert!(snap.now_ns >= w[0].since_ns);
    let waiter = snap.threads.iter().find(|t| t.id == w[0].thread).unwrap();
    assert_eq!(waiter.name.as_deref(), Some("waiter"));
    assert!(snap.holds.is_empty());
    lock.unlock();
    assert_eq!(t.join().unwrap(), w[0].thread);

    diagnostics::set_tracking(true);
    lock.lock();
    let snap = diagnostics::snapshot();
    assert!(snap.holds.iter().any(|h| h.address == addr(lock)
        && h.thread == diagnostics::thread_id()
        && h.kind == Kind::Lock));
    lock.unlock();
    assert!(!diagnostics::snapshot()
        .holds
        .iter()
        .any(|h| h.address == addr(lock)));
    diagnostics::set_tracking(false);
}

#[test]
fn the_mode_byte_tells_an_embedder_when_to_take_the_reported_calls() {
    let _s = serial();
    // SAFETY: the address of a static byte, read as the embedder reads it.
    let mode = || unsafe { *(diagnostics::mode_address() as *const u8) };
    assert_eq!(mode(), 0);
    let lock = leak(Lock::new());
    let held = |lock: &Lock| {
        diagnostics::snapshot()
            .holds
            .iter()
            .any(|h| h.address == addr(lock))
    };
    diagnostics::set_tracking(true);
    assert_ne!(mode(), 0, "tracking on: the embedder must see it");
    // The unseen calls change the lock and nothing else...
    assert!(lock.try_lock_unseen());
    assert!(lock.is_locked() && !held(lock));
    assert!(!lock.try_lock_unseen());
    lock.checked_unlock_unseen(false).unwrap();
    assert!(!lock.is_locked());
    assert!(
        lock.checked_unlock_unseen(true).is_err(),
        "not locked: refused, untouched"
    );
    assert!(!lock.is_locked());
    // ...the reported ones are seen.
    assert!(lock.try_lock());
    assert!(held(lock));
    lock.checked_unlock().unwrap();
    assert!(!held(lock));
    diagnostics::set_tracking(false);
    assert_eq!(mode(), 0);
    deadlock::set_enabled(true);
    assert_ne!(mode(), 0, "detection on: the embedder must see it too");
    deadlock::set_enabled(false);
    lock_order::set_enabled(true);
    assert_ne!(mode(), 0, "lock-order checking as well");
    lock_order::set_enabled(false);
    assert_eq!(mode(), 0);
}

#[test]
fn a_reaped_thread_leaves_the_graph() {
    detecting(|| {
        let lock = leak(Lock::new());
        let (to_main, from_thread) = mpsc::channel();
        let (keep, never) = mpsc::channel::<()>();
        std::mem::forget(keep);
        thread::spawn(move || {
            diagnostics::set_thread_name("doomed");
            lock.lock();
            to_main
                .send((ThreadRecord::current().unwrap(), diagnostics::thread_id()))
                .unwrap();
            // Never runs again: the sender is leaked, nothing is ever sent.
            let _ = never.recv();
        });
        let (record, id) = from_thread.recv().unwrap();
        assert!(diagnostics::snapshot().holds.iter().any(|h| h.thread == id));
        // SAFETY: the thread never runs again and its storage stays allocated
        // (it blocks forever); reaped once.
        unsafe { abandon_thread(record, |_| false) };
        // What an embedder does next for a gone holder's lock.
        // SAFETY: held by a thread that will never run again.
        unsafe { lock.unlock_owner_died() }.unwrap();
        let snap = diagnostics::snapshot();
        assert!(snap.threads.iter().any(|t| t.id == id && t.reaped));
        assert!(!snap.holds.iter().any(|h| h.thread == id));
        lock.lock_or_deadlock()
            .expect("free, and no cycle through the dead");
        assert!(lock.take_owner_died());
        lock.unlock();
    });
}

#[test]
fn lock_order_inversions_are_reported_before_any_deadlock() {
    let _s = serial();
    lock_order::set_enabled(true);
    let (a, b) = (leak(Lock::new()), leak(Lock::new()));
    thread::spawn(move || {
        diagnostics::set_thread_name("a-then-b");
        a.lock();
        b.lock();
        b.unlock();
        a.unlock();
    })
    .join()
    .unwrap();
    assert!(lock_order::violations().is_empty());
    thread::spawn(move || {
        diagnostics::set_thread_name("b-then-a");
        lock_order::set_site(Some("b-then-a's site".into()));
        b.lock();
        a.lock();
        a.unlock();
        b.unlock();
    })
    .join()
    .unwrap();
    let v = lock_order::violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].first, v[0].second), (addr(b), addr(a)));
    assert_eq!(v[0].thread_name.as_deref(), Some("b-then-a"));
    assert_eq!(v[0].other_thread_name.as_deref(), Some("a-then-b"));
    assert_eq!(v[0].stack.as_deref(), Some("b-then-a's site"));
    println!("{}", v[0]);
    lock_order::set_enabled(false);
}

#[test]
fn with_everything_off_nothing_is_refused() {
    let _s = serial();
    let lock = Lock::new();
    lock.lock();
    // A relock would hang; a timed one just times out.
    assert!(!lock.try_lock_for(Duration::from_millis(20)));
    assert!(deadlock::take_deadlock().is_none());
    lock.unlock();
}

/// The panic message of `f`, which must panic.
fn panic_of(f: impl FnOnce()) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().unwrap().to_string(),
    }
}

/// A writer of the rwlock waits for a Lock whose holder asks for the rwlock:
/// as a writer, as a reader (waiting for the writer), as an upgradable one.
fn rwlock_cycle(ask: fn(&RawRwLock), kind: Kind) {
    let _s = serial();
    deadlock::set_enabled(true);
    let rw: &'static RawRwLock = Box::leak(Box::new(RawRwLock::new()));
    let lock = leak(Lock::new());
    rw.lock_exclusive();
    let (to_main, from_thread) = mpsc::channel();
    let t = thread::spawn(move || {
        lock.lock();
        to_main.send(()).unwrap();
        until_blocked_on_a_lock();
        let message = panic_of(|| ask(rw));
        lock.unlock();
        message
    });
    from_thread.recv().unwrap();
    // Blocks until the thread, refused, lets the lock go.
    lock.lock();
    lock.unlock();
    let message = t.join().unwrap();
    assert!(message.starts_with("deadlock: "), "{message}");
    assert!(message.contains(kind.name()), "{message}");
    // SAFETY: taken above by this thread.
    unsafe { rw.unlock_exclusive() };
    deadlock::set_enabled(false);
}

/// Waits until a thread is blocked on a `Lock` (the main thread, here).
fn until_blocked_on_a_lock() {
    let start = Instant::now();
    while !diagnostics::snapshot()
        .waiters
        .iter()
        .any(|w| w.kind == Kind::Lock && w.blocking)
    {
        assert!(start.elapsed() < Duration::from_secs(10), "nobody queued");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_writer_closing_a_cycle_through_a_rwlock_writer_is_refused() {
    rwlock_cycle(|rw| rw.lock_exclusive(), Kind::RwLockWrite);
}

#[test]
fn a_reader_waiting_for_the_writer_that_waits_for_it_is_refused() {
    rwlock_cycle(|rw| rw.lock_shared(), Kind::RwLockRead);
}

#[test]
fn an_upgradable_reader_closing_a_cycle_is_refused() {
    rwlock_cycle(|rw| rw.lock_upgradable(), Kind::RwLockUpgradable);
}

#[test]
fn an_upgrade_is_not_a_wait_for_itself() {
    detecting(|| {
        let rw: &'static RawRwLock = Box::leak(Box::new(RawRwLock::new()));
        rw.lock_upgradable();
        rw.lock_shared();
        let reader = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            // SAFETY: taken by the main thread, released on its behalf (a read
            // has no owner).
            unsafe { rw.unlock_shared() };
        });
        // Waits for the read above to go: its own upgradable hold is no cycle.
        // SAFETY: the upgradable read is held.
        unsafe { rw.upgrade() };
        let snap = diagnostics::snapshot();
        let me = diagnostics::thread_id();
        let addr = rw as *const RawRwLock as usize;
        assert!(snap
            .holds
            .iter()
            .any(|h| h.address == addr && h.thread == me && h.kind == Kind::RwLockWrite));
        // SAFETY: upgraded just above.
        unsafe { rw.unlock_exclusive() };
        reader.join().unwrap();
        assert!(!diagnostics::snapshot()
            .holds
            .iter()
            .any(|h| h.address == addr));
    });
}
