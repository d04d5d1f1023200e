//! The parker for platforms that can sleep on a 32-bit word (Linux futex,
//! wasm `memory.atomic.wait32`). The platform module supplies `wait`, `wake`
//! and `now_ns`; the protocol is here once.
//!
//! State word, one per waiter record:
//!
//! | value | meaning                                                      |
//! |-------|--------------------------------------------------------------|
//! | 0     | IDLE: not parked, or claimed by a waker (`unpark_lock`)      |
//! | 1     | PARKED: queued; the owner sleeps or may sleep on the word    |
//! | 2     | SPINNING: queued; the owner is awake, watching the word      |
//!
//! Legal transitions: 0 → 1 by the owner in `prepare_park` (under the queue
//! lock); 1 → 2 and 2 → 1 by a blocking owner in `park` (it spins in 2, see
//! `spin.rs`, and sleeps only in 1); 1 → 0 or 2 → 0 by a waker's swap in
//! `unpark_lock` (under the queue lock). The waker calls `wake` only if it
//! swapped a 1 away: an owner in 2 is running and sees the 0 itself, and its
//! compare-and-swap back to 1 fails, so it never sleeps on a claimed record.
//! Because the word is plain memory, a thread that cannot block may instead
//! wait on it asynchronously for the value 1 (in wasm, `Atomics.waitAsync`);
//! such records never enter 2, so `wake` reaches them as it reaches sleepers.
//! A thread that cannot block but parks anyway (`park` on a page's main
//! thread, where `memory.atomic.wait32` traps) stays in 2 the whole time,
//! watching the word, so that no waker ever needs to wake it (`stay_awake`).

use super::platform::{now_ns, wait, wake};
use super::spin::{watch_awake, SpinBudget};
use crate::blocking::thread_may_block;
use crate::sync::{AtomicU32, Ordering};

const IDLE: u32 = 0;
const PARKED: u32 = 1;
const SPINNING: u32 = 2;

/// How many looks at the word a thread that stays awake takes between two
/// looks at the clock (and yields): the clock may be a call out of wasm.
/// (Every look, in loom's models: each look is a step to explore.)
const AWAKE_LOOKS_PER_CHECK: u32 = if cfg!(loom) { 1 } else { 64 };

pub(crate) struct Parker {
    state: AtomicU32,
    spin: SpinBudget,
}

impl Parker {
    parker_protocol!();

    /// Sleeps on the word until claimed (`true`) or until the deadline
    /// passes (`false`).
    fn sleep(&self, deadline_ns: Option<u64>) -> bool {
        while self.state.load(Ordering::Acquire) != IDLE {
            let timeout_ns = match deadline_ns {
                None => None,
                Some(deadline_ns) => {
                    let now = now_ns();
                    if now >= deadline_ns {
                        return false;
                    }
                    Some(deadline_ns - now)
                }
            };
            wait(&self.state, PARKED, timeout_ns);
        }
        true
    }

    /// Announces that the owner is awake (1 → 2), spins while nobody claims
    /// the record, then announces sleep (2 → 1). Returns `true` if a waker
    /// claimed the record meanwhile (Acquire: its token is visible). A claim
    /// that comes before the first swap (the waker saw 1 and wakes us) or
    /// after the last (likewise) is left to the sleeping loop.
    #[inline]
    fn spin_first(&self) -> bool {
        if self
            .state
            .compare_exchange(PARKED, SPINNING, Ordering::Relaxed, Ordering::Acquire)
            .is_err()
        {
            return true; // already IDLE: claimed while we were queueing
        }
        self.spin
            .spin(|| self.state.load(Ordering::Relaxed) == SPINNING);
        self.state
            .compare_exchange(SPINNING, PARKED, Ordering::Acquire, Ordering::Acquire)
            .is_err()
    }

    /// For a thread that may not sleep: announces that the owner is awake
    /// (1 → 2) and watches the record until a waker claims it (`true`), or
    /// until the deadline passes (2 → 1, then `false`; a claim that lands
    /// first wins). The waker finds 2 and calls no `wake`: nothing here ever
    /// sleeps. Its queue position, and so its turn, are those of a sleeper.
    fn stay_awake(&self, deadline_ns: Option<u64>) -> bool {
        if self
            .state
            .compare_exchange(PARKED, SPINNING, Ordering::Relaxed, Ordering::Acquire)
            .is_err()
        {
            return true; // IDLE: claimed while we were queueing
        }
        watch_awake(deadline_ns, AWAKE_LOOKS_PER_CHECK, now_ns, || {
            self.is_unparked()
        }) || self
            .state
            .compare_exchange(SPINNING, PARKED, Ordering::Acquire, Ordering::Acquire)
            .is_err()
    }

    #[inline]
    pub(crate) fn timed_out(&self) -> bool {
        self.state.load(Ordering::Relaxed) != IDLE
    }

