//! `TakeoverLock`: a lock whose word names its holder, so that when the
//! holder dies for good (a wasm worker terminated), the thread that reaps it
//! can take the lock over, repair what it guards, and release it. A thread
//! waiting for it leaves nothing behind either: it spins, then sleeps on the
//! word in the platform's futex (in wasm the engine's own wait list, which
//! forgets a terminated thread). A [`WordLock`](crate::WordLock) instead
//! queues its sleepers through their stacks, so a worker terminated while
//! it waited left the queue pointing into a stack its reaper then freed,
//! and the runtime had to be poisoned. The wasm module's kind table is
//! guarded by one (wasm/src/kinds.rs).
//!
//! **Word** (`word`):
//!
//! | bits  | meaning                                                         |
//! |-------|-----------------------------------------------------------------|
//! | 0     | `SLEEPERS`: a thread sleeps on the word, or is about to; the release wakes one |
//! | 1–31  | 0: free; else the holder's name, even and never 0 (the wasm module passes its marker address, `critical::marker_address`) |
//!
//! Transitions, each one atomic step:
//! - *take* `s → me | s` where `s` is 0 or `SLEEPERS`; a thread that slept
//!   takes `me | SLEEPERS` even from 0, since others may sleep still;
//! - *announce* `h → h | SLEEPERS`, then sleep while the word reads that;
//! - *release* swap to 0, then wake one sleeper if `SLEEPERS` was set;
//! - *take over* `dead | s → me | s`, by a reaper, which then releases.
//!
//! A holder that dies between its release's swap and its wake leaves its
//! sleepers to their timeout ([`SLEEP_NS`]); its reaper wakes them all.

use crate::critical;
use crate::sync::{spin_loop, AtomicU32, Ordering};

const SLEEPERS: u32 = 1;

/// Looks at the word (each after a spin hint) before a waiter sleeps. None
/// under loom, where each would be a yield to the model, which then runs
/// the holder on: a waiter there would never sleep while a lock is held.
const SPINS: u32 = if cfg!(loom) { 0 } else { 100 };

/// How long a sleeper sleeps at most before it looks again: 1 ms.
const SLEEP_NS: u64 = 1_000_000;

/// See the module docs.
pub struct TakeoverLock {
    word: AtomicU32,
}

impl Default for TakeoverLock {
    fn default() -> Self {
        Self::new()
    }
}

impl TakeoverLock {
    /// A free lock.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        TakeoverLock {
            word: AtomicU32::new(0),
        }
    }

    /// A free lock (loom's atomics have no `const` constructor).
    #[cfg(loom)]
    pub fn new() -> Self {
        TakeoverLock {
            word: AtomicU32::new(0),
        }
    }

    /// Takes the lock for the calling thread, named `me` (even, not 0).
    /// Spins on a thread that may not block (a page's main thread). Leaves
    /// the call if the runtime is poisoned meanwhile (`critical.rs`).
    #[inline]
    pub fn lock(&self, me: u32) {
        debug_assert!(
            me != 0 && me & SLEEPERS == 0,
            "TakeoverLock: a name is even and not 0"
        );
        if self
            .word
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow(me);
        }
    }

    #[cold]
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))] // SPINS is 0 under loom
    fn lock_slow(&self, me: u32) {
        let mut spins = 0;
        let mut slept = 0;
        loop {
            let w = self.word.load(Ordering::Relaxed);
            if w & !SLEEPERS == 0 {
                if self
                    .word
                    .compare_exchange(w, me | w | slept, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            critical::abandon_if_poisoned();
            if spins < SPINS || !crate::thread_may_block() {
                spins += 1;
                spin_loop();
                continue;
            }
            if w & SLEEPERS == 0
                && self
                    .word
                    .compare_exchange(w, w | SLEEPERS, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            crate::sys::futex_wait(&self.word, w | SLEEPERS, SLEEP_NS);
            slept = SLEEPERS;
        }
    }

    /// Releases the lock, which the caller holds (or took over).
    #[inline]
    pub fn unlock(&self) {
        if self.word.swap(0, Ordering::Release) & SLEEPERS != 0 {
            crate::sys::futex_wake(&self.word, false);
        }
    }

    /// Takes the lock over from `dead`, a holder that is gone for good, for
    /// the calling thread (`me`): true if `dead` held it, and the caller now
    /// does. Else nothing changed, and the caller may [`wake_all`](Self::wake_all)
    /// in case `dead` died between its release's swap and its wake.
    pub fn take_over(&self, dead: u32, me: u32) -> bool {
        let mut w = self.word.load(Ordering::Acquire);
        // Again while only the sleepers' bit changed (a waiter announcing itself).
        while w & !SLEEPERS == dead {
            match self.word.compare_exchange(
                w,
                me | (w & SLEEPERS),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
        false
    }

    /// Wakes every sleeper, which looks at the word again.
    pub fn wake_all(&self) {
        crate::sys::futex_wake(&self.word, true);
    }

    /// For loom models: the release of a holder that dies between its
    /// swap and its wake.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn release_and_die_before_the_wake(&self) {
        self.word.swap(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn excludes_across_threads_that_sleep() {
        let lock = Arc::new(TakeoverLock::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let count = Arc::new(AtomicUsize::new(0));
        let rounds = if cfg!(miri) { 20 } else { 20_000 };
        let threads: Vec<_> = (1..=4u32)
            .map(|t| {
                let (lock, inside, count) = (lock.clone(), inside.clone(), count.clone());
                std::thread::spawn(move || {
                    for _ in 0..rounds {
                        lock.lock(t * 2);
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        count.fetch_add(1, Ordering::Relaxed);
                        inside.fetch_sub(1, Ordering::SeqCst);
                        lock.unlock();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(count.load(Ordering::Relaxed), 4 * rounds);
    }

    #[test]
    fn a_reaper_takes_over_only_from_the_holder() {
        let lock = TakeoverLock::new();
        lock.lock(2);
        assert!(!lock.take_over(4, 6), "4 does not hold it");
        assert!(lock.take_over(2, 6));
        assert!(!lock.take_over(2, 8), "6 holds it now");
        lock.unlock();
        lock.lock(8);
        lock.unlock();
    }

    #[test]
    fn a_sleeper_behind_a_holder_that_dies_gets_the_lock_from_its_reaper() {
        let lock = Arc::new(TakeoverLock::new());
        lock.lock(2); // the holder that dies: it never unlocks
        let waiter = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                lock.lock(4);
                lock.unlock();
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20)); // asleep by now
        assert!(lock.take_over(2, 6));
        lock.unlock();
        waiter.join().unwrap();
    }
}
