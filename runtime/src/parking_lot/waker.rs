//! Async waits that call back: what an engine needs to settle an
//! `Atomics.waitAsync` promise. A [`WakerWait`] queues a record like any
//! other waiter; when its wait ends, the embedder's [`Waker`] is called
//! exactly once, with no ParkingLot lock held, on the thread that ended it:
//!
//! - an unpark that claims the record calls it with
//!   [`WaitOutcome::Woken`] and the unpark's token, after releasing the
//!   bucket lock (the unpark counts the record like a parked thread);
//! - [`WakerWait::expire`] (the embedder's timer fired) calls it with
//!   [`WaitOutcome::TimedOut`];
//! - [`WakerWait::cancel`] calls it with [`WaitOutcome::Cancelled`].
//!
//! **Who settles.** An unpark and a give-up (expire or cancel) race under the
//! bucket lock, on the record's parker word: the unpark claims it, or the
//! give-up takes the record out of the queue, never both (as for a parked
//! thread whose deadline passes). Two give-ups race first on `giving_up`, so
//! that only one of them goes to the queue. The loser of either race returns
//! `false` and calls nothing.
//!
//! **Timers are the embedder's.** parklot keeps no timer thread: the core
//! also runs in wasm, where it cannot start one, and every embedder that
//! waits asynchronously already has a timer per event loop (libuv, a
//! browser's task queue) that fires on the thread that owns the promise.
//! A deadline is just a call to [`WakerWait::expire`] from that timer.
//!
//! **Lifetime.** The record is shared by the handle and, while it waits, by
//! the queue (one reference each). Whoever settles the wait takes the
//! queue's reference and drops it after the waker returns. Dropping the
//! handle does not cancel: a wait nobody gives up ends with its notify.

use super::record::{Owed, ThreadData, Waits};
use super::{enqueue, leave_queue, ParkResult, UnparkToken};
use crate::diagnostics::Kind;
use crate::sync::{AtomicBool, Ordering};
use core::cell::UnsafeCell;
use std::sync::Arc;

/// How a [`WakerWait`] ended, as its [`Waker`] is told.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// An unpark claimed the wait and handed over this token.
    Woken(UnparkToken),
    /// [`WakerWait::expire`] ended it first.
    TimedOut,
    /// [`WakerWait::cancel`] ended it first.
    Cancelled,
}

/// The embedder's callback. It runs once, on the thread that ends the wait,
/// with no ParkingLot lock held: it may notify, wait or queue another wait,
/// but must not unwind.
pub type Waker = Box<dyn FnOnce(WaitOutcome) + Send>;

/// The first field of every record that calls back when its wait ends (a
/// [`WakerWait`]'s, a [`super::TaskWaiter`]'s): a record's
/// `data.waker_record` points at it, and whoever settles the wait calls
/// `call` with it, once, with no lock held. `call` owns the queue's
/// reference to the record from then on and must release it.
#[repr(C)]
pub(super) struct CallBack {
    pub(super) call: unsafe fn(*const CallBack, WaitOutcome),
}

