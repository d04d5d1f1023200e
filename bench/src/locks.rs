//! The locks under test, all behind parklot's one benchmark trait,
//! [`RawLock`]: parklot's `Lock` and `WordLock` and seed 000's toy locks
//! implement it in the runtime; here the outside peers (`std::sync::Mutex`,
//! `parking_lot::Mutex`, glibc's `pthread_mutex_t`) get thin wrappers so that
//! the same generic runners drive every lock alike.

use crate::floor::uncontended_ns;
use crate::runner::{run_round, Round, RoundConfig};
use parking_lot::lock_api::RawMutex;
use parklot::toy_locks::{
    BargingLock, CascadeLock, HandoffLock, PauseSpinLock, RawLock, ThunderLock, YieldSpinLock,
};
use parklot::{Lock, WordLock};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::{MutexGuard, PoisonError};

/// `std::sync::Mutex<()>` (a futex word on Linux) as a [`RawLock`]. std
/// unlocks only by dropping a guard, so the holder parks its guard in `guard`,
/// next to the mutex on the same cache line, and `unlock` drops it there.
pub struct StdMutex {
    mutex: std::sync::Mutex<()>,
    /// The holder's guard; `Some` exactly while the mutex is held through
    /// this wrapper. Touched only by the holder, between its lock and unlock.
    guard: UnsafeCell<Option<MutexGuard<'static, ()>>>,
}

// SAFETY: `guard` is only touched by the thread holding `mutex` (after its lock
// returned, before its unlock releases), so the mutex itself orders every
// access; the guard never leaves that thread (RawLock's unlock contract).
unsafe impl Sync for StdMutex {}
// SAFETY: unlocked, it is a plain std Mutex. A held one that moves can never
// be unlocked (RawLock's contract), and `Drop` forgets its guard unrun.
unsafe impl Send for StdMutex {}

impl Drop for StdMutex {
    fn drop(&mut self) {
        // Dropped while held (a caller that never unlocked): the guard points at
        // where the mutex was locked, maybe not here, so never run it. A locked
        // std Mutex may be dropped.
        std::mem::forget(self.guard.get_mut().take());
    }
}

// SAFETY: std's Mutex excludes; the guard parked between lock and unlock is
// that mutex's, and dropping it is std's own unlock.
unsafe impl RawLock for StdMutex {
    const NAME: &'static str = "std::sync::Mutex";

    fn new() -> Self {
        StdMutex {
            mutex: std::sync::Mutex::new(()),
            guard: UnsafeCell::new(None),
        }
    }

    #[inline]
    fn lock(&self) {
        // Nothing panics while holding it, so it is never poisoned.
        let guard = self.mutex.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: the guard borrows `self.mutex`, which stays at this address
        // until the matching unlock drops the guard (RawLock's contract), or
        // `Drop` forgets it; it never outlives the mutex in use.
        let guard: MutexGuard<'static, ()> = unsafe { std::mem::transmute(guard) };
        // SAFETY: we hold the mutex, so nobody else touches `guard`.
        unsafe { *self.guard.get() = Some(guard) };
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: this thread holds the mutex (the caller's contract), so the
        // cell is ours; dropping the guard releases the mutex.
        drop(unsafe { (*self.guard.get()).take() });
    }
}

/// `parking_lot::Mutex`'s raw lock as a [`RawLock`]: one byte, barging, 3
/// `pause` bursts then 7 yields before it parks (0.13 has no fairness timer).
/// lock_api 0.5 unlocks with the guard `lock` returned, a zero-sized marker
/// here, which the holder parks in `guard` (it costs no instruction).
pub struct ParkingLotMutex {
    raw: parking_lot::RawMutex,
    /// The holder's guard: written by `lock`, read back by `unlock`.
    guard: UnsafeCell<MaybeUninit<PlGuard>>,
}

type PlGuard = <parking_lot::RawMutex as RawMutex>::Guard;

// SAFETY: `guard` is only touched by the holder of `raw`, between its lock and
// unlock, so `raw` orders every access; the marker never leaves that thread
// (RawLock's unlock contract), which is all its !Send asks.
unsafe impl Sync for ParkingLotMutex {}
// SAFETY: the marker holds no data and needs no drop; the raw lock is Send.
unsafe impl Send for ParkingLotMutex {}

// SAFETY: parking_lot's RawMutex excludes; each unlock hands it the guard of
// the matching lock, as lock_api asks.
unsafe impl RawLock for ParkingLotMutex {
    const NAME: &'static str = "parking_lot::Mutex";

