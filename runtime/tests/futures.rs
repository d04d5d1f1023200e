//! Async Rust: `lock_async`, `read_async`/`write_async`, `acquire_async`.
//! Futures queue in the same FIFO queues as blocked threads, are handed
//! the lock by the same unlocks, wake their task exactly when their turn
//! comes, and a dropped pending future gives back what it was handed.
//! Driven by a minimal executor of std's (`block_on` below), so that the
//! tests need no runtime; any executor works the same way.
#![cfg(not(loom))]

use parklot::{
    Condvar, CondvarAsync, Lock, Mutex, MutexAsync, Once, RwLock, RwLockAsync, Semaphore,
};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

/// Wakes a thread parked in `block_on`, and counts the wakes.
struct ThreadWaker {
    thread: thread::Thread,
    wakes: AtomicUsize,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Runs `f` to completion on this thread, sleeping between polls until
/// woken: a future that is never woken hangs here (the tests' timeouts
/// then fail), so each wake the futures promise is checked.
fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Arc::new(ThreadWaker {
        thread: thread::current(),
        wakes: AtomicUsize::new(0),
    });
    let w = Waker::from(waker.clone());
    let mut cx = Context::from_waker(&w);
    let mut f = pin!(f);
    loop {
        let seen = waker.wakes.load(Ordering::SeqCst);
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        // Pending: sleep until a wake arrives; one that never does is a bug.
        let start = Instant::now();
        while waker.wakes.load(Ordering::SeqCst) == seen {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "a pending future was never woken"
            );
            thread::park_timeout(Duration::from_millis(100));
        }
    }
}

/// Polls `f` once with a waker that counts; returns the result and the waker.
fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Arc<ThreadWaker>) -> Poll<F::Output> {
    let w = Waker::from(waker.clone());
    std::pin::Pin::new(f).poll(&mut Context::from_waker(&w))
}

/// The output of a poll that must be ready (`why` says why it must).
fn ready<T>(poll: Poll<T>, why: &str) -> T {
    match poll {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("{why}"),
    }
}

fn counting_waker() -> Arc<ThreadWaker> {
    Arc::new(ThreadWaker {
        thread: thread::current(),
        wakes: AtomicUsize::new(0),
    })
}

/// Waits until `done` holds (a thread is queued, say), for at most 10 s.
fn until(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn an_uncontended_lock_async_resolves_at_once() {
    let m = Mutex::new(5);
    let waker = counting_waker();
    let mut f = m.lock_async();
    *ready(
        poll_once(&mut f, &waker),
        "a free lock must be taken on the first poll",
    ) += 1;
    assert_eq!(*m.lock(), 6);
    assert_eq!(waker.wakes.load(Ordering::SeqCst), 0);
}

#[test]
fn a_contended_lock_async_is_woken_once_when_the_lock_is_handed_to_it() {
    let m = Mutex::new(0);
    let g = m.lock();
    let waker = counting_waker();
    let mut f = m.lock_async();
    assert!(poll_once(&mut f, &waker).is_pending());
    assert!(
        unsafe { m.raw() }.has_parked(),
        "the future's record is queued"
    );
    assert_eq!(waker.wakes.load(Ordering::SeqCst), 0);
    parklot::MutexGuard::unlock_fair(g); // hands the lock to the oldest waiter: the future
    assert_eq!(waker.wakes.load(Ordering::SeqCst), 1);
    assert!(m.is_locked(), "handed over, not released");
    *ready(poll_once(&mut f, &waker), "the future was handed the lock") = 7;
    assert_eq!(*m.lock(), 7);
}

#[test]
fn blocked_threads_and_futures_share_one_fifo_queue() {
    // Queued in the order: thread A, future F, thread B. Fair unlocks hand
    // the lock over in that order.
    let m = Arc::new(Mutex::new(Vec::new()));
    let lock = unsafe { m.raw() } as *const Lock as usize;
    let g = m.lock();
    let queued = || parklot::parking_lot::parked_count(lock);
    let spawn = |name: &'static str| {
        let m = m.clone();
        thread::spawn(move || {
            let mut v = m.lock();
            v.push(name);
            parklot::MutexGuard::unlock_fair(v);
        })
    };
    let a = spawn("thread A");
    until(|| queued() == 1);
    let waker = counting_waker();
    let mut f = m.lock_async();
    assert!(poll_once(&mut f, &waker).is_pending());
    assert_eq!(queued(), 2);
    let b = spawn("thread B");
    until(|| queued() == 3);
    parklot::MutexGuard::unlock_fair(g);
    a.join().unwrap(); // A ran and handed the lock to the future's record
    until(|| waker.wakes.load(Ordering::SeqCst) == 1);
    assert_eq!(queued(), 1, "B is still queued behind the future");
    match poll_once(&mut f, &waker) {
        Poll::Ready(mut v) => {
            v.push("future F");
            parklot::MutexGuard::unlock_fair(v);
        }
        Poll::Pending => panic!("the future was handed the lock"),
    }
    b.join().unwrap();
    assert_eq!(*m.lock(), ["thread A", "future F", "thread B"]);
}

