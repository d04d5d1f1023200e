//! `Semaphore`: a counting semaphore in one 32-bit word on the ParkingLot.
//!
//! State word:
//!
//! | bits  | name      | meaning                                                  |
//! |-------|-----------|----------------------------------------------------------|
//! | 0     | `PARKED`  | threads may be parked under the word's address           |
//! | 1     | `FAIR`    | a turn is owed: only the waiter holding it may take permits |
//! | 2..32 | permits   | how many permits are free                                |
//!
//! - acquire(n): CAS permits → permits − n while at least n are free and
//!   `FAIR` is clear (barging); otherwise spin like [`crate::Lock`] (once per
//!   acquisition; not while a turn is owed, nor when more than one release
//!   must come first: a stream of small requests would keep a large one
//!   spinning with nobody owing it anything), set `PARKED`, and park while
//!   the word still holds fewer than n or `FAIR` (checked under the queue
//!   lock).
//! - release(n): add n permits (Release). With `FAIR` set, wake the turn's
//!   holder (parked alone under address + 1). Otherwise, with `PARKED` set:
//!   when the queue's fairness timer says so (about once a millisecond, the
//!   Lock's rule), wake only the oldest parked waiter, handing it **the
//!   turn** and setting `FAIR`; else wake every parked waiter to retry
//!   (requests differ in size, so the waker cannot tell who will fit).
//!   `PARKED` is cleared under the queue lock when nobody is left.
//! - the turn's holder takes its n permits as soon as they are free, before
//!   anyone else, clearing `FAIR` as it takes (then wakes the parked waiters
//!   if permits are left); while they are not free it parks under the word's
//!   address plus one, and every release wakes it. So a large request is not
//!   starved by a stream of small ones: about once a millisecond the oldest
//!   waiter is served whatever its size.
//! - a turn's holder that times out, is cancelled or is reaped gives the turn
//!   up: clears `FAIR` and wakes the parked waiters. A waiter that times out
//!   as the last one queued clears `PARKED`.
//!
//! So the semaphore is FIFO-ish: arrivals barge, but about once a
//! millisecond the oldest parked waiter goes first.

use crate::acquire::{self, AcquireState, Look, Next};
use crate::clock::{deadline_after, Instant};
use crate::diagnostics::Kind;
use crate::lock::spin_limit;
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, UnparkToken};
use crate::sync::{AtomicU32, Ordering};
use core::time::Duration;

const PARKED: u32 = 1;
const FAIR: u32 = 1 << 1;
const ONE_PERMIT: u32 = 1 << 2;

/// Unpark token: try again (behind a turn, if one is owed).
const TOKEN_RETRY: UnparkToken = 0;
/// Unpark token: the turn is yours.
const TOKEN_TURN: UnparkToken = 1;

/// What a waiter in the queue owes the others if its owner is reaped (a
/// terminated worker): as the last one queued, `PARKED`; a turn it was
/// handed and never took, the turn (given up, waking the others).
static SEMAPHORE_ABANDON: Abandon = Abandon {
    dequeued: |sem, was_last| owed_semaphore(sem).forget_parked_if_last(was_last),
    settle: |_| {},
    claimed: |sem, token| {
        if token == TOKEN_TURN {
            owed_semaphore(sem).give_up_turn();
        }
    },
};

/// What the turn's holder, parked under address + 1, owes if its owner is
/// reaped: the turn.
static SEMAPHORE_TURN_ABANDON: Abandon = Abandon {
    dequeued: |sem, _| owed_semaphore(sem).clear_fair(),
    settle: |sem| owed_semaphore(sem).give_up_turn(),
    claimed: |sem, _| owed_semaphore(sem).give_up_turn(),
};

/// The semaphore a reaped waiter was queued on.
fn owed_semaphore<'a>(object: *const ()) -> &'a Semaphore {
    // SAFETY: `Semaphore::owed` is the only maker of these debts, and a
    // semaphore outlives its waiters (park_owing's contract).
    unsafe { &*object.cast::<Semaphore>() }
}

/// The most permits a [`Semaphore`] holds.
pub const MAX_PERMITS: u32 = u32::MAX >> 2;

