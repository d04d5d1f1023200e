//! The platform layer: a parker (sleep on a 32-bit word until woken or until
//! a deadline), a monotonic clock and a yield. This is the only module that
//! chooses by target; everything above it is portable.
//!
//! | target                                  | parker                          | clock                    |
//! |-----------------------------------------|---------------------------------|--------------------------|
//! | Linux, Android                          | word parker on futex (`futex.rs`) | `CLOCK_MONOTONIC`      |
//! | wasm32 with the `atomics` feature       | word parker on `memory.atomic.wait32/notify` (`wasm.rs`) | installed by the host |
//! | anything else, loom models, and any target built with `--cfg parklot_portable_parker` | std `Mutex` + `Condvar` | `std::time::Instant` |
//!
//! Every parker has the same contract, used by the ParkingLot and WordLock:
//! - `prepare_park` (before the waiter is queued, under the queue's lock);
//! - `park` / `park_until` (after the queue's lock is released) return once
//!   `unpark_lock` has run, ignoring spurious wakeups; `park_until` returns
//!   `false` if the deadline passed first;
//! - `timed_out` (under the queue's lock, after `park_until` returned `false`)
//!   tells whether the waiter is still unclaimed by any waker;
//! - `unpark_lock` (under the queue's lock) claims the waiter and returns a
//!   handle whose `unpark` (after the queue's lock is released) wakes it.
//!   The handle may outlive the waiter's record: waking then is harmless.

#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(loom),
    not(parklot_portable_parker)
))]
#[path = "futex.rs"]
mod platform;

#[cfg(all(
    target_family = "wasm",
    target_feature = "atomics",
    not(loom),
    not(parklot_portable_parker)
))]
#[path = "wasm.rs"]
mod platform;
#[cfg(all(
    target_family = "wasm",
    target_feature = "atomics",
    not(loom),
    not(parklot_portable_parker)
))]
pub use platform::install_time_source;

#[cfg(all(
    any(
        target_os = "linux",
        target_os = "android",
        all(target_family = "wasm", target_feature = "atomics")
    ),
    not(loom),
    not(parklot_portable_parker)
))]
mod word_parker;

// Under loom the crate runs on the portable parker, and the word parker's
// protocol is checked on its own against a modelled futex (its unit tests).
#[cfg(loom)]
#[path = "loom_futex.rs"]
mod platform;
#[cfg(loom)]
#[allow(dead_code)]
mod word_parker;

mod spin;
pub use spin::{park_spin_limit, set_cpu_count, set_park_spin_limit, DEFAULT_PARK_SPIN_LIMIT};
#[cfg(all(
    any(
        target_os = "linux",
        target_os = "android",
        all(target_family = "wasm", target_feature = "atomics")
    ),
    not(loom),
    not(parklot_portable_parker)
))]
pub(crate) use {
    platform::now_ns,
    word_parker::{Parker, UnparkHandle},
};

#[cfg(any(
    loom,
    parklot_portable_parker,
    not(any(
        target_os = "linux",
        target_os = "android",
        all(target_family = "wasm", target_feature = "atomics")
    ))
))]
mod portable;
#[cfg(any(
    loom,
    parklot_portable_parker,
    not(any(
        target_os = "linux",
        target_os = "android",
        all(target_family = "wasm", target_feature = "atomics")
    ))
))]
pub(crate) use portable::{now_ns, Parker, UnparkHandle};

/// Where there is a system clock, an installed time source is not needed and
/// this returns `false`.
#[cfg(not(all(
    target_family = "wasm",
    target_feature = "atomics",
    not(loom),
    not(parklot_portable_parker)
)))]
pub fn install_time_source(_now_ns: fn() -> u64) -> bool {
    false
}

/// Leaves the current call for good, because the runtime is poisoned
/// (`critical.rs`): in wasm a trap, which unwinds to the JS glue; elsewhere
/// a panic.
#[cold]
pub(crate) fn abandon_call() -> ! {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    panic!("parklot: the runtime is poisoned: a thread died inside one of its critical sections");
}

/// Lets another thread run. wasm has no scheduler call: the spin hint is the
/// closest there is. (Under loom, `sync::yield_now` yields to the model.)
#[cfg(not(loom))]
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(target_family = "wasm"))]
    std::thread::yield_now();
    #[cfg(target_family = "wasm")]
    core::hint::spin_loop();
}