    #[inline]
    pub(crate) fn unpark_lock(&self) -> UnparkHandle {
        // The address first: once the swap lands, the owner may return and
        // free the record (an async record's owner may drop it at once), so
        // nothing of `self` is touched after it, not even to take an address.
        let word: *const AtomicU32 = &self.state;
        // Release: the token the waker wrote must be visible once the owner sees IDLE.
        let was = self.state.swap(IDLE, Ordering::Release);
        UnparkHandle {
            word: if was == SPINNING {
                core::ptr::null()
            } else {
                word
            },
        }
    }
}

pub(crate) struct UnparkHandle {
    /// The word to wake on; null if the owner was spinning and needs no wake.
    word: *const AtomicU32,
}

impl UnparkHandle {
    /// Wakes the owner if it sleeps (or may sleep) on its word; an owner that
    /// was spinning is running and sees the claim itself.
    #[inline]
    pub(crate) fn unpark(self) {
        if self.word.is_null() {
            return;
        }
        // The owner may already have returned and reused or freed its record.
        // Waking only uses the address as a key, so that is harmless: at worst
        // the word's next user wakes spuriously, and every parker loops.
        wake(self.word);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    #[cfg_attr(
        miri,
        ignore = "timing: Miri runs one thread at a time, so the 1 ms watch rarely sees the spin"
    )]
    fn a_spinning_owner_is_claimed_without_a_wake() {
        // Spinning needs a second CPU; the count is process-wide, and more
        // only lets other tests' parkers spin too.
        crate::set_cpu_count(crate::sys::spin::cpus().max(2));
        let mut claimed_spinning = 0;
        for _ in 0..200 {
            let parker = Arc::new(Parker::new());
            parker.prepare_park();
            let owner = {
                let parker = parker.clone();
                std::thread::spawn(move || parker.park(true))
            };
            // Claim it while it spins if we catch it spinning; after 1 ms
            // it may have gone to sleep: then the handle must wake it.
            let start = std::time::Instant::now();
            let mut seen = parker.state.load(Ordering::Acquire);
            while seen == PARKED && start.elapsed() < std::time::Duration::from_millis(1) {
                std::hint::spin_loop();
                seen = parker.state.load(Ordering::Acquire);
            }
            assert_ne!(seen, IDLE, "the owner returned unclaimed");
            let handle = parker.unpark_lock();
            if seen == SPINNING && handle.word.is_null() {
                claimed_spinning += 1;
            }
            handle.unpark();
            owner.join().unwrap();
            assert!(parker.is_unparked());
        }
        // Every round where the owner was still spinning at the claim needed
        // no wake; with a second CPU most rounds catch it spinning.
        assert!(
            claimed_spinning > 0,
            "never claimed a spinning owner in 200 rounds"
        );
    }
}

/// Loom models of the protocol (run by `npm test`'s loom step, `--lib`): a
/// waker's claim racing the owner's spin, its announcement of sleep and its
/// sleep. A lost wakeup is a deadlock.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn a_claim_racing_spin_then_sleep_is_never_lost() {
        loom::model(|| {
            let parker = Arc::new(Parker::new());
            parker.prepare_park();
            let waker = {
                let parker = parker.clone();
                loom::thread::spawn(move || parker.unpark_lock().unpark())
            };
            parker.park(true);
            assert!(parker.is_unparked());
            waker.join().unwrap();
        });
    }

    #[test]
    fn a_claim_before_the_owner_spins_wakes_it_or_is_seen() {
        // The waker claims before the owner runs at all; the owner's first
        // compare-and-swap fails and it returns without sleeping.
        loom::model(|| {
            let parker = Arc::new(Parker::new());
            parker.prepare_park();
            let handle = parker.unpark_lock();
            let owner = {
                let parker = parker.clone();
                loom::thread::spawn(move || parker.park(true))
            };
            handle.unpark();
            owner.join().unwrap();
        });
    }

    /// An owner that may not block stays awake (never sleeps on the word)
    /// and still sees every claim; with a deadline that passes while a claim
    /// races it, it either returns claimed, or timed out with the record
    /// back in PARKED, and then (as the ParkingLot does after a timeout it
    /// loses) waits awake for the claim in flight. (`MAY_BLOCK` is a std
    /// thread-local, shared by a model's threads: only the owner parks.)
    #[test]
    fn an_owner_that_stays_awake_sees_every_claim_and_its_deadline() {
        for deadline in [None, Some(0)] {
            loom::model(move || {
                let parker = Arc::new(Parker::new());
                parker.prepare_park();
                let waker = {
                    let parker = parker.clone();
                    loom::thread::spawn(move || parker.unpark_lock().unpark())
                };
                crate::set_thread_may_block(false);
                match deadline {
                    None => parker.park(false),
                    Some(d) => {
                        if !parker.park_until(d, false) {
                            assert!(parker.timed_out() || parker.is_unparked());
                            parker.park(false);
                        }
                    }
                }
                crate::set_thread_may_block(true);
                assert!(parker.is_unparked());
                waker.join().unwrap();
            });
        }
    }
}
