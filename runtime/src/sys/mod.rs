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

use crate::macros::cfg_items;

/// What every parker does alike over its `state` word, where IDLE (0) is
/// "not parked, or claimed by a waker that is done with it" and PARKED (1)
/// "queued", and its `spin` budget: `new` (with the parker's other fields'
/// initial values, given), `prepare_park`, `park`, `park_until`, and the
/// accessors. The parker supplies `spin_first` (watch the record for a
/// while: `true` if claimed), `sleep` (until claimed, `true`, or the
/// deadline, `false`) and `stay_awake` (the same for a thread that may not
/// sleep).
macro_rules! parker_protocol {
    ($($field:ident: $init:expr),* $(,)?) => {
        $crate::macros::const_unless_loom! {
            pub(crate) fn new() -> Self {
                Parker {
                    state: AtomicU32::new(IDLE),
                    spin: SpinBudget::new(),
                    $($field: $init,)*
                }
            }
        }

        /// Marks the record queued. Under the queue lock, before it is queued.
        #[inline]
        pub(crate) fn prepare_park(&self) {
            self.state.store(PARKED, Ordering::Relaxed);
        }

        /// Sleeps until claimed; with `spin`, watches the record for a while
        /// first (`spin.rs`).
        pub(crate) fn park(&self, spin: bool) {
            self.park_inner(None, spin);
        }

        /// [`park`](Self::park) until `deadline_ns` (`now_ns`'s clock):
        /// `false` if it passed first.
        pub(crate) fn park_until(&self, deadline_ns: u64, spin: bool) -> bool {
            self.park_inner(Some(deadline_ns), spin)
        }

        fn park_inner(&self, deadline_ns: Option<u64>, spin: bool) -> bool {
            if !thread_may_block() {
                return self.stay_awake(deadline_ns);
            }
            if spin && self.spin_first() {
                return true;
            }
            self.sleep(deadline_ns)
        }

        /// Whether a waker has claimed this record and is done waking it
        /// (Acquire: its token is visible).
        #[inline]
        pub(crate) fn is_unparked(&self) -> bool {
            self.state.load(Ordering::Acquire) == IDLE
        }

        /// The address of the state word (1 while parked), for waiting on it
        /// from outside.
        pub(crate) fn word_address(&self) -> usize {
            &self.state as *const AtomicU32 as usize
        }

        /// Marks a record that left its queue without a waker (timed out,
        /// cancelled, reaped) as not parked. Under the queue lock.
        #[inline]
        pub(crate) fn forget_park(&self) {
            self.state.store(IDLE, Ordering::Relaxed);
        }
    };
}

#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(loom),
    not(parklot_portable_parker)
))]
#[path = "futex.rs"]
mod platform;

cfg_items! {
    #[cfg(all(
        target_family = "wasm",
        target_feature = "atomics",
        not(loom),
        not(parklot_portable_parker)
    ))]
    #[path = "wasm.rs"]
    mod platform;
    pub use platform::install_time_source;
}

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

cfg_items! {
    #[cfg(any(
        loom,
        all(
            any(
                target_os = "linux",
                target_os = "android",
                all(target_family = "wasm", target_feature = "atomics")
            ),
            not(parklot_portable_parker)
        )
    ))]
    /// Sleeps while `*word == expected`, at most `timeout_ns`, on the
    /// platform's futex (Linux, wasm, loom's model of one; elsewhere it
    /// yields once). Callers re-check. For a lock whose sleepers leave
    /// nothing behind but the futex's own wait list (`takeover_lock.rs`).
    pub(crate) fn futex_wait(word: &crate::sync::AtomicU32, expected: u32, timeout_ns: u64) {
        platform::wait(word, expected, Some(timeout_ns));
    }
    /// Wakes one sleeper of [`futex_wait`] on `word`, or all of them.
    pub(crate) fn futex_wake(word: &crate::sync::AtomicU32, all: bool) {
        if all {
            platform::wake_all(word);
        } else {
            platform::wake(word);
        }
    }
}

