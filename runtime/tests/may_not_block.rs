//! A thread that may not block (a browser page's main thread, which traps on
//! `memory.atomic.wait32`; here a native thread marked with
//! `set_thread_may_block(false)`) never sleeps and never panics on
//! contention: every blocking call of the toolkit queues its record like a
//! sleeper, then stays awake watching it until it is served or times out.
//! It is served in the sleepers' order, and it leaves nothing behind.
use parklot::{
    futex, set_thread_may_block, Barrier, Condition, Lock, Mutex, Once, RwLock, Semaphore,
    WaitResult,
};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// How often the calling thread has gone to sleep so far (voluntary context
/// switches: a futex wait counts, a `sched_yield` does not). A thread that
/// stays awake adds none while it waits; one that parks adds at least one.
/// Measured natively on x86-64 Linux only: under qemu-user (the ARM64 step)
/// the emulator's own locks may put the host thread to sleep.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn sleeps() -> Option<i64> {
    // SAFETY: getrusage fills the rusage struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) },
        0
    );
    Some(usage.ru_nvcsw)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn sleeps() -> Option<i64> {
    None
}

const HOLD: Duration = Duration::from_millis(150);

/// Runs `wait` on a new thread that may not block, while this thread keeps
/// the thing waited for for `HOLD` and then lets `release` run. Returns what
/// `wait` returned, after checking that the waiting thread was served only
/// after the release and never slept meanwhile.
fn waits_awake<T: Send + 'static>(
    what: &str,
    wait: impl FnOnce() -> T + Send + 'static,
    release: impl FnOnce(),
) -> T {
    let released = Arc::new(AtomicBool::new(false));
    let seen = released.clone();
    let waiter = thread::spawn(move || {
        set_thread_may_block(false);
        let before = sleeps();
        let out = wait();
        let slept = sleeps().zip(before).map(|(after, before)| after - before);
        let served_after_release = seen.load(Ordering::SeqCst);
        (out, served_after_release, slept)
    });
    thread::sleep(HOLD);
    released.store(true, Ordering::SeqCst);
    release();
    let (out, after, slept) = waiter
        .join()
        .unwrap_or_else(|_| panic!("{what}: the thread that may not block panicked"));
    assert!(after, "{what}: served before the release");
    assert!(
        slept.unwrap_or(0) == 0,
        "{what}: the thread that may not block went to sleep {slept:?} times while it waited"
    );
    out
}

#[test]
fn every_blocking_call_waits_awake_and_is_served() {
    // Lock (through Mutex)
    let m = Arc::new(Mutex::new(0u32));
    let g = m.lock();
    let m2 = m.clone();
    let got = waits_awake("Mutex::lock", move || *m2.lock() + 1, move || drop(g));
    assert_eq!(got, 1);

    // RwLock: a read while a writer holds it, a write while a reader does
    let rw = Arc::new(RwLock::new(5u32));
    let w = rw.write();
    let rw2 = rw.clone();
    assert_eq!(
        waits_awake("RwLock::read", move || *rw2.read(), move || drop(w)),
        5
    );
    let r = rw.read();
    let rw2 = rw.clone();
    waits_awake("RwLock::write", move || *rw2.write() += 1, move || drop(r));
    assert_eq!(*rw.read(), 6);

    // Semaphore: two permits while none are free
    let sem = Arc::new(Semaphore::new(2));
    sem.acquire(2);
    let (s2, s3) = (sem.clone(), sem.clone());
    waits_awake(
        "Semaphore::acquire",
        move || s2.acquire(2),
        move || s3.release(2),
    );
    assert_eq!(sem.available(), 0);
    sem.release(2);

    // Once: another thread is running it
    let once = Arc::new(Once::new());
    let (go, ran) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicI32::new(0)),
    );
    let runner = {
        let (once, go, ran) = (once.clone(), go.clone(), ran.clone());
        thread::spawn(move || {
            once.call_once(|| {
                while !go.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
                ran.fetch_add(1, Ordering::SeqCst);
            })
        })
    };
    while once.state() != parklot::OnceState::InProgress {
        thread::yield_now();
    }
    let (o2, r2) = (once.clone(), ran.clone());
    waits_awake(
        "Once::call_once",
        move || {
            o2.call_once(|| {
                r2.fetch_add(10, Ordering::SeqCst);
            })
        },
        || go.store(true, Ordering::SeqCst),
    );
    runner.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    // Condition: a wait for a notify
    let pair = Arc::new((Mutex::new(false), Condition::new()));
    let p2 = pair.clone();
    let notified = waits_awake(
        "Condition::wait_for",
        move || {
            let mut ready = p2.0.lock();
            while !*ready {
                if p2
                    .1
                    .wait_for(&mut ready, Duration::from_secs(30))
                    .timed_out()
                {
                    return false;
                }
            }
            true
        },
        || {
            *pair.0.lock() = true;
            pair.1.notify_all();
        },
    );
    assert!(notified);

    // Barrier: the second party arrives late
    let barrier = Arc::new(Barrier::new(2));
    let (b2, b3) = (barrier.clone(), barrier.clone());
    waits_awake(
        "Barrier::wait",
        move || b2.wait(),
        move || {
            b3.wait();
        },
    );

    // futex::wait32 until a notify
    let word = Arc::new(AtomicI32::new(0));
    let (w2, w3) = (word.clone(), word.clone());
    let r = waits_awake(
        "futex::wait32",
        move || futex::wait32(&w2, 0, None),
        move || {
            w3.store(1, Ordering::SeqCst);
            futex::notify(&*w3, 1);
        },
    );
    assert_eq!(r, WaitResult::Ok);
}

#[test]
fn timeouts_hold_and_leave_nothing_queued() {
    let lock = Arc::new(Lock::new());
    lock.lock();
    let l2 = lock.clone();
    let (took, waited) = thread::spawn(move || {
        set_thread_may_block(false);
        let start = Instant::now();
        (l2.try_lock_for(Duration::from_millis(60)), start.elapsed())
    })
    .join()
    .unwrap();
    assert!(!took);
    assert!(waited >= Duration::from_millis(60), "{waited:?}");
    // Nobody is left queued: the release takes the fast path and the lock
    // is free for anyone at once.
    lock.unlock();
    assert!(lock.try_lock());
    lock.unlock();

    let word = AtomicI32::new(0);
    let r = thread::scope(|s| {
        s.spawn(|| {
            set_thread_may_block(false);
            futex::wait32(&word, 0, Some(Duration::from_millis(30)))
        })
        .join()
        .unwrap()
    });
    assert_eq!(r, WaitResult::TimedOut);
    assert_eq!(
        futex::notify(&word, 1),
        0,
        "the timed-out wait left its queue"
    );
}

#[test]
fn it_is_served_in_the_sleepers_order() {
    // A (may not block) queues first, then B (sleeps); fair releases hand
    // the lock to each in the order they queued.
    let lock = Arc::new(Lock::new());
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    lock.lock();
    let spawn = |name: &'static str, may_block: bool| {
        let (lock, order) = (lock.clone(), order.clone());
        thread::spawn(move || {
            set_thread_may_block(may_block);
            lock.lock();
            order.lock().unwrap().push(name);
            lock.unlock_fair();
        })
    };
    let a = spawn("A, may not block", false);
    thread::sleep(Duration::from_millis(50));
    let b = spawn("B, sleeps", true);
    thread::sleep(Duration::from_millis(50));
    lock.unlock_fair();
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["A, may not block", "B, sleeps"]);
}
