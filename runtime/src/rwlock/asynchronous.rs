//! Reads and writes for threads that may not block: a queued record
//! instead of a parked thread, in the same queues as the parked ones.

use super::class::Class;
use super::{RawRwLock, TOKEN_HANDOFF};
use crate::parking_lot::{self, AsyncWaiter, ParkResult};
use crate::sync::Ordering;

impl RawRwLock {
    /// Asynchronous read, for threads that may not block, step 1: takes a
    /// read if the word lets a reader in, else queues `waiter` in the same
    /// queue as parked readers and returns `false`. Never blocks.
    ///
    /// When the waiter's word turns 0 (see [`AsyncWaiter`]), call
    /// [`lock_shared_async_resume`](Self::lock_shared_async_resume); to give
    /// up, [`lock_shared_async_cancel`](Self::lock_shared_async_cancel).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until this
    /// attempt ends (acquired, or cancelled).
    pub unsafe fn lock_shared_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_begin(Class::Reader, waiter) }
    }

    /// Step 2, after the waiter's word turned 0: `true` if the read is ours,
    /// `false` if the waiter is queued again.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_shared_async_begin` on this lock.
    pub unsafe fn lock_shared_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_resume(Class::Reader, waiter) }
    }

    /// Gives up an asynchronous read: `true` if the read was ours after all
    /// (the caller must release it), `false` if nothing is held.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_shared_async_begin` on this lock
    /// and the attempt has not ended.
    pub unsafe fn lock_shared_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_cancel(Class::Reader, waiter) }
    }

    /// [`lock_shared_async_begin`](Self::lock_shared_async_begin) for the write lock.
    ///
    /// # Safety
    /// As for `lock_shared_async_begin`.
    pub unsafe fn lock_exclusive_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_begin(Class::Writer, waiter) }
    }

    /// [`lock_shared_async_resume`](Self::lock_shared_async_resume) for the write lock.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_exclusive_async_begin` on this lock.
    pub unsafe fn lock_exclusive_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_resume(Class::Writer, waiter) }
    }

    /// [`lock_shared_async_cancel`](Self::lock_shared_async_cancel) for the write lock.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_exclusive_async_begin` on this
    /// lock and the attempt has not ended.
    pub unsafe fn lock_exclusive_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_cancel(Class::Writer, waiter) }
    }

    /// The acquisition loop with the record queued instead of the thread
    /// parked, and no spinning (a thread that may not block must not wait).
    ///
    /// # Safety
    /// As for `lock_shared_async_begin`.
    pub(super) unsafe fn async_begin(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        self.acquire_loop(class, 0, || {
            // SAFETY: the validate callback is one load; `waiter` per our contract.
            let queued = unsafe {
                parking_lot::park_async_owing(
                    self.key(class),
                    || self.should_park(class),
                    waiter,
                    self.owed(class),
                )
            };
            queued.then_some(false)
        })
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock.
    pub(super) unsafe fn async_resume(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        match waiter.poll() {
            Some(TOKEN_HANDOFF) => {
                // As in lock_slow: the holders before us released into the word.
                self.state.load(Ordering::Acquire);
                true
            }
            // Woken to compete again: try once more, queueing again if need be.
            // SAFETY: the record is settled, so it may be queued again.
            Some(_) => unsafe { self.async_begin(class, waiter) },
            None => false,
        }
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock and the
    /// attempt has not ended.
    pub(super) unsafe fn async_cancel(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        // SAFETY: the callback only edits this lock's word.
        let result = unsafe {
            parking_lot::cancel_async(self.key(class), waiter, |_, was_last| {
                self.forget_parked_if_last(class, was_last)
            })
        };
        match result {
            ParkResult::Unparked(TOKEN_HANDOFF) => {
                self.state.load(Ordering::Acquire);
                true
            }
            // A wake to compete: use it (if the lock is held, its release wakes
            // the others), so that it is not lost to them.
            ParkResult::Unparked(_) => self.try_enter(class),
            ParkResult::Invalid | ParkResult::TimedOut => {
                // Our bit may have been the one keeping others out.
                self.unblock(false);
                false
            }
        }
    }
}
