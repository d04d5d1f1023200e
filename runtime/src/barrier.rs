//! `Barrier`: a reusable barrier on the ParkingLot, which breaks when a party
//! gives up, as Java's `CyclicBarrier` and Python's `threading.Barrier` do.
//!
//! State word (`state`; `parties` is fixed at construction):
//!
//! | bits   | name    | meaning                                               |
//! |--------|---------|-------------------------------------------------------|
//! | 0..16  | arrived | parties queued in this generation (below `parties`)  |
//! | 16..31 | (zero)  | always 0                                              |
//! | 31     | broken  | a party gave up: every wait fails until `reset`      |
//!
//! Every change of the word is made under the queue lock of the barrier's
//! key, together with the queue change it goes with, so that each is one
//! step to every other thread:
//! - an arrival that is not the last: `arrived + 1`, and the thread (or
//!   async record) is queued;
//! - the last arrival: `arrived = 0`, and every queued waiter is woken with
//!   "opened". A thread arriving after it is counted into the next
//!   generation: with more threads than parties, no arrival is lost and
//!   every generation has exactly one leader;
//! - a give-up (a timed wait's deadline passed, an async wait cancelled, a
//!   waiter's thread reaped as dead): `broken = 1, arrived = 0`; the queued
//!   waiters are then woken with "broken";
//! - `reset`: `0`, and every queued waiter is woken with "broken";
//! - an arrival at a broken barrier changes nothing and fails.
//!
//! A waiter learns its outcome from the token of the wake that claimed its
//! record (exact, however many generations pass before it runs), never
//! from the word. The queue is keyed by the barrier's address + 1, which no
//! futex-style wait uses (their words are aligned), so a `notify` of the
//! word never reaches a barrier's waiter.
//!
//! Why break: a party that leaves (its deadline passed, it died) will not
//! arrive, so the generation it was part of can never open; telling the
//! others at once beats leaving them to their own timeouts, or to hang. The
//! party whose deadline passed is told `TimedOut`, the others `Broken`, as
//! Java's `TimeoutException` and `BrokenBarrierException` (Python tells all
//! of them "broken"): the thread that timed out can tell its own timeout
//! from another party's failure.

use crate::clock::{deadline_after, Instant};
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, ParkResult, UnparkToken};
use crate::sync::{AtomicU32, Ordering};
use core::cell::Cell;
use core::time::Duration;

const ONE_ARRIVAL: u32 = 1;
const ARRIVED_MASK: u32 = 0xffff;
const BROKEN: u32 = 1 << 31;

/// The token of a wake by the last arrival: this waiter passed.
const TOKEN_OPENED: UnparkToken = 1;
/// The token of a wake by a give-up or a reset: the barrier broke.
const TOKEN_BROKEN: UnparkToken = 2;

/// The most threads a [`Barrier`] gathers.
pub const MAX_PARTIES: u32 = ARRIVED_MASK;

/// Whether this thread was the barrier's leader (the one whose arrival
/// opened it; exactly one per opening), as `std::sync::BarrierWaitResult`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// This thread opened the barrier.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

/// Why a barrier wait failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BarrierError {
    /// The barrier is broken: a party gave up (its timed wait expired, its
    /// async wait was cancelled, its thread died while it waited), or
    /// [`Barrier::reset`] ran while this thread waited. Waits fail at once
    /// until `reset`.
    Broken,
    /// This wait's deadline passed before the barrier opened: it broke the
    /// barrier, and the other parties are told [`Broken`](Self::Broken).
    TimedOut,
}

impl core::fmt::Display for BarrierError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BarrierError::Broken => {
                "the barrier is broken (a party timed out, gave up or died while waiting, or it was reset): reset it to use it again"
            }
            BarrierError::TimedOut => {
                "the wait timed out before every party arrived, and broke the barrier for the others: reset it to use it again"
            }
        })
    }
}

impl std::error::Error for BarrierError {}

