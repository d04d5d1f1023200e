//! Deadlock detection, switched at run time ([`set_enabled`]).
//!
//! While on, a blocking or async acquisition of a tracked primitive (see
//! [`crate::diagnostics`] for which) that would close a cycle of threads
//! waiting for each other's locks is refused at once: the fallible calls
//! return [`DeadlockError`] ([`crate::Lock::lock_or_deadlock`], the C and JS
//! APIs), the infallible ones (`lock()`, a `Mutex`'s `lock()`) panic with
//! it, as std's `Mutex` may on a relock. The other threads in the cycle are
//! untouched: the refused thread's unwinding (or its error path) releases
//! what it holds, and they go on. Off (the default), the fast paths pay one
//! relaxed load; see the `bench/` rows.
//!
//! [`check_deadlock`] reports the cycles in the graph without touching the
//! threads in them, for a watchdog thread (parking_lot's shape).

pub use crate::diagnostics::{check_deadlock, take_deadlock, Cycle, CycleStep, DeadlockError};

/// Switches detection on or off for every thread. Holds taken while it was
/// off (and no other tracking was on) are not known, so cycles through them
/// are not seen.
pub fn set_enabled(on: bool) {
    crate::diagnostics::set_detecting(on);
}

/// Whether detection is on.
pub fn is_enabled() -> bool {
    crate::diagnostics::detecting()
}

/// The panic of an infallible acquisition refused by detection.
#[cold]
#[track_caller]
pub(crate) fn refused() -> ! {
    match take_deadlock() {
        Some(e) => panic!("{e}"),
        None => panic!("deadlock: an acquisition with no deadline gave up"),
    }
}
