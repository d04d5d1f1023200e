//! wasm32 parker on `memory.atomic.wait32` / `memory.atomic.notify`, for
//! modules built with the `atomics` target feature and a shared memory.
//!
//! State word, one per waiter record (the same protocol as `futex.rs`):
//!
//! | value | meaning                                            |
//! |-------|----------------------------------------------------|
//! | 0     | not parked, or claimed by a waker (`unpark_lock`)  |
//! | 1     | parked: queued and waiting to be claimed           |
//!
//! Because the word lives in linear memory, a thread that cannot block (a
//! browser page's main thread) can wait on the same word from JavaScript with
//! `Atomics.waitAsync`; `memory.atomic.notify` wakes both kinds of waiter.
//!
//! wasm32-unknown-unknown has no clock. The embedder (the wasm crate, on every
//! thread's start) installs one with [`install_time_source`]; until then time
//! stands still, so fairness never triggers and timed waits wait forever.

use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

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
            wait(&self.state, -1);
        }
    }

    pub(crate) fn park_until(&self, deadline_ns: u64) -> bool {
        while self.state.load(Ordering::Acquire) != IDLE {
            let now = now_ns();
            if now >= deadline_ns {
                return false;
            }
            wait(&self.state, (deadline_ns - now).min(i64::MAX as u64) as i64);
        }
        true
    }

    #[inline]
    pub(crate) fn timed_out(&self) -> bool {
        self.state.load(Ordering::Relaxed) != IDLE
    }

    #[inline]
    pub(crate) fn unpark_lock(&self) -> UnparkHandle {
        self.state.store(IDLE, Ordering::Release);
        UnparkHandle {
            word: self.state.as_ptr(),
        }
    }
}

pub(crate) struct UnparkHandle {
    word: *mut u32,
}

impl UnparkHandle {
    #[inline]
    pub(crate) fn unpark(self) {
        // SAFETY: notify only uses the address as a key into the engine's
        // waiter lists; the word may have been reused, which at worst causes a
        // spurious wakeup that every parker tolerates.
        unsafe {
            memory_atomic_notify(self.word as *mut i32, 1);
        }
    }
}

fn wait(word: &AtomicU32, timeout_ns: i64) {
    // SAFETY: `word` is a live, aligned u32 in the shared linear memory. The
    // result (woken, not-equal, timed-out) is ignored: callers re-read the state.
    unsafe {
        memory_atomic_wait32(word.as_ptr() as *mut i32, PARKED as i32, timeout_ns);
    }
}

static TIME_SOURCE: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Installs the monotonic clock, in nanoseconds, that timeouts and the
/// fairness timer read (the wasm module passes one built on
/// `performance.now()`). Returns `true`: this target needs one.
pub fn install_time_source(now_ns: fn() -> u64) -> bool {
    TIME_SOURCE.store(now_ns as *mut (), Ordering::Release);
    true
}

pub(crate) fn now_ns() -> u64 {
    let f = TIME_SOURCE.load(Ordering::Acquire);
    if f.is_null() {
        return 0;
    }
    // SAFETY: the only non-null value ever stored is a `fn() -> u64`.
    let f: fn() -> u64 = unsafe { core::mem::transmute(f) };
    f()
}
