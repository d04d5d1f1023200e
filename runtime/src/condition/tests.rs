//! Unit tests of `condition.rs`.

use super::*;
use crate::test_threads::with_threads;
use crate::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32};
use std::sync::Arc;

#[test]
fn is_one_byte() {
    assert_eq!(core::mem::size_of::<Condition>(), 1);
}

#[test]
fn notify_with_nobody_waiting_is_a_no_op() {
    let c = Condition::new();
    assert!(!c.notify_one());
    assert_eq!(c.notify_all(), 0);
}

#[test]
fn wait_for_times_out_not_early_and_relocks() {
    let m = Mutex::new(());
    let c = Condition::new();
    let mut g = m.lock();
    let start = Instant::now();
    assert!(c.wait_for(&mut g, Duration::from_millis(15)).timed_out());
    assert!(Instant::now() - start >= Duration::from_millis(15));
    assert!(m.is_locked());
    // The last waiter left: the byte says so, and notify is a load again.
    assert_eq!(c.has_waiters.load(Ordering::Relaxed), 0);
}

#[test]
fn notify_one_wakes_a_waiter_and_reports_it() {
    let pair = Arc::new((Mutex::new(0u32), Condition::new()));
    let p = pair.clone();
    let t = std::thread::spawn(move || {
        let mut g = p.0.lock();
        *g = 1;
        let notified = p.1.wait_for(&mut g, Duration::from_secs(30)).notified();
        (notified, *g)
    });
    loop {
        let mut g = pair.0.lock();
        if *g == 1 && pair.1.notify_one() {
            *g = 2;
            break;
        }
        drop(g);
        std::thread::yield_now();
    }
    assert_eq!(t.join().unwrap(), (true, 2));
    assert!(!pair.1.notify_one());
}

#[test]
fn notify_all_counts_every_waiter() {
    let pair = (Mutex::new(0u32), Condition::new());
    let waiter = |_| {
        let mut g = pair.0.lock();
        *g += 1;
        pair.1.wait(&mut g);
    };
    let woken = with_threads(3, waiter, || {
        let mut woken = 0;
        while woken < 3 {
            let g = pair.0.lock();
            if *g == 3 {
                woken += pair.1.notify_all();
            }
            drop(g);
            std::thread::yield_now();
        }
        woken
    });
    assert_eq!(woken, 3);
}

/// Takes `lock` and queues `w` on `c` with it (which releases it).
fn queue_async_wait(c: &Condition, lock: &Lock, w: &AsyncWaiter) {
    lock.lock();
    // SAFETY: `w` is not queued and outlives its wait (the callers' scopes).
    unsafe { c.wait_async_begin(lock, w) }.unwrap();
}

/// Runs `test(lock, c, w)` with `w` queued on `c` with `lock`.
fn with_a_queued_waiter(test: impl FnOnce(&Lock, &Condition, &AsyncWaiter)) {
    let lock = Lock::new();
    let c = Condition::new();
    let w = AsyncWaiter::new();
    queue_async_wait(&c, &lock, &w);
    test(&lock, &c, &w);
}

#[test]
fn async_wait_is_notified_and_cancel_cleans_up() {
    with_a_queued_waiter(|lock, c, w| {
        assert!(!lock.is_locked(), "the lock is released once queued");
        assert_eq!(w.poll(), None);
        assert!(c.notify_one());
        assert!(w.poll().is_some());
        // A second wait that nobody notifies, then given up.
        queue_async_wait(c, lock, w);
        assert!(!unsafe { c.wait_async_cancel(w) });
        assert_eq!(c.has_waiters.load(Ordering::Relaxed), 0);
        assert!(!c.notify_one());
    });
}

#[test]
fn a_notify_one_the_reaped_waiter_never_took_passes_to_the_next() {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let gone = AsyncWaiter::new();
    queue_async_wait(&pair.1, &pair.0, &gone);
    let p = pair.clone();
    let live = std::thread::spawn(move || {
        p.0.lock();
        // SAFETY: the lock is held.
        let notified = unsafe { p.1.wait_raw(&p.0, None) };
        p.0.unlock();
        notified
    });
    while crate::parking_lot::parked_count(pair.1.key()) != 2 {
        std::thread::yield_now();
    }
    assert!(pair.1.notify_one(), "chooses the oldest: the gone record");
    // SAFETY: nobody uses `gone` again.
    unsafe { crate::parking_lot::abandon_async(&gone) };
    assert!(
        live.join().unwrap(),
        "the notify passed on to the live waiter"
    );
}

