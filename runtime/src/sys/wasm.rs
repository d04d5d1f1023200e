//! wasm32 wait and wake on `memory.atomic.wait32` / `memory.atomic.notify`,
//! for modules built with the `atomics` target feature and a shared memory,
//! and the clock the embedder installs.
//!
//! wasm32-unknown-unknown has no clock. The embedder (the wasm crate, on every
//! thread's start) installs one with [`install_time_source`]; until then time
//! stands still, so fairness never triggers and timed waits wait forever.

use crate::critical::POISON_POLL_NS;
use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// Sleeps while `*word == expected`, for at most `timeout_ns`; callers re-check.
///
/// Never inlined: V8 11.3's baseline compiler (Node 20) can reload a loop's
/// locals with stale values after a `memory.atomic.wait32` in the same
/// function (seen with hand-written wasm under `--liftoff-only`); keeping the
/// wait in a function of its own keeps it away from the callers' loops.
///
/// Sleeps at most [`POISON_POLL_NS`] at a time, and leaves the call once the
/// runtime is poisoned (`critical.rs`): a thread asleep behind a dead one
/// (waiting for a lock only it would have released) comes out.
#[inline(never)]
pub(super) fn wait(word: &AtomicU32, expected: u32, timeout_ns: Option<u64>) {
    crate::critical::abandon_if_poisoned();
    let timeout = timeout_ns.map_or(POISON_POLL_NS, |t| t.min(POISON_POLL_NS)) as i64;
    // SAFETY: `word` is a live, aligned u32 in the shared linear memory. The
    // result (woken, not-equal, timed-out) is ignored: callers re-read the state.
    unsafe {
        memory_atomic_wait32(word.as_ptr() as *mut i32, expected as i32, timeout);
    }
}

/// Wakes one waiter on `word`, blocking or `Atomics.waitAsync`, if any. The
/// word may be dead by now.
pub(super) fn wake(word: *const AtomicU32) {
    // SAFETY: notify only uses the address as a key into the engine's waiter lists.
    unsafe { memory_atomic_notify(word as *mut i32, 1) };
}

/// Wakes every waiter on `word`. The word may be dead by now.
pub(super) fn wake_all(word: *const AtomicU32) {
    // SAFETY: as in `wake`.
    unsafe { memory_atomic_notify(word as *mut i32, u32::MAX) };
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