/// The record a queue holds; its `data.waker_record` points back at it.
#[repr(C)] // `head` first: a pointer to the record is one to its head
struct Record {
    head: CallBack,
    data: ThreadData,
    /// The address waited on.
    key: usize,
    /// Set by the first give-up (false → true, never back): later ones
    /// return at once without touching the queue.
    giving_up: AtomicBool,
    /// Taken by whoever settles the wait (exactly one party, see above).
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: `data` is shared as every queued record is (its cells under the
// bucket lock, the rest atomic); `waker` is written at creation and then
// only taken by the single settler, which the claim or the removal under the
// bucket lock orders after the creation.
unsafe impl Send for Record {}
// SAFETY: as for Send.
unsafe impl Sync for Record {}

/// A pending (or ended) wait with a waker: the handle to give it up with.
pub struct WakerWait(Arc<Record>);

impl core::fmt::Debug for WakerWait {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WakerWait")
            .field("key", &self.0.key)
            .finish_non_exhaustive()
    }
}

/// Queues a wait on `key` that calls `waker` when it ends, if `validate`
/// (run under the queue lock) agrees. Returns the handle, or `None` without
/// calling (or keeping) `waker` when `validate` refused.
///
/// # Safety
/// `validate` as for [`super::park_conditionally`]'s.
pub unsafe fn park_with_waker(
    key: usize,
    validate: impl FnOnce() -> bool,
    waker: Waker,
) -> Option<WakerWait> {
    let record = Arc::new(Record {
        head: CallBack { call: call_waker },
        data: ThreadData::new(),
        key,
        giving_up: AtomicBool::new(false),
        waker: UnsafeCell::new(Some(waker)),
    });
    // The queue's reference, returned by `call_back` or below.
    let queued = Arc::into_raw(record.clone());
    // SAFETY: the record is new: we are the only user of its cells, and it
    // is not queued; `validate` per our contract.
    if unsafe {
        record.data.waker_record.set(queued.cast());
        enqueue(
            key,
            validate,
            &record.data,
            Owed::nothing(Kind::Futex),
            Waits::Async,
            None,
        )
    } {
        Some(WakerWait(record))
    } else {
        // SAFETY: not queued, so the reference is still ours.
        drop(unsafe { Arc::from_raw(queued) });
        None
    }
}

impl WakerWait {
    /// Ends the wait as timed out, unless it already ended (woken, expired
    /// or cancelled). Returns whether it did; then the waker has run, on
    /// this thread, with [`WaitOutcome::TimedOut`].
    pub fn expire(&self) -> bool {
        self.give_up(WaitOutcome::TimedOut)
    }

    /// Ends the wait as cancelled, unless it already ended. Returns whether
    /// it did; then the waker has run, on this thread, with
    /// [`WaitOutcome::Cancelled`]. No unpark counts a cancelled wait.
    pub fn cancel(&self) -> bool {
        self.give_up(WaitOutcome::Cancelled)
    }

    /// The address the wait is keyed by.
    pub fn key(&self) -> usize {
        self.0.key
    }

    fn give_up(&self, outcome: WaitOutcome) -> bool {
        let record = &*self.0;
        if record.giving_up.swap(true, Ordering::AcqRel) {
            return false;
        }
        // SAFETY: queued on `key` by `park_with_waker` and given up by nobody
        // else (the swap above). An unpark finishes its claim of a waker
        // record under the bucket lock, so the wait for it ends at once.
        let result = unsafe {
            leave_queue(
                &record.data,
                |_, _| {},
                || {
                    while !record.data.parker.is_unparked() {
                        crate::sync::spin_loop();
                    }
                },
                false,
            )
        };
        match result {
            ParkResult::TimedOut => {
                // SAFETY: we took the record out of its queue, so the queue's
                // reference is ours.
                unsafe { call_back(record.data.waker_record.get(), outcome) };
                true
            }
            ParkResult::Unparked(_) | ParkResult::Invalid => false,
        }
    }
}

/// Tells a record that calls back how its wait ended: runs its head's
/// `call`, which releases the queue's reference to the record.
///
/// # Safety
/// `record` is a record's `data.waker_record` (a [`CallBack`] head), and the
/// caller settled that record: it claimed it in an unpark or took it out of
/// its queue, so the queue's reference is the caller's to hand on. No
/// bucket lock is held.
pub(super) unsafe fn call_back(record: *const (), outcome: WaitOutcome) {
    let head = record.cast::<CallBack>();
    // SAFETY: per our contract, a live head, called once per settlement.
    unsafe { ((*head).call)(head, outcome) }
}

/// A [`WakerWait`] record's `call`: runs the embedder's waker with
/// `outcome` and drops the queue's reference to the record.
///
/// # Safety
/// As for [`call_back`], with `head` the head of a [`Record`] made by
/// `park_with_waker` (the queue's reference, from `Arc::into_raw`).
unsafe fn call_waker(head: *const CallBack, outcome: WaitOutcome) {
    // SAFETY: made by Arc::into_raw of a Record, whose first field the head
    // is (repr(C)); released once, by the settler.
    let record = unsafe { Arc::from_raw(head.cast::<Record>()) };
    // SAFETY: only the settler touches `waker` after creation.
    let waker = unsafe { (*record.waker.get()).take() };
    if let Some(waker) = waker {
        waker(outcome);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::parking_lot::{parked_count, unpark_count, unpark_one};
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    fn recording_waker() -> (Waker, mpsc::Receiver<WaitOutcome>) {
        let (tx, rx) = mpsc::channel();
        let waker: Waker = Box::new(move |outcome| tx.send(outcome).unwrap());
        (waker, rx)
    }

    #[test]
    fn a_refused_wait_keeps_no_record_and_calls_nobody() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        let (waker, rx) = recording_waker();
        // SAFETY: validate does nothing.
        assert!(unsafe { park_with_waker(key, || false, waker) }.is_none());
        assert_eq!(parked_count(key), 0);
        assert!(rx.try_recv().is_err(), "the waker was dropped, not called");
    }

    #[test]
    fn an_unpark_calls_the_waker_with_its_token_after_unlocking() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        let (tx, rx) = mpsc::channel();
        let waker: Waker = Box::new(move |outcome| {
            // No bucket lock is held: the waker may use the ParkingLot.
            tx.send((outcome, parked_count(key))).unwrap();
        });
        // SAFETY: validate does nothing.
        let wait = unsafe { park_with_waker(key, || true, waker) }.unwrap();
        assert_eq!(parked_count(key), 1);
        // SAFETY: the callback does nothing.
        let r = unsafe { unpark_one(key, |_| 7) };
        assert_eq!(r.unparked, 1);
        assert_eq!(rx.try_recv(), Ok((WaitOutcome::Woken(7), 0)));
        assert!(!wait.expire() && !wait.cancel(), "already settled");
        assert!(rx.try_recv().is_err(), "called once");
    }

