//! parking_lot's mutex family over the one-byte [`Lock`], for Rust users who
//! port code written against parking_lot: [`FairMutex`] (every unlock hands
//! the lock to a parked thread), [`ReentrantMutex`] (the holder may lock it
//! again) and the `const_*` constructors for statics.

use crate::lock::{lock_api_mutex, Lock};
use crate::rwlock::{RawRwLock, RwLock};
use crate::Mutex;
use core::num::NonZeroUsize;

/// A [`Lock`] whose every unlock is fair: if threads are parked, the oldest
/// is handed the lock directly (no barging). Slower under contention than
/// [`Lock`], which is fair only about once a millisecond; it never lets a
/// thread that just unlocked take the lock back first.
#[repr(transparent)] // one byte, like Lock
pub struct FairLock(Lock);

impl FairLock {
    /// An unlocked lock.
    pub const fn new() -> FairLock {
        FairLock(Lock::new())
    }
}

impl Default for FairLock {
    fn default() -> Self {
        FairLock::new()
    }
}

// A Lock whose every unlock is fair.
lock_api_mutex!(FairLock, |fair| fair.0, unlock_fair);

/// Data guarded by a [`FairLock`]: like [`Mutex`], but every unlock hands
/// the lock to the oldest parked thread.
///
/// ```
/// let m = parklot::FairMutex::new(0);
/// *m.lock() += 1;
/// assert_eq!(*m.lock(), 1);
/// ```
pub type FairMutex<T> = lock_api::Mutex<FairLock, T>;

/// Proof of holding a [`FairMutex`]; unlocks (fairly) when dropped.
pub type FairMutexGuard<'a, T> = lock_api::MutexGuard<'a, FairLock, T>;

/// Names the current thread for [`ReentrantMutex`]: the address of a
/// thread-local, unique among running threads (a finished thread's may be
/// reused, as in parking_lot).
pub struct CurrentThreadId;

// SAFETY: two threads that run at the same time have distinct thread-locals,
// hence distinct, non-zero addresses.
unsafe impl lock_api::GetThreadId for CurrentThreadId {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: CurrentThreadId = CurrentThreadId;

    fn nonzero_thread_id(&self) -> NonZeroUsize {
        std::thread_local!(static MARK: u8 = const { 0 });
        MARK.with(|mark| NonZeroUsize::new(mark as *const u8 as usize))
            .expect("a thread-local has a non-null address")
    }
}

/// A mutex its holder may lock again (each lock matched by an unlock); the
/// guard gives shared access only (`&T`; use a `Cell`/`RefCell` inside).
///
/// ```
/// let m = parklot::ReentrantMutex::new(std::cell::Cell::new(1));
/// let a = m.lock();
/// let b = m.lock(); // the same thread: no deadlock
/// b.set(a.get() + 1);
/// assert_eq!(a.get(), 2);
/// ```
pub type ReentrantMutex<T> = lock_api::ReentrantMutex<Lock, CurrentThreadId, T>;

/// Proof of holding a [`ReentrantMutex`]; unlocks one level when dropped.
pub type ReentrantMutexGuard<'a, T> = lock_api::ReentrantMutexGuard<'a, Lock, CurrentThreadId, T>;

/// A [`Mutex`] in a `const` context (a `static`), as parking_lot's `const_mutex`.
///
/// ```
/// static COUNT: parklot::Mutex<u32> = parklot::const_mutex(0);
/// *COUNT.lock() += 1;
/// ```
pub const fn const_mutex<T>(value: T) -> Mutex<T> {
    Mutex::from_raw(Lock::new(), value)
}

/// A [`FairMutex`] in a `const` context.
pub const fn const_fair_mutex<T>(value: T) -> FairMutex<T> {
    FairMutex::from_raw(FairLock::new(), value)
}

/// A [`ReentrantMutex`] in a `const` context.
pub const fn const_reentrant_mutex<T>(value: T) -> ReentrantMutex<T> {
    ReentrantMutex::from_raw(Lock::new(), CurrentThreadId, value)
}

/// An [`RwLock`] (writer-preferring) in a `const` context; for a policy of
/// your choice, `RwLock::from_raw(RawRwLock::with_policy(..), value)`, also const.
pub const fn const_rwlock<T>(value: T) -> RwLock<T> {
    RwLock::from_raw(RawRwLock::new(), value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn statics_build_in_const_contexts() {
        static M: Mutex<u32> = const_mutex(1);
        static F: FairMutex<u32> = const_fair_mutex(2);
        static R: ReentrantMutex<u32> = const_reentrant_mutex(3);
        static W: RwLock<u32> = const_rwlock(4);
        *M.lock() += 1;
        *F.lock() += 1;
        *W.write() += 1;
        assert_eq!((*M.lock(), *F.lock(), *R.lock(), *W.read()), (2, 3, 3, 5));
    }

    #[test]
    fn a_fair_mutex_hands_the_lock_to_the_parked_thread() {
        let m = Arc::new(FairMutex::new(0));
        let g = m.lock();
        let m2 = m.clone();
        let t = std::thread::spawn(move || *m2.lock() += 1);
        // SAFETY (test): only looked at.
        let raw = unsafe { m.raw() };
        while crate::parking_lot::parked_count(raw as *const FairLock as usize) == 0 {
            std::thread::yield_now();
        }
        drop(g);
        // Handed over: it never looks free in between, so barging fails.
        assert!(m.try_lock().is_none() || *m.lock() == 1);
        t.join().unwrap();
        assert_eq!(*m.lock(), 1);
    }

    #[test]
    fn a_reentrant_mutex_is_reentrant_for_its_holder_only() {
        let m = Arc::new(ReentrantMutex::new(std::cell::Cell::new(0)));
        let a = m.lock();
        let b = m.lock();
        b.set(1);
        let m2 = m.clone();
        assert!(std::thread::spawn(move || m2.try_lock().is_none())
            .join()
            .unwrap());
        drop(a);
        assert!(m.is_locked(), "one level is still held");
        drop(b);
        assert!(!m.is_locked());
        assert!(
            std::thread::spawn(move || m.try_lock().map(|g| g.get()))
                .join()
                .unwrap()
                == Some(1)
        );
    }
}
