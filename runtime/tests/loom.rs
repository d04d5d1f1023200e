//! Model checking with loom: every interleaving (up to a preemption bound) of
//! the core's races. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p parklot --test loom --release`.
//!
//! A lost wakeup shows up as a deadlock, a broken lock as a data race on the
//! loom cell it guards; loom reports both with the interleaving that caused them.
//!
//! Only spawned threads park: loom drops the model's main thread's
//! thread-locals (our waiter record among them) after the execution ends,
//! where loom objects may no longer be touched.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use loom::sync::Arc;
use loom::thread;
use parklot::parking_lot::{park_conditionally, unpark_one, ParkResult};
use parklot::{futex, Condition, Lock, TakeoverLock, WaitResult, WordLock};

mod common;
use common::model;

/// [`model`] with at most `bound` preemptions, whatever `LOOM_MAX_PREEMPTIONS`
/// allows: for a model of three threads, where 2 takes minutes.
fn model_bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(bound, |b| b.min(bound)));
    builder.check(f);
}

/// A counter that only a working lock keeps race-free.
struct Counter(UnsafeCell<u32>);
// SAFETY (test): loom checks every access for races.
unsafe impl Sync for Counter {}
impl Counter {
    fn new() -> Counter {
        Counter(UnsafeCell::new(0))
    }
    fn bump(&self) {
        self.0.with_mut(|p| unsafe { *p += 1 });
    }
    fn get(&self) -> u32 {
        self.0.with(|p| unsafe { *p })
    }
}

/// A model's lock and the counter it guards, shared by its threads.
fn guarded<L>(lock: L) -> (Arc<L>, Arc<Counter>) {
    (Arc::new(lock), Arc::new(Counter::new()))
}

/// Runs `body` on a thread of its own, with its own handles to a model's
/// lock and counter.
fn spawn_with<L, R>(
    lock: &Arc<L>,
    data: &Arc<Counter>,
    body: impl FnOnce(&L, &Counter) -> R + Send + 'static,
) -> thread::JoinHandle<R>
where
    L: Send + Sync + 'static,
    R: Send + 'static,
{
    let (lock, data) = (lock.clone(), data.clone());
    thread::spawn(move || body(&lock, &data))
}

/// A thread's whole part: takes the lock, bumps the counter, lets go.
fn lock_bump(lock: &Lock, data: &Counter) {
    lock.lock();
    data.bump();
    lock.unlock();
}

/// [`lock_bump`] with a reader-writer lock's write lock.
fn write_bump(lock: &parklot::RawRwLock, data: &Counter) {
    lock.lock_exclusive();
    data.bump();
    // SAFETY: locked just above.
    unsafe { lock.unlock_exclusive() };
}

/// A thread that reaps `gone` (a dead owner's async record).
fn reaper(gone: &Arc<parklot::parking_lot::AsyncWaiter>) -> thread::JoinHandle<()> {
    let gone = gone.clone();
    // SAFETY (test): the record's owner is gone; nobody uses it after this.
    thread::spawn(move || unsafe { parklot::parking_lot::abandon_async(&gone) })
}

#[test]
fn park_against_unpark_never_loses_the_wakeup() {
    model(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let key = Arc::as_ptr(&flag) as usize;
        let f2 = flag.clone();
        let waiter = thread::spawn(move || {
            // Sleep only while the flag is still clear, checked under the queue lock.
            let r = unsafe {
                park_conditionally(key, || !f2.load(Ordering::Relaxed), || {}, |_, _| {}, None)
            };
            assert!(
                matches!(r, ParkResult::Unparked(9) | ParkResult::Invalid),
                "{r:?}"
            );
        });
        flag.store(true, Ordering::Relaxed);
        unsafe { unpark_one(key, |_| 9) };
        waiter.join().unwrap();
    });
}

