//! `Semaphore`: a counting semaphore in one 32-bit word on the ParkingLot.
//!
//! State word:
//!
//! | bits  | name      | meaning                                                  |
//! |-------|-----------|----------------------------------------------------------|
//! | 0     | `PARKED`  | threads may be parked under the word's address           |
//! | 1     | `FAIR`    | the fairness timer fired: arrivals queue behind the parked threads |
//! | 2..32 | permits   | how many permits are free                                |
//!
//! - acquire(n): CAS permits → permits − n while at least n are free and
//!   `FAIR` is clear (barging); otherwise spin like [`crate::Lock`], set
//!   `PARKED`, and park while the word still holds fewer than n (checked under
//!   the queue lock). A parked thread woken to retry ignores `FAIR`.
//! - release(n): add n permits (Release); with `PARKED` set, wake every
//!   parked thread to retry (requests differ in size, so the waker cannot
//!   tell who will fit; each retries and parks again if it does not), and
//!   clear `PARKED` under the queue lock. If the queue's fairness timer says
//!   so (about once a millisecond, the Lock's rule), set `FAIR` so that new
//!   arrivals cannot take the permits before the woken threads try; the
//!   first woken thread to acquire, or to find it still does not fit, clears
//!   it; arrivals that would fit meanwhile yield instead of parking (up to
//!   the spin limit; the async form, which may not spin, does not wait).
//! - a waiter that times out as the last one clears `PARKED` and `FAIR`; one
//!   whose owner is reaped after it was woken clears `FAIR`.
//!
//! So the semaphore is FIFO-ish: arrivals barge, but about once a
//! millisecond the parked threads go first, and nobody who fits waits for
//! long behind a stream of barging arrivals.

use crate::blocking::{refuse_to_block, thread_may_block};
use crate::clock::{deadline_after, Instant};
use crate::lock::spin_limit;
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, ParkResult, DEFAULT_UNPARK_TOKEN};
use crate::sync::{self, AtomicU32, Ordering};
use core::time::Duration;

const PARKED: u32 = 1;
const FAIR: u32 = 1 << 1;
const ONE_PERMIT: u32 = 1 << 2;

