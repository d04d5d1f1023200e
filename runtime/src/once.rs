//! `Once`: one-time initialization in one byte, like parking_lot's.
//!
//! State byte:
//!
//! | bit | name       | meaning                                              |
//! |-----|------------|------------------------------------------------------|
//! | 0   | `DONE`     | the closure ran to completion: never changes again    |
//! | 1   | `POISONED` | a closure panicked                                   |
//! | 2   | `RUNNING`  | a thread is running the closure                      |
//! | 3   | `PARKED`   | threads may be parked waiting for it                 |
//!
//! call_once: return if `DONE` (an Acquire load: the fast path). Otherwise
//! CAS in `RUNNING` and run the closure; on return swap in `DONE`, on panic
//! swap in `POISONED` (both Release), and if the swap saw `PARKED` wake
//! everyone. Threads that find `RUNNING` spin briefly, set `PARKED` and park
//! while the byte says `RUNNING | PARKED`.
//!
//! Poisoning, as parking_lot: after a panicking closure, [`Once::call_once`]
//! panics (in every thread that calls it, and in the ones that were waiting),
//! while [`Once::call_once_force`] runs its closure again, told by
//! [`OnceState::poisoned`].
//!
//! The same steps, one at a time, for callers whose closure runs outside
//! Rust (JS through the wasm module, C): [`Once::try_begin`] claims the run
//! or says why not, [`Once::finish`] ends it (completed, or poisoned: a JS
//! function that threw, a worker reaped while running it),
//! [`Once::wait_while_running`] and [`Once::wait_async_begin`] wait for
//! another thread's run.

use crate::acquire::{self, AcquireState, Look, Next};
use crate::clock::Instant;
use crate::lock::spin_limit;
use crate::macros::default_and_debug;
use crate::parking_lot::{self, AsyncWaiter, Owed, UnparkToken};
use crate::sync::{AtomicU8, Ordering};

const DONE: u8 = 1;
const POISONED: u8 = 1 << 1;
const RUNNING: u8 = 1 << 2;
const PARKED: u8 = 1 << 3;

/// Where a [`Once`] stands (a snapshot), as parking_lot's `OnceState`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnceState {
    /// No closure ran yet.
    New,
    /// A closure panicked; `call_once` will panic, `call_once_force` run again.
    Poisoned,
    /// A closure is running.
    InProgress,
    /// A closure completed.
    Done,
}

impl OnceState {
    /// A closure panicked (what `call_once_force`'s closure is told).
    pub fn poisoned(self) -> bool {
        self == OnceState::Poisoned
    }

    /// A closure completed.
    pub fn done(self) -> bool {
        self == OnceState::Done
    }
}

/// What [`Once::try_begin`] found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnceBegin {
    /// A closure completed: nothing to run.
    Done,
    /// A closure panicked and poison is not ignored: nothing was claimed.
    Poisoned,
    /// Another run is in progress: wait for it, then try again.
    Running,
    /// The caller claimed the run (the state before it: `New` or
    /// `Poisoned`) and must end it with [`Once::finish`].
    Run(OnceState),
}

/// Runs a closure once, however many threads ask; the others wait for it.
///
/// ```
/// static INIT: parklot::Once = parklot::Once::new();
/// let mut runs = 0;
/// INIT.call_once(|| runs += 1);
/// INIT.call_once(|| runs += 1);
/// assert_eq!(runs, 1);
/// ```
#[repr(transparent)] // one byte: C and the wasm module rely on it
pub struct Once {
    state: AtomicU8,
}

impl Once {
    /// A `Once` that has not run.
    #[cfg(not(loom))]
    pub const fn new() -> Once {
        Once {
            state: AtomicU8::new(0),
        }
    }

    /// A `Once` that has not run.
    #[cfg(loom)]
    pub fn new() -> Once {
        Once {
            state: AtomicU8::new(0),
        }
    }

    /// Runs `f` if no closure has completed on this `Once`, waiting for a
    /// closure that another thread runs meanwhile.
    ///
    /// # Panics
    /// If a closure panicked on this `Once` (it is poisoned); if `f` panics.
    #[inline]
    pub fn call_once(&self, f: impl FnOnce()) {
        if self.state.load(Ordering::Acquire) & DONE != 0 {
            return;
        }
        let mut f = Some(f);
        if self
            .call_slow(false, &mut |_| (f.take().expect("runs once"))())
            .is_err()
        {
            panic!("Once instance has previously been poisoned");
        }
    }

    /// Like [`call_once`](Self::call_once), but a poisoned `Once` returns
    /// `false` (and `f` does not run) instead of panicking: for callers that
    /// must not unwind (C).
    pub fn call_once_unless_poisoned(&self, f: impl FnOnce()) -> bool {
        if self.state.load(Ordering::Acquire) & DONE != 0 {
            return true;
        }
        let mut f = Some(f);
        self.call_slow(false, &mut |_| (f.take().expect("runs once"))())
            .is_ok()
    }