#[test]
fn word_lock_excludes_and_wakes() {
    model(|| {
        let (lock, counter) = guarded(WordLock::new());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (lock, counter) = (lock.clone(), counter.clone());
                thread::spawn(move || {
                    lock.lock();
                    counter.bump();
                    unsafe { lock.unlock() };
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.get(), 2);
        assert!(!lock.is_locked());
    });
}

#[test]
fn takeover_lock_excludes_and_wakes() {
    model(|| {
        let (lock, counter) = guarded(TakeoverLock::new());
        let hs: Vec<_> = (1..=2u32)
            .map(|t| {
                let (lock, counter) = (lock.clone(), counter.clone());
                thread::spawn(move || {
                    lock.lock(t * 2);
                    counter.bump();
                    lock.unlock();
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.get(), 2);
    });
}

/// A holder of a `TakeoverLock` dies (its thread ends without releasing, or
/// with `dies_releasing` between its release's swap and its wake) while
/// another thread waits for the lock, maybe asleep; the reaper, once the
/// holder is gone (joined: the death signal), takes the lock over and
/// releases it, or finds it released and wakes the sleepers. The waiter
/// must get the lock: a sleeper left unwoken is a deadlock in loom.
fn takeover_lock_reaped_holder(dies_releasing: bool) {
    model(move || {
        let (lock, counter) = guarded(TakeoverLock::new());
        let holder = {
            let lock = lock.clone();
            thread::spawn(move || {
                lock.lock(2);
                if dies_releasing {
                    lock.release_and_die_before_the_wake();
                }
            })
        };
        let waiter = {
            let (lock, counter) = (lock.clone(), counter.clone());
            thread::spawn(move || {
                lock.lock(4);
                counter.bump();
                lock.unlock();
            })
        };
        holder.join().unwrap();
        if lock.take_over(2, 6) {
            lock.unlock();
        } else {
            lock.wake_all();
        }
        waiter.join().unwrap();
        assert_eq!(counter.get(), 1);
    });
}

#[test]
fn takeover_lock_reaper_releases_for_a_holder_that_died_holding_it() {
    takeover_lock_reaped_holder(false);
}

#[test]
fn takeover_lock_reaper_wakes_the_sleepers_of_a_holder_that_died_releasing_it() {
    takeover_lock_reaped_holder(true);
}

/// `threads` threads each take the lock once and bump a counter.
/// How a model's threads release the lock.
#[derive(Copy, Clone)]
enum Unlock {
    /// `unlock`: the swap.
    Swap,
    /// `unlock_fair`: hands over to a parked thread.
    Fair,
    /// `checked_unlock`: the release path, which marks a thread it wakes to
    /// compete (`WAKING`) and wakes nobody else until that one has run.
    Checked,
    /// `checked_unlock_recorded` (fair or not), as the wasm module releases
    /// a thread's only hold: its `OnRelease` must run exactly once per
    /// release, whichever path gives the byte up (the CAS, a wake to
    /// compete, a hand-off).
    Recorded { fair: bool },
}

/// A hold's record, forgotten by the release that gives the lock up
/// (`Unlock::Recorded`): counts the forgettings, and checks that the
/// thread forgetting is the one that took the lock.
struct Forget<'a> {
    holds: &'a loom::sync::atomic::AtomicUsize,
    forgotten: &'a loom::sync::atomic::AtomicUsize,
}

impl parklot::OnRelease for Forget<'_> {
    fn released(self) {
        use loom::sync::atomic::Ordering::Relaxed;
        assert_eq!(self.holds.load(Relaxed), 1, "forgot a hold it did not have");
        self.holds.store(0, Relaxed);
        self.forgotten.fetch_add(1, Relaxed);
    }
}

fn lock_threads(threads: usize, unlock: Unlock) {
    lock_threads_with(threads, unlock, false);
}

/// [`lock_threads`] with the woken thread carrying PARKED if `carry`
/// (`parklot::set_carry_parked`; the policy of wasm builds).
fn lock_threads_with(threads: usize, unlock: Unlock, carry: bool) {
    // The policy is process-wide and the tests run in parallel: hold it for
    // the whole model (other models may still see either policy; both are exact).
    static POLICY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _policy = POLICY.lock().unwrap_or_else(|e| e.into_inner());
    parklot::set_spin_limit(0); // park at once: spinning only multiplies interleavings
    parklot::set_carry_parked(carry);
    model(move || {
        let (lock, counter) = guarded(Lock::new());
        let forgotten = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (lock, counter, forgotten) = (lock.clone(), counter.clone(), forgotten.clone());
                thread::spawn(move || {
                    lock.lock();
                    // This thread's record of its hold (as the wasm module keeps one).
                    let holds = loom::sync::atomic::AtomicUsize::new(1);
                    counter.bump();
                    match unlock {
                        Unlock::Swap => lock.unlock(),
                        Unlock::Fair => lock.unlock_fair(),
                        Unlock::Checked => lock.checked_unlock().unwrap(),
                        Unlock::Recorded { fair } => {
                            let forget = Forget {
                                holds: &holds,
                                forgotten: &forgotten,
                            };
                            lock.checked_unlock_recorded(fair, false, forget).unwrap();
                            let left = holds.load(loom::sync::atomic::Ordering::Relaxed);
                            assert_eq!(left, 0, "the release kept the hold on record");
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.get(), threads as u32);
        if let Unlock::Recorded { .. } = unlock {
            let n = forgotten.load(loom::sync::atomic::Ordering::Relaxed);
            assert_eq!(n, threads, "each release forgets its hold once");
        }
        assert!(!lock.is_locked());
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
        assert!(
            !lock.has_woken_waiter(),
            "WAKING left set with nobody woken"
        );
    });
}

/// The unlock's swap releases the lock even with threads parked, and puts
/// the parked bit back afterwards: taking the lock again, or under a thread
/// that barged in meanwhile, whose unlock must then wake the parked one.
#[test]
fn unlock_swap_with_a_parked_waiter_and_a_barger() {
    parklot::set_spin_limit(0);
    // A version that forgot the bit under the barger deadlocks here with a
    // third preemption (checked by hand with a bound of 3); the correct one
    // at bound 3 outgrows this machine (10 GB after 10 minutes), so the
    // suite runs it at the usual bound.
    model(|| {
        let lock = Arc::new(Lock::new());
        lock.lock();
        let l2 = lock.clone();
        // Loom tries the orders where it parks before the unlock.
        let parked = thread::spawn(move || {
            l2.lock();
            l2.unlock();
        });
        let l3 = lock.clone();
        let barger = thread::spawn(move || {
            l3.lock();
            l3.unlock();
        });
        lock.unlock();
        parked.join().unwrap();
        barger.join().unwrap();
        assert!(!lock.is_locked());
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
    });
}

#[test]
fn lock_with_two_threads() {
    lock_threads(2, Unlock::Swap);
}

#[test]
fn lock_with_two_threads_and_fair_handoff() {
    lock_threads(2, Unlock::Fair);
}

#[test]
fn lock_with_three_threads() {
    lock_threads(3, Unlock::Swap);
}

#[test]
fn lock_with_three_threads_and_fair_handoff() {
    lock_threads(3, Unlock::Fair);
}

/// The throttled wakes: a release that finds a woken thread still on its
/// way wakes nobody, and that thread, once it runs, must leave the next
/// release free to wake the last one (a lost wakeup deadlocks here).
#[test]
fn lock_with_three_threads_and_throttled_wakes() {
    lock_threads(3, Unlock::Checked);
}

/// The carried bit: a release that wakes one of two queued threads clears
/// PARKED, so that releases wake nobody until the woken one runs; that one
/// must set it again as it takes the lock or parks, or the last one sleeps
/// forever (a lost wakeup deadlocks here). Through the swap and through the
/// release path.
#[test]
fn lock_with_three_threads_forgetting_each_hold_as_its_release_gives_the_byte_up() {
    lock_threads_with(3, Unlock::Recorded { fair: false }, true);
}

#[test]
fn lock_with_two_threads_forgetting_each_hold_at_a_fair_handoff() {
    lock_threads(2, Unlock::Recorded { fair: true });
}

#[test]
fn lock_with_three_threads_carrying_the_parked_bit() {
    lock_threads_with(3, Unlock::Swap, true);
}

#[test]
fn lock_with_three_threads_carrying_the_parked_bit_through_checked_unlocks() {
    lock_threads_with(3, Unlock::Checked, true);
}

#[test]
fn lock_with_three_threads_carrying_the_parked_bit_and_fair_handoff() {
    lock_threads_with(3, Unlock::Fair, true);
}

#[test]
fn condition_wait_notify_has_no_lost_or_spurious_wakeups() {
    parklot::set_spin_limit(0);
    model(|| {
        let shared = Arc::new((Lock::new(), Condition::new(), Counter::new()));
        let s2 = shared.clone();
        let notifier = thread::spawn(move || {
            s2.0.lock();
            s2.2.bump();
            s2.0.unlock();
            s2.1.notify_one();
        });
        let s3 = shared.clone();
        let waiter = thread::spawn(move || {
            s3.0.lock();
            while s3.2.get() == 0 {
                // Untimed: returns only when notified, so it must see the bump.
                let notified = unsafe { s3.1.wait_raw(&s3.0, None) };
                assert!(notified);
                assert_eq!(s3.2.get(), 1, "woken without the notify");
            }
            s3.0.unlock();
        });
        notifier.join().unwrap();
        waiter.join().unwrap();
        assert!(!shared.1.notify_one(), "the has-waiters byte was left set");
    });
}

/// `notify_all` moving a timed waiter onto its lock's queue, against that
/// waiter's deadline (loom's clock stands at 0, so a deadline of now passes
/// at once, unless a notify claimed or moved the waiter first) and against
/// the lock's release, which must wake it there. An async waiter queued
/// first (by the model's thread, which must not block) makes two, so that
/// `notify_all` looks for a lock to move them to: the async one is woken,
/// the blocking one moved. With `hold` the notify comes under the lock
/// (nobody else woken), without it after the release (the first is woken).
/// The blocking waiter takes the lock back exactly once and says "notified"
/// exactly when `notify_all` counted it; nothing is left parked or marked.
fn notify_all_requeue_against_a_timeout_and_an_unlock(hold: bool) {
    use parklot::parking_lot::AsyncWaiter;
    parklot::set_spin_limit(0);
    model(move || {
        let shared = Arc::new((Lock::new(), Condition::new(), Counter::new()));
        let record = AsyncWaiter::new();
        shared.0.lock();
        unsafe { shared.1.wait_async_begin(&shared.0, &record) }.unwrap();
        let s2 = shared.clone();
        let waiter = thread::spawn(move || {
            s2.0.lock();
            let notified = unsafe { s2.1.wait_raw(&s2.0, Some(parklot::Instant::now())) };
            s2.2.bump();
            s2.0.unlock();
            notified
        });
        let s3 = shared.clone();
        let notifier = thread::spawn(move || {
            s3.0.lock();
            s3.2.bump();
            let counted = if hold { s3.1.notify_all() } else { 0 };
            s3.0.unlock();
            counted + if hold { 0 } else { s3.1.notify_all() }
        });
        let notified = waiter.join().unwrap();
        let counted = notifier.join().unwrap();
        assert!(record.poll().is_some(), "the async waiter was woken");
        assert_eq!(
            counted,
            1 + usize::from(notified),
            "counted exactly the notified"
        );
        assert_eq!(shared.2.get(), 2);
        assert!(!shared.0.is_locked(), "the lock is held by nobody");
        assert!(!shared.0.has_parked(), "PARKED left set with nobody parked");
        assert!(!shared.1.notify_one(), "the has-waiters byte was left set");
    });
}

#[test]
fn notify_all_under_the_lock_requeue_against_a_timeout_and_an_unlock() {
    notify_all_requeue_against_a_timeout_and_an_unlock(true);
}

#[test]
fn notify_all_after_the_unlock_against_a_timeout() {
    notify_all_requeue_against_a_timeout_and_an_unlock(false);
}

/// Two untimed waiters and a `notify_all` after the release: the first is
/// woken, the second moved onto the lock (PARKED set after the move), and
/// the first's release (or a later one) wakes it. Three threads: one
/// preemption keeps it to seconds (two take over seven minutes).
#[test]
fn notify_all_on_a_free_lock_wakes_one_and_the_moved_one_follows() {
    parklot::set_spin_limit(0);
    model_bounded(1, || {
        let shared = Arc::new((Lock::new(), Condition::new(), Counter::new()));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.clone();
                thread::spawn(move || {
                    s.0.lock();
                    while s.2.get() == 0 {
                        assert!(unsafe { s.1.wait_raw(&s.0, None) });
                    }
                    s.0.unlock();
                })
            })
            .collect();
        let s = shared.clone();
        let notifier = thread::spawn(move || {
            s.0.lock();
            s.2.bump();
            s.0.unlock();
            s.1.notify_all();
        });
        notifier.join().unwrap();
        for w in waiters {
            w.join().unwrap();
        }
        assert!(!shared.0.is_locked(), "the lock is held by nobody");
        assert!(!shared.0.has_parked(), "PARKED left set with nobody parked");
        assert!(!shared.1.notify_one(), "the has-waiters byte was left set");
    });
}

#[test]
fn futex_wait_against_store_and_notify() {
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let w2 = word.clone();
        let waiter = thread::spawn(move || futex::wait32(&w2, 0, None));
        word.store(1, Ordering::SeqCst);
        futex::notify(&*word, futex::NOTIFY_ALL);
        let r = waiter.join().unwrap();
        assert!(r == WaitResult::Ok || r == WaitResult::NotEqual, "{r:?}");
    });
}

#[test]
fn async_lock_against_unlock_and_cancel() {
    use parklot::parking_lot::AsyncWaiter;
    parklot::set_spin_limit(0);
    model(|| {
        let (lock, counter) = guarded(Lock::new());
        let blocking = spawn_with(&lock, &counter, lock_bump);
        let asynchronous = spawn_with(&lock, &counter, move |l3, c3| {
            let waiter = AsyncWaiter::new();
            // Begin; if queued, give up at once (the racing timeout case),
            // then acquire for real with the blocking path.
            let mut held = unsafe { l3.lock_async_begin(&waiter) };
            if !held {
                held = unsafe { l3.lock_async_cancel(&waiter) };
            }
            if !held {
                l3.lock();
            }
            c3.bump();
            l3.unlock();
        });
        blocking.join().unwrap();
        asynchronous.join().unwrap();
        assert_eq!(counter.get(), 2);
        assert!(!lock.is_locked());
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
    });
}

/// Exactness with an async record queued before a blocking waiter: the first
/// notify(1) wakes the record alone; every "ok" is a counted wake.
#[test]
fn notify_one_with_an_async_record_first_wakes_exactly_one() {
    use parklot::parking_lot::AsyncWaiter;
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let record = AsyncWaiter::new();
        assert!(unsafe { futex::wait32_async_begin(&word, 0, &record) });
        let w2 = word.clone();
        let blocking = thread::spawn(move || futex::wait32(&w2, 0, None));
        let first = futex::notify(&*word, 1);
        assert_eq!(first, 1, "the record was queued");
        assert!(
            record.poll().is_some(),
            "the oldest waiter is the one woken"
        );
        word.store(1, Ordering::SeqCst);
        let second = futex::notify(&*word, futex::NOTIFY_ALL);
        let r = blocking.join().unwrap();
        assert_eq!(second, usize::from(r == WaitResult::Ok), "{r:?}");
    });
}

