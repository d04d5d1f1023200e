//! `Lock`: a one-byte adaptive lock (seed 000, "WTF::Lock").
//!
//! State byte:
//!
//! | bit | name     | meaning                                                  |
//! |-----|----------|----------------------------------------------------------|
//! | 0   | `LOCKED` | some thread holds the lock                               |
//! | 1   | `PARKED` | threads may be parked in the ParkingLot on this address  |
//! | 2   | `OWNER_DIED` | the last owner was reaped while holding the lock: the data it guards may be inconsistent |
//! | 3   | `WAKING` | a parked thread was woken to compete and has not run yet (the mark policy) |
//!
//! Transitions:
//! - lock: `LOCKED` 0 → 1 by CAS, whatever `PARKED` says (barging);
//! - a locker that gave up spinning sets `PARKED` by CAS while `LOCKED` is
//!   set, then parks only if the byte is still `LOCKED | PARKED` (checked under
//!   the queue lock, so an unlock cannot slip between check and sleep);
//! - unlock: swap 0 in (the fast path). Had the byte more than `LOCKED`
//!   (`PARKED`), the lock is taken back by CAS with `PARKED` restored and
//!   released the slow way below, or, if a barger took it meanwhile, `PARKED`
//!   is restored under the barger, whose unlock then wakes the parked;
//! - the slow release (`PARKED` set): under the queue lock, wake the oldest waiter and
//!   store `PARKED` if more remain, else 0; or, when the bucket's fairness timer
//!   says so (or on `unlock_fair`), keep `LOCKED` set and hand the lock to the
//!   woken thread, so nobody waits much longer than a millisecond of barging;
//! - wakes are throttled, one of two ways ([`set_carry_parked`] picks). By
//!   default natively, a mark (Go's `sync.Mutex` does the same with its
//!   `mutexWoken`): a thread woken to compete is marked `WAKING` with the
//!   store above, and while the mark stands a release that would only wake
//!   another (not `unlock_fair`) clears `LOCKED` and wakes nobody: the woken
//!   thread is on its way, and when it runs it clears `WAKING` and either
//!   takes the lock or parks again, so the next release wakes the next one.
//!   Without it, a running thread that locks and unlocks in a loop woke a
//!   sleeper at every unlock, and the woken, finding the lock taken again,
//!   slept again: on 2 CPUs with 8 workers, JS calling the wasm `Lock` ran at
//!   16.5 million acquisitions a second against 33 million with it. Only the
//!   release path sets and honours it (`checked_unlock`, the C and wasm
//!   exports, `unlock_fair`); `unlock`'s swap clears it with the rest of the
//!   byte, which costs at most a wake that was not needed. (Measured and
//!   not kept: `unlock` through the release path cost native threads 3–13% of
//!   their contended throughput, and in wasm 2.5 ns per uncontended lock +
//!   unlock for no gain in the module's own loop.) Async waiters are
//!   never marked (their owner's event loop may be busy for long), and a
//!   woken thread that dies before it clears the mark is reaped like one that
//!   never took its wakeup (`park_owing_until_settled`): the reaper clears the
//!   mark and passes the wake on;
//!   Or, by default in wasm, the woken thread carries the bit: a release that
//!   wakes a blocking thread while others stay queued clears `PARKED` outright
//!   and hands the bit to the woken thread (token `TOKEN_RETRY_CARRY`): seed
//!   000's CascadeLock, made exact by the callback. Until that thread runs,
//!   the byte reads plain `LOCKED` or 0, so the running threads' `lock` and
//!   `unlock` stay on their fast paths, the swap included, and wake nobody;
//!   once it runs, it takes the lock with `PARKED` set (its unlock wakes the
//!   next) or sets `PARKED` before it parks again, and never spins first. The
//!   invariant: threads are queued only if `PARKED` is set or a woken thread
//!   carries it. In wasm, where a spinning thread cannot yield, the throttle
//!   above never reached the module's own `unlock` (the swap), which woke a
//!   thread at every release only to see it park again: on 2 CPUs with 4 to 16
//!   workers looping on one lock inside wasm, carrying the bit took the Lock
//!   from 28–39 to 66–90 million acquisitions a second at about half the CPU,
//!   above every toy lock. Natively it gained no throughput and cost fairness
//!   (seed 000's 10 threads for 100 ms: least/most lucky 0.14–0.16 by median
//!   over 9 rounds against 0.59–0.83 for the mark; 0.47–0.61 even with lockers
//!   spinning whatever `PARKED` says, as CascadeLock does): there the woken
//!   threads' churn is what spreads the lock over threads that can yield, so
//!   native builds keep the mark. Async waiters never carry it (their owner's
//!   event loop may be busy for long). A woken thread that dies before it runs
//!   is reaped, and its reaper sets the bit it carried and passes the wake on;
//! - a waiter that times out as the last one clears `PARKED` under the queue lock;
//! - a condition's `notify_all` that moves its waiters onto this lock's queue
//!   ([`crate::Condition::notify_all`]) sets `PARKED` under the queue lock:
//!   by CAS while the lock is held (then the holder's release wakes the first
//!   of them), else after moving them, having woken the first to compete
//!   (whose release wakes the next). The moved wait like async waiters: woken
//!   to compete, they are never marked `WAKING` nor carry `PARKED`;
//! - a reaper releasing the lock of an owner that is gone
//!   ([`Lock::unlock_owner_died`]) sets `OWNER_DIED` as it releases (never
//!   handing over); acquisitions keep it, the holder reads and clears it with
//!   [`Lock::take_owner_died`], and every unlock clears it. It is never set
//!   on the fast paths' expected values, so they cost nothing more.