/// A counting semaphore: `acquire(n)` takes n permits, waiting until they
/// are free; `release(n)` returns them.
///
/// ```
/// let s = parklot::Semaphore::new(2);
/// s.acquire(2);
/// assert!(!s.try_acquire(1));
/// s.release(1);
/// assert!(s.try_acquire(1));
/// ```
#[repr(transparent)] // four bytes: C and the wasm module rely on it
pub struct Semaphore {
    state: AtomicU32,
}

impl Semaphore {
    /// A semaphore with `permits` free permits.
    ///
    /// # Panics
    /// If `permits` exceeds [`MAX_PERMITS`].
    #[cfg(not(loom))]
    pub const fn new(permits: u32) -> Semaphore {
        assert!(permits <= MAX_PERMITS, "Semaphore: too many permits");
        Semaphore {
            state: AtomicU32::new(permits * ONE_PERMIT),
        }
    }

    /// A semaphore with `permits` free permits.
    #[cfg(loom)]
    pub fn new(permits: u32) -> Semaphore {
        assert!(permits <= MAX_PERMITS, "Semaphore: too many permits");
        Semaphore {
            state: AtomicU32::new(permits * ONE_PERMIT),
        }
    }

    /// Takes `n` permits, spinning briefly and then parking until they are free.
    ///
    /// # Panics
    /// If `n` exceeds [`MAX_PERMITS`] (it could never be satisfied). (A
    /// thread that may not block waits awake instead of parking.)
    #[inline]
    pub fn acquire(&self, n: u32) {
        if !self.try_take(n, false) {
            self.acquire_slow(n, None);
        }
    }

    /// Takes `n` permits if they are free now.
    #[inline]
    pub fn try_acquire(&self, n: u32) -> bool {
        self.try_take(n, false)
    }

    /// Takes `n` permits, waiting at most `timeout`. Returns whether it did.
    pub fn try_acquire_for(&self, n: u32, timeout: Duration) -> bool {
        self.try_take(n, false) || self.acquire_slow(n, deadline_after(timeout))
    }

    /// Takes `n` permits, waiting until `deadline` at the latest.
    pub fn try_acquire_until(&self, n: u32, deadline: impl Into<Instant>) -> bool {
        self.try_take(n, false) || self.acquire_slow(n, Some(deadline.into()))
    }

    /// Returns `n` permits, waking parked threads if there are any.
    ///
    /// # Panics
    /// If the free permits would exceed [`MAX_PERMITS`].
    #[inline]
    pub fn release(&self, n: u32) {
        if !self.try_release(n) {
            too_many_permits();
        }
    }

    /// Returns `n` permits like [`release`](Self::release), unless the free
    /// permits would exceed [`MAX_PERMITS`]: then returns `false` and
    /// changes nothing.
    #[inline]
    pub fn try_release(&self, n: u32) -> bool {
        self.release_with(n, false)
    }

    /// Returns `n` permits and, if threads wait and no turn is owed, hands
    /// the turn to the oldest of them at once, whatever the fairness timer
    /// says: it is served next, whatever its size.
    ///
    /// # Panics
    /// If the free permits would exceed [`MAX_PERMITS`].
    pub fn release_fair(&self, n: u32) {
        if !self.release_with(n, true) {
            too_many_permits();
        }
    }

    #[inline]
    fn release_with(&self, n: u32, fair: bool) -> bool {
        match self.add_permits(n) {
            Some(s) => {
                if s & FAIR != 0 {
                    self.wake_turn();
                } else if s & PARKED != 0 {
                    self.wake_parked(fair);
                }
                true
            }
            None => false,
        }
    }

    /// How many permits are free (a snapshot).
    pub fn available(&self) -> u32 {
        self.state.load(Ordering::Relaxed) / ONE_PERMIT
    }