#[test]
fn a_dropped_pending_future_leaves_no_record_and_passes_a_hand_off_on() {
    let m = Mutex::new(());
    let lock = unsafe { m.raw() } as *const Lock as usize;
    // Dropped while queued: the record leaves, the parked bit goes.
    let g = m.lock();
    let waker = counting_waker();
    let mut f = m.lock_async();
    assert!(poll_once(&mut f, &waker).is_pending());
    drop(f);
    assert_eq!(parklot::parking_lot::parked_count(lock), 0);
    assert!(!unsafe { m.raw() }.has_parked());
    drop(g);
    assert!(!m.is_locked());
    // Dropped after the lock was handed to it, never polled again: released.
    let g = m.lock();
    let mut f = m.lock_async();
    assert!(poll_once(&mut f, &waker).is_pending());
    parklot::MutexGuard::unlock_fair(g);
    assert!(m.is_locked(), "handed to the future");
    drop(f);
    assert!(
        !m.is_locked(),
        "the dropped future released what it was handed"
    );
}

/// Runs `awaiting` threads that each drive a `future()` to its end and
/// `blocking` threads that each call `block()`, all at once, and joins them.
fn awaiting_and_blocking<F: Future<Output = ()>>(
    awaiting: usize,
    blocking: usize,
    future: impl Fn() -> F + Sync,
    block: impl Fn() + Sync,
) {
    thread::scope(|s| {
        for _ in 0..awaiting {
            s.spawn(|| block_on(future()));
        }
        for _ in 0..blocking {
            s.spawn(&block);
        }
    });
}

#[test]
fn futures_and_threads_count_exactly_under_contention() {
    // 4 threads of futures (each future awaited in turn) and 2 blocking
    // threads increment one counter under one Mutex; more threads than cores.
    const ROUNDS: usize = 5_000;
    let m = Mutex::new(0usize);
    awaiting_and_blocking(
        4,
        2,
        || async {
            for _ in 0..ROUNDS {
                *m.lock_async().await += 1;
            }
        },
        || {
            for _ in 0..ROUNDS {
                *m.lock() += 1;
            }
        },
    );
    assert_eq!(*m.lock(), 6 * ROUNDS);
    assert!(!unsafe { m.raw() }.has_parked());
}

#[test]
fn many_futures_on_one_thread_wait_without_blocking_it() {
    // One thread polls 8 futures of one lock in a loop, like a page's event
    // loop; a worker holds the lock in bursts. The polling thread never
    // blocks (it would deadlock: the futures' owner would not run).
    let m = Arc::new(Mutex::new(0usize));
    let holder = {
        let m = m.clone();
        thread::spawn(move || {
            for _ in 0..200 {
                let mut g = m.lock();
                *g += 1000;
                thread::sleep(Duration::from_micros(50));
            }
        })
    };
    let waker = counting_waker();
    let mut pending: Vec<_> = (0..8).map(|_| Box::pin(m.lock_async())).collect();
    let mut done = 0;
    let start = Instant::now();
    while done < 8 {
        assert!(start.elapsed() < Duration::from_secs(30));
        pending.retain_mut(|f| match poll_once(f, &waker) {
            Poll::Ready(mut g) => {
                *g += 1;
                done += 1;
                false
            }
            Poll::Pending => true,
        });
        thread::yield_now();
    }
    holder.join().unwrap();
    assert_eq!(*m.lock(), 200 * 1000 + 8);
}