use crate::acquire::{self, AcquireState, Look, Next};
use crate::clock::{deadline_after, Instant};
use crate::diagnostics::{self, Kind};
use crate::macros::{cfg_items, default_and_debug, message_error};
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, UnparkToken};
use crate::sync::{AtomicU8, Ordering};
use core::sync::atomic::{AtomicBool, AtomicU32};
use core::time::Duration;

const LOCKED: u8 = 1;
const PARKED: u8 = 2;
const OWNER_DIED: u8 = 4;
const WAKING: u8 = 8;

/// Unpark token: the unlocker kept `LOCKED` set for you; you own the lock.
const TOKEN_HANDOFF: UnparkToken = 1;
/// Unpark token: the lock was released; compete for it again.
const TOKEN_RETRY: UnparkToken = 0;
/// Unpark token: compete again, and carry `PARKED`: others are still queued
/// and the byte no longer says so (module docs).
const TOKEN_RETRY_CARRY: UnparkToken = 2;

/// Spins before parking, while nobody is parked. 40 is seed 000's measured
/// optimum (a plateau from about 10 to 60); the native suite's spin-limit
/// sweep (`bench/`, `BargingLock<0..100>` at 4 threads) re-measures it here.
pub const DEFAULT_SPIN_LIMIT: u32 = 40;

// A tuning knob read once per slow path, not a synchronisation variable, so
// it is a plain atomic even under loom.
static SPIN_LIMIT: AtomicU32 = AtomicU32::new(DEFAULT_SPIN_LIMIT);

/// Sets how many times a contended `lock` yields and retries before it
/// parks, for every `Lock` in the process.
pub fn set_spin_limit(spins: u32) {
    SPIN_LIMIT.store(spins, Ordering::Relaxed);
}

/// The current spin limit (see [`set_spin_limit`]).
#[inline] // one load, in the branch of `lock` that leads to `lock_slow`
pub fn spin_limit() -> u32 {
    SPIN_LIMIT.load(Ordering::Relaxed)
}

// A policy read once per slow release, like SPIN_LIMIT. Loom checks both
// policies (tests/loom.rs).
static CARRY_PARKED: AtomicBool = AtomicBool::new(cfg!(target_family = "wasm"));

/// Sets how a `Lock` release that wakes a parked thread while others stay
/// queued leaves the byte, for every `Lock` in the process: `true`, the woken
/// thread carries the `PARKED` bit and the byte forgets it until that thread
/// runs (the default in wasm: the most throughput); `false`, the byte keeps
/// `PARKED` and marks the wake in flight (the default natively: the fairest
/// where threads can yield). Both are exact; see the `lock` module docs.
pub fn set_carry_parked(on: bool) {
    CARRY_PARKED.store(on, Ordering::Relaxed);
}

/// The current policy (see [`set_carry_parked`]).
pub fn carry_parked() -> bool {
    CARRY_PARKED.load(Ordering::Relaxed)
}

/// What an embedder that records its threads' holds does at the moment a
/// release gives a lock's byte up ([`Lock::checked_unlock_recorded`]):
/// forget the hold. Called once, on the releasing thread, right after the
/// compare-and-swap or the store that gives the byte up (inside the unpark
/// callback, under the queue lock, for a release that wakes a waiter). It
/// must not call anything: an engine can stop a thread in any call's
/// prologue, and one stopped between the byte and the record would leave
/// them disagreeing. Implement it `#[inline(always)]`, with plain stores.
pub trait OnRelease {
    /// The byte was given up: forget the hold.
    fn released(self);
}

/// Nothing to forget: a release with no record of its own.
impl OnRelease for () {
    #[inline(always)]
    fn released(self) {}
}

/// What a waiter on a lock owes the others if its owner is reaped (see
/// [`parking_lot::Abandon`]): as the last waiter, the PARKED bit; a hand-off
/// it never took, the lock; a wake to compete, that wake (and the PARKED bit,
/// if it carried it).
static LOCK_ABANDON: Abandon = Abandon {
    dequeued: |lock, was_last| owed_lock(lock).forget_parked_if_last(was_last),
    // The holder's release wakes whoever is still parked.
    settle: |_| {},
    claimed: |lock, token| {
        let lock = owed_lock(lock);
        if token == TOKEN_HANDOFF {
            // Held on the gone owner's behalf, who never entered: release it.
            let _ = lock.release(false, 0, ());
        } else {
            if token == TOKEN_RETRY_CARRY {
                // Others are queued and only the dead thread knew: say so in
                // the byte, so that the holder's unlock (or ours) wakes one.
                lock.state.fetch_or(PARKED, Ordering::Relaxed);
            } else {
                // A woken thread that will never run cannot clear its mark.
                lock.state.fetch_and(!WAKING, Ordering::Relaxed);
            }
            if lock.try_lock() {
                // Take and release it, which wakes the next parked waiter.
                let _ = lock.release(false, 0, ());
            }
        }
    },
};

