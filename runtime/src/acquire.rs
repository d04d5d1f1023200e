//! The acquire skeleton: "barge, spin, set the parked bit, queue, take a
//! hand-off or give up", written once for every primitive that waits for a
//! state word to let it in (WebKit's `LockAlgorithm`, parametrized here by
//! a trait instead of template arguments).
//!
//! A primitive says what its word means by implementing [`AcquireState`]:
//! one look at the word (take it if it lets us in, else say whether the
//! parked bit is set and whether spinning may help), how to set the parked
//! bit, where it queues, what it validates under the queue lock, what a
//! waiter that gives up clears there, what it owes if reaped, and what a
//! wake's token means. [`Lock`](crate::Lock), the [`RawRwLock`]'s classes,
//! the [`Semaphore`] and the [`Once`]'s waiters implement it.
//!
//! The skeleton does the rest, in one place each:
//! - [`acquire_with`]: the loop (barging, the spin budget, setting the bit);
//! - [`park_blocking`]: a thread's wait (park with deadline, the timeout's
//!   cleanup under the queue lock, the token's meaning); a thread that may
//!   not block is queued the same way and waits awake (`sys`'s parkers);
//! - [`queue_async`], [`resume_async`], [`cancel_async`]: the same step for
//!   an async record, which never spins.
//!
//! `park_blocking` is the one place a thread of any primitive goes to sleep
//! on a held resource: a wait-for graph belongs there.
//!
//! [`RawRwLock`]: crate::RawRwLock
//! [`Semaphore`]: crate::Semaphore
//! [`Once`]: crate::Once

use crate::clock::Instant;
use crate::diagnostics::{self, Kind};
use crate::parking_lot::{self, AsyncWaiter, Owed, ParkResult, UnparkToken};
use crate::sync;

/// What one look at the word found ([`AcquireState::look`]).
pub(crate) enum Look<W> {
    /// Taken: the caller holds what it asked for.
    Acquired,
    /// The word changed under a CAS that it would still allow: look again.
    Raced,
    /// May not enter, and the parked bit says the queue is known (or the
    /// waiter queues without it): queue now.
    Queue,
    /// May not enter and the parked bit is clear: spin if `may_spin` and the
    /// budget allows, else set the bit against `word`.
    Unmarked {
        /// The word seen, for the CAS that sets the parked bit.
        word: W,
        /// Whether yielding and retrying may get it cheaply.
        may_spin: bool,
    },
}

/// How one wait ended.
pub(crate) enum Next<R> {
    /// Return: whether it is ours.
    Done(bool),
    /// Go around with this round.
    Again(R),
}

/// A primitive's state word, as the skeleton sees it.
///
/// # Safety
/// `should_park` and `left_queue` run under a bucket lock: they must not
/// panic nor call into the ParkingLot. `debt`'s object outlives every
/// waiter that owes it (the primitive outlives its waiters).
pub(crate) unsafe trait AcquireState {
    /// The word's integer type.
    type Word: Copy;
    /// What a waiter carries from one round to the next: the `PARKED` bit a
    /// woken Lock waiter carries, a semaphore's turn, or nothing. An
    /// acquisition (and an async resume) starts with the default.
    type Round: Copy + Default;
    /// Whether a wake renews the spin budget (WebKit's lock: yes; the
    /// rwlock and the semaphore spin once per acquisition).
    const RESPIN_AFTER_WAKE: bool = true;
    /// Whether a woken waiter's token stays owed until it has acted on it
    /// ([`parking_lot::park_owing_until_settled`], `AsyncWaiter::poll_owing`):
    /// then [`park_blocking`] and [`resume_async`] leave the debt on record,
    /// and their caller settles it once the acquisition is over and recorded
    /// where a reaper looks ([`parking_lot::settled`], `AsyncWaiter::settled`).
    const SETTLE_LATER: bool = false;

