//! Reads and writes for threads that may not block: a queued record
//! instead of a parked thread, in the same queues as the parked ones.

use super::class::Class;
use super::RawRwLock;
use crate::acquire;
use crate::parking_lot::AsyncWaiter;

impl RawRwLock {
    async_acquires! {
        Class::Reader;
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
        lock_shared_async_begin,
        /// Step 2, after the waiter's word turned 0: `true` if the read is ours,
        /// `false` if the waiter is queued again.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_shared_async_begin` on this lock.
        lock_shared_async_resume,
        /// Gives up an asynchronous read: `true` if the read was ours after all
        /// (the caller must release it), `false` if nothing is held.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_shared_async_begin` on this lock
        /// and the attempt has not ended.
        lock_shared_async_cancel,
    }

    async_acquires! {
        Class::Writer;
        /// [`lock_shared_async_begin`](Self::lock_shared_async_begin) for the write lock.
        ///
        /// # Safety
        /// As for `lock_shared_async_begin`.
        lock_exclusive_async_begin,
        /// [`lock_shared_async_resume`](Self::lock_shared_async_resume) for the write lock.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_exclusive_async_begin` on this lock.
        lock_exclusive_async_resume,
        /// [`lock_shared_async_cancel`](Self::lock_shared_async_cancel) for the write lock.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_exclusive_async_begin` on this
        /// lock and the attempt has not ended.
        lock_exclusive_async_cancel,
    }

    /// # Safety
    /// As for `lock_shared_async_begin`.
    pub(super) unsafe fn async_begin(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::queue_async(&self.waiter(class), (), waiter) }
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock.
    pub(super) unsafe fn async_resume(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::resume_async(&self.waiter(class), waiter) }
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock and the
    /// attempt has not ended.
    pub(super) unsafe fn async_cancel(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::cancel_async(&self.waiter(class), waiter) }
    }
}
