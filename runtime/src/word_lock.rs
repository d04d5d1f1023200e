//! `WordLock`: a pointer-sized adaptive lock that needs no ParkingLot, so the
//! ParkingLot can use it to guard its own buckets.
//!
//! It follows the barging algorithm of [`Lock`](crate::Lock), but the queue of
//! parked threads is threaded through the waiters' own stack frames and its
//! head is kept in the lock word itself:
//!
//! | bits          | name           | meaning                                          |
//! |---------------|----------------|--------------------------------------------------|
//! | 0             | `LOCKED`       | some thread holds the lock                       |
//! | 1             | `QUEUE_LOCKED` | some thread is editing the queue (a spin lock)   |
//! | the others    | queue head     | the oldest parked waiter, or null                |
//!
//! The head waiter's `tail` points at the newest, so enqueueing is O(1).
//! The queue is only edited while both `LOCKED` and `QUEUE_LOCKED` are set; a
//! thread that sets `QUEUE_LOCKED` then owns the whole word until it stores
//! it back (no one else can change a word in that state), which is why the
//! slow paths can store instead of CAS.

use crate::macros::default_and_debug;
use crate::sync::{self, AtomicPtr, LockedCell, Ordering};
use crate::sys::Parker;
use core::ptr;

const LOCKED: usize = 1;
const QUEUE_LOCKED: usize = 2;
const QUEUE_MASK: usize = !(LOCKED | QUEUE_LOCKED);

/// The lock word: a queue-head pointer carrying the flags in its low bits, so
/// the pointer keeps its provenance (Miri checks this with strict provenance).
type Word = *mut Waiter;

#[inline]
fn flags(word: Word) -> usize {
    word.addr() & !QUEUE_MASK
}

#[inline]
fn with_flags(word: Word, set: usize) -> Word {
    word.map_addr(|a| a | set)
}

#[inline]
fn queue_head(word: Word) -> *const Waiter {
    word.map_addr(|a| a & QUEUE_MASK)
}

/// The word of a held lock with nobody queued.
#[inline]
fn locked_alone() -> Word {
    ptr::without_provenance_mut(LOCKED)
}

/// Spins (each a yield) before queueing, while nobody is queued: the same
/// limit as `Lock`'s (seed 000, "Spinning").
const SPIN_LIMIT: u32 = 40;

/// A waiter's record, on its own stack for as long as it is queued.
struct Waiter {
    parker: Parker,
    /// Next-newer waiter. Guarded by `QUEUE_LOCKED`.
    next: LockedCell<*const Waiter>,
    /// In the head only: the newest waiter. Guarded by `QUEUE_LOCKED`.
    tail: LockedCell<*const Waiter>,
}

// The two low bits of a `*const Waiter` must be free for the flags.
const _: () = assert!(core::mem::align_of::<Waiter>() >= 4);

/// A pointer-sized lock with an inline fast path, spinning, and FIFO parking
/// of waiters that may still be barged past (see the module docs).
pub struct WordLock {
    state: AtomicPtr<Waiter>,
}

