//! Portable parker on a mutex and condition variable: std's on targets without
//! a futex, loom's in model checking (where the clock stands still, so that
//! every explored execution is deterministic).
//!
//! State word, one per waiter record:
//!
//! | value   | meaning                                                   |
//! |---------|-----------------------------------------------------------|
//! | IDLE    | not parked, or woken: the owner may return                |
//! | PARKED  | queued and waiting to be claimed                          |
//! | CLAIMED | a waker ran `unpark_lock` but has not yet signalled       |
//!
//! PARKED → CLAIMED happens under the queue lock, CLAIMED → IDLE under this
//! parker's mutex. The owner returns only after seeing IDLE under the mutex,
//! so the waker is done with the record by then (apart from unlocking the
//! mutex, which std and loom allow to race with the mutex being dropped).

use crate::sync::{AtomicU32, Condvar, Mutex, Ordering};

const IDLE: u32 = 0;
const PARKED: u32 = 1;
const CLAIMED: u32 = 2;

pub(crate) struct Parker {
    state: AtomicU32,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl Parker {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Parker {
            state: AtomicU32::new(IDLE),
            mutex: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Parker {
            state: AtomicU32::new(IDLE),
            mutex: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    #[inline]
    pub(crate) fn prepare_park(&self) {
        self.state.store(PARKED, Ordering::Relaxed);
    }

    pub(crate) fn park(&self) {
        let mut guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        while self.state.load(Ordering::Acquire) != IDLE {
            guard = self.condvar.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(crate) fn park_until(&self, deadline_ns: u64) -> bool {
        let mut guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        while self.state.load(Ordering::Acquire) != IDLE {
            let now = now_ns();
            if now >= deadline_ns {
                return false;
            }
            let wait = core::time::Duration::from_nanos(deadline_ns - now);
            guard = self
                .condvar
                .wait_timeout(guard, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Whether a waker has claimed this record and finished waking it.
    #[inline]
    pub(crate) fn is_unparked(&self) -> bool {
        self.state.load(Ordering::Acquire) == IDLE
    }

    /// The address of the state word (1 while parked).
    pub(crate) fn word_address(&self) -> usize {
        &self.state as *const AtomicU32 as usize
    }

    /// Marks a record that left its queue without a waker (timed out,
    /// cancelled, reaped) as not parked. Under the queue lock.
    #[inline]
    pub(crate) fn forget_park(&self) {
        self.state.store(IDLE, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn timed_out(&self) -> bool {
        self.state.load(Ordering::Relaxed) == PARKED
    }

    #[inline]
    pub(crate) fn unpark_lock(&self) -> UnparkHandle {
        self.state.store(CLAIMED, Ordering::Relaxed);
        UnparkHandle { parker: self }
    }
}

pub(crate) struct UnparkHandle {
    parker: *const Parker,
}

impl UnparkHandle {
    /// Wakes the owner.
    pub(crate) fn unpark(self) {
        // SAFETY: the state is CLAIMED, so the owner is still inside `park`
        // (or will wait there) until it sees IDLE under the mutex we now take:
        // the record outlives this call.
        let parker = unsafe { &*self.parker };
        let _guard = parker.mutex.lock().unwrap_or_else(|e| e.into_inner());
        parker.state.store(IDLE, Ordering::Release);
        parker.condvar.notify_one();
    }
}

/// Nanoseconds since the first call, on `std::time::Instant`.
#[cfg(not(loom))]
pub(crate) fn now_ns() -> u64 {
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(std::time::Instant::now);
    // Start at 1 s so that "now" is never 0, the value of a fresh fairness timer.
    1_000_000_000 + base.elapsed().as_nanos() as u64
}

/// Loom explores executions by replaying them: time must not move.
#[cfg(loom)]
pub(crate) fn now_ns() -> u64 {
    0
}