cfg_items! {
    #[cfg(not(any(
        loom,
        all(
            any(
                target_os = "linux",
                target_os = "android",
                all(target_family = "wasm", target_feature = "atomics")
            ),
            not(parklot_portable_parker)
        )
    )))]
    /// `futex_wait` where the platform has no futex: a yield.
    pub(crate) fn futex_wait(_word: &crate::sync::AtomicU32, _expected: u32, _timeout_ns: u64) {
        yield_now();
    }
    /// `futex_wake` where the platform has no futex: sleepers only yielded.
    pub(crate) fn futex_wake(_word: &crate::sync::AtomicU32, _all: bool) {}
}

cfg_items! {
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
    pub(crate) use {
        platform::now_ns,
        word_parker::{Parker, UnparkHandle},
    };
}

cfg_items! {
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
    pub(crate) use portable::{now_ns, Parker, UnparkHandle};
}

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

/// A thread-local's value, without a destructor in wasm. std never runs
/// thread-local destructors there (a wasm thread has no exit; its end is its
/// reaping), and registering one allocates from std's own dlmalloc, behind a
/// global lock that a worker terminated meanwhile would leave held for every
/// thread that registers one after it (`heap.rs`); it also links dlmalloc
/// into the module (8 KB). Elsewhere the value is dropped as usual.
#[cfg(target_family = "wasm")]
pub(crate) type NoDestructor<T> = core::mem::ManuallyDrop<T>;
/// See the wasm definition: elsewhere, the value itself.
#[cfg(not(target_family = "wasm"))]
pub(crate) type NoDestructor<T> = T;

/// Makes a [`NoDestructor`].
#[inline]
pub(crate) const fn no_destructor<T>(value: T) -> NoDestructor<T> {
    #[cfg(target_family = "wasm")]
    return core::mem::ManuallyDrop::new(value);
    #[cfg(not(target_family = "wasm"))]
    value
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

/// Lets another thread run: natively `sched_yield` (or the platform's); in
/// wasm, which has no scheduler call, a pause of [`WASM_YIELD_ITERATIONS`]
/// that touches no shared memory. (Under loom, `sync::yield_now` yields to
/// the model.)
#[cfg(not(loom))]
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(target_family = "wasm"))]
    std::thread::yield_now();
    #[cfg(target_family = "wasm")]
    {
        let mut i: u32 = 0;
        while i < WASM_YIELD_ITERATIONS {
            // Opaque to the optimizer, which would delete an empty loop.
            i = core::hint::black_box(i) + 1;
        }
    }
}

/// The iterations of a wasm yield's pause: as long as a `sched_yield` that
/// finds nothing else to run (0.5 µs on the 2-CPU EPYC VM we measure on),
/// so that a spin budget counted in yields lasts about as long as natively
/// (the Lock's 40, seed 000's WebKit lock). Measured there, an iteration is
/// 0.33 ns in Node 20 and 0.28 ns in Bun 1.4, 0.45 ns in Deno 2.9: a yield
/// of 0.6-0.9 µs. With the spin hint alone (a no-op in wasm) the 40 yields
/// lasted about 0.2 µs, each a load of the contended line: two workers
/// looping on one Lock through JS pulled the line back and forth and ran
/// 20-22 million sections a second in Node (as the ten-line JS mutex did),
/// 15-22 in Bun, against 51-56 and 85 with the pause (`bench/calls`, the
/// 2-worker row; 4 and 8 workers unchanged within noise). The lock then
/// stays longer with one worker: at 2 workers the min/max of their shares
/// fell from 0.7-1.0 to 0.6-0.8, the slower one still faster than either
/// before; and a spinner burns its CPU for longer before it parks.
#[cfg(target_family = "wasm")]
const WASM_YIELD_ITERATIONS: u32 = 2048;