#[test]
fn rwlock_reads_share_and_a_write_waits_for_them() {
    let l = Arc::new(RwLock::new(1));
    let r1 = l.read();
    let waker = counting_waker();
    // A read joins the held read at once.
    let mut read = l.read_async();
    let r2 = ready(poll_once(&mut read, &waker), "reads share");
    assert_eq!(*r2, 1);
    let mut write = l.write_async();
    assert!(poll_once(&mut write, &waker).is_pending());
    drop(r1);
    assert!(
        poll_once(&mut write, &waker).is_pending(),
        "one read is still held"
    );
    drop(r2);
    until(|| waker.wakes.load(Ordering::SeqCst) >= 1);
    *ready(poll_once(&mut write, &waker), "the readers left") = 2;
    assert_eq!(*l.read(), 2);
}

#[test]
fn rwlock_async_writers_and_blocking_readers_stay_consistent() {
    const ROUNDS: usize = 2_000;
    let l = RwLock::new((0usize, 0usize));
    awaiting_and_blocking(
        2,
        2,
        || async {
            for _ in 0..ROUNDS {
                let mut w = l.write_async().await;
                w.0 += 1;
                w.1 += 1;
            }
        },
        || {
            for _ in 0..ROUNDS {
                let r = block_on(l.read_async());
                assert_eq!(r.0, r.1, "a read saw half a write");
                drop(r);
                let r = l.read();
                assert_eq!(r.0, r.1);
            }
        },
    );
    assert_eq!(*l.read(), (2 * ROUNDS, 2 * ROUNDS));
}