    /// Whether threads may be parked waiting for permits, or a turn is owed
    /// (a snapshot).
    pub fn has_parked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (PARKED | FAIR) != 0
    }

    /// The queue's address, or (`turn`) the turn's holder's.
    #[inline]
    fn key(&self, turn: bool) -> usize {
        self as *const Semaphore as usize + usize::from(turn)
    }

    /// What a waiter on this semaphore owes if it is reaped.
    fn owed(&self, turn: bool) -> Owed {
        Owed {
            abandon: if turn {
                &SEMAPHORE_TURN_ABANDON
            } else {
                &SEMAPHORE_ABANDON
            },
            object: (self as *const Semaphore).cast(),
            with: core::ptr::null(),
            kind: Kind::Semaphore,
        }
    }

    /// Adds `n` permits; returns the word after, or `None` (nothing
    /// changed) past [`MAX_PERMITS`].
    #[inline]
    fn add_permits(&self, n: u32) -> Option<u32> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let new = match n.checked_add(s / ONE_PERMIT) {
                Some(permits) if permits <= MAX_PERMITS => s + n * ONE_PERMIT,
                _ => return None,
            };
            match self
                .state
                .compare_exchange_weak(s, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return Some(new),
                Err(now) => s = now,
            }
        }
    }

    /// Takes `n` permits if free and nobody else's turn holds them back;
    /// `turn`: the caller holds the turn (it ends as it takes).
    #[inline]
    fn try_take(&self, n: u32, turn: bool) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s / ONE_PERMIT < n || (!turn && s & FAIR != 0) {
                return false;
            }
            let new = if turn {
                (s - n * ONE_PERMIT) & !FAIR
            } else {
                s - n * ONE_PERMIT
            };
            match self
                .state
                .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => {
                    if turn && new & PARKED != 0 && new / ONE_PERMIT > 0 {
                        // Waiters that fit may have parked behind our turn.
                        self.wake_parked_to_retry();
                    }
                    return true;
                }
                Err(now) => s = now,
            }
        }
    }

    #[cold]
    fn acquire_slow(&self, n: u32, deadline: Option<Instant>) -> bool {
        acquire::park_blocking(&self.waiting_taker(n), spin_limit(), deadline)
    }

    /// A request for `n` permits, as the acquire skeleton sees it.
    #[inline]
    fn taker(&self, n: u32) -> Taker<'_> {
        Taker { semaphore: self, n }
    }

    /// [`taker`](Self::taker) for a request that is to wait: one that could
    /// never be satisfied panics instead.
    #[inline]
    fn waiting_taker(&self, n: u32) -> Taker<'_> {
        assert!(
            n <= MAX_PERMITS,
            "Semaphore::acquire: more permits than it can hold"
        );
        self.taker(n)
    }

    /// What a waiter validates under its queue's lock before it sleeps: with
    /// the turn, that its permits are not free yet (and the turn is still
    /// owed); in the queue, that `PARKED` is set and it may not take.
    #[inline]
    fn should_park(&self, n: u32, turn: bool) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        if turn {
            s & FAIR != 0 && s / ONE_PERMIT < n
        } else {
            s & PARKED != 0 && (s / ONE_PERMIT < n || s & FAIR != 0)
        }
    }

    /// A waiter timed out (under its queue's lock): the last one queued
    /// clears `PARKED`; the turn's holder, `FAIR` (its caller then wakes the
    /// others, with no lock held).
    #[inline]
    fn timed_out(&self, turn: bool, was_last: bool) {
        if turn {
            self.clear_fair();
        } else {
            self.forget_parked_if_last(was_last);
        }
    }

    /// A waiter gave up as the last one queued.
    #[inline]
    fn forget_parked_if_last(&self, was_last: bool) {
        if was_last {
            self.state.fetch_and(!PARKED, Ordering::Relaxed);
        }
    }

    #[inline]
    fn clear_fair(&self) {
        self.state.fetch_and(!FAIR, Ordering::Relaxed);
    }

    /// The turn's holder leaves without taking: the turn ends, and the
    /// waiters it kept out are woken to retry.
    fn give_up_turn(&self) {
        let s = self.state.fetch_and(!FAIR, Ordering::Relaxed) & !FAIR;
        if s & PARKED != 0 {
            self.wake_parked_to_retry();
        }
    }

    /// Asynchronous acquire, for threads that may not block, step 1: takes
    /// `n` permits if free, else queues `waiter` with the parked threads and
    /// returns `false`. Never blocks. When the waiter's word turns 0, call
    /// [`acquire_async_resume`](Self::acquire_async_resume) (same `n`); to
    /// give up, [`acquire_async_cancel`](Self::acquire_async_cancel).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until this
    /// attempt ends (acquired, or cancelled).
    pub unsafe fn acquire_async_begin(&self, n: u32, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::queue_async(&self.waiting_taker(n), false, waiter) }
    }

    /// Step 2: `true` if the permits are ours, `false` if queued (again).
    ///
    /// # Safety
    /// `waiter` was queued by `acquire_async_begin(n, ..)` on this semaphore.
    pub unsafe fn acquire_async_resume(&self, n: u32, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::resume_async(&self.waiting_taker(n), waiter) }
    }

    /// Gives up: `true` if the permits were ours after all (the caller must
    /// release them), `false` if nothing is held. Leaves no queue entry.
    ///
    /// # Safety
    /// `waiter` was queued by `acquire_async_begin(n, ..)` on this semaphore
    /// and the attempt has not ended.
    pub unsafe fn acquire_async_cancel(&self, n: u32, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::cancel_async(&self.taker(n), waiter) }
    }

    /// Wakes the turn's holder if it is parked (a release under `FAIR`).
    #[cold]
    fn wake_turn(&self) {
        // SAFETY: the callback does nothing.
        unsafe { parking_lot::unpark_one(self.key(true), |_| TOKEN_TURN) };
    }

    /// A release found waiters parked: when the fairness timer says so (or
    /// `fair`), the oldest gets the turn; otherwise all are woken to retry.
    #[cold]
    fn wake_parked(&self, fair: bool) {
        let mut turn_given = false;
        // SAFETY: the callback edits this semaphore's word only.
        let r = unsafe {
            parking_lot::unpark_one(self.key(false), |r| {
                // Only this callback sets FAIR, always under this queue's
                // lock, so a turn already owed cannot be given twice.
                let owed = self.state.load(Ordering::Relaxed) & FAIR != 0;
                turn_given = r.did_unpark && (fair || r.time_to_be_fair) && !owed;
                let (set, clear) = match (turn_given, r.may_have_more) {
                    (true, true) => (FAIR, 0),
                    (true, false) => (FAIR, PARKED),
                    (false, true) => (0, 0),
                    (false, false) => (0, PARKED),
                };
                self.edit(set, clear);
                if turn_given {
                    TOKEN_TURN
                } else {
                    TOKEN_RETRY
                }
            })
        };
        if !turn_given && r.may_have_more {
            self.wake_parked_to_retry();
        }
    }

    /// Wakes every parked waiter to retry.
    #[cold]
    fn wake_parked_to_retry(&self) {
        // SAFETY: the callback edits this semaphore's word only.
        unsafe {
            parking_lot::unpark_many(self.key(false), usize::MAX, |r| {
                if !r.may_have_more {
                    self.edit(0, PARKED);
                }
                TOKEN_RETRY
            });
        }
    }

    /// Sets `set` and clears `clear` in one step.
    #[inline]
    fn edit(&self, set: u32, clear: u32) {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            match self.state.compare_exchange_weak(
                s,
                (s & !clear) | set,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
    }
}

