//! The locks under test, behind one trait so that a single generic runner
//! drives them all.
//!
//! Each lock guards nothing itself: the runner keeps the protected data in an
//! `UnsafeCell` next to it, the same for every lock, so only the locking
//! differs between peers.

use crate::runner::{run_round, Round, RoundConfig};

/// A lock as the benchmark sees it: `lock` returns a guard (the lock's own,
/// or `()` for raw locks) and `unlock` consumes it.
///
/// # Safety
/// Implementations provide mutual exclusion: between `lock` returning and
/// the matching `unlock`, no other call to `lock` on the same lock returns.
pub unsafe trait RawLock: Send + Sync + Sized + 'static {
    /// The name used in tables and JSON.
    const NAME: &'static str;

    /// What `lock` hands to `unlock`.
    type Guard<'a>
    where
        Self: 'a;

    /// An unlocked lock.
    fn new() -> Self;

    /// Acquires the lock, waiting as long as it takes.
    fn lock(&self) -> Self::Guard<'_>;

    /// Releases the lock.
    ///
    /// # Safety
    /// `guard` was returned by `lock` on this lock, on this thread, and has not
    /// been released yet.
    unsafe fn unlock(&self, guard: Self::Guard<'_>);
}

// SAFETY: parklot::Lock is a mutual-exclusion lock.
unsafe impl RawLock for parklot::Lock {
    const NAME: &'static str = "parklot::Lock";
    type Guard<'a> = ();

    fn new() -> Self {
        parklot::Lock::new()
    }

    #[inline]
    fn lock(&self) {
        parklot::Lock::lock(self)
    }

    #[inline]
    unsafe fn unlock(&self, _guard: ()) {
        parklot::Lock::unlock(self)
    }
}

// SAFETY: parklot::WordLock is a mutual-exclusion lock.
unsafe impl RawLock for parklot::WordLock {
    const NAME: &'static str = "parklot::WordLock";
    type Guard<'a> = ();

    fn new() -> Self {
        parklot::WordLock::new()
    }

    #[inline]
    fn lock(&self) {
        parklot::WordLock::lock(self)
    }

    #[inline]
    unsafe fn unlock(&self, _guard: ()) {
        // SAFETY: the caller holds the lock (this trait method's contract).
        unsafe { parklot::WordLock::unlock(self) }
    }
}

// SAFETY: std's Mutex is a mutual-exclusion lock.
unsafe impl RawLock for std::sync::Mutex<()> {
    const NAME: &'static str = "std::sync::Mutex";
    type Guard<'a> = std::sync::MutexGuard<'a, ()>;

    fn new() -> Self {
        std::sync::Mutex::new(())
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        // Nothing panics while holding it, so it is never poisoned.
        std::sync::Mutex::lock(self).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[inline]
    unsafe fn unlock(&self, guard: Self::Guard<'_>) {
        drop(guard)
    }
}

// SAFETY: parking_lot's Mutex is a mutual-exclusion lock.
unsafe impl RawLock for parking_lot::Mutex<()> {
    const NAME: &'static str = "parking_lot::Mutex";
    type Guard<'a> = parking_lot::MutexGuard<'a, ()>;

    fn new() -> Self {
        parking_lot::Mutex::new(())
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        parking_lot::Mutex::lock(self)
    }

    #[inline]
    unsafe fn unlock(&self, guard: Self::Guard<'_>) {
        drop(guard)
    }
}

/// glibc's default `pthread_mutex_t`, boxed so that it never moves once
/// threads can see it.
#[cfg(unix)]
pub struct PthreadMutex(Box<core::cell::UnsafeCell<libc::pthread_mutex_t>>);

// SAFETY: a pthread mutex is made to be shared between threads; it is only
// touched through the pthread functions.
#[cfg(unix)]
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
#[cfg(unix)]
unsafe impl Sync for PthreadMutex {}

#[cfg(unix)]
impl PthreadMutex {
    fn raw(&self) -> *mut libc::pthread_mutex_t {
        self.0.get()
    }
}

#[cfg(unix)]
impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, unlocked (we have `&mut self`), and
        // never used again.
        unsafe { libc::pthread_mutex_destroy(self.raw()) };
    }
}

// SAFETY: pthread_mutex_lock/unlock give mutual exclusion; errors panic.
#[cfg(unix)]
unsafe impl RawLock for PthreadMutex {
    const NAME: &'static str = "pthread_mutex_t";
    type Guard<'a> = ();

    fn new() -> Self {
        PthreadMutex(Box::new(core::cell::UnsafeCell::new(
            libc::PTHREAD_MUTEX_INITIALIZER,
        )))
    }

    #[inline]
    fn lock(&self) {
        // SAFETY: the mutex is initialized and stays at this address.
        let err = unsafe { libc::pthread_mutex_lock(self.raw()) };
        assert_eq!(err, 0, "pthread_mutex_lock failed");
    }

    #[inline]
    unsafe fn unlock(&self, _guard: ()) {
        // SAFETY: initialized, pinned in its box, and held by this thread.
        let err = unsafe { libc::pthread_mutex_unlock(self.raw()) };
        assert_eq!(err, 0, "pthread_mutex_unlock failed");
    }
}

/// One lock under test, type-erased: its name and its instantiation of the
/// generic runner.
#[derive(Copy, Clone)]
pub struct Peer {
    /// [`RawLock::NAME`].
    pub name: &'static str,
    /// [`run_round`] for this lock type.
    pub run: fn(&RoundConfig) -> Round,
}

impl Peer {
    /// The peer for lock type `L`.
    pub const fn of<L: RawLock>() -> Peer {
        Peer {
            name: L::NAME,
            run: run_round::<L>,
        }
    }
}

/// Every native peer, parklot's `Lock` first (the baseline of the ratios).
pub const PEERS: &[Peer] = &[
    Peer::of::<parklot::Lock>(),
    Peer::of::<parklot::WordLock>(),
    Peer::of::<std::sync::Mutex<()>>(),
    Peer::of::<parking_lot::Mutex<()>>(),
    #[cfg(unix)]
    Peer::of::<PthreadMutex>(),
];