/// What a reaped waiter (its thread, or its async record's owner, is gone)
/// owes the other parties: the barrier breaks, as if its wait had timed out.
static BARRIER_ABANDON: Abandon = Abandon {
    // SAFETY (both): `object` is the barrier the waiter queued on, which
    // outlives its waiters (the wait functions' contract).
    dequeued: |object, _| {
        unsafe { &*object.cast::<Barrier>() }.give_up();
    },
    settle: |object| unsafe { &*object.cast::<Barrier>() }.wake_broken(),
    // Woken already (opened, or broken): nobody waits for it any more.
    claimed: |_, _| {},
};

/// What an arrival found under the queue lock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Arrival {
    /// Counted in, and queued.
    Queued,
    /// The last arrival: the barrier opened.
    Opened,
    /// The barrier is broken; nothing changed.
    Broken,
    /// The count changed since it was read: arrive again.
    Again,
}

/// A barrier for `parties` threads, reusable: it opens each time that many
/// have called [`wait`](Barrier::wait), and an arrival after it opened counts
/// toward the next opening. It breaks if a waiting party gives up (see
/// [`BarrierError`]) until [`reset`](Barrier::reset).
///
/// ```
/// use std::sync::Arc;
/// let b = Arc::new(parklot::Barrier::new(2));
/// let b2 = b.clone();
/// let t = std::thread::spawn(move || b2.wait().is_leader());
/// let leaders = b.wait().is_leader() as u32 + t.join().unwrap() as u32;
/// assert_eq!(leaders, 1);
/// ```
#[repr(C)] // state, then parties: C and the wasm module rely on it
pub struct Barrier {
    state: AtomicU32,
    parties: u32,
}

impl Barrier {
    /// A barrier for `parties` threads (a barrier for 0 or 1 never waits).
    ///
    /// # Panics
    /// If `parties` exceeds [`MAX_PARTIES`].
    #[cfg(not(loom))]
    pub const fn new(parties: u32) -> Barrier {
        assert!(parties <= MAX_PARTIES, "Barrier: too many parties");
        Barrier {
            state: AtomicU32::new(0),
            parties,
        }
    }

    /// A barrier for `parties` threads.
    #[cfg(loom)]
    pub fn new(parties: u32) -> Barrier {
        assert!(parties <= MAX_PARTIES, "Barrier: too many parties");
        Barrier {
            state: AtomicU32::new(0),
            parties,
        }
    }

    /// Waits until `parties` threads have called `wait` in this generation.
    ///
    /// # Panics
    /// If the barrier is or becomes broken (use
    /// [`wait_checked`](Self::wait_checked) to handle that). (A thread that
    /// may not block waits awake instead of parking.)
    pub fn wait(&self) -> BarrierWaitResult {
        match self.wait_deadline(None) {
            Ok(r) => r,
            Err(e) => panic!("parklot: Barrier::wait: {e}"),
        }
    }

    /// [`wait`](Self::wait), returning `Err(BarrierError::Broken)` instead of
    /// panicking when the barrier is or becomes broken.
    pub fn wait_checked(&self) -> Result<BarrierWaitResult, BarrierError> {
        self.wait_deadline(None)
    }

    /// Waits at most `timeout`. `Err(TimedOut)` means it passed first, and
    /// this wait broke the barrier; `Err(Broken)`, that it was broken.
    pub fn wait_for(&self, timeout: Duration) -> Result<BarrierWaitResult, BarrierError> {
        self.wait_deadline(deadline_after(timeout))
    }

    /// Waits until `deadline` (a [`Instant`], or a `std::time::Instant`) at
    /// the latest; as [`wait_for`](Self::wait_for).
    pub fn wait_until(
        &self,
        deadline: impl Into<Instant>,
    ) -> Result<BarrierWaitResult, BarrierError> {
        self.wait_deadline(Some(deadline.into()))
    }

    /// Whether a party gave up (see [`BarrierError::Broken`]) since the last
    /// [`reset`](Self::reset).
    pub fn is_broken(&self) -> bool {
        self.state.load(Ordering::Acquire) & BROKEN != 0
    }

    /// Starts over: the barrier is not broken and nobody has arrived. Threads
    /// waiting at it now are told [`BarrierError::Broken`] (as Java's
    /// `CyclicBarrier.reset`).
    pub fn reset(&self) {
        // SAFETY: the closure only writes this barrier's word.
        unsafe {
            parking_lot::unpark_all_if(self.key(), || {
                self.state.store(0, Ordering::Relaxed);
                Some(TOKEN_BROKEN)
            })
        };
    }

