//! Waiters without a thread: records that queue in the same queues as
//! parked threads, for callers that must not block (a browser page's main
//! thread).

use super::record::{Owed, ThreadData, Waits};
use super::{enqueue, leave_queue, ParkResult, UnparkToken};
use crate::sync::Ordering;

/// A waiter that is not a sleeping thread: a record that queues in the same
/// ParkingLot queues as parked threads. Its state word reads 1 while it is
/// queued and unclaimed and turns 0, with a wake on the word, when an unpark
/// claims it; in wasm, `Atomics.waitAsync` on
/// [`word_address`](Self::word_address) resolves then.
///
/// The protocol: [`park_async`] queues it; when its word turns 0,
/// [`poll`](Self::poll) returns the waker's token; to give up (a timeout,
/// a cancellation), [`cancel_async`] takes it out of the queue or, if a waker
/// won the race, returns that waker's token. A record can be reused after
/// either. An unpark that claims it counts it as woken whether or not anyone
/// watches its word: its owner is told the wait ended when it next polls.
/// Creating one counts as one more waiter for sizing the table, so keep and
/// reuse records rather than creating one per wait.
pub struct AsyncWaiter {
    pub(super) data: ThreadData,
}

impl AsyncWaiter {
    /// A record that is not queued.
    pub fn new() -> AsyncWaiter {
        AsyncWaiter {
            data: ThreadData::new(),
        }
    }

    /// The address of the 32-bit word that is 1 while queued and unclaimed.
    pub fn word_address(&self) -> usize {
        self.data.parker.word_address()
    }

    /// The address this record was last queued on: for a primitive that
    /// queues its records under more than one address and must cancel under
    /// the right one. Only the record's owner may ask, and only about a
    /// queueing of its own.
    pub fn queued_key(&self) -> usize {
        // No requeue moves an async record: the owner reads its own write.
        self.data.queued_on.load(Ordering::Relaxed)
    }

    /// The waker's token once an unpark has claimed this record and finished
    /// waking it; `None` while it is still queued.
    pub fn poll(&self) -> Option<UnparkToken> {
        // SAFETY: `is_unparked` observed the claim with Acquire.
        self.data
            .parker
            .is_unparked()
            .then(|| unsafe { self.data.take_token(false) })
    }

    /// [`poll`](Self::poll) for a wait whose wakeup leaves state behind
    /// (as [`super::park_owing_until_settled`]): the token stays owed, and a
    /// reaper passes it on ([`super::abandon_async_holding`]), until the
    /// owner calls [`settled`](Self::settled) once it has acted on it and
    /// recorded what it took.
    pub fn poll_owing(&self) -> Option<UnparkToken> {
        // SAFETY: as in `poll`.
        self.data
            .parker
            .is_unparked()
            .then(|| unsafe { self.data.take_token(true) })
    }

    /// Ends the debt of the token [`poll_owing`](Self::poll_owing) returned.
    pub fn settled(&self) {
        self.data.token_pending.store(false, Ordering::Relaxed);
    }
}

// SAFETY: a record's cells are written only under its bucket's lock (or by
// an unparker before the claim its owner observes with Acquire); the rest is
// atomic. Wasm workers and a reaping thread share records by design.
unsafe impl Send for AsyncWaiter {}
// SAFETY: as for Send.
unsafe impl Sync for AsyncWaiter {}

impl Default for AsyncWaiter {
    fn default() -> Self {
        AsyncWaiter::new()
    }
}

/// Queues `waiter` on `key` if `validate` (run under the queue lock) agrees,
/// without sleeping. Returns whether it was queued. If the record is reaped
/// ([`super::abandon_async`]) nothing is owed; see [`park_async_owing`].
///
/// # Safety
/// - `validate` as for [`super::park_conditionally`];
/// - `waiter` is not queued (it is new, or its last wait was settled by
///   `poll` returning a token, by `cancel_async`, or by its word reading 0),
///   and it neither moves nor is dropped until that wait is settled.
pub unsafe fn park_async(
    key: usize,
    validate: impl FnOnce() -> bool,
    waiter: &AsyncWaiter,
) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { park_async_owing(key, validate, waiter, Owed::NOTHING) }
}

/// [`park_async`] for a wait that owes the other waiters something if the
/// record is reaped (see [`super::park_owing`]).
///
/// # Safety
/// As for [`park_async`].
pub unsafe fn park_async_owing(
    key: usize,
    validate: impl FnOnce() -> bool,
    waiter: &AsyncWaiter,
    owed: Owed,
) -> bool {
    // SAFETY: forwarded from the caller (`enqueue` ends any earlier debt).
    unsafe { enqueue(key, validate, &waiter.data, owed, Waits::Async, None) }
}

/// Gives up an asynchronous wait: takes `waiter` out of `key`'s queue and runs
/// `timed_out(key, was_last)` under the queue lock, returning `TimedOut`; or,
/// if an unpark claimed it first, returns `Unparked` with the waker's token.
/// Never blocks.
///
/// # Safety
/// `waiter` was queued on `key` by [`park_async`] and not settled since;
/// `timed_out` as for [`super::park_conditionally`].
pub unsafe fn cancel_async(
    key: usize,
    waiter: &AsyncWaiter,
    timed_out: impl FnOnce(usize, bool),
) -> ParkResult {
    // SAFETY: forwarded from the caller.
    unsafe { cancel_async_settling(key, waiter, timed_out, false) }
}

/// [`cancel_async`] for a wait whose wakeup leaves state behind (as
/// [`AsyncWaiter::poll_owing`]): if an unpark claimed `waiter` first, its
/// token stays owed, and a reaper passes it on, until the owner calls
/// [`settled`](AsyncWaiter::settled).
///
/// # Safety
/// As for [`cancel_async`].
pub unsafe fn cancel_async_owing(
    key: usize,
    waiter: &AsyncWaiter,
    timed_out: impl FnOnce(usize, bool),
) -> ParkResult {
    // SAFETY: forwarded from the caller.
    unsafe { cancel_async_settling(key, waiter, timed_out, true) }
}

/// [`cancel_async`], the token's debt ended now or left to the owner.
///
/// # Safety
/// As for [`cancel_async`].
unsafe fn cancel_async_settling(
    key: usize,
    waiter: &AsyncWaiter,
    timed_out: impl FnOnce(usize, bool),
    settle_later: bool,
) -> ParkResult {
    debug_assert_eq!(key, waiter.queued_key(), "cancelled under another address");
    // SAFETY: forwarded from the caller. A claimed word parker is complete at
    // once; the portable one completes a few instructions after its claim.
    let result = unsafe {
        leave_queue(
            &waiter.data,
            timed_out,
            || {
                while !waiter.data.parker.is_unparked() {
                    crate::sync::spin_loop();
                }
            },
            settle_later,
        )
    };
    // A record that calls back ([`super::TaskWaiter`]'s) is told of its
    // settlement either way: by the unpark that claimed it, or here, by the
    // one who took it out of its queue.
    // SAFETY: set before the record was first queued and never changed.
    let record = unsafe { waiter.data.waker_record.get() };
    if result == ParkResult::TimedOut && !record.is_null() {
        // SAFETY: we took the record out of its queue (no lock is held now),
        // so the queue's reference is ours to hand on.
        unsafe { super::waker::call_back(record, super::WaitOutcome::Cancelled) };
    }
    result
}