/// A blocking waiter that a notify chooses before it is asleep still
/// reports "ok", and only then: the waits that end "ok" are exactly the
/// wakes notify counted.
#[test]
fn a_waiter_chosen_before_it_sleeps_is_counted_exactly_once() {
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let w2 = word.clone();
        let waiter = thread::spawn(move || futex::wait32(&w2, 0, None));
        let first = futex::notify(&*word, 1);
        word.store(1, Ordering::SeqCst);
        let second = futex::notify(&*word, futex::NOTIFY_ALL);
        let r = waiter.join().unwrap();
        assert_eq!(first + second, usize::from(r == WaitResult::Ok), "{r:?}");
    });
}

/// Cancelling an async wait (its timeout) against a notify: the wait is "ok"
/// exactly when the notify counted it.
#[test]
fn async_cancel_against_notify_agree_on_who_won() {
    use parklot::parking_lot::AsyncWaiter;
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let key = Arc::as_ptr(&word) as usize;
        let record = AsyncWaiter::new();
        assert!(unsafe { futex::wait32_async_begin(&word, 0, &record) });
        let w2 = word.clone();
        let notifier = thread::spawn(move || futex::notify(&*w2, 1));
        let r = unsafe { futex::wait_async_cancel(key, &record) };
        let counted = notifier.join().unwrap();
        assert_eq!(counted, usize::from(r == WaitResult::Ok), "{r:?}");
    });
}

