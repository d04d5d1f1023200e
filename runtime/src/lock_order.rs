//! Lock-order checking, for tests and development ([`set_enabled`]): every
//! thread's acquisitions of tracked locks (see [`crate::diagnostics`]) are
//! recorded as pairs "took B while holding A"; the first time a pair is
//! seen the other way round, with both threads (and where each was, when
//! the embedder gives a site with [`set_site`], or a Rust backtrace when
//! `RUST_BACKTRACE` is set), it is reported ([`violations`]), before the two
//! orders ever meet in a deadlock. It costs what tracking costs, plus a
//! look at the thread's held locks on each acquisition, and memory for each
//! distinct pair.

pub use crate::diagnostics::LockOrderViolation;

/// Switches lock-order checking on or off for every thread.
pub fn set_enabled(on: bool) {
    crate::diagnostics::set_ordering(on);
}

/// Whether checking is on.
pub fn is_enabled() -> bool {
    crate::diagnostics::ordering()
}

/// The inversions seen so far, first first.
pub fn violations() -> Vec<LockOrderViolation> {
    crate::diagnostics::lock_order_violations()
}

/// Forgets the pairs and inversions seen so far.
pub fn reset() {
    crate::diagnostics::forget_lock_order();
}

/// Says where the calling thread is (a JS stack, a test's step), for the
/// reports of acquisitions it makes from now on; `None` to stop.
pub fn set_site(site: Option<String>) {
    crate::diagnostics::set_site(site);
}

/// How an embedder says where any thread is (a JS stack), asked only when
/// a new pair of locks or an inversion is recorded, so that acquisitions
/// pay nothing for it; `None` to stop. A site set with [`set_site`] wins.
pub fn set_site_provider(provider: Option<fn() -> Option<String>>) {
    crate::diagnostics::set_site_provider(provider);
}
