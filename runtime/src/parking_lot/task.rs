//! Async waiters for Rust futures: an [`AsyncWaiter`] that wakes a task.
//!
//! A primitive's asynchronous form queues an [`AsyncWaiter`] and returns; in
//! wasm, JS learns of the claim with `Atomics.waitAsync` on the record's
//! word. A Rust future has no such watcher: it needs its task's
//! [`Waker`](core::task::Waker) called. A [`TaskWaiter`] is an `AsyncWaiter`
//! whose record calls back ([`super::waker::CallBack`]), like a
//! [`super::WakerWait`]'s, but may be queued again and again by its owner:
//!
//! - **Settling.** Whoever ends a wait calls the record back, once, with no
//!   lock held: the unpark that claims it ([`super::claim_and_wake`]), or the
//!   owner's cancel that takes it out of its queue ([`super::cancel_async`]).
//!   The call sets `settled` and wakes the task.
//! - **Reuse.** The claimant still walks its chain of claimed records
//!   through their `next` field after the claim, and reads it just before
//!   calling back: so the owner must not queue the record again until
//!   `settled` reads true (the word turning 0 is not enough).
//! - **Lifetime.** Each queueing takes one more reference to the record (the
//!   queue's), released by the call back: a future dropped after its record
//!   was claimed frees the record only when the claimant is done with it.

use super::async_waiter::AsyncWaiter;
use super::waker::{CallBack, WaitOutcome};
use crate::sync::{AtomicBool, Ordering};
use core::cell::UnsafeCell;
use core::task::{Context, Waker};
use std::sync::Arc;

/// An [`AsyncWaiter`] whose settlements wake a Rust task (see the module).
pub struct TaskWaiter(Arc<Record>);

#[repr(C)] // `head` first: a pointer to the record is one to its head
struct Record {
    head: CallBack,
    waiter: AsyncWaiter,
    /// Whether the record's last wait is settled and its settler done with
    /// the record's queue fields. Cleared by the owner when it queues the
    /// record (no settler then exists); set (Release) by the call back,
    /// which the owner observes with Acquire before it queues again or acts
    /// on the outcome.
    settled: AtomicBool,
    /// The state word of the tiny lock over `task`: true while the owner
    /// registers a waker or the call back takes it. Held for a move of a
    /// pointer pair, never across a call.
    task_locked: AtomicBool,
    /// The task to wake on the next settlement. Guarded by `task_locked`.
    task: UnsafeCell<Option<Waker>>,
}

// SAFETY: `task` is touched only under `task_locked`; the waiter is shared
// by design (see AsyncWaiter); the rest is atomic.
unsafe impl Send for Record {}
// SAFETY: as for Send.
unsafe impl Sync for Record {}

impl Default for TaskWaiter {
    fn default() -> Self {
        TaskWaiter::new()
    }
}

impl TaskWaiter {
    /// A record that is not queued.
    pub fn new() -> TaskWaiter {
        let record = Arc::new(Record {
            head: CallBack { call: call_task },
            waiter: AsyncWaiter::new(),
            settled: AtomicBool::new(false),
            task_locked: AtomicBool::new(false),
            task: UnsafeCell::new(None),
        });
        let head: *const Record = Arc::as_ptr(&record);
        // SAFETY: the record is new and in no queue; set once, before it is
        // first queued, and never changed (as `waker_record` requires).
        unsafe { record.waiter.data.waker_record.set(head.cast()) };
        TaskWaiter(record)
    }

    /// The record, for the primitive's `*_async_resume` and `*_async_cancel`.
    pub fn waiter(&self) -> &AsyncWaiter {
        &self.0.waiter
    }

    /// Runs `queue`, a primitive's `*_async_begin` or `*_async_resume` on
    /// this record, which returns `true` when the record was *not* left
    /// queued (the primitive was acquired, or its wait needs none). Returns
    /// what `queue` returned; when it is `false`, the record is queued and
    /// will be settled: poll [`settled`](Self::settled) before the next step.
    /// `Err` if deadlock detection refused the wait ([`crate::deadlock`]):
    /// the record is not queued.
    ///
    /// # Safety
    /// The record is new, or its last wait is settled (`settled` read true);
    /// `queue` as the primitive's own contract asks.
    pub unsafe fn queue(
        &self,
        queue: impl FnOnce(&AsyncWaiter) -> bool,
    ) -> Result<bool, crate::deadlock::DeadlockError> {
        let record: *const Record = Arc::as_ptr(&self.0);
        self.0.settled.store(false, Ordering::Relaxed);
        // SAFETY: `record` is alive (we hold a reference); this is the queue's
        // reference, released by the call back, or below if nothing queued.
        unsafe { Arc::increment_strong_count(record) };
        let done = queue(&self.0.waiter);
        if !done {
            if let Some(refused) = crate::acquire::async_refused() {
                // Refused by deadlock detection: not queued, so the queue's
                // reference is ours to drop, as below.
                // SAFETY: as below.
                unsafe { Arc::decrement_strong_count(record) };
                return Err(refused);
            }
        }
        if done {
            // SAFETY: not queued, so nobody settles: the queue's reference is
            // still ours, and not the last (`self` holds one).
            unsafe { Arc::decrement_strong_count(record) };
        }
        Ok(done)
    }