/// An async waiter whose timeout fires just after a notify chose it: its
/// cancel finds the notify, which it owes until it has taken the lock back
/// (wasm's `lock_async_begin` settles it). Reaped before that, it passes the
/// notify on, as a waiter reaped before it polled does.
#[test]
fn a_notify_that_won_the_race_with_a_cancel_passes_on_if_the_waiter_is_reaped_before_it_took_the_lock_back(
) {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let gone = AsyncWaiter::new();
    queue_async_wait(&pair.1, &pair.0, &gone);
    let live = live_waiter(&pair);
    assert!(pair.1.notify_one(), "chooses the oldest: the async record");
    // SAFETY: `gone` was queued on this condition and not settled since.
    assert!(
        unsafe { pair.1.wait_async_cancel_owing(&gone) },
        "the notify came first"
    );
    // SAFETY: nobody uses `gone` again.
    unsafe { crate::parking_lot::abandon_async(&gone) };
    assert!(
        live.join().unwrap(),
        "the notify passed on to the live waiter"
    );
}

/// The same cancel, where the waiter took the lock back and settled before
/// it was reaped: it owes nothing, and the reaper passes nothing on.
#[test]
fn a_cancelled_waiter_that_settled_leaves_its_reaper_nothing_to_pass_on() {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let gone = AsyncWaiter::new();
    queue_async_wait(&pair.1, &pair.0, &gone);
    let live = live_waiter(&pair);
    assert!(pair.1.notify_one(), "chooses the oldest: the async record");
    // SAFETY: `gone` was queued on this condition and not settled since.
    assert!(unsafe { pair.1.wait_async_cancel_owing(&gone) });
    gone.settled();
    // SAFETY: nobody uses `gone` again.
    unsafe { crate::parking_lot::abandon_async(&gone) };
    assert_eq!(
        crate::parking_lot::parked_count(pair.1.key()),
        1,
        "the live waiter still waits: nothing was passed on"
    );
    assert!(pair.1.notify_one());
    assert!(live.join().unwrap());
}

#[test]
fn a_reaped_waiter_that_was_last_clears_the_byte() {
    with_a_queued_waiter(|_, c, gone| {
        assert_eq!(c.has_waiters.load(Ordering::Relaxed), 1);
        // SAFETY: nobody uses `gone` again.
        unsafe { crate::parking_lot::abandon_async(gone) };
        assert_eq!(c.has_waiters.load(Ordering::Relaxed), 0);
        assert!(!c.notify_one());
    });
}

/// Runs `test(b, c, w)` with `w` queued on `c` with a first lock, and `b`,
/// a second lock, held.
fn with_a_waiter_and_a_second_lock(test: impl FnOnce(&Lock, &Condition, &AsyncWaiter)) {
    with_a_queued_waiter(|_, c, w| {
        let b = Lock::new();
        b.lock();
        test(&b, c, w);
    });
}

#[test]
fn a_wait_with_a_second_lock_is_refused_and_changes_nothing() {
    with_a_waiter_and_a_second_lock(|b, c, w| {
        assert_eq!(unsafe { c.try_wait_raw(b, None) }, Err(WrongLock));
        let w2 = AsyncWaiter::new();
        assert_eq!(unsafe { c.wait_async_begin(b, &w2) }, Err(WrongLock));
        assert!(b.is_locked(), "the lock is still held after a refused wait");
        assert_eq!(crate::parking_lot::parked_count(c.key()), 1);
        // With the first lock it is fine; once nobody waits, any lock is.
        assert!(c.notify_one());
        assert!(w.poll().is_some());
        assert_eq!(
            unsafe { c.try_wait_raw(b, Some(Instant::now())) },
            Ok(false)
        );
        b.unlock();
    });
}