/// The lock a wait that owes LOCK_ABANDON was queued on.
fn owed_lock<'a>(object: *const ()) -> &'a Lock {
    // SAFETY: `Lock::owed` is the only maker of such debts, and a lock
    // outlives its waiters (park_owing's contract).
    unsafe { &*object.cast::<Lock>() }
}

/// Returned by [`Lock::lock_checked`] when the lock's last owner was reaped
/// while holding it (the caller holds the lock now).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OwnerDied;

message_error!(
    OwnerDied,
    "the lock's last owner died holding it: you hold it now, and the data it guards may be inconsistent"
);

/// Returned by [`Lock::checked_unlock`] for a lock that was not locked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NotLocked;

message_error!(
    NotLocked,
    "the lock is not locked: unlock only a lock you hold, once per lock()"
);

/// A one-byte lock: barging, adaptive (spins a little, then parks), with
/// eventual fairness. Uncontended `lock` and `unlock` are one CAS each.
///
/// ```
/// let lock = parklot::Lock::new();
/// lock.lock();
/// assert!(!lock.try_lock());
/// lock.unlock();
/// ```
///
/// For data guarded by a lock, use [`Mutex`].
#[repr(transparent)] // one byte, guaranteed: C and the wasm module rely on it
pub struct Lock {
    state: AtomicU8,
}

impl Lock {
    /// An unlocked lock.
    #[cfg(not(loom))]
    pub const fn new() -> Lock {
        Lock {
            state: AtomicU8::new(0),
        }
    }

    /// An unlocked lock.
    #[cfg(loom)]
    pub fn new() -> Lock {
        Lock {
            state: AtomicU8::new(0),
        }
    }

    /// Acquires the lock, spinning briefly and then parking until it is free.
    ///
    /// On a thread that may not block ([`crate::set_thread_may_block`]) it
    /// waits awake, in the same queue, instead of parking.
    ///
    /// # Panics
    /// If deadlock detection is on ([`crate::deadlock`]) and waiting would
    /// close a cycle; [`lock_or_deadlock`](Self::lock_or_deadlock) returns it.
    #[inline]
    pub fn lock(&self) {
        // The process-wide limit is read only here, off the fast path; the
        // slow path gives up without a deadline only when refused.
        if !self.cas(0, LOCKED) && !self.lock_slow(spin_limit(), None) {
            crate::deadlock::refused();
        }
        diagnostics::acquired(self.key(), Kind::Lock);
    }

    /// Acquires the lock like [`lock`](Self::lock), or, with deadlock
    /// detection on, returns the cycle that waiting would close, holding
    /// nothing new.
    pub fn lock_or_deadlock(&self) -> Result<(), crate::deadlock::DeadlockError> {
        self.lock_or_deadlock_with(Self::lock_slow)
    }

    /// [`lock_or_deadlock`](Self::lock_or_deadlock) for an embedder that
    /// reaps the threads it runs and records their holds (the wasm module):
    /// if the thread parked, its wakeup's debt stays on record until the
    /// caller, having recorded the hold (or the refusal), calls
    /// [`parking_lot::settled`]. A thread stopped for good on its way back
    /// from its wakeup to the lock's byte (in a call's prologue or at a
    /// loop's back edge, where engines stop a thread) then has its wakeup
    /// passed on by its reaper: the lock handed to it is released, the
    /// `PARKED` bit it carried is put back. Its reaper must not pass it on
    /// once the hold is recorded ([`parking_lot::abandon_thread`]'s `took`).
    pub fn lock_or_deadlock_owing(&self) -> Result<(), crate::deadlock::DeadlockError> {
        self.lock_or_deadlock_with(Self::lock_slow_owing)
    }

    /// [`lock_or_deadlock`](Self::lock_or_deadlock) with the slow path given.
    #[inline(always)]
    fn lock_or_deadlock_with(
        &self,
        slow: fn(&Self, u32, Option<Instant>) -> bool,
    ) -> Result<(), crate::deadlock::DeadlockError> {
        if !self.cas(0, LOCKED) && !slow(self, spin_limit(), None) {
            return Err(crate::deadlock::take_deadlock().expect("refused by detection"));
        }
        diagnostics::acquired(self.key(), Kind::Lock);
        Ok(())
    }

    /// [`lock`](Self::lock) with a spin limit of the caller's choosing instead
    /// of the process-wide one: how [`crate::toy_locks::BargingLock`] reuses
    /// this algorithm (seed 000's "configurable WTF::Lock") without a copy.
    #[cfg(not(loom))]
    #[inline]
    pub(crate) fn lock_with_spin_limit(&self, spin_limit: u32) {
        if !self.cas(0, LOCKED) && !self.lock_slow(spin_limit, None) {
            crate::deadlock::refused();
        }
        diagnostics::acquired(self.key(), Kind::Lock);
    }