/// Reaping a gone owner's async record on a lock while the lock is released
/// fairly: whoever the lock goes to, the live waiter gets it and the lock
/// ends free with no PARKED bit.
#[test]
fn reaping_a_lock_waiter_against_a_fair_unlock() {
    use parklot::parking_lot::AsyncWaiter;
    parklot::set_spin_limit(0);
    model(|| {
        let (lock, counter) = guarded(Lock::new());
        let gone = Arc::new(AsyncWaiter::new());
        lock.lock();
        assert!(!unsafe { lock.lock_async_begin(&gone) });
        let live = spawn_with(&lock, &counter, lock_bump);
        let reaper = reaper(&gone);
        lock.unlock_fair();
        reaper.join().unwrap();
        live.join().unwrap();
        assert_eq!(counter.get(), 1);
        assert!(!lock.is_locked(), "the lock is held by nobody");
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
    });
}

/// An async record's owner that saw its wakeup (`poll_owing`: the lock handed
/// over by a fair unlock, or a wake to compete) and was gone before it acted
/// on it, reaped while a live thread waits for the lock: the reaper passes
/// the wakeup on, so the live thread gets the lock and it ends free. (With
/// `poll`, which ends the debt, the lock handed to the gone owner stayed
/// held and the live thread waited for ever.)
#[test]
fn reaping_a_lock_waiter_that_saw_its_wakeup_and_never_acted() {
    use parklot::parking_lot::AsyncWaiter;
    parklot::set_spin_limit(0);
    model(|| {
        let (lock, counter) = guarded(Lock::new());
        let gone = Arc::new(AsyncWaiter::new());
        lock.lock();
        assert!(!unsafe { lock.lock_async_begin(&gone) });
        let live = spawn_with(&lock, &counter, lock_bump);
        lock.unlock_fair();
        // The owner looks once, then is gone for good.
        let _ = gone.poll_owing();
        let reaper = reaper(&gone);
        reaper.join().unwrap();
        live.join().unwrap();
        assert_eq!(counter.get(), 1);
        assert!(!lock.is_locked(), "the lock is held by nobody");
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
    });
}

/// A condition's async waiter chosen by `notify_one`, whose owner learned of
/// the notify through `learn` and was gone before it took its lock back,
/// reaped while a blocking waiter waits: the reaper passes the notify on, so
/// the live waiter sees the state change.
fn reaping_a_condition_waiter_that_learned_of_its_notify(
    learn: fn(&Condition, &parklot::parking_lot::AsyncWaiter) -> bool,
) {
    use parklot::parking_lot::AsyncWaiter;
    parklot::set_spin_limit(0);
    model(move || {
        let shared = Arc::new((Lock::new(), Condition::new(), Counter::new()));
        let gone = Arc::new(AsyncWaiter::new());
        shared.0.lock();
        unsafe { shared.1.wait_async_begin(&shared.0, &gone) }.unwrap();
        let s = shared.clone();
        let live = thread::spawn(move || {
            s.0.lock();
            while s.2.get() == 0 {
                assert!(unsafe { s.1.wait_raw(&s.0, None) });
            }
            s.0.unlock();
        });
        shared.0.lock();
        shared.2.bump();
        shared.0.unlock();
        assert!(
            shared.1.notify_one(),
            "the gone record is the oldest waiter"
        );
        // The owner learns of it once, then is gone for good.
        assert!(learn(&shared.1, &gone), "the notify came first");
        reaper(&gone).join().unwrap();
        live.join().unwrap();
        assert!(!shared.0.is_locked(), "the lock is held by nobody");
        assert!(!shared.1.notify_one(), "the has-waiters byte was left set");
    });
}

/// The owner saw the claim (`poll_owing`, as JS reads its record's word).
/// (With `poll`, which ends the debt, the notify died with the gone owner
/// and the live waiter waited for ever.)
#[test]
fn reaping_a_condition_waiter_that_saw_its_notify_and_never_acted() {
    reaping_a_condition_waiter_that_learned_of_its_notify(|_, gone| gone.poll_owing().is_some());
}

/// The owner's timeout fired after the notify chose its record: its cancel
/// finds the notify and keeps it owed. (With the cancel that ends the debt,
/// `wait_async_cancel`, the live waiter waited for ever.) Which of a cancel
/// and a notify wins is `async_cancel_against_notify_agree_on_who_won`.
#[test]
fn reaping_a_condition_waiter_whose_cancel_found_its_notify() {
    reaping_a_condition_waiter_that_learned_of_its_notify(|cond, gone| unsafe {
        cond.wait_async_cancel_owing(gone)
    });
}

