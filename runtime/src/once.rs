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

use crate::blocking::{refuse_to_block, thread_may_block};
use crate::lock::spin_limit;
use crate::parking_lot;
use crate::sync::{self, AtomicU8, Ordering};

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
        self.call_slow(false, &mut |_| (f.take().expect("runs once"))());
    }

    /// Like [`call_once`](Self::call_once), but runs `f` even if the `Once`
    /// is poisoned (telling it so through [`OnceState::poisoned`]).
    pub fn call_once_force(&self, f: impl FnOnce(OnceState)) {
        if self.state.load(Ordering::Acquire) & DONE != 0 {
            return;
        }
        let mut f = Some(f);
        self.call_slow(true, &mut |state| (f.take().expect("runs once"))(state));
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

    #[cold]
    fn call_slow(&self, ignore_poison: bool, f: &mut dyn FnMut(OnceState)) {
        let limit = spin_limit();
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Acquire);
            if s & DONE != 0 {
                return;
            }
            if s & RUNNING == 0 {
                if s & POISONED != 0 && !ignore_poison {
                    panic!("Once instance has previously been poisoned");
                }
                if self
                    .state
                    .compare_exchange_weak(s, s | RUNNING, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                let state = if s & POISONED != 0 {
                    OnceState::Poisoned
                } else {
                    OnceState::New
                };
                // On a panic the guard poisons the byte and wakes the waiters.
                let mut finish = Finish {
                    once: self,
                    ends_as: POISONED,
                };
                f(state);
                finish.ends_as = DONE;
                return;
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
            if !thread_may_block() {
                refuse_to_block("Once::call_once while another thread runs it");
            }
            // SAFETY: the callback only reads this Once's byte.
            unsafe {
                parking_lot::park_conditionally(
                    self.key(),
                    || self.state.load(Ordering::Relaxed) & (RUNNING | PARKED) == RUNNING | PARKED,
                    || {},
                    |_, _| {},
                    None,
                );
            }
            spins = 0;
        }
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

impl Default for Once {
    fn default() -> Self {
        Once::new()
    }
}

impl core::fmt::Debug for Once {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Once")
            .field("state", &self.state())
            .finish()
    }
}

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
}