    /// One look at the word, and one CAS if it lets us in.
    fn look(&self, round: Self::Round) -> Look<Self::Word>;
    /// Sets the parked bit by CAS against `seen`; false if the word changed.
    fn mark_parked(&self, seen: Self::Word) -> bool;
    /// The round a waiter queues with, once the word says parked.
    fn queued(round: Self::Round) -> Self::Round {
        round
    }
    /// The address this waiter queues under.
    fn queue_key(&self, round: Self::Round) -> usize;
    /// Under the queue lock: whether to sleep (the bit is set and we still
    /// may not enter). Must not panic nor call the ParkingLot.
    fn should_park(&self, round: Self::Round) -> bool;
    /// Under the queue lock, for a waiter leaving without a wake (timeout,
    /// cancel): `was_last` says nobody else is queued. Must not panic nor
    /// call the ParkingLot.
    fn left_queue(&self, round: Self::Round, was_last: bool);
    /// What this waiter owes the others if its owner is reaped.
    fn debt(&self, round: Self::Round) -> Owed;
    /// What the wake's `token` means: the hand-off (`Done(true)`), or
    /// compete again. `blocking`: a thread woke (else an async record).
    fn woken(&self, round: Self::Round, token: UnparkToken, blocking: bool) -> Next<Self::Round>;
    /// After a timeout or a cancel, no queue lock held: pass on what our
    /// leaving may owe (a turn, a bit that kept others out).
    fn gave_up(&self, _round: Self::Round) {}
    /// An async attempt cancelled after a wake with `token`: use it, so
    /// nothing is lost; true if the caller holds it now.
    fn cancelled_after_wake(&self, round: Self::Round, token: UnparkToken) -> bool;
    /// What a waiter here waits for, for the diagnostics.
    fn kind(&self) -> Kind {
        Kind::Unknown
    }
    /// The address that names the primitive in the diagnostics' graph (the
    /// one its holds are recorded under).
    fn resource(&self) -> usize {
        self.queue_key(Self::Round::default())
    }
    /// The round of the attempt `waiter` is queued for (for a cancel).
    fn round_of(&self, _waiter: &AsyncWaiter) -> Self::Round {
        Self::Round::default()
    }
}

/// The acquisition loop: enter whenever the word lets us; while the parked
/// bit is clear, yield and retry up to `limit` times; then set the bit and
/// call `wait`, which queues us and says what next.
#[inline]
pub(crate) fn acquire_with<S: AcquireState>(
    state: &S,
    limit: u32,
    mut round: S::Round,
    mut wait: impl FnMut(S::Round) -> Next<S::Round>,
) -> bool {
    let mut spins = 0;
    loop {
        match state.look(round) {
            Look::Acquired => return true,
            Look::Raced => continue,
            Look::Queue => {}
            Look::Unmarked { word, may_spin } => {
                if may_spin && spins < limit {
                    spins += 1;
                    sync::yield_now();
                    continue;
                }
                if !state.mark_parked(word) {
                    continue;
                }
            }
        }
        // The word says parked: whoever clears the bit answers for the queue.
        match wait(S::queued(round)) {
            Next::Done(acquired) => return acquired,
            Next::Again(next) => round = next,
        }
        if S::RESPIN_AFTER_WAKE {
            spins = 0;
        }
    }
}

/// The blocking acquisition: spins up to `limit` yields, then parks until
/// the state is ours or `deadline` passes. Returns whether it is ours. With
/// `S::SETTLE_LATER`, a wake's debt stays on record (the caller settles it):
/// a thread that dies after its wake, on its way back to the word (a loop's
/// back edge, a call's prologue: where engines stop a thread), has its token
/// passed on by its reaper.
#[inline]
pub(crate) fn park_blocking<S: AcquireState>(
    state: &S,
    limit: u32,
    deadline: Option<Instant>,
) -> bool {
    acquire_with(state, limit, S::Round::default(), |round| {
        // The wait-for graph's edge, while diagnostics are on: refused if it
        // closes a cycle (then we never queued, and give up as on a timeout).
        let tracked = diagnostics::tracking();
        if tracked && diagnostics::will_wait(state.resource(), state.kind(), 0).is_err() {
            state.gave_up(round);
            return Next::Done(false);
        }
        let key = state.queue_key(round);
        let validate = || state.should_park(round);
        let timed_out = |_, was_last| state.left_queue(round, was_last);
        let owed = state.debt(round);
        // SAFETY: the callbacks and `owed` keep AcquireState's contract.
        let result = unsafe {
            if S::SETTLE_LATER {
                parking_lot::park_owing_until_settled(
                    key,
                    validate,
                    || {},
                    timed_out,
                    deadline,
                    owed,
                )
            } else {
                parking_lot::park_owing(key, validate, || {}, timed_out, deadline, owed)
            }
        };
        if tracked {
            diagnostics::wait_ended(0);
        }
        match result {
            ParkResult::Unparked(token) => state.woken(round, token, true),
            ParkResult::Invalid => Next::Again(round),
            ParkResult::TimedOut => {
                state.gave_up(round);
                Next::Done(false)
            }
        }
    })
}