    /// How many threads wait in the current generation (a snapshot).
    pub fn waiting(&self) -> u32 {
        self.state.load(Ordering::Relaxed) & ARRIVED_MASK
    }

    /// The wait, until `deadline` (`None`: no deadline).
    fn wait_deadline(&self, deadline: Option<Instant>) -> Result<BarrierWaitResult, BarrierError> {
        let gave_up = Cell::new(BarrierError::Broken);
        let parked = self.arrive(|validate| {
            // SAFETY: `validate` and `timed_out` only touch this barrier's
            // word; the barrier outlives the wait (it is borrowed for it).
            let r = unsafe {
                parking_lot::park_owing_spinning(
                    self.key(),
                    validate,
                    || {},
                    |_, _| gave_up.set(self.give_up()),
                    deadline,
                    self.owed(),
                )
            };
            (r != ParkResult::Invalid).then_some(r)
        });
        match parked {
            Err(done) => done,
            Ok(ParkResult::Unparked(token)) => outcome(token),
            Ok(_) => {
                self.wake_broken();
                Err(gave_up.get())
            }
        }
    }

    /// Asynchronous wait, for threads that may not block, step 1: arrives.
    /// Returns the outcome if there is one now (`Ok` as the leader: this
    /// arrival opened the barrier; `Err(Broken)`), or `None` with `waiter`
    /// queued: when its word turns 0, call
    /// [`wait_async_resume`](Self::wait_async_resume); to give up,
    /// [`wait_async_cancel`](Self::wait_async_cancel).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until the
    /// wait ends (resumed with an outcome, or cancelled); the barrier
    /// outlives the wait, even if the waiter's owner is reaped.
    pub unsafe fn wait_async_begin(
        &self,
        waiter: &AsyncWaiter,
    ) -> Option<Result<BarrierWaitResult, BarrierError>> {
        self.arrive(|validate| {
            // SAFETY: `validate` only touches this barrier's word; `waiter`
            // and the barrier per the caller's contract.
            unsafe { parking_lot::park_async_owing(self.key(), validate, waiter, self.owed()) }
                .then_some(())
        })
        .err()
    }

    /// Step 2: the outcome once a wake claimed `waiter` (`Ok`: passed, not
    /// the leader; `Err(Broken)`), `None` while it is still queued.
    ///
    /// # Safety
    /// `waiter` was queued by [`wait_async_begin`](Self::wait_async_begin)
    /// on this barrier and its wait has not ended.
    pub unsafe fn wait_async_resume(
        &self,
        waiter: &AsyncWaiter,
    ) -> Option<Result<BarrierWaitResult, BarrierError>> {
        waiter.poll().map(outcome)
    }

    /// Gives up an asynchronous wait, which breaks the barrier unless it
    /// opened or broke first: returns that outcome (`Ok`: passed;
    /// `Err(Broken)`), or `Err(TimedOut)` if this broke it. Leaves no queue
    /// entry.
    ///
    /// # Safety
    /// As for [`wait_async_resume`](Self::wait_async_resume).
    pub unsafe fn wait_async_cancel(
        &self,
        waiter: &AsyncWaiter,
    ) -> Result<BarrierWaitResult, BarrierError> {
        let gave_up = Cell::new(BarrierError::Broken);
        // SAFETY: the callback only touches this barrier's word; `waiter` per
        // the caller's contract.
        let r = unsafe {
            parking_lot::cancel_async(self.key(), waiter, |_, _| gave_up.set(self.give_up()))
        };
        match r {
            ParkResult::Unparked(token) => outcome(token),
            _ => {
                self.wake_broken();
                Err(gave_up.get())
            }
        }
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Barrier as usize + 1
    }

    /// What a waiter on this barrier owes if it is reaped.
    fn owed(&self) -> Owed {
        Owed {
            abandon: &BARRIER_ABANDON,
            object: (self as *const Barrier).cast(),
            with: core::ptr::null(),
            kind: crate::diagnostics::Kind::Barrier,
        }
    }