    /// Acquires the lock like [`lock`](Self::lock), and reports whether its
    /// last owner was reaped while holding it (robust mutexes' `EOWNERDEAD`):
    /// `Err(OwnerDied)` means the caller holds the lock and should check the
    /// data it guards.
    pub fn lock_checked(&self) -> Result<(), OwnerDied> {
        self.lock();
        if self.take_owner_died() {
            return Err(OwnerDied);
        }
        Ok(())
    }

    /// For the holder: whether the lock's last owner was reaped while holding
    /// it (see [`unlock_owner_died`](Self::unlock_owner_died)). Reports it
    /// once: the mark is cleared.
    #[inline]
    pub fn take_owner_died(&self) -> bool {
        self.state.load(Ordering::Relaxed) & OWNER_DIED != 0
            && self.state.fetch_and(!OWNER_DIED, Ordering::Relaxed) & OWNER_DIED != 0
    }

    /// Releases a lock whose holder is gone for good (a reaped thread), and
    /// marks it so that the next holder learns it from
    /// [`take_owner_died`](Self::take_owner_died). Never hands the lock over.
    ///
    /// # Safety
    /// The lock is held by a thread that will never run again.
    pub unsafe fn unlock_owner_died(&self) -> Result<(), NotLocked> {
        diagnostics::released(self.key());
        self.release(false, OWNER_DIED, ())
    }

    /// Acquires the lock if it is free, without waiting.
    #[inline]
    pub fn try_lock(&self) -> bool {
        let taken = self.try_lock_unseen();
        if taken {
            diagnostics::acquired(self.key(), Kind::Lock);
        }
        taken
    }