/// Async step 1 (and each retry): takes the state if it lets us in, else
/// queues `waiter` in the same queue as parked threads and returns `false`.
/// Never spins: a thread that may not block must not wait here.
///
/// # Safety
/// `waiter` is not queued, and neither moves nor is dropped until this
/// attempt ends (acquired, or cancelled).
pub(crate) unsafe fn queue_async<S: AcquireState>(
    state: &S,
    round: S::Round,
    waiter: &AsyncWaiter,
) -> bool {
    // A refusal from before (a timed blocking wait's) must not be taken
    // for this attempt's.
    let _ = async_refused();
    acquire_with(state, 0, round, |round| {
        // As in `park_blocking`; a refused waiter is not queued, and its
        // caller learns it from `diagnostics::take_deadlock`.
        if diagnostics::tracking()
            && diagnostics::will_wait(state.resource(), state.kind(), record_id(waiter)).is_err()
        {
            state.gave_up(round);
            return Next::Done(false);
        }
        // SAFETY: the callback and the debt keep AcquireState's contract;
        // `waiter` per ours.
        let queued = unsafe {
            parking_lot::park_async_owing(
                state.queue_key(round),
                || state.should_park(round),
                waiter,
                state.debt(round),
            )
        };
        if queued {
            Next::Done(false)
        } else {
            if diagnostics::tracking() {
                diagnostics::wait_ended(record_id(waiter));
            }
            Next::Again(round)
        }
    })
}

/// Async step 2, after the waiter's word turned 0 (or a wakeup that may be
/// spurious): `true` if the state is ours, `false` if the waiter is queued
/// (again) and should wait for its word once more. With `S::SETTLE_LATER`
/// the wake's debt stays on the record until the caller calls
/// `waiter.settled()`, as for [`park_blocking`].
///
/// # Safety
/// `waiter` is the one [`queue_async`] queued on this state.
pub(crate) unsafe fn resume_async<S: AcquireState>(state: &S, waiter: &AsyncWaiter) -> bool {
    let polled = if S::SETTLE_LATER {
        waiter.poll_owing()
    } else {
        waiter.poll()
    };
    let Some(token) = polled else {
        return false;
    };
    if diagnostics::tracking() {
        diagnostics::wait_ended(record_id(waiter));
    }
    match state.woken(S::Round::default(), token, false) {
        Next::Done(acquired) => acquired,
        // SAFETY: the record is settled, so it may be queued again.
        Next::Again(round) => unsafe { queue_async(state, round, waiter) },
    }
}

/// Gives up an async attempt: `true` if the state was ours after all (the
/// caller must release it), `false` if nothing is held. Leaves no queue entry.
///
/// # Safety
/// `waiter` is the one [`queue_async`] queued on this state, and the
/// attempt has not ended.
pub(crate) unsafe fn cancel_async<S: AcquireState>(state: &S, waiter: &AsyncWaiter) -> bool {
    let round = state.round_of(waiter);
    if diagnostics::tracking() {
        diagnostics::wait_ended(record_id(waiter));
    }
    // SAFETY: the callback keeps AcquireState's contract; the record was
    // queued under `queue_key(round)` by this attempt (our contract).
    let result = unsafe {
        parking_lot::cancel_async(state.queue_key(round), waiter, |_, was_last| {
            state.left_queue(round, was_last)
        })
    };
    match result {
        ParkResult::Unparked(token) => state.cancelled_after_wake(round, token),
        ParkResult::Invalid | ParkResult::TimedOut => {
            state.gave_up(round);
            false
        }
    }
}

/// An async record's name in the wait-for graph (a blocked thread's is 0).
fn record_id(waiter: &AsyncWaiter) -> usize {
    waiter as *const AsyncWaiter as usize
}

/// Whether an async step that returned `false` was refused by deadlock
/// detection (the waiter is not queued) rather than queued: the error, once.
pub(crate) fn async_refused() -> Option<diagnostics::DeadlockError> {
    if diagnostics::tracking() {
        diagnostics::take_deadlock()
    } else {
        None
    }
}