/// A waker-record wait against a notify and a give-up (expire or cancel) on
/// two threads: exactly one ends it, the waker runs once with that outcome,
/// and the notify counts the wait only if it won.
fn waker_wait_against_notify(expire: bool) {
    use loom::sync::atomic::AtomicUsize;
    use parklot::parking_lot::WaitOutcome;
    model(move || {
        let word = Arc::new(AtomicI32::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let woken_by_waker = Arc::new(AtomicBool::new(false));
        let (c, w) = (calls.clone(), woken_by_waker.clone());
        let wait = futex::wait32_with_waker(
            &word,
            0,
            Box::new(move |outcome| {
                c.fetch_add(1, Ordering::Relaxed);
                w.store(matches!(outcome, WaitOutcome::Woken(_)), Ordering::Relaxed);
            }),
        )
        .expect("queued");
        let w2 = word.clone();
        let notifier = thread::spawn(move || futex::notify(&*w2, 1));
        let gave_up = if expire { wait.expire() } else { wait.cancel() };
        let counted = notifier.join().unwrap();
        assert_eq!(gave_up as usize + counted, 1, "exactly one ends the wait");
        assert_eq!(calls.load(Ordering::Relaxed), 1, "the waker runs once");
        assert_eq!(woken_by_waker.load(Ordering::Relaxed), counted == 1);
    });
}

#[test]
fn waker_wait_wake_against_cancel() {
    waker_wait_against_notify(false);
}

#[test]
fn waker_wait_wake_against_timeout() {
    waker_wait_against_notify(true);
}

/// A task's waker as loom sees it: an executor that sleeps on a condition
/// variable until woken (`wait`), as a thread blocked on a future does.
struct TaskFlag {
    woken: loom::sync::Mutex<bool>,
    cond: loom::sync::Condvar,
}
impl TaskFlag {
    fn new() -> std::sync::Arc<TaskFlag> {
        std::sync::Arc::new(TaskFlag {
            woken: loom::sync::Mutex::new(false),
            cond: loom::sync::Condvar::new(),
        })
    }
    /// Sleeps until a wake since the last one consumed.
    fn wait(&self) {
        let mut woken = self.woken.lock().unwrap();
        while !*woken {
            woken = self.cond.wait(woken).unwrap();
        }
        *woken = false;
    }
}
impl std::task::Wake for TaskFlag {
    fn wake(self: std::sync::Arc<Self>) {
        *self.woken.lock().unwrap() = true;
        self.cond.notify_one();
    }
}

/// A Rust future's record (`TaskWaiter`) queued on a lock against the
/// holder's unlock: the unlock's claim settles the record and wakes the task
/// (no wake is lost between the owner's look and its registration), the
/// owner queues again only once settled, and the lock is taken exactly once.
#[test]
fn task_waiter_is_woken_by_the_unlock_it_waits_for() {
    use parklot::parking_lot::TaskWaiter;
    taken_from_the_holder(
        |l| {
            let flag = TaskFlag::new();
            let waker = std::task::Waker::from(flag.clone());
            let cx = std::task::Context::from_waker(&waker);
            let w = TaskWaiter::new();
            let mut held = unsafe { w.queue(|a| l.lock_async_begin(a)) }.unwrap();
            while !held {
                if w.settled(&cx) {
                    held = unsafe { w.queue(|a| l.lock_async_resume(a)) }.unwrap();
                } else {
                    // Pending: only the promised wake moves us on.
                    flag.wait();
                }
            }
        },
        Lock::unlock,
    );
}

/// The main thread holds a Lock while another thread takes it with `take`
/// (which returns holding it), bumps a counter and unlocks; the main thread
/// bumps it too and lets go with `release`. Both bumps land, and the lock
/// ends free with no parked bit.
fn taken_from_the_holder(take: fn(&Lock), release: fn(&Lock)) {
    parklot::set_spin_limit(0);
    model(move || {
        let (lock, counter) = guarded(Lock::new());
        lock.lock();
        let owner = spawn_with(&lock, &counter, move |l2, c2| {
            take(l2);
            c2.bump();
            l2.unlock();
        });
        counter.bump();
        release(&lock);
        owner.join().unwrap();
        assert_eq!(counter.get(), 2);
        assert!(!lock.is_locked());
        assert!(!lock.has_parked(), "PARKED left set with nobody parked");
    });
}

/// A dropped future's record, cancelled against the unlock that may claim
/// it: either the cancel takes it out (and calls it back itself) or the
/// unlock claims it (and its call back follows); the record is settled
/// either way, and a lock handed over is passed on.
#[test]
fn task_waiter_cancel_against_a_fair_unlock() {
    use parklot::parking_lot::TaskWaiter;
    taken_from_the_holder(
        |l| {
            let flag = TaskFlag::new();
            let waker = std::task::Waker::from(flag);
            let cx = std::task::Context::from_waker(&waker);
            let w = TaskWaiter::new();
            let mut held = unsafe { w.queue(|a| l.lock_async_begin(a)) }.unwrap();
            if !held {
                held = unsafe { l.lock_async_cancel(w.waiter()) };
                while !w.settled(&cx) {
                    thread::yield_now();
                }
            }
            if !held {
                l.lock();
            }
        },
        Lock::unlock_fair,
    );
}

/// `cancel_range` against a notify on a waker-record wait: exactly one ends
/// it, the waker runs once with that outcome, and each counts only its own.
#[test]
fn cancel_range_against_notify_agree_on_who_won() {
    use loom::sync::atomic::AtomicUsize;
    use parklot::parking_lot::WaitOutcome;
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let cancelled_by_waker = Arc::new(AtomicBool::new(false));
        let (c, w) = (calls.clone(), cancelled_by_waker.clone());
        let _wait = futex::wait32_with_waker(
            &word,
            0,
            Box::new(move |outcome| {
                c.fetch_add(1, Ordering::Relaxed);
                w.store(outcome == WaitOutcome::Cancelled, Ordering::Relaxed);
            }),
        )
        .expect("queued");
        let w2 = word.clone();
        let notifier = thread::spawn(move || futex::notify(&*w2, 1));
        let cancelled = futex::cancel_range(Arc::as_ptr(&word).cast(), 4);
        let counted = notifier.join().unwrap();
        assert_eq!(cancelled + counted, 1, "exactly one ends the wait");
        assert_eq!(calls.load(Ordering::Relaxed), 1, "the waker runs once");
        assert_eq!(cancelled_by_waker.load(Ordering::Relaxed), cancelled == 1);
    });
}

/// `cancel_range` against a thread that is parking (and growing the table):
/// the wait ends cancelled if and only if the cancel counted it; otherwise a
/// later store and notify still reach it.
#[test]
fn cancel_range_against_a_parking_thread() {
    model(|| {
        let word = Arc::new(AtomicI32::new(0));
        let w2 = word.clone();
        let waiter = thread::spawn(move || futex::wait32(&w2, 0, None));
        let cancelled = futex::cancel_range(Arc::as_ptr(&word).cast(), 4);
        if cancelled == 0 {
            word.store(1, Ordering::SeqCst);
            futex::notify(&*word, 1);
        }
        let r = waiter.join().unwrap();
        assert_eq!(r == WaitResult::Cancelled, cancelled == 1, "{r:?}");
    });
}

// ----- RwLock and the rest of the toolkit -----

mod rwlock {
    use super::{guarded, model, reaper, spawn_with, write_bump, Counter};
    use loom::sync::Arc;
    use loom::thread;
    use parklot::{RawRwLock, RwLockPolicy};

    const BOTH: [RwLockPolicy; 2] = [RwLockPolicy::PreferWriters, RwLockPolicy::PreferReaders];

    fn assert_idle(l: &RawRwLock) {
        assert!(!l.is_locked(), "{l:?} is held by nobody");
        assert!(
            !l.has_parked(),
            "{l:?}: a parked bit left set with nobody parked"
        );
    }