#[test]
#[should_panic(expected = "every waiter of a condition must use the same lock")]
fn wait_raw_with_a_second_lock_panics_as_parking_lot_does() {
    with_a_waiter_and_a_second_lock(|b, c, w| {
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            c.wait_raw(b, None)
        }));
        // Leave no record queued behind (the test's stack frame owns it).
        assert!(!unsafe { c.wait_async_cancel(w) });
        if let Err(e) = panicked {
            std::panic::resume_unwind(e);
        }
    });
}

/// A Lock, a Condition, and what the waiters of one test did.
#[derive(Default)]
struct Herd {
    lock: Lock,
    cond: Condition,
    /// Waiters that returned holding the lock.
    entered: AtomicU32,
    /// Of those, the ones that said "notified".
    notified: AtomicU32,
    /// Set while a waiter is inside the lock after its wait.
    inside: AtomicBool,
}

impl Herd {
    fn lock_key(&self) -> usize {
        lock_address(&self.lock)
    }

    /// Waits once with `timeout` (untimed if `None`), then checks that
    /// it holds the lock alone and counts itself.
    fn wait_once(&self, timeout: Option<Duration>) {
        self.lock.lock();
        // SAFETY: the lock is held.
        let notified = unsafe {
            self.cond
                .wait_raw(&self.lock, timeout.and_then(deadline_after))
        };
        assert!(self.lock.is_locked());
        assert!(!self.inside.swap(true, Ordering::SeqCst), "two holders");
        self.entered.fetch_add(1, Ordering::SeqCst);
        self.notified
            .fetch_add(u32::from(notified), Ordering::SeqCst);
        std::thread::yield_now();
        self.inside.store(false, Ordering::SeqCst);
        self.lock.unlock();
    }

    /// Starts `n` waiters and returns once all of them are queued (or,
    /// with a timeout, have been and left).
    fn start(
        self: &Arc<Self>,
        n: usize,
        timeout: Option<Duration>,
    ) -> Vec<std::thread::JoinHandle<()>> {
        let hs = (0..n)
            .map(|_| {
                let h = self.clone();
                std::thread::spawn(move || h.wait_once(timeout))
            })
            .collect();
        while crate::parking_lot::parked_count(self.cond.key())
            + (self.entered.load(Ordering::SeqCst) as usize)
            < n
        {
            std::thread::yield_now();
        }
        hs
    }

    /// Joins the waiters and checks that each entered once, the lock is
    /// left free and unmarked and the condition empty.
    fn finish(&self, hs: Vec<std::thread::JoinHandle<()>>) {
        let n = hs.len() as u32;
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(self.entered.load(Ordering::SeqCst), n);
        assert!(!self.lock.is_locked());
        assert!(
            !self.lock.has_parked(),
            "PARKED left set with nobody parked"
        );
        assert_eq!(crate::parking_lot::parked_count(self.lock_key()), 0);
        assert_eq!(self.cond.has_waiters.load(Ordering::Relaxed), 0);
    }
}

#[test]
fn notify_all_under_the_lock_moves_the_waiters_instead_of_waking_them() {
    // The thundering herd: woken all at once, every waiter would find the
    // lock held by the notifier and park again on it.
    let n = 6;
    let herd = Arc::new(Herd::default());
    let hs = herd.start(n, None);
    herd.lock.lock();
    assert_eq!(herd.cond.notify_all(), n);
    assert_eq!(crate::parking_lot::parked_count(herd.cond.key()), 0);
    assert_eq!(
        crate::parking_lot::parked_count(herd.lock_key()),
        n,
        "every waiter is asleep on the lock's queue, none was woken to fight for it"
    );
    assert!(
        herd.lock.has_parked(),
        "the holder's release must wake them"
    );
    assert_eq!(herd.entered.load(Ordering::SeqCst), 0);
    herd.lock.unlock();
    herd.finish(hs);
    assert_eq!(herd.notified.load(Ordering::SeqCst), n as u32);
}

/// `n` waiters (with `timeout`), one `notify_all` (under the lock if
/// `hold`): every waiter is counted, enters once and says "notified".
fn notify_all_releases_each_once(n: usize, timeout: Option<Duration>, hold: bool) {
    let herd = Arc::new(Herd::default());
    let hs = herd.start(n, timeout);
    if hold {
        herd.lock.lock();
    }
    assert_eq!(herd.cond.notify_all(), n);
    assert_eq!(crate::parking_lot::parked_count(herd.cond.key()), 0);
    if hold {
        herd.lock.unlock();
    }
    herd.finish(hs);
    assert_eq!(herd.notified.load(Ordering::SeqCst), n as u32);
}

