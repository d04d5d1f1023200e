//! `Barrier`: a reusable barrier on the ParkingLot.
//!
//! State word (`state`; `parties` is fixed at construction):
//!
//! | bits   | name       | meaning                                           |
//! |--------|------------|---------------------------------------------------|
//! | 0..16  | arrived    | threads waiting in the current generation         |
//! | 16..32 | generation | how many times the barrier opened (wrapping)      |
//!
//! wait: add one arrival. The thread that completes the count is the
//! leader: it stores the next generation with no arrivals (Release) and
//! wakes everyone parked under the word's address. The others park while
//! the generation is still theirs (checked under the queue lock), so a
//! wakeup cannot be missed, and a wakeup meant for another generation is
//! seen as one (the generation moved). A generation wraps after 65536
//! openings; a waiter would have to sleep through all of them to be fooled.

use crate::blocking::{refuse_to_block, thread_may_block};
use crate::parking_lot::{self, AsyncWaiter};
use crate::sync::{AtomicU32, Ordering};

const ONE_ARRIVAL: u32 = 1;
const ARRIVED_MASK: u32 = 0xffff;
const ONE_GENERATION: u32 = 1 << 16;

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

/// A barrier for `parties` threads, reusable: it opens each time that many
/// have called [`wait`](Barrier::wait). Each generation expects exactly
/// `parties` threads: one more, arriving before the last leaves, is not
/// counted into the next.
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
    /// If it would park on a thread that may not block.
    pub fn wait(&self) -> BarrierWaitResult {
        // AcqRel: the leader acquires every arrival before it, and each
        // arrival releases what it did before the barrier.
        let s = self.state.fetch_add(ONE_ARRIVAL, Ordering::AcqRel);
        if (s & ARRIVED_MASK) + 1 >= self.parties {
            self.open(s);
            return BarrierWaitResult(true);
        }
        let generation = s & !ARRIVED_MASK;
        self.wait_slow(generation);
        BarrierWaitResult(false)
    }

    /// Asynchronous wait, for threads that may not block, step 1: arrives,
    /// and returns `Ok(is_leader)` if the barrier opened (this arrival
    /// completed it, or it opened meanwhile), or `Err(generation)` with
    /// `waiter` queued: when its word turns 0, call
    /// [`wait_async_resume`](Self::wait_async_resume) with that generation.
    /// An arrival cannot be taken back; to stop watching, call
    /// [`wait_async_abandon`](Self::wait_async_abandon).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until the
    /// wait ends (passed, or abandoned).
    pub unsafe fn wait_async_begin(&self, waiter: &AsyncWaiter) -> Result<bool, u32> {
        let s = self.state.fetch_add(ONE_ARRIVAL, Ordering::AcqRel);
        if (s & ARRIVED_MASK) + 1 >= self.parties {
            self.open(s);
            return Ok(true);
        }
        let generation = s & !ARRIVED_MASK;
        // SAFETY: forwarded from the caller.
        if unsafe { self.queue_async(generation, waiter) } {
            Err(generation)
        } else {
            Ok(false)
        }
    }

    /// Step 2: `true` once the barrier opened past `generation` (this thread
    /// is through, not the leader), `false` if the waiter is queued again.
    ///
    /// # Safety
    /// `waiter` was queued by `wait_async_begin` (or this) for `generation`.
    pub unsafe fn wait_async_resume(&self, generation: u32, waiter: &AsyncWaiter) -> bool {
        if waiter.poll().is_none() {
            return false;
        }
        // SAFETY: the record is settled, so it may be queued again.
        !unsafe { self.queue_async(generation, waiter) }
    }

    /// Stops an asynchronous wait (its arrival still counts). Leaves no
    /// queue entry.
    ///
    /// # Safety
    /// `waiter` was queued by `wait_async_begin`/`_resume` and is not settled.
    pub unsafe fn wait_async_abandon(&self, waiter: &AsyncWaiter) {
        // SAFETY: forwarded from the caller; the callback does nothing.
        unsafe { parking_lot::cancel_async(self.key(), waiter, |_, _| {}) };
    }

    /// Queues `waiter` if the barrier is still in `generation`; whether it did.
    ///
    /// # Safety
    /// As for `wait_async_begin`.
    unsafe fn queue_async(&self, generation: u32, waiter: &AsyncWaiter) -> bool {
        // SAFETY: the validate callback is one load; `waiter` per the contract.
        unsafe {
            parking_lot::park_async(
                self.key(),
                || self.state.load(Ordering::Acquire) & !ARRIVED_MASK == generation,
                waiter,
            )
        }
    }

    /// How many threads wait in the current generation (a snapshot).
    pub fn waiting(&self) -> u32 {
        self.state.load(Ordering::Relaxed) & ARRIVED_MASK
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Barrier as usize
    }

    /// The leader: the next generation, nobody arrived; wake the others.
    fn open(&self, s: u32) {
        let next = (s & !ARRIVED_MASK).wrapping_add(ONE_GENERATION);
        self.state.store(next, Ordering::Release);
        if self.parties > 1 {
            parking_lot::unpark_all(self.key());
        }
    }

    #[cold]
    fn wait_slow(&self, generation: u32) {
        let same = || self.state.load(Ordering::Acquire) & !ARRIVED_MASK == generation;
        while same() {
            if !thread_may_block() {
                refuse_to_block("Barrier::wait before the others arrived");
            }
            // Spinning first, as a futex wait does: the last arrival is what
            // the others wait for, and it often comes within the spin.
            // SAFETY: the callbacks only read this barrier's word.
            unsafe {
                parking_lot::park_owing_spinning(
                    self.key(),
                    same,
                    || {},
                    |_, _| {},
                    None,
                    parking_lot::Owed::NOTHING,
                );
            }
        }
    }
}

impl core::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Barrier")
            .field("parties", &self.parties)
            .field("waiting", &self.waiting())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

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

    #[test]
    fn an_async_wait_is_released_by_the_last_arrival() {
        let b = Barrier::new(2);
        let w = AsyncWaiter::new();
        let generation = unsafe { b.wait_async_begin(&w) }.unwrap_err();
        assert!(
            !unsafe { b.wait_async_resume(generation, &w) },
            "not open yet"
        );
        assert!(b.wait().is_leader());
        assert!(unsafe { b.wait_async_resume(generation, &w) });
        // Reused, and abandoned: no queue entry left.
        let generation = unsafe { b.wait_async_begin(&w) }.unwrap_err();
        unsafe { b.wait_async_abandon(&w) };
        assert_eq!(crate::parking_lot::parked_count(b.key()), 0);
        let _ = generation;
        assert!(b.wait().is_leader());
    }

    #[test]
    fn a_barrier_for_one_never_waits() {
        let b = Barrier::new(1);
        assert!(b.wait().is_leader() && b.wait().is_leader());
        assert!(Barrier::new(0).wait().is_leader());
    }
}