/// A request for `n` permits on a [`Semaphore`], for the acquire skeleton.
/// The round is whether the waiter holds the turn: then `FAIR` does not
/// hold it back, and it waits alone under address + 1, never spinning.
struct Taker<'a> {
    semaphore: &'a Semaphore,
    n: u32,
}

// SAFETY: the callbacks only load or clear bits of the semaphore's word,
// and a semaphore outlives its waiters (its debts).
unsafe impl AcquireState for Taker<'_> {
    type Word = u32;
    type Round = bool;
    // Once per acquisition.
    const RESPIN_AFTER_WAKE: bool = false;

    #[inline]
    fn look(&self, turn: bool) -> Look<u32> {
        let (sem, n) = (self.semaphore, self.n);
        if sem.try_take(n, turn) {
            return Look::Acquired;
        }
        let s = sem.state.load(Ordering::Relaxed);
        if turn {
            return Look::Queue;
        }
        if s & FAIR == 0 && s / ONE_PERMIT >= n {
            return Look::Raced; // lost a race for permits that are there
        }
        if s & PARKED != 0 {
            return Look::Queue;
        }
        // Not while a turn is owed, nor when more than one release must
        // come first (module docs).
        Look::Unmarked {
            word: s,
            may_spin: s & FAIR == 0 && s / ONE_PERMIT + 1 >= n,
        }
    }

    #[inline]
    fn mark_parked(&self, seen: u32) -> bool {
        self.semaphore
            .state
            .compare_exchange_weak(seen, seen | PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    fn queue_key(&self, turn: bool) -> usize {
        self.semaphore.key(turn)
    }

    fn should_park(&self, turn: bool) -> bool {
        self.semaphore.should_park(self.n, turn)
    }

    fn left_queue(&self, turn: bool, was_last: bool) {
        self.semaphore.timed_out(turn, was_last);
    }

    fn debt(&self, turn: bool) -> Owed {
        self.semaphore.owed(turn)
    }

    fn woken(&self, turn: bool, token: UnparkToken, _: bool) -> Next<bool> {
        Next::Again(turn || token == TOKEN_TURN)
    }

    fn gave_up(&self, turn: bool) {
        if turn {
            self.semaphore.give_up_turn();
        }
    }

    fn cancelled_after_wake(&self, turn: bool, token: UnparkToken) -> bool {
        // Woken: try once, so that a turn or a wake is not lost to nobody
        // (if we do not fit, whoever holds the permits wakes again).
        let turn = turn || token == TOKEN_TURN;
        let taken = self.semaphore.try_take(self.n, turn);
        if !taken {
            self.gave_up(turn);
        }
        taken
    }

    fn round_of(&self, waiter: &AsyncWaiter) -> bool {
        waiter.queued_key() == self.semaphore.key(true)
    }
}

#[cold]
fn too_many_permits() -> ! {
    panic!("Semaphore::release: more permits than it can hold ({MAX_PERMITS})")
}

impl core::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Semaphore")
            .field("available", &self.available())
            .field("parked", &self.has_parked())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32 as StdAtomicU32;
    use std::sync::Arc;

    #[test]
    fn is_four_bytes_and_counts() {
        assert_eq!(core::mem::size_of::<Semaphore>(), 4);
        let s = Semaphore::new(3);
        assert!(s.try_acquire(2));
        assert!(!s.try_acquire(2));
        assert_eq!(s.available(), 1);
        s.release(2);
        assert_eq!(s.available(), 3);
        assert!(s.try_acquire(0));
    }

    #[test]
    #[should_panic(expected = "more permits than it can hold")]
    fn releasing_past_the_bound_panics() {
        Semaphore::new(MAX_PERMITS).release(1);
    }

    #[test]
    fn a_timed_acquire_gives_up_and_leaves_no_bits() {
        let s = Semaphore::new(1);
        let start = Instant::now();
        assert!(!s.try_acquire_for(2, Duration::from_millis(10)));
        assert!(Instant::now() - start >= Duration::from_millis(10));
        assert!(!s.has_parked());
        assert_eq!(s.available(), 1);
    }

    #[test]
    fn async_acquire_queues_then_takes_and_cancels_cleanly() {
        let s = Semaphore::new(1);
        let w = AsyncWaiter::new();
        assert!(
            unsafe { s.acquire_async_begin(1, &w) },
            "free: taken at once"
        );
        assert!(!unsafe { s.acquire_async_begin(1, &w) });
        assert!(!unsafe { s.acquire_async_cancel(1, &w) });
        assert!(!s.has_parked());
        assert!(!unsafe { s.acquire_async_begin(1, &w) });
        s.release(1);
        assert!(w.poll().is_some(), "the release woke the record");
        assert!(unsafe { s.acquire_async_resume(1, &w) });
        assert_eq!(s.available(), 0);
        s.release(1);
        assert!(!s.has_parked());
    }

    /// Waits until the fairness timer of `s`'s queue is due (it fires a
    /// random 0-1 ms after it last did), so that the next wake gives a turn.
    fn until_fair() {
        std::thread::sleep(Duration::from_micros(1500));
    }

    #[test]
    fn a_reaped_waiter_handed_the_turn_gives_it_up() {
        let s = Semaphore::new(0);
        let gone = AsyncWaiter::new();
        let other = AsyncWaiter::new();
        assert!(!unsafe { s.acquire_async_begin(1, &gone) });
        assert!(!unsafe { s.acquire_async_begin(1, &other) });
        until_fair();
        s.release(1); // hands the turn to the oldest, whose owner is gone
                      // (Not polled: polling is the owner taking the token.)
        assert!(other.poll().is_none(), "only the turn's holder is woken");
        assert!(!s.try_acquire(1), "the turn holds arrivals back");
        // SAFETY (test): nobody uses `gone` again.
        unsafe { crate::parking_lot::abandon_async(&gone) };
        assert_eq!(
            other.poll(),
            Some(TOKEN_RETRY),
            "giving the turn up woke the others"
        );
        assert!(unsafe { s.acquire_async_resume(1, &other) });
        assert!(!s.has_parked(), "{s:?}");
    }

    /// Queues a request for 2 (`big`), then one for 1 (`small`), on an
    /// empty semaphore, and releases one permit fairly: `big` gets the turn.
    fn big_and_small_queued_then_a_turn(s: &Semaphore, big: &AsyncWaiter, small: &AsyncWaiter) {
        // SAFETY: both records are new and outlive their waits (the callers').
        assert!(!unsafe { s.acquire_async_begin(2, big) });
        // SAFETY: as above.
        assert!(!unsafe { s.acquire_async_begin(1, small) });
        s.release_fair(1); // the turn, at once
    }

    #[test]
    fn a_turn_serves_a_large_request_before_small_ones() {
        let (s, big, small) = (Semaphore::new(0), AsyncWaiter::new(), AsyncWaiter::new());
        big_and_small_queued_then_a_turn(&s, &big, &small);
        assert_eq!(big.poll(), Some(TOKEN_TURN));
        // One permit is not enough: the turn's holder waits under address + 1.
        assert!(!unsafe { s.acquire_async_resume(2, &big) });
        assert!(
            !s.try_acquire(1),
            "an arrival may not take the turn's permit"
        );
        s.release(1);
        assert!(unsafe { s.acquire_async_resume(2, &big) }, "{s:?}");
        assert!(
            small.poll().is_none(),
            "no permit left for the small one yet"
        );
        s.release(1);
        assert!(unsafe { s.acquire_async_resume(1, &small) });
        assert!(!s.has_parked(), "{s:?}");
    }

    #[test]
    fn a_cancelled_turn_is_given_up() {
        let (s, big, small) = (Semaphore::new(0), AsyncWaiter::new(), AsyncWaiter::new());
        big_and_small_queued_then_a_turn(&s, &big, &small);
        assert!(
            !unsafe { s.acquire_async_resume(2, &big) },
            "queued under address + 1"
        );
        assert!(!unsafe { s.acquire_async_cancel(2, &big) });
        assert_eq!(small.poll(), Some(TOKEN_RETRY));
        assert!(unsafe { s.acquire_async_resume(1, &small) });
        assert!(!s.has_parked(), "{s:?}");
    }

    #[test]
    fn a_release_wakes_the_waiters_that_fit() {
        let s = Arc::new(Semaphore::new(0));
        let done = Arc::new(StdAtomicU32::new(0));
        let hs: Vec<_> = [3u32, 1, 2]
            .into_iter()
            .map(|n| {
                let (s, done) = (s.clone(), done.clone());
                std::thread::spawn(move || {
                    s.acquire(n);
                    done.fetch_add(n, Ordering::SeqCst);
                })
            })
            .collect();
        while crate::parking_lot::parked_count(s.key(false)) != 3 {
            std::thread::yield_now();
        }
        s.release(3); // enough for the 1 and the 2, or the 3
        while done.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        s.release(3);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), 6);
        assert_eq!(s.available(), 0);
        assert!(!s.has_parked());
    }
}