    /// Whether the record's last wait is settled (woken or cancelled; the
    /// primitive's resume tells which). If not, `cx`'s waker is woken when it
    /// is.
    pub fn settled(&self, cx: &Context<'_>) -> bool {
        if self.0.settled.load(Ordering::Acquire) {
            return true;
        }
        self.0.with_task(|task| match task {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *task = Some(cx.waker().clone()),
        });
        // A settlement after the first look took the task, or finds it now.
        self.0.settled.load(Ordering::Acquire)
    }
}

impl Record {
    /// Runs `f` on `task` under `task_locked`. `f` only moves a waker in or
    /// out (a clone or a drop of the old one at most): it never wakes.
    fn with_task<T>(&self, f: impl FnOnce(&mut Option<Waker>) -> T) -> T {
        while self
            .task_locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            crate::sync::spin_loop();
        }
        // SAFETY: `task_locked` is ours: nobody else touches `task`.
        let out = f(unsafe { &mut *self.task.get() });
        self.task_locked.store(false, Ordering::Release);
        out
    }
}

/// A [`TaskWaiter`] record's call back: marks it settled, wakes its task and
/// releases the queue's reference.
///
/// # Safety
/// As for [`super::waker::call_back`], with `head` the head of a
/// [`TaskWaiter`]'s record holding the reference its last queueing took.
unsafe fn call_task(head: *const CallBack, _outcome: WaitOutcome) {
    // SAFETY: the record's head (repr(C)); the queue's reference, taken by
    // `TaskWaiter::queue` with `Arc::increment_strong_count`, released here.
    let record = unsafe { Arc::from_raw(head.cast::<Record>()) };
    // The claimant read the record's `next` before calling: the owner may
    // queue it again from here on.
    record.settled.store(true, Ordering::Release);
    if let Some(task) = record.with_task(Option::take) {
        task.wake();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::parking_lot::{cancel_async, park_async, parked_count, unpark_one, ParkResult};
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn an_unpark_settles_the_record_and_wakes_the_task_once() {
        static KEY: u8 = 0;
        let key = &KEY as *const u8 as usize;
        let (count, waker) = counting();
        let cx = Context::from_waker(&waker);
        let w = TaskWaiter::new();
        // SAFETY: a new record; validate is a constant.
        assert!(!unsafe { w.queue(|a| !park_async(key, || true, a)) }.unwrap());
        assert!(!w.settled(&cx));
        assert_eq!(parked_count(key), 1);
        // SAFETY: no validate or callback of ours touches anything.
        unsafe { unpark_one(key, |_| 7) };
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(w.settled(&cx));
        assert_eq!(w.waiter().poll(), Some(7));
        // Queued again once settled, and cancelled: settled, woken, not counted.
        // SAFETY: settled above.
        assert!(!unsafe { w.queue(|a| !park_async(key, || true, a)) }.unwrap());
        assert!(!w.settled(&cx));
        // SAFETY: queued on `key` just above.
        assert_eq!(
            unsafe { cancel_async(key, w.waiter(), |_, _| {}) },
            ParkResult::TimedOut
        );
        assert!(w.settled(&cx));
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert_eq!(parked_count(key), 0);
        assert_eq!(Arc::strong_count(&w.0), 1, "every queue reference released");
    }

    #[test]
    fn a_record_dropped_while_claimed_lives_until_its_call_back() {
        static KEY: u8 = 0;
        let key = &KEY as *const u8 as usize;
        let w = TaskWaiter::new();
        let weak = Arc::downgrade(&w.0);
        // SAFETY: a new record; validate is a constant.
        assert!(!unsafe { w.queue(|a| !park_async(key, || true, a)) }.unwrap());
        drop(w); // still queued: the queue's reference keeps it
        assert!(weak.upgrade().is_some());
        // SAFETY: no callback of ours touches anything.
        unsafe { unpark_one(key, |_| 0) };
        assert!(weak.upgrade().is_none());
    }
}
