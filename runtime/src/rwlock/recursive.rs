//! Recursive reads: a read that enters at once whenever a read is already
//! held, even past a parked writer (writer preference) or one owed the lock
//! (`WRITER_FIRST`), so that a thread that reads may read again without
//! waiting for itself; otherwise (nobody reads) it is a plain read, and
//! waits, parks and is woken as one. Like parking_lot 0.12's
//! `read_recursive`, whose `lock_api::RawRwLockRecursive` traits lock_api
//! 0.5 no longer has; hence [`ReadRecursive`] here.
//!
//! No bit is added to the state word. A writer handed the lock holds
//! `WRITER` with no readers, so a recursive read never overtakes it; an
//! upgrade that waits (`WRITER` and `UPGRADABLE`) is passed only while a
//! reader other than the upgrader is in, who keeps it waiting anyway. A
//! stream of overlapping recursive reads can keep writers out: use them
//! only where a read may already be held.

use super::class::Class;
use super::RawRwLock;

impl RawRwLock {
    acquires! {
        Class::RecursiveReader;
        /// Takes a shared lock, at once if anyone holds a read, even while
        /// writers wait (a plain [`lock_shared`](Self::lock_shared) would wait
        /// behind them, forever if this thread holds the read that keeps them
        /// out); when nobody reads, as `lock_shared`.
        ///
        /// ```
        /// let l = parklot::RawRwLock::new();
        /// l.lock_shared();
        /// l.lock_shared_recursive(); // enters: a read is held
        /// // SAFETY: two reads are held, taken just above.
        /// unsafe { l.unlock_shared(); l.unlock_shared() };
        /// ```
        ///
        /// # Panics
        /// As for [`lock_shared`](Self::lock_shared).
        lock_shared_recursive,
        /// Takes a shared lock if a read is held or the word lets a reader in now.
        try_lock_shared_recursive,
        /// [`lock_shared_recursive`](Self::lock_shared_recursive), waiting at
        /// most `timeout`. Returns whether it took the read.
        try_lock_shared_recursive_for,
        /// [`lock_shared_recursive`](Self::lock_shared_recursive), waiting until
        /// `deadline` at the latest.
        try_lock_shared_recursive_until,
        /// Takes a read like [`lock_shared_recursive`](Self::lock_shared_recursive),
        /// or, with deadlock detection on ([`crate::deadlock`]), returns the
        /// cycle waiting would close, taking nothing.
        lock_shared_recursive_or_deadlock,
    }
}

#[cfg(not(loom))]
pub use guarded::ReadRecursive;

#[cfg(not(loom))]
mod guarded {
    use super::super::{RwLock, RwLockReadGuard};
    use crate::clock::Instant;
    use core::time::Duration;
    use lock_api::GuardSend;

    /// parking_lot 0.12's `read_recursive` and its `try_`/timed forms for
    /// [`RwLock`]: a read that enters at once whenever a read is held (see
    /// [`RawRwLock::lock_shared_recursive`](super::RawRwLock::lock_shared_recursive)).
    ///
    /// ```
    /// use parklot::{ReadRecursive, RwLock};
    /// let config = RwLock::new(1);
    /// let outer = config.read();
    /// let inner = config.read_recursive(); // never waits behind a writer
    /// assert_eq!(*outer + *inner, 2);
    /// ```
    pub trait ReadRecursive<T: ?Sized> {
        /// Reads, entering at once if anyone reads, even while writers wait.
        fn read_recursive(&self) -> RwLockReadGuard<'_, T>;
        /// Reads if a read is held or a reader may enter now.
        fn try_read_recursive(&self) -> Option<RwLockReadGuard<'_, T>>;
        /// [`read_recursive`](Self::read_recursive), waiting at most `timeout`.
        fn try_read_recursive_for(&self, timeout: Duration) -> Option<RwLockReadGuard<'_, T>>;
        /// [`read_recursive`](Self::read_recursive), waiting until `deadline`.
        fn try_read_recursive_until(&self, deadline: Instant) -> Option<RwLockReadGuard<'_, T>>;
    }

    impl<T: ?Sized> ReadRecursive<T> for RwLock<T> {
        fn read_recursive(&self) -> RwLockReadGuard<'_, T> {
            // SAFETY (both): only the raw lock's acquire is called, and the
            // guard is made for the read just taken.
            unsafe {
                self.raw().lock_shared_recursive();
                self.make_read_guard_unchecked(GuardSend::new())
            }
        }

        fn try_read_recursive(&self) -> Option<RwLockReadGuard<'_, T>> {
            // SAFETY: as in read_recursive, on success.
            unsafe { guard_if(self, self.raw().try_lock_shared_recursive()) }
        }

        fn try_read_recursive_for(&self, timeout: Duration) -> Option<RwLockReadGuard<'_, T>> {
            // SAFETY: as in read_recursive, on success.
            unsafe { guard_if(self, self.raw().try_lock_shared_recursive_for(timeout)) }
        }

        fn try_read_recursive_until(&self, deadline: Instant) -> Option<RwLockReadGuard<'_, T>> {
            // SAFETY: as in read_recursive, on success.
            unsafe { guard_if(self, self.raw().try_lock_shared_recursive_until(deadline)) }
        }
    }

    /// A guard for the read just taken, if `taken`.
    ///
    /// # Safety
    /// If `taken`, this thread has just taken a read of `lock` that no guard
    /// speaks for yet.
    unsafe fn guard_if<T: ?Sized>(lock: &RwLock<T>, taken: bool) -> Option<RwLockReadGuard<'_, T>> {
        // SAFETY: forwarded from the caller.
        taken.then(|| unsafe { lock.make_read_guard_unchecked(GuardSend::new()) })
    }
}