    /// A reader (`recursive`: by `lock_shared_recursive`) that returns the
    /// count it saw, and a writer that bumps it.
    fn spawn_reader_and_writer(
        l: &Arc<RawRwLock>,
        data: &Arc<Counter>,
        recursive: bool,
    ) -> (thread::JoinHandle<u32>, thread::JoinHandle<()>) {
        let reader = spawn_with(l, data, move |l2, d2| {
            if recursive {
                l2.lock_shared_recursive();
            } else {
                l2.lock_shared();
            }
            let seen = d2.get();
            unsafe { l2.unlock_shared() };
            seen
        });
        let writer = spawn_with(l, data, write_bump);
        (reader, writer)
    }

    /// The main thread holds the write lock while a reader and a writer
    /// queue, then releases it fairly: the hand-off goes to the writer or to
    /// the reader (the batch), and everyone gets in exactly once.
    fn reader_and_writer_against_a_handoff(policy: RwLockPolicy, fair: bool) {
        parklot::set_spin_limit(0);
        model(move || {
            let (l, data) = guarded(RawRwLock::with_policy(policy));
            l.lock_exclusive();
            let (reader, writer) = spawn_reader_and_writer(&l, &data, false);
            data.bump();
            unsafe {
                if fair {
                    l.unlock_exclusive_fair();
                } else {
                    l.unlock_exclusive();
                }
            }
            let seen = reader.join().unwrap();
            writer.join().unwrap();
            assert!(seen == 1 || seen == 2, "the reader saw {seen}");
            assert_eq!(data.get(), 2);
            assert_idle(&l);
        });
    }

    #[test]
    fn rwlock_reader_and_writer_against_a_fair_handoff_prefer_writers() {
        reader_and_writer_against_a_handoff(RwLockPolicy::PreferWriters, true);
    }

    #[test]
    fn rwlock_reader_and_writer_against_a_fair_handoff_prefer_readers() {
        reader_and_writer_against_a_handoff(RwLockPolicy::PreferReaders, true);
    }

    #[test]
    fn rwlock_reader_and_writer_against_a_plain_unlock_prefer_writers() {
        reader_and_writer_against_a_handoff(RwLockPolicy::PreferWriters, false);
    }

    #[test]
    fn rwlock_reader_and_writer_against_a_plain_unlock_prefer_readers() {
        reader_and_writer_against_a_handoff(RwLockPolicy::PreferReaders, false);
    }

    /// An async reader (a page's thread) races a blocking writer: it begins,
    /// and if queued gives up at once (a timeout racing a wakeup), then reads
    /// for real; a hand-off or wake it was given is never lost, and the lock
    /// ends free with no parked bit.
    #[test]
    fn rwlock_async_read_against_a_writer_and_cancel() {
        use parklot::parking_lot::AsyncWaiter;
        parklot::set_spin_limit(0);
        for policy in BOTH {
            model(move || {
                let (l, data) = guarded(RawRwLock::with_policy(policy));
                let writer = spawn_with(&l, &data, write_bump);
                let reader = spawn_with(&l, &data, move |l3, d3| {
                    let waiter = AsyncWaiter::new();
                    let mut held = unsafe { l3.lock_shared_async_begin(&waiter) };
                    if !held {
                        held = unsafe { l3.lock_shared_async_cancel(&waiter) };
                    }
                    if !held {
                        l3.lock_shared();
                    }
                    let _ = d3.get();
                    unsafe { l3.unlock_shared() };
                });
                writer.join().unwrap();
                reader.join().unwrap();
                assert_eq!(data.get(), 1);
                assert_idle(&l);
            });
        }
    }

    /// A gone owner's async write record is reaped while the main thread's
    /// write lock is released fairly and a live reader waits: whoever the
    /// lock goes to, the reader gets in and the lock ends free.
    #[test]
    fn rwlock_reaping_a_waiter_against_a_fair_unlock() {
        use parklot::parking_lot::AsyncWaiter;
        parklot::set_spin_limit(0);
        model(|| {
            let (l, data) = guarded(RawRwLock::new());
            let gone = Arc::new(AsyncWaiter::new());
            l.lock_exclusive();
            assert!(!unsafe { l.lock_exclusive_async_begin(&gone) });
            let live = spawn_with(&l, &data, move |l2, d2| {
                l2.lock_shared();
                let _ = d2.get();
                unsafe { l2.unlock_shared() };
            });
            let reaper = reaper(&gone);
            data.bump();
            unsafe { l.unlock_exclusive_fair() };
            reaper.join().unwrap();
            live.join().unwrap();
            assert_idle(&l);
        });
    }

    /// An upgrade races a writer while the main thread reads: the upgrader
    /// waits for the reader to leave, the writer for both; neither loses a
    /// wakeup and the two writes never overlap.
    #[test]
    fn rwlock_upgrade_racing_a_writer() {
        parklot::set_spin_limit(0);
        for policy in BOTH {
            model(move || {
                let (l, data) = guarded(RawRwLock::with_policy(policy));
                l.lock_shared();
                let upgrader = spawn_with(&l, &data, move |l2, d2| {
                    l2.lock_upgradable();
                    let before = d2.get();
                    unsafe { l2.upgrade() };
                    // Nobody wrote between our read and our write.
                    assert_eq!(d2.get(), before);
                    d2.bump();
                    unsafe { l2.unlock_exclusive() };
                });
                let writer = spawn_with(&l, &data, write_bump);
                let _ = data.get();
                unsafe { l.unlock_shared() };
                upgrader.join().unwrap();
                writer.join().unwrap();
                assert_eq!(data.get(), 2);
                assert_idle(&l);
            });
        }
    }

    /// A recursive read races the last read's release and a writer: it
    /// enters past the parked writer while a read is held, or waits as a
    /// plain read once none is; a hand-off to the writer is never overtaken
    /// (loom sees a race if the reader and the writer overlap).
    #[test]
    fn rwlock_recursive_read_racing_the_last_release_and_a_writer() {
        parklot::set_spin_limit(0);
        model(|| {
            let (l, data) = guarded(RawRwLock::new());
            l.lock_shared();
            let (reader, writer) = spawn_reader_and_writer(&l, &data, true);
            unsafe { l.unlock_shared_fair() };
            let seen = reader.join().unwrap();
            writer.join().unwrap();
            assert!(seen <= 1, "the reader saw {seen}");
            assert_eq!(data.get(), 1);
            assert_idle(&l);
        });
    }
}

mod semaphore {
    use super::{guarded, model};
    use loom::sync::Arc;
    use loom::thread;
    use parklot::Semaphore;

