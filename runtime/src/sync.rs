//! The building blocks every other module uses: atomics, a lock-guarded cell,
//! thread-locals, a mutex and condvar for the portable parker, and the spin
//! and yield hints.
//!
//! Normally these are `core`/`std`'s own. Under `--cfg loom` they are loom's,
//! so that the model checker sees every load, store, CAS and cell access the
//! core makes (see `tests/loom.rs`). Nothing else in the crate names loom.

// AtomicU32, Mutex and Condvar serve the portable parker, which some targets do not build.
#[cfg(not(loom))]
#[allow(unused_imports)]
pub(crate) use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicI32, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};

pub(crate) use core::sync::atomic::Ordering;

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
#[allow(unused_imports)]
pub(crate) use std::sync::{Condvar, Mutex};

#[cfg(loom)]
pub(crate) use loom::thread_local;
#[cfg(not(loom))]
pub(crate) use std::thread_local;

// `yield_now` gives the CPU to another thread: used between spins of the
// adaptive locks. `spin_loop` is a busy-wait hint (x86 `pause`, ARM `yield`):
// used where a thread must not sleep, such as a bucket lock taken by a thread
// that cannot block. Under loom both yield to the model.
#[cfg(loom)]
pub(crate) use loom::thread::{yield_now, yield_now as spin_loop};
#[cfg(not(loom))]
pub(crate) use {crate::sys::yield_now, core::hint::spin_loop};

/// A `Copy` value shared between threads but only ever touched by whoever
/// holds the lock that guards it (a bucket's WordLock, or a WordLock's queue
/// bit). Under loom every access is checked for data races.
pub(crate) struct LockedCell<T: Copy> {
    #[cfg(not(loom))]
    value: core::cell::UnsafeCell<T>,
    #[cfg(loom)]
    value: loom::cell::UnsafeCell<T>,
}

impl<T: Copy> LockedCell<T> {
    #[cfg(not(loom))]
    pub(crate) const fn new(value: T) -> Self {
        LockedCell {
            value: core::cell::UnsafeCell::new(value),
        }
    }

    #[cfg(loom)]
    #[track_caller]
    pub(crate) fn new(value: T) -> Self {
        LockedCell {
            value: loom::cell::UnsafeCell::new(value),
        }
    }

    /// # Safety
    /// The caller holds the lock that guards this cell (or is its only user).
    #[inline]
    #[cfg_attr(loom, track_caller)]
    pub(crate) unsafe fn get(&self) -> T {
        #[cfg(not(loom))]
        // SAFETY: the guarding lock excludes concurrent writers (caller's contract).
        return unsafe { *self.value.get() };
        #[cfg(loom)]
        // SAFETY: as above; loom verifies the claim.
        return self.value.with(|p| unsafe { *p });
    }

    /// # Safety
    /// The caller holds the lock that guards this cell (or is its only user).
    #[inline]
    #[cfg_attr(loom, track_caller)]
    pub(crate) unsafe fn set(&self, value: T) {
        #[cfg(not(loom))]
        // SAFETY: the guarding lock excludes every other access (caller's contract).
        unsafe {
            *self.value.get() = value
        };
        #[cfg(loom)]
        // SAFETY: as above; loom verifies the claim.
        self.value.with_mut(|p| unsafe { *p = value });
    }
}

// SAFETY: every access goes through `get`/`set`, whose callers hold the
// guarding lock, so sharing the cell between threads is race-free.
unsafe impl<T: Copy + Send> Sync for LockedCell<T> {}