    #[test]
    fn expire_and_cancel_leave_the_queue_and_are_not_counted() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        for (give_up, want) in [
            (
                WakerWait::expire as fn(&WakerWait) -> bool,
                WaitOutcome::TimedOut,
            ),
            (WakerWait::cancel, WaitOutcome::Cancelled),
        ] {
            let (waker, rx) = recording_waker();
            // SAFETY: validate does nothing.
            let wait = unsafe { park_with_waker(key, || true, waker) }.unwrap();
            assert!(give_up(&wait));
            assert_eq!(rx.try_recv(), Ok(want));
            assert_eq!(unpark_count(key, usize::MAX), 0);
            assert!(!wait.expire() && !wait.cancel());
            assert!(rx.try_recv().is_err(), "called once");
        }
    }

    #[test]
    fn more_waker_records_than_deferred_wakeups_are_all_called() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        let calls = Arc::new(AtomicUsize::new(0));
        let n = 20;
        let waits: Vec<_> = (0..n)
            .map(|_| {
                let calls = calls.clone();
                let waker: Waker = Box::new(move |outcome| {
                    assert_eq!(outcome, WaitOutcome::Woken(0));
                    calls.fetch_add(1, Ordering::Relaxed);
                });
                // SAFETY: validate does nothing.
                unsafe { park_with_waker(key, || true, waker) }.unwrap()
            })
            .collect();
        drop(waits); // the queue keeps the records
        assert_eq!(unpark_count(key, usize::MAX), n);
        assert_eq!(calls.load(Ordering::Relaxed), n);
    }

    #[test]
    fn give_up_racing_notify_gives_exactly_one_outcome_and_count() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        let rounds = if cfg!(miri) { 20 } else { 2000 };
        for i in 0..rounds {
            let calls = Arc::new(AtomicUsize::new(0));
            let c = calls.clone();
            let waker: Waker = Box::new(move |_| {
                c.fetch_add(1, Ordering::Relaxed);
            });
            // SAFETY: validate does nothing.
            let wait = unsafe { park_with_waker(key, || true, waker) }.unwrap();
            let notifier = std::thread::spawn(move || unpark_count(key, 1));
            let gave_up = if i % 2 == 0 {
                wait.cancel()
            } else {
                wait.expire()
            };
            let woken = notifier.join().unwrap();
            assert_eq!(gave_up as usize + woken, 1, "round {i}");
            assert_eq!(calls.load(Ordering::Relaxed), 1, "round {i}");
        }
    }
}