    /// One permit, two threads that want it and the main thread holding it:
    /// a release wakes the parked, nobody is lost, and the permit guards the
    /// counter like a lock (loom sees a race if two hold it at once).
    #[test]
    fn semaphore_as_a_lock_never_loses_a_wakeup() {
        parklot::set_spin_limit(0);
        model(|| {
            let (sem, data) = guarded(Semaphore::new(1));
            assert!(sem.try_acquire(1));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (sem, data) = (sem.clone(), data.clone());
                    thread::spawn(move || {
                        sem.acquire(1);
                        data.bump();
                        sem.release(1);
                    })
                })
                .collect();
            sem.release(1);
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(data.get(), 2);
            assert_eq!(sem.available(), 1);
            assert!(!sem.has_parked(), "{sem:?}");
        });
    }

    /// One thread wants 2 permits, then another wants 1; the main thread
    /// releases 1 (fairly if `fair`) and then 2. Everyone gets in, and no bit
    /// is left.
    fn requests_of_different_sizes(fair: bool) {
        parklot::set_spin_limit(0);
        model(move || {
            let sem = Arc::new(Semaphore::new(0));
            let hs: Vec<_> = [2u32, 1]
                .into_iter()
                .map(|n| {
                    let sem = sem.clone();
                    thread::spawn(move || {
                        sem.acquire(n);
                        sem.release(n);
                    })
                })
                .collect();
            if fair {
                sem.release_fair(1);
            } else {
                sem.release(1);
            }
            sem.release(2);
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(sem.available(), 3);
            assert!(!sem.has_parked(), "{sem:?}");
        });
    }

    /// Requests of different sizes: the main thread releases 1 and then 2
    /// permits. Everyone gets in.
    #[test]
    fn semaphore_requests_of_different_sizes_all_get_in() {
        requests_of_different_sizes(false);
    }

    /// The turn: the main thread releases 1 fairly (the oldest waiter, which
    /// wants 2, gets the turn, so the permit is held back for it even if the
    /// 1 could use it), then 2. Every interleaving ends with everyone in and
    /// no bit left: a turn is never lost, given twice, or left owed.
    #[test]
    fn semaphore_turn_for_a_large_request() {
        requests_of_different_sizes(true);
    }
}

mod barrier_and_once {
    use super::{guarded, model, Counter};
    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::sync::Arc;
    use loom::thread;
    use parklot::{Barrier, Once};

