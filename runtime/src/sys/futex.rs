//! Linux futex wait and wake (x86-64, ARM64 and every other Linux target),
//! and the monotonic clock.

use core::sync::atomic::AtomicU32;

/// Sleeps while `*word == expected`, for at most `timeout_ns`. Returns on a
/// wake, a timeout, a signal or a changed value alike: callers re-check.
pub(super) fn wait(word: &AtomicU32, expected: u32, timeout_ns: Option<u64>) {
    let ts = timeout_ns.map(|t| libc::timespec {
        tv_sec: (t / 1_000_000_000).min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as _,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(core::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live AtomicU32 and `ts_ptr` is null or points at a
    // timespec on this stack frame.
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

/// Wakes one thread sleeping on `word`, if any. The word may be dead by now.
pub(super) fn wake(word: *const AtomicU32) {
    // SAFETY: FUTEX_WAKE reads no memory through the pointer; it is a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

/// Wakes every thread sleeping on `word`. The word may be dead by now.
pub(super) fn wake_all(word: *const AtomicU32) {
    // SAFETY: as in `wake`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
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