impl WordLock {
    /// An unlocked lock.
    #[cfg(not(loom))]
    pub const fn new() -> WordLock {
        WordLock {
            state: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// An unlocked lock.
    #[cfg(loom)]
    pub fn new() -> WordLock {
        WordLock {
            state: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Acquires the lock, parking the thread if it is held for long.
    #[inline]
    pub fn lock(&self) {
        if self
            .state
            .compare_exchange_weak(
                ptr::null_mut(),
                locked_alone(),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            self.lock_slow();
        }
    }

    /// Acquires the lock if it is free.
    #[inline]
    pub fn try_lock(&self) -> bool {
        let state = self.state.load(Ordering::Relaxed);
        flags(state) & LOCKED == 0
            && self
                .state
                .compare_exchange(
                    state,
                    with_flags(state, LOCKED),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// Releases the lock, waking the oldest waiter if there is one.
    ///
    /// # Safety
    /// The lock is held (by this thread or by one that handed it over).
    #[inline]
    pub unsafe fn unlock(&self) {
        if self
            .state
            .compare_exchange_weak(
                locked_alone(),
                ptr::null_mut(),
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_err()
        {
            self.unlock_slow();
        }
    }

    /// Whether some thread holds the lock (a snapshot).
    pub fn is_locked(&self) -> bool {
        flags(self.state.load(Ordering::Relaxed)) & LOCKED != 0
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spins = 0;
        loop {
            // A holder that died inside a runtime's section never unlocks:
            // once it is reaped (the runtime poisoned), waiters leave.
            crate::critical::abandon_if_poisoned();
            let state = self.state.load(Ordering::Relaxed);
            if flags(state) & LOCKED == 0 {
                if self
                    .state
                    .compare_exchange_weak(
                        state,
                        with_flags(state, LOCKED),
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if queue_head(state).is_null() && spins < SPIN_LIMIT {
                spins += 1;
                sync::yield_now();
                continue;
            }
            if !crate::thread_may_block() {
                // This thread must never sleep (a browser main thread): it
                // spins until the lock is free, without joining the queue.
                sync::spin_loop();
                continue;
            }
            if flags(state) & QUEUE_LOCKED != 0 || !self.lock_queue(state) {
                sync::yield_now();
                continue;
            }

            // We own the word until the store below (see the module docs).
            let me = Waiter {
                parker: Parker::new(),
                next: LockedCell::new(ptr::null()),
                tail: LockedCell::new(ptr::null()),
            };
            me.parker.prepare_park();
            let me_ptr: *const Waiter = &me;
            let head = queue_head(state);
            if head.is_null() {
                // SAFETY: QUEUE_LOCKED is ours, and `me` is not yet shared.
                unsafe { me.tail.set(me_ptr) };
                self.state
                    .store(with_flags(me_ptr.cast_mut(), LOCKED), Ordering::Release);
            } else {
                // SAFETY: QUEUE_LOCKED is ours, so the queue's records are
                // alive (their owners stay parked until dequeued) and ours to edit.
                unsafe {
                    let head = &*head;
                    (*head.tail.get()).next.set(me_ptr);
                    head.tail.set(me_ptr);
                }
                self.state.store(state, Ordering::Release);
            }
            // Stays on the stack until an unlocker has dequeued and woken us.
            me.parker.park(false); // it spun before queueing
            spins = 0;
        }
    }

    /// Sets QUEUE_LOCKED if the word is still `state` (which has it clear);
    /// Acquire: the queue's records are then as their last editor left them.
    /// May fail spuriously.
    #[inline]
    fn lock_queue(&self, state: Word) -> bool {
        self.state
            .compare_exchange_weak(
                state,
                with_flags(state, QUEUE_LOCKED),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    #[cold]
    fn unlock_slow(&self) {
        loop {
            // The queue may be locked by a thread that died (see lock_slow).
            crate::critical::abandon_if_poisoned();
            let state = self.state.load(Ordering::Relaxed);
            assert!(
                flags(state) & LOCKED != 0,
                "WordLock::unlock: the lock is not locked"
            );
            if state == locked_alone() {
                if self
                    .state
                    .compare_exchange_weak(
                        state,
                        ptr::null_mut(),
                        Ordering::Release,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if flags(state) & QUEUE_LOCKED != 0 {
                sync::yield_now();
                continue;
            }
            if self.lock_queue(state) {
                break;
            }
        }

        // We own the word until the store below.
        let state = self.state.load(Ordering::Relaxed);
        let head = queue_head(state);
        // SAFETY: the queue is non-empty (the fast path failed while LOCKED was
        // our only other bit) and QUEUE_LOCKED is ours, so `head` is a live,
        // parked waiter and its fields are ours to read and edit.
        let handle = unsafe {
            let head = &*head;
            let new_head = head.next.get();
            if !new_head.is_null() {
                (*new_head).tail.set(head.tail.get());
            }
            // Releases both the lock and the queue lock; the woken thread
            // competes for the lock like everyone else (barging).
            self.state.store(new_head.cast_mut(), Ordering::Release);
            head.parker.unpark_lock()
        };
        handle.unpark();
    }
}

default_and_debug!(WordLock { "locked": is_locked });

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn is_one_word() {
        assert_eq!(
            core::mem::size_of::<WordLock>(),
            core::mem::size_of::<usize>()
        );
    }

    #[test]
    fn lock_try_lock_unlock() {
        let l = WordLock::new();
        assert!(!l.is_locked());
        l.lock();
        assert!(l.is_locked());
        assert!(!l.try_lock());
        unsafe { l.unlock() };
        assert!(l.try_lock());
        unsafe { l.unlock() };
        assert!(!l.is_locked());
    }

    #[test]
    #[should_panic(expected = "not locked")]
    fn unlocking_an_unlocked_lock_panics() {
        let l = WordLock::new();
        unsafe { l.unlock() };
    }

    #[test]
    fn counter_stays_exact_under_contention() {
        struct Shared {
            lock: WordLock,
            count: core::cell::UnsafeCell<u64>,
        }
        unsafe impl Sync for Shared {}
        let threads = if cfg!(miri) { 3 } else { 8 };
        let per = if cfg!(miri) { 50 } else { 20_000 };
        let s = &Shared {
            lock: WordLock::new(),
            count: 0.into(),
        };
        crate::test_util::on_threads(threads, move |_| {
            for _ in 0..per {
                s.lock.lock();
                unsafe { *s.count.get() += 1 };
                unsafe { s.lock.unlock() };
            }
        });
        assert_eq!(unsafe { *s.count.get() }, threads as u64 * per);
    }

    #[test]
    fn a_long_hold_parks_the_waiters_and_wakes_them_all() {
        let l = Arc::new(WordLock::new());
        l.lock();
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    l.lock();
                    unsafe { l.unlock() };
                })
            })
            .collect();
        // Wait until every waiter has given up spinning and queued.
        let mut queued = 0;
        while queued < 3 {
            std::thread::yield_now();
            let word = l.state.load(Ordering::Acquire);
            let head = queue_head(word);
            queued = 0;
            if flags(word) == LOCKED && !head.is_null() {
                // Count the queue while holding it, as the algorithm would.
                if l.state
                    .compare_exchange(
                        word,
                        with_flags(word, QUEUE_LOCKED),
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    let mut p = head;
                    while !p.is_null() {
                        queued += 1;
                        p = unsafe { (*p).next.get() };
                    }
                    l.state.store(word, Ordering::Release);
                }
            }
        }
        unsafe { l.unlock() };
        for h in hs {
            h.join().unwrap();
        }
        assert!(!l.is_locked());
        assert!(l.state.load(Ordering::Relaxed).is_null());
    }
}
