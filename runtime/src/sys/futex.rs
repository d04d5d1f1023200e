//! Linux futex parker (x86-64, ARM64 and every other Linux target).
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
//! sleeps with `FUTEX_WAIT` while the word is 1.

use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;

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
            futex_wait(&self.state, PARKED, None);
        }
    }

    pub(crate) fn park_until(&self, deadline_ns: u64) -> bool {
        while self.state.load(Ordering::Acquire) != IDLE {
            let now = now_ns();
            if now >= deadline_ns {
                return false;
            }
            futex_wait(
                &self.state,
                PARKED,
                Some(Duration::from_nanos(deadline_ns - now)),
            );
        }
        true
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
    #[inline]
    pub(crate) fn unpark(self) {
        // The owner may already have returned and reused or freed its record.
        // FUTEX_WAKE only uses the address as a key, so that is harmless: at
        // worst it wakes the word's next user spuriously, and parkers loop.
        // SAFETY: the syscall reads no memory through the pointer.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word,
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
            );
        }
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as _,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(core::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live AtomicU32 and `ts_ptr` is null or points at a
    // timespec on this stack frame. EINTR, EAGAIN and ETIMEDOUT all return to
    // the caller's loop, which re-reads the state.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const AtomicU32,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
        );
    }
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