/// What a waiter owes the others if its owner is reaped (a terminated
/// worker): as the last one queued, `PARKED`; woken, its turn under `FAIR`
/// (cleared, or arrivals would yield to a thread that never comes).
static SEMAPHORE_ABANDON: Abandon = Abandon {
    dequeued: |sem, was_last| owed_semaphore(sem).forget_parked_if_last(was_last),
    claimed: |sem, _| {
        owed_semaphore(sem)
            .state
            .fetch_and(!FAIR, Ordering::Relaxed);
    },
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
    /// If `n` exceeds [`MAX_PERMITS`] (it could never be satisfied), or if it
    /// would park on a thread that may not block.
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
        match self.add_permits(n) {
            Some(s) => {
                if s & PARKED != 0 {
                    self.wake_all();
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

    /// Whether threads may be parked waiting for permits (a snapshot).
    pub fn has_parked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (PARKED | FAIR) != 0
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Semaphore as usize
    }

    /// What a waiter on this semaphore owes if it is reaped.
    fn owed(&self) -> Owed {
        Owed {
            abandon: &SEMAPHORE_ABANDON,
            object: (self as *const Semaphore).cast(),
            with: 0,
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

    /// Takes `n` permits if free; `queued`: the caller was parked (or has
    /// deferred to the parked long enough), so `FAIR` does not hold it back
    /// (and it clears `FAIR` as it takes).
    #[inline]
    fn try_take(&self, n: u32, queued: bool) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s / ONE_PERMIT < n || (!queued && s & FAIR != 0) {
                return false;
            }
            let new = (s - n * ONE_PERMIT) & !FAIR;
            match self
                .state
                .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    #[cold]
    fn acquire_slow(&self, n: u32, deadline: Option<Instant>) -> bool {
        assert!(
            n <= MAX_PERMITS,
            "Semaphore::acquire: more permits than it can hold"
        );
        self.acquire_loop(n, spin_limit(), false, || {
            if !thread_may_block() {
                refuse_to_block("Semaphore::acquire without enough permits");
            }
            // SAFETY: the callbacks only read or edit this semaphore's word.
            let result = unsafe {
                parking_lot::park_owing(
                    self.key(),
                    || self.should_park(n),
                    || {},
                    |_, was_last| self.forget_parked_if_last(was_last),
                    deadline,
                    self.owed(),
                )
            };
            match result {
                ParkResult::Unparked(_) => Waited::Woken,
                ParkResult::Invalid => Waited::Invalid,
                ParkResult::TimedOut => Waited::Done(false),
            }
        })
    }

    /// The acquisition loop the blocking and the async forms share: take
    /// when the word lets us (`queued`: we were woken from the queue, so
    /// `FAIR` does not hold us back); spin up to `limit` yields while nobody
    /// is parked; then set `PARKED` and call `wait`.
    #[inline]
    fn acquire_loop(
        &self,
        n: u32,
        limit: u32,
        mut queued: bool,
        mut wait: impl FnMut() -> Waited,
    ) -> bool {
        let mut spins = 0;
        // Yields spent letting the woken go first; past `limit` (at once for
        // the async form, whose woken may be tasks of this very thread) we
        // take the permits anyway rather than wait for them without bound.
        let mut deferred = 0;
        loop {
            if self.try_take(n, queued || deferred >= limit) {
                return true;
            }
            let s = self.state.load(Ordering::Relaxed);
            if s & FAIR != 0 {
                if queued {
                    // We had our turn and do not fit: let arrivals in again.
                    self.state.fetch_and(!FAIR, Ordering::Relaxed);
                    queued = false;
                    continue;
                }
                if s / ONE_PERMIT >= n && deferred < limit {
                    // The woken threads go first; they clear FAIR at once.
                    deferred += 1;
                    sync::yield_now();
                    continue;
                }
            }
            if s / ONE_PERMIT >= n {
                continue;
            }
            if s & PARKED == 0 {
                if spins < limit {
                    spins += 1;
                    sync::yield_now();
                    continue;
                }
                if self
                    .state
                    .compare_exchange_weak(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
            }
            match wait() {
                Waited::Done(acquired) => return acquired,
                Waited::Woken => queued = true,
                Waited::Invalid => {}
            }
            spins = 0;
        }
    }

    /// What a waiter for `n` permits validates under the queue lock.
    #[inline]
    fn should_park(&self, n: u32) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & PARKED != 0 && s / ONE_PERMIT < n
    }

    /// A waiter gave up as the last one queued.
    #[inline]
    fn forget_parked_if_last(&self, was_last: bool) {
        if was_last {
            self.state.fetch_and(!(PARKED | FAIR), Ordering::Relaxed);
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
        unsafe { self.async_loop(n, false, waiter) }
    }

    /// Step 2: `true` if the permits are ours, `false` if queued (again).
    ///
    /// # Safety
    /// `waiter` was queued by `acquire_async_begin(n, ..)` on this semaphore.
    pub unsafe fn acquire_async_resume(&self, n: u32, waiter: &AsyncWaiter) -> bool {
        match waiter.poll() {
            // SAFETY: the record is settled, so it may be queued again.
            Some(_) => unsafe { self.async_loop(n, true, waiter) },
            None => false,
        }
    }

    /// Gives up: `true` if the permits were ours after all (the caller must
    /// release them), `false` if nothing is held. Leaves no queue entry.
    ///
    /// # Safety
    /// `waiter` was queued by `acquire_async_begin(n, ..)` on this semaphore
    /// and the attempt has not ended.
    pub unsafe fn acquire_async_cancel(&self, n: u32, waiter: &AsyncWaiter) -> bool {
        // SAFETY: the callback only edits this semaphore's word.
        let result = unsafe {
            parking_lot::cancel_async(self.key(), waiter, |_, was_last| {
                self.forget_parked_if_last(was_last)
            })
        };
        match result {
            // Woken to try: try once, so that the wake is not lost to nobody
            // (if we do not fit, whoever holds the permits will wake again).
            ParkResult::Unparked(_) => {
                let taken = self.try_take(n, true);
                if !taken {
                    self.state.fetch_and(!FAIR, Ordering::Relaxed);
                }
                taken
            }
            ParkResult::Invalid | ParkResult::TimedOut => false,
        }
    }

    /// # Safety
    /// As for `acquire_async_begin`.
    unsafe fn async_loop(&self, n: u32, queued: bool, waiter: &AsyncWaiter) -> bool {
        assert!(
            n <= MAX_PERMITS,
            "Semaphore::acquire: more permits than it can hold"
        );
        self.acquire_loop(n, 0, queued, || {
            // SAFETY: the validate callback is one load; `waiter` per our contract.
            let queued = unsafe {
                parking_lot::park_async_owing(
                    self.key(),
                    || self.should_park(n),
                    waiter,
                    self.owed(),
                )
            };
            if queued {
                Waited::Done(false)
            } else {
                Waited::Invalid
            }
        })
    }

    /// Wakes every parked thread to retry; sets `FAIR` if the timer says so.
    #[cold]
    fn wake_all(&self) {
        // SAFETY: the callback edits this semaphore's word only.
        unsafe {
            parking_lot::unpark_many(self.key(), usize::MAX, |r| {
                let fair = if r.did_unpark && r.time_to_be_fair {
                    FAIR
                } else {
                    0
                };
                let mut s = self.state.load(Ordering::Relaxed);
                loop {
                    let mut new = (s & !(PARKED | FAIR)) | fair;
                    if r.may_have_more {
                        new |= PARKED;
                    }
                    match self.state.compare_exchange_weak(
                        s,
                        new,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(now) => s = now,
                    }
                }
                DEFAULT_UNPARK_TOKEN
            });
        }
    }
}

/// How one wait of the acquisition loop ended.
enum Waited {
    /// Finished: acquired (`true`) or gave up.
    Done(bool),
    /// Woken from the queue: try again, ahead of arrivals.
    Woken,
    /// Did not wait (the word changed): try again.
    Invalid,
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

    #[test]
    fn a_reaped_waiter_woken_under_fair_leaves_no_fair_bit() {
        let s = Semaphore::new(0);
        let gone = AsyncWaiter::new();
        assert!(!unsafe { s.acquire_async_begin(1, &gone) });
        s.release(1); // wakes the record, whose owner is gone
                      // As if the fairness timer had fired on that wake.
        s.state.fetch_or(FAIR, Ordering::Relaxed);
        assert!(!s.try_acquire(1), "FAIR holds arrivals back");
        // SAFETY (test): nobody uses `gone` again.
        unsafe { crate::parking_lot::abandon_async(&gone) };
        assert!(!s.has_parked(), "{s:?}");
        assert!(s.try_acquire(1), "arrivals are not held back");
    }

    #[test]
    fn an_async_arrival_under_fair_takes_instead_of_waiting_for_the_woken() {
        // The woken may be tasks of this very thread: spinning would hang it.
        let s = Semaphore::new(1);
        s.state.fetch_or(FAIR, Ordering::Relaxed);
        let w = AsyncWaiter::new();
        assert!(unsafe { s.acquire_async_begin(1, &w) });
        assert_eq!(s.available(), 0);
        assert!(!s.has_parked());
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
        while crate::parking_lot::parked_count(s.key()) != 3 {
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
