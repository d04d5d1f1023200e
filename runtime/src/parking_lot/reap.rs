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
//! - already claimed by an unpark whose token the owner never took: that
//!   token is passed on (`claimed`), so that a lock handed to the dead owner
//!   is released and the next waiter woken in its place.
//!
//! Between the death and its signal an unpark can still choose the dead
//! record and count it; the pass-on above keeps that from costing a live
//! waiter a lock or a notify-one.

use super::record::{ThreadData, THREAD_DATA};
use super::table::{globals, lock_bucket};
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
/// # Safety
/// The record's thread will never run again, its storage is still allocated,
/// and this is called once per thread.
pub unsafe fn abandon_thread(record: ThreadRecord) {
    // SAFETY: per our contract the record is live and its owner gone.
    unsafe { abandon(&*record.0) };
    globals().threads.fetch_sub(1, Ordering::Relaxed);
}

/// Reaps an async record whose owner is gone (see the module docs). The
/// record may be dropped afterwards, and must not be used for a wait again.
///
/// # Safety
/// Nobody will poll, cancel or re-queue `waiter` any more.
pub unsafe fn abandon_async(waiter: &AsyncWaiter) {
    // SAFETY: per our contract nobody else acts on the record.
    unsafe { abandon(&waiter.data) }
}

/// # Safety
/// `data` is live and nobody but unparkers acts on it any more.
unsafe fn abandon(data: &ThreadData) {
    // SAFETY: `key` and `owed` are written only by the owner, which is
    // gone, when it queued the record; the bucket lock orders us after that.
    unsafe {
        let key = data.key.get();
        let bucket = lock_bucket(key);
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
            if data.token_pending.swap(false, Ordering::Relaxed) {
                (owed.abandon.claimed)(owed.object, data.token.get());
            }
        }
    }
}