    /// Like [`call_once`](Self::call_once), but runs `f` even if the `Once`
    /// is poisoned (telling it so through [`OnceState::poisoned`]).
    pub fn call_once_force(&self, f: impl FnOnce(OnceState)) {
        if self.state.load(Ordering::Acquire) & DONE != 0 {
            return;
        }
        let mut f = Some(f);
        // Poison is ignored, so this cannot fail.
        let _ = self.call_slow(true, &mut |state| (f.take().expect("runs once"))(state));
    }

    /// Where it stands (a snapshot).
    pub fn state(&self) -> OnceState {
        let s = self.state.load(Ordering::Acquire);
        if s & DONE != 0 {
            OnceState::Done
        } else if s & RUNNING != 0 {
            OnceState::InProgress
        } else if s & POISONED != 0 {
            OnceState::Poisoned
        } else {
            OnceState::New
        }
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Once as usize
    }

    /// Claims the run if no closure completed or runs, and the `Once` is not
    /// poisoned (or `ignore_poison`); never waits.
    pub fn try_begin(&self, ignore_poison: bool) -> OnceBegin {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & DONE != 0 {
                return OnceBegin::Done;
            }
            if s & RUNNING != 0 {
                return OnceBegin::Running;
            }
            if s & POISONED != 0 && !ignore_poison {
                return OnceBegin::Poisoned;
            }
            match self.state.compare_exchange_weak(
                s,
                s | RUNNING,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) if s & POISONED != 0 => return OnceBegin::Run(OnceState::Poisoned),
                Ok(_) => return OnceBegin::Run(OnceState::New),
                Err(now) => s = now,
            }
        }
    }

    /// Ends a run claimed by [`try_begin`](Self::try_begin): `completed`
    /// makes the `Once` done for good, else poisoned; wakes every waiter.
    ///
    /// # Safety
    /// The caller claimed the run (`OnceBegin::Run`) and has not ended it.
    pub unsafe fn finish(&self, completed: bool) {
        drop(Finish {
            once: self,
            ends_as: if completed { DONE } else { POISONED },
        });
    }

    /// Waits while another thread runs a closure: spins briefly, then
    /// parks. Returns `false` if `deadline` passed first, else `true` (the
    /// run ended, or no run was in progress: try again).
    ///
    /// On a thread that may not block ([`crate::set_thread_may_block`]) it
    /// waits awake instead of parking.
    pub fn wait_while_running(&self, deadline: Option<Instant>) -> bool {
        acquire::park_blocking(self, spin_limit(), deadline)
    }

    /// Asynchronous [`wait_while_running`](Self::wait_while_running), for
    /// threads that may not block: queues `waiter` and returns `true` while
    /// a run is in progress (its word turns 0 when the run ends: try again),
    /// else returns `false` at once. Never blocks.
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until this
    /// wait ends (its word turned 0, or [`wait_async_cancel`](Self::wait_async_cancel)).
    pub unsafe fn wait_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // "Acquired" is the run's end: then nothing was queued.
        // SAFETY: forwarded from the caller.
        !unsafe { acquire::queue_async(self, (), waiter) }
    }

    /// Takes `waiter` out of the queue (a timeout): whether the run ended first.
    ///
    /// # Safety
    /// `waiter` was queued by [`wait_async_begin`](Self::wait_async_begin)
    /// and its wait has not ended.
    pub unsafe fn wait_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { acquire::cancel_async(self, waiter) }
    }

    /// Whether a waiter should sleep: a run is in progress and `PARKED` says
    /// its end will wake the queue.
    #[inline]
    fn parked_while_running(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (RUNNING | PARKED) == RUNNING | PARKED
    }

    /// Runs `f` unless a closure completed, waiting for other runs;
    /// `Err(())` if poisoned (and not `ignore_poison`).
    #[cold]
    fn call_slow(&self, ignore_poison: bool, f: &mut dyn FnMut(OnceState)) -> Result<(), ()> {
        loop {
            match self.try_begin(ignore_poison) {
                OnceBegin::Done => return Ok(()),
                OnceBegin::Poisoned => return Err(()),
                OnceBegin::Run(state) => {
                    // On a panic the guard poisons the byte and wakes the waiters.
                    let mut finish = Finish {
                        once: self,
                        ends_as: POISONED,
                    };
                    f(state);
                    finish.ends_as = DONE;
                    return Ok(());
                }
                OnceBegin::Running => {
                    self.wait_while_running(None);
                }
            }
        }
    }
}

/// A waiter for another thread's run, for the acquire skeleton: what it
/// "acquires" is the end of the run (no `RUNNING`), and no wake is a hand-off.
// SAFETY: `should_park` is one load, `left_queue` does nothing, and no
// debt is owed.
unsafe impl AcquireState for Once {
    type Word = u8;
    type Round = ();

