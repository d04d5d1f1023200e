//! Deadlock detection, switched at run time ([`set_enabled`]).
//!
//! While on, a blocking or async acquisition of a tracked primitive (see
//! [`crate::diagnostics`] for which) that would close a cycle of threads
//! waiting for each other's locks is refused at once: the fallible calls
//! return [`DeadlockError`] ([`crate::Lock::lock_or_deadlock`], the C and JS
//! APIs), the infallible ones (`lock()`, a `Mutex`'s `lock()`) panic with
//! it, as std's `Mutex` may on a relock. The other threads in the cycle are
//! untouched: the refused thread's unwinding (or its error path) releases
//! what it holds, and they go on. Off (the default), the fast paths pay one
//! relaxed load; see the `bench/` rows.
//!
//! [`check_deadlock`] reports the cycles in the graph without touching the
//! threads in them, for a watchdog thread (parking_lot's shape).

pub use crate::diagnostics::{check_deadlock, take_deadlock, Cycle, CycleStep, DeadlockError};

/// Switches detection on or off for every thread. Holds taken while it was
/// off (and no other tracking was on) are not known, so cycles through them
/// are not seen.
pub fn set_enabled(on: bool) {
    crate::diagnostics::set_detecting(on);
}

/// Whether detection is on.
pub fn is_enabled() -> bool {
    crate::diagnostics::detecting()
}

/// The panic of an infallible acquisition refused by detection.
#[cold]
#[track_caller]
pub(crate) fn refused() -> ! {
    match take_deadlock() {
        Some(e) => panic!("{e}"),
        None => panic!("deadlock: an acquisition with no deadline gave up"),
    }
}

/// The fallible acquisitions of the guarded locks: a [`Mutex`](crate::Mutex)'s
/// `lock()` and an [`RwLock`](crate::RwLock)'s `write()` and `read()`, or
/// the cycle that waiting would close (with detection on; with it off they
/// always take the lock).
#[cfg(not(loom))]
pub trait LockOrDeadlock {
    /// What the acquisition returns.
    type Guard<'a>
    where
        Self: 'a;
    /// Takes the lock, or returns the cycle; nothing is held on `Err`.
    fn lock_or_deadlock(&self) -> Result<Self::Guard<'_>, DeadlockError>;
}

#[cfg(not(loom))]
impl<T: ?Sized> LockOrDeadlock for crate::Mutex<T> {
    type Guard<'a>
        = crate::MutexGuard<'a, T>
    where
        T: 'a;
    fn lock_or_deadlock(&self) -> Result<crate::MutexGuard<'_, T>, DeadlockError> {
        // SAFETY: `raw` only to take the lock, whose guard is made next.
        unsafe { self.raw() }.lock_or_deadlock()?;
        // SAFETY: taken just above; the guard releases it.
        Ok(unsafe { self.make_guard_unchecked(lock_api::GuardSend::new()) })
    }
}

/// The write lock of an [`RwLock`](crate::RwLock), or the cycle.
#[cfg(not(loom))]
pub fn write_or_deadlock<T: ?Sized>(
    lock: &crate::RwLock<T>,
) -> Result<crate::RwLockWriteGuard<'_, T>, DeadlockError> {
    // SAFETY: the raw lock taken by `RawRwLock::lock_exclusive_or_deadlock`
    // is what the guard releases.
    unsafe {
        guarded(lock, crate::RawRwLock::lock_exclusive_or_deadlock, |l| {
            l.make_write_guard_unchecked(lock_api::GuardSend::new())
        })
    }
}

/// A read of an [`RwLock`](crate::RwLock), or the cycle.
#[cfg(not(loom))]
pub fn read_or_deadlock<T: ?Sized>(
    lock: &crate::RwLock<T>,
) -> Result<crate::RwLockReadGuard<'_, T>, DeadlockError> {
    // SAFETY: as above, for a read.
    unsafe {
        guarded(lock, crate::RawRwLock::lock_shared_or_deadlock, |l| {
            l.make_read_guard_unchecked(lock_api::GuardSend::new())
        })
    }
}

/// Takes `lock`'s raw lock with `take`, then makes its guard with `guard`.
///
/// # Safety
/// `guard` makes the guard of what `take` took.
#[cfg(not(loom))]
unsafe fn guarded<'a, T: ?Sized, G>(
    lock: &'a crate::RwLock<T>,
    take: fn(&crate::RawRwLock) -> Result<(), DeadlockError>,
    guard: unsafe fn(&'a crate::RwLock<T>) -> G,
) -> Result<G, DeadlockError> {
    // SAFETY: `raw` only to take the lock, whose guard is made next.
    take(unsafe { lock.raw() })?;
    // SAFETY: taken just above (our contract).
    Ok(unsafe { guard(lock) })
}