#[test]
fn notify_all_on_a_free_lock_wakes_one_and_moves_the_rest() {
    notify_all_releases_each_once(6, None, false);
}

#[test]
fn timed_waiters_moved_onto_the_lock_are_notified_once_each() {
    notify_all_releases_each_once(5, Some(Duration::from_secs(30)), true);
}

#[test]
fn a_deadline_that_passes_on_the_locks_queue_still_counts_as_notified() {
    let herd = Arc::new(Herd::default());
    // One that times out on the lock's queue, one that does not behind it.
    // Miri's clock runs fast while it interprets: give it room.
    let scale = if cfg!(miri) { 300 } else { 1 };
    let mut hs = herd.start(1, Some(Duration::from_millis(30) * scale));
    let h = herd.clone();
    hs.push(std::thread::spawn(move || h.wait_once(None)));
    while crate::parking_lot::parked_count(herd.cond.key()) != 2 {
        std::thread::yield_now();
    }
    herd.lock.lock();
    assert_eq!(herd.cond.notify_all(), 2);
    assert_eq!(crate::parking_lot::parked_count(herd.lock_key()), 2);
    // Hold the lock past the first one's deadline: it leaves the lock's
    // queue and parks again in `lock`.
    std::thread::sleep(Duration::from_millis(80) * scale);
    assert_eq!(herd.entered.load(Ordering::SeqCst), 0);
    herd.lock.unlock();
    herd.finish(hs);
    assert_eq!(herd.notified.load(Ordering::SeqCst), 2);
}

#[test]
fn a_timeout_racing_notify_all_is_counted_by_exactly_one_of_them() {
    let rounds = if cfg!(miri) { 5 } else { 300 };
    for round in 0..rounds {
        let herd = Arc::new(Herd::default());
        let hs = herd.start(1, Some(Duration::from_micros(50 + (round % 7) * 20)));
        let hold = round % 2 == 0;
        if hold {
            herd.lock.lock();
        }
        let counted = herd.cond.notify_all();
        if hold {
            herd.lock.unlock();
        }
        herd.finish(hs);
        assert_eq!(
            herd.notified.load(Ordering::SeqCst) as usize,
            counted,
            "round {round}: notified exactly when notify_all counted it"
        );
    }
}

#[test]
fn notify_all_wakes_async_waiters_and_moves_the_blocking_ones() {
    let herd = Arc::new(Herd::default());
    let record = AsyncWaiter::new();
    herd.lock.lock();
    unsafe { herd.cond.wait_async_begin(&herd.lock, &record) }.unwrap();
    let h = herd.clone();
    let blocking = std::thread::spawn(move || h.wait_once(None));
    while crate::parking_lot::parked_count(herd.cond.key()) != 2 {
        std::thread::yield_now();
    }
    herd.lock.lock();
    assert_eq!(herd.cond.notify_all(), 2, "both released");
    assert!(record.poll().is_some(), "the async waiter was woken");
    assert_eq!(
        crate::parking_lot::parked_count(herd.lock_key()),
        1,
        "the blocking waiter was moved"
    );
    herd.lock.unlock();
    // The async waiter takes the lock back as its protocol says.
    if !unsafe { herd.lock.lock_async_begin(&record) } {
        while !unsafe { herd.lock.lock_async_resume(&record) } {
            std::thread::yield_now();
        }
    }
    herd.lock.unlock();
    herd.finish(vec![blocking]);
}

#[test]
fn lock_api_condvar_works_over_it() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    std::thread::spawn(move || {
        *p.0.lock() = true;
        p.1.notify_all();
    });
    let mut g = pair.0.lock();
    pair.1.wait_while(&mut g, |ready| !*ready);
    assert!(*g);
}