    /// Two threads meet twice at a barrier (reuse): exactly one leader per
    /// opening, and what each wrote before is seen after.
    #[test]
    fn barrier_opens_once_per_generation_and_is_reusable() {
        parklot::set_spin_limit(0);
        model(|| {
            let b = Arc::new(Barrier::new(2));
            let leaders = Arc::new(AtomicUsize::new(0));
            let data = Arc::new(Counter::new());
            let hs: Vec<_> = (0..2)
                .map(|i| {
                    let (b, leaders, data) = (b.clone(), leaders.clone(), data.clone());
                    thread::spawn(move || {
                        if i == 0 {
                            data.bump();
                        }
                        for _ in 0..2 {
                            if b.wait().is_leader() {
                                leaders.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        assert_eq!(data.get(), 1);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(leaders.load(Ordering::Relaxed), 2);
        });
    }

    /// Two threads race to initialize: one runs the closure, the other waits
    /// for it and sees its write.
    #[test]
    fn once_runs_once_and_the_other_sees_it() {
        parklot::set_spin_limit(0);
        model(|| {
            let (once, data) = guarded(Once::new());
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (once, data) = (once.clone(), data.clone());
                    thread::spawn(move || {
                        once.call_once(|| data.bump());
                        assert_eq!(data.get(), 1);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        });
    }
}

mod rwlock_upgradable_async {
    use super::{guarded, model, spawn_with};
    use parklot::parking_lot::AsyncWaiter;
    use parklot::RawRwLock;

    /// An async upgrade (JS's upgradeAsync) races the last other reader:
    /// queued, then either woken or given up at once (its timeout racing the
    /// reader's release) and finished blocking. No wakeup is lost, a
    /// withdrawn upgrade leaves no writer bit behind, and the write lands once.
    #[test]
    fn async_upgrade_against_the_last_reader_and_a_cancel() {
        parklot::set_spin_limit(0);
        model(|| {
            let (l, data) = guarded(RawRwLock::new());
            l.lock_shared();
            let upgrader = spawn_with(&l, &data, move |l2, d2| {
                l2.lock_upgradable();
                let waiter = AsyncWaiter::new();
                // SAFETY: we hold the upgradable read; `waiter` outlives the attempt.
                let mut upgraded = unsafe { l2.upgrade_async_begin(&waiter) };
                if !upgraded {
                    // SAFETY: queued just above, not settled.
                    upgraded = unsafe { l2.upgrade_async_cancel(&waiter) };
                }
                if !upgraded {
                    // SAFETY: a withdrawn upgrade keeps the upgradable read.
                    unsafe { l2.upgrade() };
                }
                d2.bump();
                // SAFETY: upgraded above.
                unsafe { l2.unlock_exclusive() };
            });
            let _ = data.get();
            // SAFETY: read above.
            unsafe { l.unlock_shared() };
            upgrader.join().unwrap();
            assert_eq!(data.get(), 1);
            assert!(!l.is_locked() && !l.has_parked(), "{l:?}");
        });
    }
}

mod barrier {
    use super::model;
    use loom::sync::Arc;
    use loom::thread;
    use parklot::parking_lot::{abandon_async, AsyncWaiter};
    use parklot::{Barrier, BarrierError};

    /// Four arrivals at a barrier for two: three async records of the main
    /// thread, in turn, and a thread that blocks, arriving anywhere among
    /// them (while the second record opens the barrier, say). An arrival
    /// that comes while another opens it counts into the next generation:
    /// exactly two leaders, and everyone through (a lost arrival leaves the
    /// thread waiting: a deadlock).
    #[test]
    fn barrier_extra_arrival_counts_into_the_next_generation() {
        parklot::set_park_spin_limit(0); // sleep at once: spinning only multiplies interleavings
        model(|| {
            let b = Arc::new(Barrier::new(2));
            let records = [AsyncWaiter::new(), AsyncWaiter::new(), AsyncWaiter::new()];
            let first = unsafe { b.wait_async_begin(&records[0]) };
            assert_eq!(first, None, "the first arrival waits");
            let b2 = b.clone();
            let blocking = thread::spawn(move || b2.wait().is_leader());
            let later = [1, 2].map(|i| unsafe { b.wait_async_begin(&records[i]) });
            let mut leaders = blocking.join().unwrap() as usize;
            for (r, begun) in records.iter().zip([first, later[0], later[1]]) {
                // The thread is through and the last record arrived: every
                // generation opened.
                let outcome = begun.or_else(|| unsafe { b.wait_async_resume(r) });
                leaders += outcome.expect("woken").unwrap().is_leader() as usize;
            }
            assert_eq!(leaders, 2);
            assert_eq!(b.waiting(), 0);
        });
    }

    /// An async wait given up (its timeout) against the last arrival: either
    /// the barrier opened first (both pass, the arrival leads) or the give-up
    /// broke it first (it timed out, the arrival is told "broken").
    #[test]
    fn barrier_give_up_against_the_last_arrival() {
        parklot::set_park_spin_limit(0);
        model(|| {
            let b = Arc::new(Barrier::new(2));
            let record = AsyncWaiter::new();
            assert_eq!(unsafe { b.wait_async_begin(&record) }, None);
            let b2 = b.clone();
            let last = thread::spawn(move || b2.wait_checked());
            let gave_up = unsafe { b.wait_async_cancel(&record) };
            let arrived = last.join().unwrap();
            match gave_up {
                Ok(r) => {
                    assert!(!r.is_leader());
                    assert!(arrived.unwrap().is_leader());
                    assert!(!b.is_broken());
                }
                Err(e) => {
                    assert_eq!(e, BarrierError::TimedOut);
                    assert_eq!(arrived, Err(BarrierError::Broken));
                    assert!(b.is_broken());
                }
            }
        });
    }

    /// A waiter reaped as dead (its owner gone) against the last arrival:
    /// the barrier opens (the arrival leads) or breaks (it is told so);
    /// never a hang.
    #[test]
    fn barrier_reaping_a_waiter_against_the_last_arrival() {
        parklot::set_park_spin_limit(0);
        model(|| {
            let b = Arc::new(Barrier::new(2));
            let gone = AsyncWaiter::new();
            assert_eq!(unsafe { b.wait_async_begin(&gone) }, None);
            let b2 = b.clone();
            let last = thread::spawn(move || b2.wait_checked());
            unsafe { abandon_async(&gone) };
            match last.join().unwrap() {
                Ok(r) => assert!(r.is_leader() && !b.is_broken()),
                Err(e) => assert!(e == BarrierError::Broken && b.is_broken()),
            }
        });
    }
}

/// The lock-free heap (`parklot::heap`): threads taking and giving back
/// blocks of one class, through its free list (a Treiber stack with an ABA
/// count) and its bump region (carved, refilled by growing). Two threads
/// handed the same block show up as a race on that block's loom cell.
mod heap_models {
    use super::model;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicU32, Ordering};
    use loom::sync::Arc;
    use loom::thread;
    use parklot::heap::{Heap, Link, Pages, CHUNK_PAGES};

    /// Pages of 32 bytes: a chunk (4 pages) is 16 blocks of 8 bytes.
    const PAGE: u32 = 32;
    const PAGES: u32 = 1 + 3 * CHUNK_PAGES;
    const UNITS: usize = (PAGES * PAGE / 8) as usize;

    /// A region the model sees: each 8-byte unit's link word is a loom
    /// atomic, and its data a loom cell the block's owner writes.
    struct Arena {
        grown: AtomicU32,
        links: Vec<Link>,
        data: Vec<UnsafeCell<u32>>,
    }

    impl Arena {
        fn new() -> Arena {
            Arena {
                grown: AtomicU32::new(1), // page 0 is never grown: offset 0 is "none"
                links: (0..UNITS).map(|_| AtomicU32::new(0)).collect(),
                data: (0..UNITS).map(|_| UnsafeCell::new(0)).collect(),
            }
        }

        /// The owner of the block at `block` writes it.
        fn write(&self, block: u32, value: u32) {
            self.data[(block / 8) as usize].with_mut(|p| unsafe { *p = value });
        }
    }

    // SAFETY: each grow's pages are its own (a CAS moves the count), page 0
    // is never grown, and `link` is one word per block. `at` is never
    // dereferenced by `take`/`give`, the only calls the models make.
    unsafe impl Pages for Arena {
        const PAGE: u32 = PAGE;
        const GROWN_ZEROED: bool = true;

        fn grow(&self, pages: u32) -> Option<u32> {
            let grown = |now: u32| (now + pages <= PAGES).then_some(now + pages);
            let now = self
                .grown
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, grown);
            now.ok().map(|now| now * PAGE)
        }

        fn at(&self, offset: u32) -> *mut u8 {
            core::ptr::without_provenance_mut(offset as usize)
        }

        fn offset_of(&self, ptr: *mut u8) -> u32 {
            ptr.addr() as u32
        }

        unsafe fn link(&self, block: u32) -> &Link {
            &self.links[(block / 8) as usize]
        }
    }

    const CLASS: u32 = parklot::heap::MIN_CLASS;

    /// Takes a block, writes it as its owner, gives it back.
    fn cycle(heap: &Heap<Arena>, stamp: u32) {
        let (block, _) = heap.take(CLASS).expect("the arena has room");
        heap.pages().write(block, stamp);
        // SAFETY: taken just above, given back once.
        unsafe { heap.give(CLASS, block) };
    }

    /// Two threads, each taking and giving back twice, from an empty heap:
    /// both may refill at once (two grows), and every later take races the
    /// other thread's gives on the list.
    #[test]
    fn two_threads_taking_and_giving_one_class_never_share_a_block() {
        model(|| {
            let heap = Arc::new(Heap::new(Arena::new()));
            let hs: Vec<_> = (1..=2)
                .map(|t| {
                    let heap = heap.clone();
                    thread::spawn(move || {
                        cycle(&heap, t);
                        cycle(&heap, t + 10);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        });
    }

    /// The ABA case: the popper reads the top (b) and its link (a), then
    /// the other thread pops b and a and pushes b back, and writes a, which
    /// it still holds. The popper's swap must fail (the count moved), or it
    /// would make a the top and its next pop would hand a out a second time.
    #[test]
    fn a_pop_racing_pops_and_a_push_of_the_same_block_retries() {
        model(|| {
            let heap = Arc::new(Heap::new(Arena::new()));
            let (a, _) = heap.take(CLASS).unwrap();
            let (b, _) = heap.take(CLASS).unwrap();
            // SAFETY: taken above, given back once each.
            unsafe {
                heap.give(CLASS, a);
                heap.give(CLASS, b);
            }
            let h2 = heap.clone();
            let popper = thread::spawn(move || {
                let (p, _) = h2.take(CLASS).unwrap();
                let (q, _) = h2.take(CLASS).unwrap();
                h2.pages().write(p, 1);
                h2.pages().write(q, 1);
                // SAFETY: taken above, given back once each.
                unsafe {
                    h2.give(CLASS, p);
                    h2.give(CLASS, q);
                }
            });
            let (x, _) = heap.take(CLASS).unwrap();
            let (y, _) = heap.take(CLASS).unwrap();
            // SAFETY: taken above, given back once each.
            unsafe { heap.give(CLASS, x) };
            heap.pages().write(y, 2);
            // SAFETY: as above.
            unsafe { heap.give(CLASS, y) };
            popper.join().unwrap();
        });
    }
}
