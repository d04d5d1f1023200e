//! Reaping: taking a gone owner's records out of the queues.
//!
//! A thread can vanish while it waits (a terminated wasm worker), and an
//! async record's owner can stop caring. Memory cannot tell "gone" from "not
//! asleep yet", so the ParkingLot never guesses: the embedder learns of the
//! death from a real signal (a Web Lock the thread held for its life, a Node
//! `Worker`'s `'exit'` event) and then reaps the owner's records here. Each
//! record is settled as its wait's [`Abandon`] says:
//! - still queued: taken out as if its wait had timed out (`dequeued`,
//!   then `settle` with no lock held);
//! - already claimed by an unpark whose token the owner never took (or, for
//!   a wait whose debt outlives its wakeup, never acted on: `settled`): that
//!   token is passed on (`claimed`), so that a lock handed to the dead owner
//!   is released and the next waiter woken in its place. Unless the owner,
//!   says the embedder, had already recorded taking what it waited for
//!   (`took`): it died between its record and its settling, and the
//!   embedder releases that hold as it releases the others.
//!
//! Between the death and its signal an unpark can still choose the dead
//! record and count it; the pass-on above keeps that from costing a live
//! waiter a lock or a notify-one.

use super::record::{ThreadData, THREAD_DATA};
use super::table::{globals, lock_bucket_of};
use super::AsyncWaiter;
use crate::sync::Ordering;

/// A thread's waiter record, named so that another thread can reap it once
/// its owner is known to be gone ([`abandon_thread`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ThreadRecord(*const ThreadData);

// SAFETY: a handle is an address; using it is unsafe (`abandon_thread`).
unsafe impl Send for ThreadRecord {}
// SAFETY: as for Send.
unsafe impl Sync for ThreadRecord {}

impl ThreadRecord {
    /// The calling thread's record (made now if the thread never parked).
    /// `None` while the thread's locals are being torn down.
    pub fn current() -> Option<ThreadRecord> {
        THREAD_DATA
            .try_with(|d| ThreadRecord(d as *const ThreadData))
            .ok()
    }

    /// The record's address, to pass through an untyped channel.
    pub fn to_address(self) -> usize {
        self.0 as usize
    }

    /// The record at `address`, from [`to_address`](Self::to_address).
    ///
    /// # Safety
    /// `address` came from `to_address` of a record whose thread-local
    /// storage is still allocated.
    pub unsafe fn from_address(address: usize) -> ThreadRecord {
        ThreadRecord(address as *const ThreadData)
    }
}

/// Reaps a thread that is gone: settles its record (see the module docs) and
/// stops counting it for the table's size. Its thread-local storage may be
/// freed afterwards.
///
/// `took(object)` says whether the thread recorded, as a hold its embedder
/// releases, taking the primitive at `object` (a `Lock`'s address): see
/// the module docs.
///
/// # Safety
/// The record's thread will never run again, its storage is still allocated,
/// and this is called once per thread.
pub unsafe fn abandon_thread(record: ThreadRecord, took: impl Fn(*const ()) -> bool) {
    // SAFETY: per our contract the record is live and its owner gone.
    unsafe { abandon(&*record.0, &took) };
    globals().threads.fetch_sub(1, Ordering::Relaxed);
    // SAFETY: as above; `thread` is never written after the record is made.
    crate::diagnostics::thread_gone(unsafe { (*record.0).thread });
}

/// [`abandon_thread`] for a test whose gone thread still ends as threads
/// do, its record's drop then ending its count.
///
/// # Safety
/// As for [`abandon_thread`], but the thread may run again to end.
#[cfg(all(test, not(loom)))]
pub(crate) unsafe fn abandon_thread_still_counted(
    record: ThreadRecord,
    took: impl Fn(*const ()) -> bool,
) {
    // SAFETY: per our contract the record is live and its owner gone.
    unsafe { abandon(&*record.0, &took) };
}

/// Reaps an async record whose owner is gone (see the module docs). The
/// record may be dropped afterwards, and must not be used for a wait again.
///
/// # Safety
/// Nobody will poll, cancel or re-queue `waiter` any more.
pub unsafe fn abandon_async(waiter: &AsyncWaiter) {
    // SAFETY: forwarded from the caller.
    unsafe { abandon_async_holding(waiter, |_| false) }
}

/// [`abandon_async`], where the owner may have recorded taking what the
/// record waited for (`took`, as for [`abandon_thread`]).
///
/// # Safety
/// As for [`abandon_async`].
pub unsafe fn abandon_async_holding(waiter: &AsyncWaiter, took: impl Fn(*const ()) -> bool) {
    // SAFETY: per our contract nobody else acts on the record.
    unsafe { abandon(&waiter.data, &took) };
    if crate::diagnostics::tracking() {
        crate::diagnostics::wait_ended(waiter as *const AsyncWaiter as usize);
    }
}