    /// One arrival. The last one opens the barrier (`Err(Ok(leader))`); any
    /// other is queued by `queue(validate)`, which must run `validate` under
    /// the queue lock and queue only if it returns true, and returns what
    /// `queue` returned then (`Ok`); `queue` returns `None` if it did not
    /// queue. An arrival at a broken barrier is `Err(Err(Broken))`.
    fn arrive<Q>(
        &self,
        mut queue: impl FnMut(&dyn Fn() -> bool) -> Option<Q>,
    ) -> Result<Q, Result<BarrierWaitResult, BarrierError>> {
        if self.parties <= 1 {
            return Err(Ok(BarrierWaitResult(true)));
        }
        loop {
            let found = Cell::new(Arrival::Again);
            if self.completes(self.state.load(Ordering::Relaxed)) {
                // SAFETY: the closure only touches this barrier's word.
                unsafe {
                    parking_lot::unpark_all_if(self.key(), || {
                        let s = self.state.load(Ordering::Relaxed);
                        if s & BROKEN != 0 {
                            found.set(Arrival::Broken);
                        } else if self.completes(s) {
                            self.state.store(0, Ordering::Relaxed);
                            found.set(Arrival::Opened);
                            return Some(TOKEN_OPENED);
                        }
                        None
                    })
                };
            } else {
                let queued = queue(&|| {
                    let s = self.state.load(Ordering::Relaxed);
                    if s & BROKEN != 0 {
                        found.set(Arrival::Broken);
                    } else if !self.completes(s) {
                        self.state.store(s + ONE_ARRIVAL, Ordering::Relaxed);
                        found.set(Arrival::Queued);
                        return true;
                    }
                    false
                });
                if let Some(q) = queued {
                    debug_assert_eq!(found.get(), Arrival::Queued);
                    return Ok(q);
                }
            }
            match found.get() {
                Arrival::Opened => return Err(Ok(BarrierWaitResult(true))),
                Arrival::Broken => return Err(Err(BarrierError::Broken)),
                Arrival::Queued | Arrival::Again => {}
            }
        }
    }

    /// Whether an arrival at state `s` (not broken) completes the count.
    #[inline]
    fn completes(&self, s: u32) -> bool {
        (s & ARRIVED_MASK) + ONE_ARRIVAL >= self.parties
    }

    /// A queued waiter leaves before the barrier opened (its deadline, a
    /// cancel, its reaping), under the queue lock: the barrier breaks.
    /// `TimedOut` if this broke it, `Broken` if it was already.
    fn give_up(&self) -> BarrierError {
        let s = self.state.load(Ordering::Relaxed);
        self.state.store(BROKEN, Ordering::Relaxed);
        if s & BROKEN != 0 {
            BarrierError::Broken
        } else {
            BarrierError::TimedOut
        }
    }

    /// After a give-up: wakes the waiters of the broken barrier. While it is
    /// broken nobody queues, so whoever is queued waited in the generation
    /// that broke; if it was reset meanwhile, the reset woke them.
    fn wake_broken(&self) {
        // SAFETY: the closure only reads this barrier's word.
        unsafe {
            parking_lot::unpark_all_if(self.key(), || {
                (self.state.load(Ordering::Relaxed) & BROKEN != 0).then_some(TOKEN_BROKEN)
            })
        };
    }
}

/// What a wake's token tells the waiter it claimed. Only this module
/// unparks the barrier's key; anything but "opened" (a `cancel_range` over
/// the barrier's memory, freed) ends the wait as broken, touching nothing.
fn outcome(token: UnparkToken) -> Result<BarrierWaitResult, BarrierError> {
    if token == TOKEN_OPENED {
        Ok(BarrierWaitResult(false))
    } else {
        Err(BarrierError::Broken)
    }
}