/// A thread that waits with [`Condition::wait_owing`] on `pair` until
/// woken, sends its record and how the wait ended, and then stops for good
/// before it acts on the wakeup (it neither takes the lock back nor calls
/// `settled`), as a terminated worker does: once told, it only ends.
fn stopped_after_its_wakeup(
    pair: &Arc<(Lock, Condition)>,
) -> (
    std::thread::JoinHandle<()>,
    std::sync::mpsc::Receiver<(crate::parking_lot::ThreadRecord, Waited)>,
    std::sync::mpsc::Sender<()>,
) {
    let (to_main, from_thread) = std::sync::mpsc::channel();
    let (to_thread, from_main) = std::sync::mpsc::channel::<()>();
    let p = pair.clone();
    let t = std::thread::spawn(move || {
        let record = crate::parking_lot::ThreadRecord::current().unwrap();
        p.0.lock();
        // SAFETY: the lock is held.
        let woken = unsafe { p.1.wait_owing(&p.0, None, || {}) }.unwrap();
        to_main.send((record, woken)).unwrap();
        from_main.recv().unwrap();
        // Reaped meanwhile: the record is not used again.
    });
    while crate::parking_lot::parked_count(pair.1.key()) != 1 {
        std::thread::yield_now();
    }
    (t, from_thread, to_thread)
}

#[test]
fn a_waiter_handed_the_lock_after_a_requeue_and_reaped_before_it_settled_passes_the_lock_on() {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let (t, woken, go) = stopped_after_its_wakeup(&pair);
    let live = live_waiter(&pair);
    pair.0.lock();
    assert_eq!(pair.1.notify_all(), 2, "both moved onto the held lock");
    pair.0.unlock_fair(); // hands the lock to the first moved: the one that stops
    let (record, waited) = woken.recv().unwrap();
    assert_eq!(
        waited,
        Waited {
            notified: true,
            holding: true
        }
    );
    // SAFETY (test): the thread is stopped on the channel and never touches
    // its record again but to end.
    unsafe { crate::parking_lot::abandon_thread_still_counted(record, |_| false) };
    assert!(
        live.join().unwrap(),
        "the lock handed to the gone waiter was passed on to the live one"
    );
    assert!(!pair.0.is_locked(), "the lock is held by nobody");
    go.send(()).unwrap();
    t.join().unwrap();
}

/// A second waiter on `pair`, queued after the first: says whether it was
/// notified once it has the lock back (it gives up waiting after 5 s).
fn live_waiter(pair: &Arc<(Lock, Condition)>) -> LiveWaiter {
    let p = pair.clone();
    let (to_main, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        p.0.lock();
        // SAFETY: the lock is held.
        let notified = unsafe {
            p.1.wait_raw(&p.0, Some(Instant::now() + Duration::from_secs(5)))
        };
        p.0.unlock();
        to_main.send(notified).unwrap();
    });
    while crate::parking_lot::parked_count(pair.1.key()) != 2 {
        std::thread::yield_now();
    }
    LiveWaiter(done)
}

/// [`live_waiter`]'s outcome.
struct LiveWaiter(std::sync::mpsc::Receiver<bool>);

impl LiveWaiter {
    /// Whether it was notified; fails if it did not get the lock back
    /// within 10 s (left blocked: a lock lost for good).
    fn join(self) -> Result<bool, std::sync::mpsc::RecvTimeoutError> {
        self.0.recv_timeout(Duration::from_secs(10))
    }
}

#[test]
fn a_notify_one_whose_blocked_waiter_is_reaped_before_it_took_the_lock_back_passes_to_the_next() {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let (t, woken, go) = stopped_after_its_wakeup(&pair);
    let live = live_waiter(&pair);
    assert!(
        pair.1.notify_one(),
        "chooses the oldest: the one that stops"
    );
    let (record, waited) = woken.recv().unwrap();
    assert_eq!(
        waited,
        Waited {
            notified: true,
            holding: false
        }
    );
    // SAFETY (test): as above.
    unsafe { crate::parking_lot::abandon_thread_still_counted(record, |_| false) };
    assert!(
        live.join().unwrap(),
        "the notify passed on to the live waiter"
    );
    assert!(
        !pair.0.is_locked(),
        "the gone waiter never took the lock back"
    );
    go.send(()).unwrap();
    t.join().unwrap();
}