/// # Safety
/// `data` is live and nobody but unparkers acts on it any more.
unsafe fn abandon(data: &ThreadData, took: &dyn Fn(*const ()) -> bool) {
    // SAFETY: `owed` is written when the record is queued or moved, under
    // the bucket lock we take after that (wherever a requeue moved it).
    unsafe {
        let (bucket, key) = lock_bucket_of(data);
        let owed = data.owed.get();
        if data.parker.timed_out() {
            // Still queued and unclaimed.
            let was_last = bucket.remove(key, data);
            data.parker.forget_park();
            (owed.abandon.dequeued)(owed.object, was_last);
            bucket.lock.unlock();
            (owed.abandon.settle)(owed.object);
        } else {
            bucket.lock.unlock();
            if data.token_pending.swap(false, Ordering::Relaxed) && !took(owed.object) {
                (owed.abandon.claimed)(owed.object, data.token.get());
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::{
        cancel_async, park_async, park_async_owing, park_owing_until_settled, settled, unpark_one,
        Abandon, AsyncWaiter, Owed, ParkResult,
    };
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    /// A debt that only counts the tokens a reaper passes on, in `$counter`.
    macro_rules! counting {
        ($abandon:ident into $counter:ident) => {
            static $counter: AtomicUsize = AtomicUsize::new(0);
            static $abandon: Abandon = Abandon {
                dequeued: |_, _| {},
                settle: |_| {},
                claimed: |_, token| {
                    $counter.fetch_add(token, Ordering::SeqCst);
                },
            };
        };
    }

    counting!(COUNTING into CLAIMED);

    /// The primitive the thread of `reap_a_woken_thread` waits for.
    const OBJECT: *const () = 0x40 as *const ();

    /// A thread parks with a debt that outlives its wakeup and is woken with
    /// token 7; the reaper then looks at its record, before or after the
    /// thread called `settled`, told that the thread recorded taking what it
    /// waited for (`recorded`) or not. Returns what the reaper passed on.
    fn reap_a_woken_thread(settle_first: bool, recorded: bool) -> usize {
        let key = &CLAIMED as *const AtomicUsize as usize + 1;
        let (to_main, from_thread) = mpsc::channel();
        let (to_thread, from_main) = mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let record = ThreadRecord::current().unwrap();
            let owed = Owed {
                abandon: &COUNTING,
                object: OBJECT,
                with: core::ptr::null(),
                kind: crate::diagnostics::Kind::Unknown,
            };
            to_main.send(Some(record)).unwrap();
            // SAFETY: the callbacks do nothing.
            let r = unsafe { park_owing_until_settled(key, || true, || {}, |_, _| {}, None, owed) };
            assert_eq!(r, ParkResult::Unparked(7));
            if settle_first {
                settled();
            }
            to_main.send(None).unwrap();
            from_main.recv().unwrap(); // the reaper looks at the record meanwhile
            settled();
        });
        let record = from_thread.recv().unwrap().unwrap();
        // SAFETY: the callback does nothing.
        while unsafe { unpark_one(key, |_| 7) }.unparked == 0 {
            std::thread::yield_now();
        }
        from_thread.recv().unwrap();
        let before = CLAIMED.load(Ordering::SeqCst);
        // SAFETY (test): the thread is stopped on the channel and touches its
        // record again only after this; `abandon` skips the thread count, which
        // its own exit decrements.
        unsafe { abandon(&*record.0, &|object| recorded && object == OBJECT) };
        let passed_on = CLAIMED.load(Ordering::SeqCst) - before;
        to_thread.send(()).unwrap();
        t.join().unwrap();
        passed_on
    }

    counting!(COUNTING_ASYNC into ASYNC_CLAIMED);

    /// An async record's owner may see a claim from the record's word alone
    /// and never poll the token (the JS side of a futex wait does). Queued
    /// again for a wait that owes something and then given up, the record
    /// must not hand the reaper the old, unread token as that wait's debt.
    #[test]
    fn a_reaped_async_record_owes_nothing_for_an_unread_token_of_an_earlier_wait() {
        let key = &ASYNC_CLAIMED as *const AtomicUsize as usize + 1;
        let waiter = AsyncWaiter::new();
        // SAFETY (test): the record lives to the end; every wait is settled
        // (claimed, or cancelled) before the next, and nobody else uses it.
        unsafe {
            assert!(park_async(key, || true, &waiter));
            assert_eq!(unpark_one(key, |_| 7).unparked, 1);
            // Claimed; the owner saw it in the word (as JS does) and never polls.
            let owed = Owed {
                abandon: &COUNTING_ASYNC,
                object: core::ptr::null(),
                with: core::ptr::null(),
                kind: crate::diagnostics::Kind::Unknown,
            };
            assert!(park_async_owing(key, || true, &waiter, owed));
            assert_eq!(cancel_async(key, &waiter, |_, _| {}), ParkResult::TimedOut);
            abandon_async(&waiter);
        }
        assert_eq!(
            ASYNC_CLAIMED.load(Ordering::SeqCst),
            0,
            "the token of the first wait was passed on as the second wait's debt"
        );
    }

    #[test]
    fn a_wakeup_not_yet_settled_is_passed_on_by_the_reaper_and_a_settled_one_is_not() {
        assert_eq!(
            reap_a_woken_thread(false, false),
            7,
            "woken, not settled: the token is passed on"
        );
        assert_eq!(
            reap_a_woken_thread(true, false),
            0,
            "settled: nothing is owed"
        );
    }

    #[test]
    fn a_wakeup_not_yet_settled_whose_taking_was_recorded_is_not_passed_on() {
        // Died between its record and `settled`: the embedder releases the
        // hold it recorded; passing the token on too would release it twice.
        assert_eq!(reap_a_woken_thread(false, true), 0);
    }
}