impl core::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Barrier")
            .field("parties", &self.parties)
            .field("waiting", &self.waiting())
            .field("broken", &self.is_broken())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// Spins until `n` waiters are queued on `b`.
    fn until_queued(b: &Barrier, n: usize) {
        while parking_lot::parked_count(b.key()) < n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn one_leader_per_opening_and_reusable() {
        let threads = if cfg!(miri) { 3 } else { 6 };
        let rounds = if cfg!(miri) { 3 } else { 200 };
        let b = Arc::new(Barrier::new(threads));
        let leaders = Arc::new(AtomicUsize::new(0));
        let phase = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (b, leaders, phase) = (b.clone(), leaders.clone(), phase.clone());
                std::thread::spawn(move || {
                    for round in 0..rounds {
                        // Nobody passes the barrier before everyone reached it.
                        assert_eq!(phase.load(Ordering::SeqCst) / threads as usize, round);
                        phase.fetch_add(1, Ordering::SeqCst);
                        if b.wait().is_leader() {
                            leaders.fetch_add(1, Ordering::SeqCst);
                        }
                        b.wait();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(leaders.load(Ordering::SeqCst), rounds);
        assert_eq!(b.waiting(), 0);
    }

    /// Issue 29: 4 threads on a barrier for 2, taking turns from one pool of
    /// `2 * openings` arrivals (fixed rounds per thread could leave a slow
    /// thread with nobody left to meet, with any barrier). Every arrival is
    /// counted into some generation: exactly `openings` leaders, and nobody
    /// is left waiting (a watchdog fails the test instead of hanging).
    #[test]
    fn extra_arrivals_go_into_the_next_generation() {
        let openings = if cfg!(miri) { 8 } else { 12_000 };
        let threads = 4;
        let b = Arc::new(Barrier::new(2));
        let tickets = Arc::new(AtomicUsize::new(0));
        let leaders = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for _ in 0..threads {
            let (b, tickets, leaders) = (b.clone(), tickets.clone(), leaders.clone());
            let done_tx = done_tx.clone();
            std::thread::spawn(move || {
                while tickets.fetch_add(1, Ordering::SeqCst) < 2 * openings {
                    if b.wait().is_leader() {
                        leaders.fetch_add(1, Ordering::SeqCst);
                    }
                }
                done_tx.send(()).unwrap();
            });
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        for finished in 0..threads {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                done_rx.recv_timeout(left).is_ok(),
                "{} of {threads} threads still waiting after 30 s; {} leaders of {openings} expected",
                threads - finished,
                leaders.load(Ordering::SeqCst),
            );
        }
        assert_eq!(leaders.load(Ordering::SeqCst), openings);
        assert_eq!(b.waiting(), 0);
    }

    #[test]
    fn a_timed_wait_times_out_and_breaks_the_barrier_until_reset() {
        let b = Barrier::new(2);
        let start = Instant::now();
        assert_eq!(
            b.wait_for(Duration::from_millis(20)),
            Err(BarrierError::TimedOut)
        );
        assert!(start.remaining() == Duration::ZERO);
        assert!(Instant::now().saturating_duration_since(start) >= Duration::from_millis(20));
        assert!(b.is_broken());
        assert_eq!(b.waiting(), 0);
        // Broken: every wait fails at once, whatever its deadline.
        assert_eq!(
            b.wait_for(Duration::from_secs(3600)),
            Err(BarrierError::Broken)
        );
        assert_eq!(b.wait_checked(), Err(BarrierError::Broken));
        assert_eq!(parking_lot::parked_count(b.key()), 0);
        b.reset();
        assert!(!b.is_broken());
        std::thread::scope(|s| {
            let t = s.spawn(|| b.wait_for(Duration::from_secs(60)));
            let me = b.wait_until(Instant::now() + Duration::from_secs(60));
            let them = t.join().unwrap();
            assert_eq!(
                me.unwrap().is_leader() as u32 + them.unwrap().is_leader() as u32,
                1
            );
        });
    }

    /// Queues `w` and then a blocked thread at `b` (of more than two parties),
    /// runs `break_it`, which breaks the barrier, and checks that the blocked
    /// thread was told so.
    fn broken_while_waited(b: &Barrier, w: &AsyncWaiter, break_it: impl FnOnce()) {
        // SAFETY (test): `w` outlives its wait, which the caller ends.
        assert_eq!(unsafe { b.wait_async_begin(w) }, None);
        std::thread::scope(|s| {
            let blocked = s.spawn(|| b.wait_checked());
            until_queued(b, 2);
            break_it();
            assert_eq!(blocked.join().unwrap(), Err(BarrierError::Broken));
        });
    }

    #[test]
    fn a_timeout_breaks_the_barrier_for_blocking_and_async_waiters() {
        let b = Barrier::new(4);
        let w = AsyncWaiter::new();
        broken_while_waited(&b, &w, || {
            assert_eq!(
                b.wait_for(Duration::from_millis(10)),
                Err(BarrierError::TimedOut)
            );
        });
        assert_eq!(
            unsafe { b.wait_async_resume(&w) },
            Some(Err(BarrierError::Broken))
        );
        // A later arrival, async too, fails at once.
        assert_eq!(
            unsafe { b.wait_async_begin(&w) },
            Some(Err(BarrierError::Broken))
        );
        assert_eq!(parking_lot::parked_count(b.key()), 0);
    }

    #[test]
    fn reset_breaks_the_waiters_present_and_starts_over() {
        let b = Barrier::new(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| b.wait_checked());
            until_queued(&b, 1);
            assert_eq!(b.waiting(), 1);
            b.reset();
            assert_eq!(waiter.join().unwrap(), Err(BarrierError::Broken));
        });
        assert!(!b.is_broken());
        assert_eq!(b.waiting(), 0);
        std::thread::scope(|s| {
            s.spawn(|| b.wait());
            b.wait();
        });
    }

    #[test]
    fn a_reaped_waiter_breaks_the_barrier() {
        let b = Barrier::new(3);
        let w = AsyncWaiter::new();
        // SAFETY (test): `w`'s "owner" stops using it before it is reaped.
        broken_while_waited(&b, &w, || unsafe { parking_lot::abandon_async(&w) });
        assert!(b.is_broken());
        assert_eq!(parking_lot::parked_count(b.key()), 0);
    }

    #[test]
    fn an_async_wait_is_released_by_the_last_arrival_and_a_cancel_breaks_it() {
        let b = Barrier::new(2);
        let w = AsyncWaiter::new();
        // SAFETY (test): `w` outlives every wait, each ended before the next.
        unsafe {
            assert_eq!(b.wait_async_begin(&w), None);
            assert_eq!(b.wait_async_resume(&w), None, "not open yet");
            assert!(b.wait().is_leader());
            assert_eq!(b.wait_async_resume(&w), Some(Ok(BarrierWaitResult(false))));
            // Opened before the cancel: the cancel reports it passed.
            assert_eq!(b.wait_async_begin(&w), None);
            assert!(b.wait().is_leader());
            assert_eq!(b.wait_async_cancel(&w), Ok(BarrierWaitResult(false)));
            // Cancelled while queued: it leaves, and the barrier breaks.
            assert_eq!(b.wait_async_begin(&w), None);
            assert_eq!(b.wait_async_cancel(&w), Err(BarrierError::TimedOut));
            assert_eq!(parking_lot::parked_count(b.key()), 0);
            assert_eq!(b.wait_checked(), Err(BarrierError::Broken));
            b.reset();
            // The last arrival may be an async one: it leads.
            std::thread::scope(|s| {
                let t = s.spawn(|| b.wait());
                until_queued(&b, 1);
                assert_eq!(b.wait_async_begin(&w), Some(Ok(BarrierWaitResult(true))));
                assert!(!t.join().unwrap().is_leader());
            });
        }
    }

    #[test]
    fn wait_panics_on_a_broken_barrier() {
        let b = Barrier::new(2);
        assert_eq!(b.wait_for(Duration::ZERO), Err(BarrierError::TimedOut));
        let r = std::panic::catch_unwind(|| b.wait());
        assert!(r.is_err());
    }

    #[test]
    fn a_barrier_for_one_never_waits() {
        let b = Barrier::new(1);
        assert!(b.wait().is_leader() && b.wait().is_leader());
        assert!(Barrier::new(0).wait().is_leader());
        assert!(b.wait_for(Duration::ZERO).unwrap().is_leader());
    }
}
