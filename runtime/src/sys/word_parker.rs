//! The parker for platforms that can sleep on a 32-bit word (Linux futex,
//! wasm `memory.atomic.wait32`). The platform module supplies `wait`, `wake`
//! and `now_ns`; the protocol is here once.
//!
//! State word, one per waiter record:
//!
//! | value | meaning                                            |
//! |-------|----------------------------------------------------|
//! | 0     | not parked, or claimed by a waker (`unpark_lock`)  |
//! | 1     | parked: queued and waiting to be claimed           |
//!
//! Legal transitions: 0 → 1 by the owner in `prepare_park` (under the queue
//! lock); 1 → 0 by a waker in `unpark_lock` (under the queue lock). The owner
//! sleeps on the word while it is 1. Because the word is plain memory, a
//! thread that cannot block may instead wait on it asynchronously (in wasm,
//! `Atomics.waitAsync`); `wake` reaches both kinds of waiter.

use super::platform::{now_ns, wait, wake};
use core::sync::atomic::{AtomicU32, Ordering};

const IDLE: u32 = 0;
const PARKED: u32 = 1;

pub(crate) struct Parker {
    state: AtomicU32,
}

impl Parker {
    pub(crate) const fn new() -> Self {
        Parker {
            state: AtomicU32::new(IDLE),
        }
    }

    #[inline]
    pub(crate) fn prepare_park(&self) {
        self.state.store(PARKED, Ordering::Relaxed);
    }

    pub(crate) fn park(&self) {
        while self.state.load(Ordering::Acquire) != IDLE {
            wait(&self.state, PARKED, None);
        }
    }

    pub(crate) fn park_until(&self, deadline_ns: u64) -> bool {
        while self.state.load(Ordering::Acquire) != IDLE {
            let now = now_ns();
            if now >= deadline_ns {
                return false;
            }
            wait(&self.state, PARKED, Some(deadline_ns - now));
        }
        true
    }

    /// Whether a waker has claimed this record (Acquire: its token is visible).
    #[inline]
    pub(crate) fn is_unparked(&self) -> bool {
        self.state.load(Ordering::Acquire) == IDLE
    }

    /// The address of the state word, for waiting on it from outside.
    pub(crate) fn word_address(&self) -> usize {
        &self.state as *const AtomicU32 as usize
    }

    #[inline]
    pub(crate) fn timed_out(&self) -> bool {
        self.state.load(Ordering::Relaxed) != IDLE
    }

    #[inline]
    pub(crate) fn unpark_lock(&self) -> UnparkHandle {
        // Release: the token the waker wrote must be visible once the owner sees IDLE.
        self.state.store(IDLE, Ordering::Release);
        UnparkHandle { word: &self.state }
    }
}

pub(crate) struct UnparkHandle {
    word: *const AtomicU32,
}

impl UnparkHandle {
    /// Wakes the owner if it sleeps on its word (if it does not, it is
    /// running and sees the claim itself).
    #[inline]
    pub(crate) fn unpark(self) {
        // The owner may already have returned and reused or freed its record.
        // Waking only uses the address as a key, so that is harmless: at worst
        // the word's next user wakes spuriously, and every parker loops.
        wake(self.word);
    }
}