    #[inline]
    fn look(&self, _: ()) -> Look<u8> {
        let s = self.state.load(Ordering::Acquire);
        if s & RUNNING == 0 {
            Look::Acquired
        } else if s & PARKED != 0 {
            Look::Queue
        } else {
            Look::Unmarked {
                word: s,
                may_spin: true,
            }
        }
    }

    #[inline]
    fn mark_parked(&self, seen: u8) -> bool {
        self.state
            .compare_exchange_weak(seen, seen | PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    fn queue_key(&self, _: ()) -> usize {
        self.key()
    }

    fn should_park(&self, _: ()) -> bool {
        self.parked_while_running()
    }

    // Nothing to clear: the run's end wakes everyone and clears PARKED.
    fn left_queue(&self, _: (), _: bool) {}

    // A reaped waiter owes nobody anything: every waiter is woken at once.
    fn debt(&self, _: ()) -> Owed {
        Owed::nothing(crate::diagnostics::Kind::Once)
    }

    fn woken(&self, _: (), _: UnparkToken, _: bool) -> Next<()> {
        Next::Again(())
    }

    fn cancelled_after_wake(&self, _: (), _: UnparkToken) -> bool {
        true
    }
}

/// Ends a run of the closure: `DONE`, or `POISONED` if it unwound.
struct Finish<'a> {
    once: &'a Once,
    ends_as: u8,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        let before = self.once.state.swap(self.ends_as, Ordering::Release);
        if before & PARKED != 0 {
            parking_lot::unpark_all(self.once.key());
        }
    }
}

default_and_debug!(Once { "state": state });

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn is_one_byte() {
        assert_eq!(core::mem::size_of::<Once>(), 1);
    }

    #[test]
    fn runs_once_and_the_others_wait_for_it() {
        let once = Arc::new(Once::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let threads = if cfg!(miri) { 3 } else { 8 };
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (once, runs) = (once.clone(), runs.clone());
                std::thread::spawn(move || {
                    once.call_once(|| {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        runs.fetch_add(1, Ordering::SeqCst);
                    });
                    // Whoever returns sees the closure's effect.
                    assert_eq!(runs.load(Ordering::SeqCst), 1);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(once.state(), OnceState::Done);
    }

    #[test]
    fn a_panic_poisons_call_once_but_not_call_once_force() {
        let once = Once::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            once.call_once(|| panic!("boom"))
        }));
        assert!(r.is_err());
        assert_eq!(once.state(), OnceState::Poisoned);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| once.call_once(|| {})));
        assert!(r.is_err(), "call_once on a poisoned Once panics");
        let mut told = None;
        once.call_once_force(|state| told = Some(state.poisoned()));
        assert_eq!(told, Some(true));
        assert!(once.state().done());
    }

    #[test]
    fn the_steps_claim_one_run_and_poison_on_a_failed_one() {
        let once = Once::new();
        assert_eq!(once.try_begin(false), OnceBegin::Run(OnceState::New));
        assert_eq!(once.try_begin(true), OnceBegin::Running);
        assert_eq!(once.state(), OnceState::InProgress);
        // SAFETY: claimed just above.
        unsafe { once.finish(false) };
        assert_eq!(once.try_begin(false), OnceBegin::Poisoned);
        assert!(!once.call_once_unless_poisoned(|| panic!("must not run")));
        assert_eq!(once.try_begin(true), OnceBegin::Run(OnceState::Poisoned));
        // SAFETY: claimed just above.
        unsafe { once.finish(true) };
        assert_eq!(once.try_begin(false), OnceBegin::Done);
        assert!(once.call_once_unless_poisoned(|| panic!("must not run")));
    }

    #[test]
    fn a_wait_ends_when_the_run_ends() {
        let once = Arc::new(Once::new());
        assert_eq!(once.try_begin(false), OnceBegin::Run(OnceState::New));
        let deadline = crate::clock::deadline_after(std::time::Duration::from_millis(5));
        assert!(
            !once.wait_while_running(deadline),
            "times out while running"
        );
        let w = AsyncWaiter::new();
        // SAFETY: `w` is new and outlives its wait, which ends below.
        assert!(unsafe { once.wait_async_begin(&w) });
        let other = once.clone();
        let h = std::thread::spawn(move || other.wait_while_running(None));
        std::thread::sleep(std::time::Duration::from_millis(5));
        // SAFETY: claimed above.
        unsafe { once.finish(true) };
        assert!(h.join().unwrap());
        for _ in 0..5000 {
            if w.poll().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // SAFETY: queued above; if not woken yet, this ends its wait.
        assert!(w.poll().is_some() || unsafe { once.wait_async_cancel(&w) });
        // SAFETY: not queued: its wait ended.
        assert!(!unsafe { once.wait_async_begin(&w) });
        assert!(once.state().done());
    }
}