    fn new() -> Self {
        ParkingLotMutex {
            raw: <parking_lot::RawMutex as RawMutex>::INIT,
            guard: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    #[inline]
    fn lock(&self) {
        let guard = self.raw.lock();
        // SAFETY: we hold the lock, so nobody else touches `guard`.
        unsafe { (*self.guard.get()).write(guard) };
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: this thread holds the lock (the caller's contract), so its
        // `lock` wrote the guard and nobody else touches it.
        let guard = unsafe { (*self.guard.get()).assume_init_read() };
        // SAFETY: held by this thread, with this acquisition's guard.
        unsafe { self.raw.unlock(guard) }
    }
}

/// glibc's default `pthread_mutex_t` as a [`RawLock`], boxed: POSIX forbids
/// using a copy of a mutex, and the box keeps it at one address for life.
#[cfg(unix)]
pub struct PthreadMutex(Box<UnsafeCell<libc::pthread_mutex_t>>);

// SAFETY: a pthread mutex is made to be shared between threads; it is only
// touched through the pthread functions.
#[cfg(unix)]
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
#[cfg(unix)]
unsafe impl Sync for PthreadMutex {}

#[cfg(unix)]
impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, and `&mut self` means nobody uses it
        // any more. (Destroying a held default mutex is allowed to fail; the
        // result is ignored.)
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

// SAFETY: pthread_mutex_lock/unlock exclude; any error panics.
#[cfg(unix)]
unsafe impl RawLock for PthreadMutex {
    const NAME: &'static str = "pthread_mutex_t";

    fn new() -> Self {
        PthreadMutex(Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)))
    }

    #[inline]
    fn lock(&self) {
        // SAFETY: initialized, and pinned in its box.
        let err = unsafe { libc::pthread_mutex_lock(self.0.get()) };
        assert_eq!(err, 0, "pthread_mutex_lock failed");
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: initialized, pinned in its box, and held by this thread (the
        // caller's contract).
        let err = unsafe { libc::pthread_mutex_unlock(self.0.get()) };
        assert_eq!(err, 0, "pthread_mutex_unlock failed");
    }
}

/// One lock under test, type-erased: its name and its instantiations of the
/// generic measurements.
#[derive(Copy, Clone)]
pub struct Peer {
    /// [`RawLock::NAME`].
    pub name: &'static str,
    /// One contended round ([`run_round`]) on a fresh lock of this type.
    pub contend: fn(&RoundConfig) -> Round,
    /// Nanoseconds per uncontended lock + unlock over this many pairs.
    pub uncontended_ns: fn(u64) -> f64,
}

impl Peer {
    /// The peer for lock type `L`.
    pub const fn of<L: RawLock>() -> Peer {
        Peer {
            name: L::NAME,
            contend: run_round::<L>,
            uncontended_ns: uncontended_ns::<L>,
        }
    }
}

/// The lock every ratio is taken against.
pub const BASELINE: &str = <Lock as RawLock>::NAME;

/// Every lock, parklot's `Lock` first: the peers of experiments (a), (c), (d)
/// and the floor. `BargingLock<40>` is Lock's algorithm with a fixed spin
/// limit, so it also checks that the sweep's lock measures like Lock.
pub const LOCKS: &[Peer] = &[
    Peer::of::<Lock>(),
    Peer::of::<WordLock>(),
    Peer::of::<StdMutex>(),
    Peer::of::<ParkingLotMutex>(),
    #[cfg(unix)]
    Peer::of::<PthreadMutex>(),
    Peer::of::<YieldSpinLock>(),
    Peer::of::<PauseSpinLock>(),
    Peer::of::<ThunderLock>(),
    Peer::of::<CascadeLock>(),
    Peer::of::<HandoffLock>(),
    Peer::of::<BargingLock>(),
];

/// `(limit, BargingLock<limit>)` for each listed spin limit.
macro_rules! spin_sweep {
    ($($limit:literal),*) => {
        &[$(($limit, Peer::of::<BargingLock<$limit>>())),*]
    };
}

/// Experiment (b): the spin limits swept, each its own instantiation of
/// `BargingLock` (see its doc for why a const generic). Seed 000 swept 0–100
/// and found a plateau from about 10 to 60, best at 40.
pub const SPIN_SWEEP: &[(u32, Peer)] = spin_sweep![0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 80, 100];

/// `BargingLock<limit>` if `limit` is one of [`SPIN_SWEEP`]'s.
pub fn barging_lock(limit: u32) -> Option<Peer> {
    SPIN_SWEEP
        .iter()
        .find(|&&(l, _)| l == limit)
        .map(|&(_, peer)| peer)
}

/// The spin limit of the lock named `name`, if it is one of [`SPIN_SWEEP`]'s.
pub fn spin_limit_of(name: &str) -> Option<u32> {
    SPIN_SWEEP
        .iter()
        .find(|(_, peer)| peer.name == name)
        .map(|&(limit, _)| limit)
}

/// The peer named `name` in [`LOCKS`].
pub fn lock_named(name: &str) -> Option<Peer> {
    LOCKS.iter().copied().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_in_order_and_named_uniquely() {
        assert_eq!(LOCKS[0].name, BASELINE);
        let mut names: Vec<&str> = LOCKS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LOCKS.len());
        assert!(SPIN_SWEEP.windows(2).all(|w| w[0].0 < w[1].0));
        for (limit, peer) in SPIN_SWEEP {
            assert_eq!(peer.name, format!("BargingLock<{limit}>"));
        }
        assert!(lock_named("HandoffLock").is_some());
        assert_eq!(barging_lock(20).map(|p| p.name), Some("BargingLock<20>"));
        assert_eq!(spin_limit_of("BargingLock<20>"), Some(20));
        assert_eq!(
            (barging_lock(7).is_none(), spin_limit_of("Lock")),
            (true, None)
        );
    }

    #[test]
    fn std_mutex_wrapper_excludes_and_unlocks() {
        let m = StdMutex::new();
        m.lock();
        assert!(m.mutex.try_lock().is_err());
        // SAFETY: locked just above, on this thread.
        unsafe { m.unlock() };
        assert!(m.mutex.try_lock().is_ok());
        // Dropping a held one must not run (or leak into) anything else.
        let held = StdMutex::new();
        held.lock();
        drop(held);
    }
}