    /// [`try_lock`](Self::try_lock) unseen by the diagnostics: for the paths
    /// that report the acquisition themselves, and for an embedder that
    /// reads [`crate::diagnostics::mode_address`] on its own side and calls
    /// this only while diagnostics are off (the wasm module's JS does: a
    /// check in wasm cost JavaScriptCore a sixth of an uncontended
    /// lock/unlock, the same check in JS nothing measurable). Used while
    /// diagnostics are on, the acquisition goes unrecorded: the graph then
    /// misses a holder, as for a lock taken before they were switched on.
    #[inline]
    pub fn try_lock_unseen(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & LOCKED != 0 {
                return false;
            }
            match self.state.compare_exchange_weak(
                state,
                state | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(s) => state = s,
            }
        }
    }

    /// Acquires the lock, waiting at most `timeout`. Returns whether it did.
    pub fn try_lock_for(&self, timeout: Duration) -> bool {
        self.try_lock_until_option(deadline_after(timeout))
    }

    /// [`try_lock_for`](Self::try_lock_for) whose wakeup's debt the caller
    /// settles, as for [`lock_or_deadlock_owing`](Self::lock_or_deadlock_owing).
    pub fn try_lock_for_owing(&self, timeout: Duration) -> bool {
        self.try_lock_until_with(deadline_after(timeout), Self::lock_slow_owing)
    }

    /// Acquires the lock, waiting until `deadline` at the latest (a
    /// [`Instant`], or a `std::time::Instant`). Returns whether it did.
    pub fn try_lock_until(&self, deadline: impl Into<Instant>) -> bool {
        self.try_lock_until_option(Some(deadline.into()))
    }

    fn try_lock_until_option(&self, deadline: Option<Instant>) -> bool {
        self.try_lock_until_with(deadline, Self::lock_slow)
    }

    #[inline(always)]
    fn try_lock_until_with(
        &self,
        deadline: Option<Instant>,
        slow: fn(&Self, u32, Option<Instant>) -> bool,
    ) -> bool {
        let taken = self.try_lock_unseen() || slow(self, spin_limit(), deadline);
        if taken {
            diagnostics::acquired(self.key(), Kind::Lock);
        }
        taken
    }

    /// Releases the lock. If threads are parked, wakes the oldest; it
    /// competes with running threads, unless it is time to be fair, when it
    /// is handed the lock directly.
    ///
    /// # Panics
    /// If the lock is not locked.
    #[inline]
    pub fn unlock(&self) {
        // A swap, not a CAS: measured 0.45 ns less per lock + unlock here
        // (xchg against lock cmpxchg). It releases whatever the byte held, so
        // anything but a plain `LOCKED` (or `LOCKED | OWNER_DIED`, which every
        // unlock clears) is put right after the fact.
        diagnostics::released(self.key());
        let prev = self.state.swap(0, Ordering::Release);
        if prev & (LOCKED | PARKED) != LOCKED {
            self.unlock_after_swap(prev);
        }
    }

    /// The rest of [`unlock`](Self::unlock) when its swap took away more than
    /// `LOCKED`: with `PARKED`, the lock went free while threads are queued
    /// and the bit that tells the next unlock to wake them went with it; with
    /// no `LOCKED`, the lock was not locked at all.
    #[cold]
    fn unlock_after_swap(&self, prev: u8) {
        if prev & LOCKED == 0 {
            // Nothing was held: put back what the swap cleared (but WAKING,
            // which the woken thread may have cleared since), then refuse.
            self.state.fetch_or(prev & !WAKING, Ordering::Relaxed);
            panic!("Lock::unlock: {NotLocked}");
        }
        // Parked threads, an unlocked byte and no PARKED bit. Either take the
        // lock back (PARKED restored) and release it the slow way, which wakes
        // or hands over; or, if a barger holds it, restore PARKED under it,
        // so that its unlock wakes them. A waiter cannot sleep meanwhile on
        // the stale word: it parks only on LOCKED | PARKED.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let (new, retook) = if state & LOCKED == 0 {
                (state | LOCKED | PARKED, true)
            } else {
                (state | PARKED, false)
            };
            match self
                .state
                .compare_exchange_weak(state, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) if retook => return self.unlock_slow_or_panic(false),
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
    }

    /// Releases the lock and, if threads are parked, hands it directly to the
    /// oldest one (no barging).
    ///
    /// # Panics
    /// If the lock is not locked.
    pub fn unlock_fair(&self) {
        diagnostics::released(self.key());
        if !self.release_alone() {
            self.unlock_slow_or_panic(true);
        }
    }

    /// Like [`unlock`](Self::unlock), but a lock that is not locked is
    /// reported instead of panicking (and left untouched).
    #[inline]
    pub fn checked_unlock(&self) -> Result<(), NotLocked> {
        // A plain `LOCKED` byte (nobody queued, no mark) is released by one
        // CAS here; the rest of the protocol stays out of line, with the
        // stack frame its queue walk needs (160 bytes of wasm's shadow stack,
        // set up and torn down on every call when this was one function).
        // Not a swap as in `unlock`: a byte that is not locked must not be
        // touched, even for a moment.
        self.checked_release(false)
    }

    /// Like [`unlock_fair`](Self::unlock_fair), but a lock that is not
    /// locked is reported instead of panicking (and left untouched).
    #[inline]
    pub fn checked_unlock_fair(&self) -> Result<(), NotLocked> {
        // With nobody queued there is nobody to hand the lock to.
        self.checked_release(true)
    }

    /// The checked releases, reported to the diagnostics.
    #[inline]
    fn checked_release(&self, fair: bool) -> Result<(), NotLocked> {
        diagnostics::released(self.key());
        self.checked_unlock_unseen(fair)
    }

    /// [`checked_unlock`](Self::checked_unlock) (`fair`: or
    /// [`checked_unlock_fair`](Self::checked_unlock_fair)) unseen by the
    /// diagnostics, for the embedder of [`try_lock_unseen`](Self::try_lock_unseen),
    /// while diagnostics are off (a release they miss leaves the graph a
    /// holder that is gone). One CAS for a plain `LOCKED` byte, else the
    /// whole protocol, out of line.
    #[inline]
    pub fn checked_unlock_unseen(&self, fair: bool) -> Result<(), NotLocked> {
        self.checked_unlock_recorded(fair, false, ())
    }

    /// [`checked_unlock`](Self::checked_unlock) (`fair`: its fair form;
    /// `seen`: reported to the diagnostics) for an embedder that keeps its
    /// own record of each lock's holder, where a reaper reads it once the
    /// thread is gone (the wasm module): `on.released()` runs at the moment
    /// the byte stops saying this thread holds the lock, right after the
    /// releasing compare-and-swap or inside the unpark callback (under the
    /// queue lock, with the byte's change). A thread stopped for good
    /// anywhere else on the way (an engine stops a thread in a call's
    /// prologue or at a loop's back edge) leaves its record and the byte
    /// agreeing: before that moment both say it holds the lock, and its
    /// reaper releases it, marked owner-died; after it, neither does.
    /// Not called on `Err`: the byte was not locked, and nothing changed.
    #[inline]
    pub fn checked_unlock_recorded(
        &self,
        fair: bool,
        seen: bool,
        on: impl OnRelease,
    ) -> Result<(), NotLocked> {
        if seen {
            diagnostics::released(self.key());
        }
        if self.release_alone() {
            on.released();
            return Ok(());
        }
        self.release(fair, 0, on)
    }

    /// Releases the lock if its byte is a plain `LOCKED` (nobody queued, no
    /// mark) with one CAS, reporting the release to the diagnostics if
    /// `seen`; false, changing nothing, for any other byte (then call
    /// [`checked_unlock`](Self::checked_unlock) or its kin, which wake the
    /// waiters). Inlined, with no call: for an embedder that must change
    /// its own record of the holder and the byte with nothing in between
    /// where a thread can be stopped (the wasm module's `unlock`).
    #[inline(always)]
    pub fn unlock_if_uncontended(&self, seen: bool) -> bool {
        let done = self.release_alone();
        if done && seen {
            diagnostics::released(self.key());
        }
        done
    }

    /// Releases a plain `LOCKED` byte (nobody queued, no mark) with one CAS;
    /// false, changing nothing, for any other byte.
    #[inline]
    fn release_alone(&self) -> bool {
        self.state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether some thread holds the lock (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCKED != 0
    }

    /// Whether threads may be parked waiting for the lock (a snapshot).
    #[inline]
    pub fn has_parked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & PARKED != 0
    }

    /// Whether a parked thread was woken to compete and has not run yet (a
    /// snapshot): until it runs, releases do not wake another.
    #[inline]
    pub fn has_woken_waiter(&self) -> bool {
        self.state.load(Ordering::Relaxed) & WAKING != 0
    }

    /// Asynchronous locking, for threads that may not block, step 1: takes
    /// the lock if it is free, else queues `waiter` in the same queue as
    /// parked threads and returns `false`. Never blocks; spins only while the
    /// lock's byte changes under it.
    ///
    /// When the waiter's word turns 0 (see [`AsyncWaiter`]), call
    /// [`lock_async_resume`](Self::lock_async_resume); to give up, call
    /// [`lock_async_cancel`](Self::lock_async_cancel).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until this
    /// attempt ends (acquired, or cancelled).
    pub unsafe fn lock_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        self.took_async(unsafe { acquire::queue_async(self, false, waiter) })
    }

    /// Step 2, after the waiter's word turned 0 (or a wakeup that may be
    /// spurious): returns `true` if the lock is now ours, `false` if the
    /// waiter is queued (again) and should wait for its word once more.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_async_begin` on this lock.
    pub unsafe fn lock_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        let taken = unsafe { self.lock_async_resume_owing(waiter) };
        waiter.settled();
        taken
    }

    /// [`lock_async_resume`](Self::lock_async_resume) whose wakeup's debt
    /// stays on the record until the caller, having recorded its hold, calls
    /// `waiter.settled()` (see [`lock_or_deadlock_owing`](Self::lock_or_deadlock_owing)
    /// and [`parking_lot::abandon_async_holding`]).
    ///
    /// # Safety
    /// As for [`lock_async_resume`](Self::lock_async_resume).
    pub unsafe fn lock_async_resume_owing(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        self.took_async(unsafe { acquire::resume_async(self, waiter) })
    }

    /// Gives up an asynchronous attempt (a timeout, a cancellation). Returns
    /// `true` if the lock was ours after all (handed over, or free) and the
    /// caller must unlock it; `false` if nothing is held. Leaves no queue entry.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_async_begin` on this lock and the
    /// attempt has not ended.
    pub unsafe fn lock_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        self.took_async(unsafe { acquire::cancel_async(self, waiter) })
    }

    /// Reports an async step's acquisition to the diagnostics.
    #[inline]
    fn took_async(&self, taken: bool) -> bool {
        if taken {
            diagnostics::acquired(self.key(), Kind::Lock);
        }
        taken
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Lock as usize
    }

    /// A condition waiter moved here was handed the lock: report it.
    pub(crate) fn handed_to_me(&self) {
        diagnostics::acquired(self.key(), Kind::Lock);
    }

    /// What a waiter on this lock owes the others if it is reaped (also a
    /// condition waiter moved onto this lock's queue).
    pub(crate) fn owed(&self) -> Owed {
        Owed {
            abandon: &LOCK_ABANDON,
            object: (self as *const Lock).cast(),
            with: core::ptr::null(),
            kind: Kind::Lock,
        }
    }

    /// One weak CAS of the byte from `current` to `new`: the whole fast path
    /// of `lock` (0 → LOCKED), and every attempt of the slow paths. Acquire,
    /// so that taking the lock orders the critical section after the last
    /// unlock (for setting PARKED, Relaxed would do).
    #[inline]
    fn cas(&self, current: u8, new: u8) -> bool {
        self.state
            .compare_exchange_weak(current, new, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// For a requeue onto this lock, under its queue lock: sets `PARKED` if
    /// the lock is held, so that the holder's release wakes the moved
    /// waiters. Returns whether it was held (else it changes nothing).
    pub(crate) fn mark_parked_if_locked(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & LOCKED == 0 {
                return false;
            }
            match self.state.compare_exchange_weak(
                state,
                state | PARKED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// For a requeue onto this lock, under its queue lock, after it moved
    /// waiters here while the lock was free: sets `PARKED`, so that whoever
    /// releases it next (the waiter the requeue woke, or a barger) wakes one.
    pub(crate) fn mark_parked(&self) {
        self.state.fetch_or(PARKED, Ordering::Relaxed);
    }

    /// The token a requeue onto this lock hands the waiter it wakes to
    /// compete, as a release that wakes one does.
    pub(crate) const TOKEN_WAKE: UnparkToken = TOKEN_RETRY;

    /// Whether a waiter that this lock's release woke with `token` was
    /// handed the lock (else it competes for it again).
    pub(crate) const fn handed_over(token: UnparkToken) -> bool {
        token == TOKEN_HANDOFF
    }

    /// The byte parkers validate against: held, with parked threads.
    #[inline]
    fn parked_and_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (LOCKED | PARKED) == LOCKED | PARKED
    }

    /// A waiter that gave up was the last one: nobody is parked any more.
    /// Under the queue lock (also for a condition waiter moved onto it).
    #[inline]
    pub(crate) fn forget_parked_if_last(&self, was_last: bool) {
        if was_last {
            self.state.fetch_and(!PARKED, Ordering::Relaxed);
        }
    }

    /// Spins up to `spin_limit` yields while nobody is parked, then parks
    /// until the lock is ours or `deadline` passes. Returns whether it is ours.
    #[cold]
    fn lock_slow(&self, spin_limit: u32, deadline: Option<Instant>) -> bool {
        let taken = self.lock_slow_owing(spin_limit, deadline);
        parking_lot::settled();
        taken
    }

    /// [`lock_slow`](Self::lock_slow), leaving a wakeup's debt on record for
    /// the caller to settle (`lock_or_deadlock_owing`).
    #[cold]
    fn lock_slow_owing(&self, spin_limit: u32, deadline: Option<Instant>) -> bool {
        acquire::park_blocking(self, spin_limit, deadline)
    }

    #[cold]
    fn unlock_slow_or_panic(&self, fair: bool) {
        if let Err(e) = self.release(fair, 0, ()) {
            panic!("Lock::unlock: {e}");
        }
    }

    /// The whole unlock protocol, fast path included. `mark` (0 or
    /// `OWNER_DIED`) is left set in the released byte; a marked release never
    /// hands over. `on` runs once the byte is given up (a hand-off gives it
    /// to the woken waiter), with nothing in between.
    #[inline(never)]
    fn release(&self, force_fair: bool, mark: u8, on: impl OnRelease) -> Result<(), NotLocked> {
        loop {
            let state = self.state.load(Ordering::Relaxed);
            if state & LOCKED == 0 {
                return Err(NotLocked);
            }
            let new = if state & PARKED == 0 {
                mark
            } else if state & WAKING != 0 && !force_fair {
                // A woken thread is on its way: release and wake nobody.
                (state & (PARKED | WAKING)) | mark
            } else {
                break;
            };
            if self
                .state
                .compare_exchange_weak(state, new, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                on.released();
                return Ok(());
            }
        }
        // Threads are parked. While we hold LOCKED only PARKED can change, and
        // only under the queue lock, where the callback runs.
        // SAFETY: the callback stores this lock's byte (and `on` its
        // caller's record) only: no panics, no ParkingLot calls.
        unsafe {
            parking_lot::unpark_one(self.key(), |r| {
                // The chosen waiter ends its wait with our token, asleep or
                // not yet: a hand-off always reaches it (if its owner is gone,
                // reaping it releases the lock; see LOCK_ABANDON).
                if r.did_unpark && mark == 0 && (force_fair || r.time_to_be_fair) {
                    if !r.may_have_more {
                        self.state.store(LOCKED, Ordering::Relaxed);
                    }
                    on.released();
                    return TOKEN_HANDOFF;
                }
                // A blocking thread woken to compete either carries PARKED
                // (if others stay queued) or is marked until it runs.
                let carry = carry_parked() && r.woken_settles_later;
                let parked = if r.may_have_more && !carry { PARKED } else { 0 };
                let waking = if r.woken_settles_later && !carry {
                    WAKING
                } else {
                    0
                };
                // A swap, not a store: a locker sets PARKED outside the queue
                // lock, and loom finds executions where a plain store here,
                // though later, is ordered before that CAS and a parker then
                // validates against the stale LOCKED | PARKED and sleeps forever
                // (tests/loom.rs, `reaping_a_lock_waiter_against_a_fair_unlock`).
                self.state.swap(parked | waking | mark, Ordering::Release);
                on.released();
                if carry && r.may_have_more {
                    TOKEN_RETRY_CARRY
                } else {
                    TOKEN_RETRY
                }
            });
        }
        Ok(())
    }
}

/// The Lock's byte for the acquire skeleton. The round is whether the waiter
/// carries `PARKED` (module docs): it takes the lock with the bit set, and
/// never spins first.
// SAFETY: the callbacks only load or clear bits of this lock's byte, and a
// lock outlives its waiters (LOCK_ABANDON's debt).
unsafe impl AcquireState for Lock {
    type Word = u8;
    type Round = bool;
    // A woken thread clears its `WAKING` mark before its debt ends.
    const SETTLE_LATER: bool = true;

    fn kind(&self) -> Kind {
        Kind::Lock
    }

    #[inline]
    fn look(&self, carrying: bool) -> Look<u8> {
        let state = self.state.load(Ordering::Relaxed);
        if state & LOCKED == 0 {
            let carried = if carrying { PARKED } else { 0 };
            return if self.cas(state, state | LOCKED | carried) {
                Look::Acquired
            } else {
                Look::Raced
            };
        }
        if state & PARKED != 0 {
            return Look::Queue;
        }
        // Nobody is queued (or only we know it): spinning may get us the
        // lock cheaply, unless the queue waits on our news.
        Look::Unmarked {
            word: state,
            may_spin: !carrying,
        }
    }

    #[inline]
    fn mark_parked(&self, seen: u8) -> bool {
        self.cas(seen, seen | PARKED)
    }

    // The byte says PARKED: the bit we carried is handed back.
    fn queued(_: bool) -> bool {
        false
    }

    fn queue_key(&self, _: bool) -> usize {
        self.key()
    }

    fn should_park(&self, _: bool) -> bool {
        self.parked_and_locked()
    }

    fn left_queue(&self, _: bool, was_last: bool) {
        self.forget_parked_if_last(was_last);
    }

    fn debt(&self, _: bool) -> Owed {
        self.owed()
    }

    fn woken(&self, _: bool, token: UnparkToken, blocking: bool) -> Next<bool> {
        match token {
            // The unlocker kept LOCKED set for us. Acquire: its Release
            // handoff (through the parker) orders its critical section before ours.
            TOKEN_HANDOFF => Next::Done(true),
            // Async records never carry PARKED nor are marked.
            _ if !blocking => Next::Again(false),
            TOKEN_RETRY_CARRY => Next::Again(true),
            _ => {
                // Running now: let the next release wake another.
                self.state.fetch_and(!WAKING, Ordering::Relaxed);
                Next::Again(false)
            }
        }
    }

    fn cancelled_after_wake(&self, _: bool, token: UnparkToken) -> bool {
        token == TOKEN_HANDOFF || self.try_lock_unseen()
    }
}

default_and_debug!(Lock {
    "locked": is_locked,
    "parked": has_parked,
    "woken_waiter": has_woken_waiter
});

/// lock_api's mutex traits for `$t`, a [`Lock`] (`$lock` reaches it from
/// `$this`, the `&self`) that every `RawMutex::unlock` releases with
/// `$unlock` (`unlock`, or `unlock_fair` for a lock whose every unlock is
/// fair).
#[cfg(not(loom))]
macro_rules! lock_api_mutex {
    ($t:ident, |$this:ident| $lock:expr, $unlock:ident) => {
        // SAFETY: `lock`/`try_lock*` return only once LOCKED is ours, and only
        // the holder clears it (`$unlock` and `unlock_fair` release the same
        // acquisition); the guard carries no state, so any thread may unlock.
        unsafe impl lock_api::RawMutex for $t {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: $t = $t::new();
            type Guard = lock_api::GuardSend;

            #[inline]
            fn lock(&self) -> Self::Guard {
                let $this = self;
                $lock.lock();
                lock_api::GuardSend::new()
            }

            #[inline]
            fn try_lock(&self) -> Option<Self::Guard> {
                let $this = self;
                $lock.try_lock().then(lock_api::GuardSend::new)
            }

            #[inline]
            unsafe fn unlock(&self, _guard: Self::Guard) {
                let $this = self;
                $lock.$unlock()
            }

            fn is_locked(&self) -> bool {
                let $this = self;
                $lock.is_locked()
            }
        }

        // SAFETY: as for RawMutex; `unlock_fair` releases the same acquisition.
        unsafe impl lock_api::RawMutexFair for $t {
            unsafe fn unlock_fair(&self, _guard: Self::Guard) {
                let $this = self;
                $lock.unlock_fair()
            }

            unsafe fn bump(&self, _guard: &mut Self::Guard) {
                let $this = self;
                // Nobody parked: nobody to let in, so keep the lock.
                if $lock.has_parked() {
                    $lock.unlock_fair();
                    $lock.lock();
                }
            }
        }

        // SAFETY: as for RawMutex; a `None` result leaves the lock untouched.
        unsafe impl lock_api::RawMutexTimed for $t {
            type Duration = core::time::Duration;
            type Instant = $crate::Instant;

            fn try_lock_for(&self, timeout: core::time::Duration) -> Option<Self::Guard> {
                let $this = self;
                $lock.try_lock_for(timeout).then(lock_api::GuardSend::new)
            }

            fn try_lock_until(&self, deadline: $crate::Instant) -> Option<Self::Guard> {
                let $this = self;
                $lock
                    .try_lock_until(deadline)
                    .then(lock_api::GuardSend::new)
            }
        }
    };
}
#[cfg(not(loom))]
pub(crate) use lock_api_mutex;

#[cfg(not(loom))]
lock_api_mutex!(Lock, |lock| lock, unlock);

cfg_items! {
    #[cfg(not(loom))]

    /// Data guarded by a one-byte [`Lock`].
    ///
    /// ```
    /// let counter = parklot::Mutex::new(0);
    /// *counter.lock() += 1;
    /// assert_eq!(*counter.lock(), 1);
    /// ```
    pub type Mutex<T> = lock_api::Mutex<Lock, T>;

    /// Proof of holding a [`Mutex`]; unlocks when dropped.
    pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, Lock, T>;

    /// A [`MutexGuard`] narrowed to part of the data.
    pub type MappedMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, Lock, T>;
}

#[cfg(all(test, not(loom)))]
mod tests;