#[test]
fn semaphore_permits_are_taken_async_and_never_exceeded() {
    let s = Arc::new(Semaphore::new(3));
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let (s, inside, most) = (s.clone(), inside.clone(), most.clone());
            thread::spawn(move || {
                for _ in 0..500 {
                    let n = 1 + (i % 2) as u32;
                    if i < 3 {
                        block_on(s.acquire_async(n));
                    } else {
                        s.acquire(n);
                    }
                    let now = inside.fetch_add(n as usize, Ordering::SeqCst) + n as usize;
                    most.fetch_max(now, Ordering::SeqCst);
                    inside.fetch_sub(n as usize, Ordering::SeqCst);
                    s.release(n);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(most.load(Ordering::SeqCst) <= 3);
    assert!(s.try_acquire(3), "every permit came back");
}

#[test]
fn a_dropped_semaphore_future_gives_back_the_permits_it_was_handed() {
    let s = Semaphore::new(2);
    assert!(s.try_acquire(2));
    let waker = counting_waker();
    let mut f = s.acquire_async(2);
    assert!(poll_once(&mut f, &waker).is_pending());
    s.release(2);
    drop(f); // handed or not, nothing is kept
    assert!(s.try_acquire(2), "the permits are free again");
}

#[test]
fn lock_async_on_the_raw_lock() {
    let l = Lock::new();
    l.lock();
    let waker = counting_waker();
    let mut f = l.lock_async();
    assert!(poll_once(&mut f, &waker).is_pending());
    l.unlock();
    until(|| waker.wakes.load(Ordering::SeqCst) == 1);
    // Not fair: the unlock woke the future to compete; nobody barged.
    assert!(poll_once(&mut f, &waker).is_ready());
    assert!(l.is_locked());
    l.unlock();
}

#[test]
fn condvar_wait_async_is_notified_and_takes_the_lock_back() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let waker = counting_waker();
    let g = pair.0.lock();
    let mut f = Box::pin(pair.1.wait_async(g));
    assert!(poll_once(&mut f, &waker).is_pending());
    assert!(!pair.0.is_locked(), "the wait released the lock");
    // No spurious wakeup: another poll without a notify stays pending.
    assert!(poll_once(&mut f, &waker).is_pending());
    *pair.0.lock() = true;
    let held = pair.0.lock(); // the notifier holds the lock: the waiter must take it back after
    assert!(pair.1.notify_one());
    assert_eq!(waker.wakes.load(Ordering::SeqCst), 1);
    assert!(
        poll_once(&mut f, &waker).is_pending(),
        "notified, but the lock is held"
    );
    drop(held);
    until(|| waker.wakes.load(Ordering::SeqCst) >= 2);
    assert!(*ready(
        poll_once(&mut f, &waker),
        "notified and the lock is free"
    ));
}

#[test]
fn condvar_blocking_and_async_waiters_share_one_queue_and_notify_one_wakes_exactly_one() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let waker = counting_waker();
    let mut f = Box::pin(pair.1.wait_async(pair.0.lock()));
    assert!(poll_once(&mut f, &waker).is_pending());
    let blocked = {
        let pair = pair.clone();
        thread::spawn(move || {
            let mut g = pair.0.lock();
            pair.1.wait(&mut g);
            *g += 1;
        })
    };
    let condition = pair.1.raw() as *const parklot::Condition as usize;
    // Both queued, and the blocked thread let go of the lock too: its wait
    // releases it after queueing, and until then the notified async wait
    // cannot take it back (under qemu the gap lasted long enough to fail).
    until(|| parklot::parking_lot::parked_count(condition) == 2 && !pair.0.is_locked());
    // The async wait queued first: notify_one wakes it, and only it.
    assert!(pair.1.notify_one());
    assert_eq!(waker.wakes.load(Ordering::SeqCst), 1);
    *ready(poll_once(&mut f, &waker), "notified first") += 10;
    thread::sleep(Duration::from_millis(20));
    assert!(!blocked.is_finished(), "the blocked waiter was not woken");
    assert!(pair.1.notify_one());
    blocked.join().unwrap();
    assert_eq!(*pair.0.lock(), 11);
}

#[test]
fn a_dropped_notified_condvar_wait_passes_the_notify_on() {
    let pair = Arc::new((Mutex::new(()), Condvar::new()));
    let waker = counting_waker();
    let mut first = Box::pin(pair.1.wait_async(pair.0.lock()));
    assert!(poll_once(&mut first, &waker).is_pending());
    let mut second = Box::pin(pair.1.wait_async(pair.0.lock()));
    assert!(poll_once(&mut second, &waker).is_pending());
    assert!(pair.1.notify_one()); // claims `first`
    drop(first); // ...which never acts on it: `second` gets it
    until(|| waker.wakes.load(Ordering::SeqCst) >= 2);
    assert!(poll_once(&mut second, &waker).is_ready());
}

#[test]
fn once_call_once_async_runs_once_and_waiters_wait_asynchronously() {
    let once = Arc::new(Once::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let (started, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    // A thread runs a slow closure.
    let runner = {
        let (once, runs, started, release) =
            (once.clone(), runs.clone(), started.clone(), release.clone());
        thread::spawn(move || {
            once.call_once(|| {
                started.store(1, Ordering::SeqCst);
                until(|| release.load(Ordering::SeqCst) == 1);
                runs.fetch_add(1, Ordering::SeqCst);
            })
        })
    };
    until(|| started.load(Ordering::SeqCst) == 1);
    let waker = counting_waker();
    let r2 = runs.clone();
    let mut f = Box::pin(once.call_once_async(move || {
        r2.fetch_add(1, Ordering::SeqCst);
    }));
    assert!(
        poll_once(&mut f, &waker).is_pending(),
        "a run is in progress"
    );
    release.store(1, Ordering::SeqCst);
    runner.join().unwrap();
    assert_eq!(
        waker.wakes.load(Ordering::SeqCst),
        1,
        "the run's end woke the future"
    );
    assert!(poll_once(&mut f, &waker).is_ready());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the closure ran once");
    // Done: resolves at once, runs nothing.
    block_on(once.call_once_async(|| panic!("ran twice")));
}

#[test]
fn the_futures_are_send_so_multithreaded_executors_take_them() {
    fn send<F: Future + Send>(_: &F) {}
    let (m, l, s, o, c) = (
        Mutex::new(0),
        RwLock::new(0),
        Semaphore::new(1),
        Once::new(),
        Condvar::new(),
    );
    send(&m.lock_async());
    send(&l.read_async());
    send(&l.write_async());
    send(&s.acquire_async(1));
    send(&o.call_once_async(|| {}));
    let g = m.lock();
    let f = c.wait_async(g);
    send(&f);
}
