//! The C ABI, for embedders (a JS engine implementing `Atomics.wait/notify`,
//! C code sharing locks with Rust). Declared in `include/parklot.h`; built
//! into the crate's static library. Pointers are checked for null and
//! alignment; a bad one gets `PARKLOT_EINVAL` and touches nothing.

use crate::futex::{self, WaitResult, Word};
use crate::{Condition, Lock};
use core::time::Duration;
use std::sync::atomic::{AtomicI32, AtomicI64};

/// A bad argument: a null or misaligned pointer.
pub const PARKLOT_EINVAL: i32 = -1;
/// `parklot_unlock` on a lock that is not locked.
pub const PARKLOT_ENOTLOCKED: i32 = -2;
/// `PARKLOT_EOWNERDEAD`: the lock was taken, but its last holder died holding it.
pub const PARKLOT_EOWNERDEAD: i32 = -3;
/// `parklot_once` on a `Once` whose closure panicked (in Rust code sharing it).
pub const PARKLOT_EPOISONED: i32 = -4;
/// A barrier wait failed: the barrier is broken ([`BarrierError::Broken`]).
pub const PARKLOT_BARRIER_BROKEN: i32 = -5;
/// A barrier wait gave up first and broke the barrier ([`BarrierError::TimedOut`]).
pub const PARKLOT_BARRIER_TIMED_OUT: i32 = -6;
/// Deadlock detection refused a wait that would have closed a cycle
/// ([`crate::deadlock`]): nothing was taken.
pub const PARKLOT_EDEADLK: i32 = -7;

/// An acquisition that detection may refuse, as the C result: `ok` if it
/// took it, else `PARKLOT_EDEADLK` (the cycle kept for `parklot_last_deadlock`).
fn refusable(r: Result<(), crate::deadlock::DeadlockError>, ok: i32) -> i32 {
    match r {
        Ok(()) => ok,
        Err(cycle) => {
            crate::diagnostics::keep_deadlock(cycle);
            PARKLOT_EDEADLK
        }
    }
}

fn timeout_from_ns(timeout_ns: i64) -> Option<Duration> {
    // Negative: wait forever, as a C caller would pass -1.
    u64::try_from(timeout_ns).ok().map(Duration::from_nanos)
}

/// # Safety
/// `lock` is null or points at a `parklot_lock_t` that lives as long as the call.
unsafe fn lock_ref<'a>(lock: *const Lock) -> Option<&'a Lock> {
    // SAFETY: caller's contract; a Lock is one byte, so any address is aligned.
    unsafe { lock.as_ref() }
}

/// Acquires the lock. Returns 0, or `PARKLOT_EINVAL` for a null pointer.
///
/// # Safety
/// `lock` is null or points at a live `parklot_lock_t`.
#[no_mangle]
pub unsafe extern "C" fn parklot_lock(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| refusable(l.lock_or_deadlock(), 0))
}

/// Acquires the lock and reports a holder that died holding it: 0, or
/// `PARKLOT_EOWNERDEAD` (the caller holds the lock; the data it guards may be
/// inconsistent), or `PARKLOT_EINVAL` for a null pointer.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_lock_checked(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        match refusable(l.lock_or_deadlock(), 0) {
            0 if l.take_owner_died() => PARKLOT_EOWNERDEAD,
            code => code,
        }
    })
}

/// Releases a lock held by a thread that is gone for good, marking it so
/// that the next `parklot_lock_checked` reports `PARKLOT_EOWNERDEAD`.
/// Returns 0, `PARKLOT_ENOTLOCKED` (nothing changed) or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_lock`, and the lock's holder will never run again.
#[no_mangle]
pub unsafe extern "C" fn parklot_unlock_owner_died(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller (the holder is gone).
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        // SAFETY: the caller vouches that the holder is gone.
        unsafe { l.unlock_owner_died() }.map_or(PARKLOT_ENOTLOCKED, |()| 0)
    })
}

/// Takes the lock if free. Returns 1 if taken, 0 if not, `PARKLOT_EINVAL` for null.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_try_lock(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| l.try_lock() as i32)
}

/// Takes the lock, waiting at most `timeout_ns` (negative: forever). Returns
/// 1 if taken, 0 on timeout, `PARKLOT_EINVAL` for null.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_try_lock_for(lock: *const Lock, timeout_ns: i64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| match timeout_from_ns(timeout_ns) {
        Some(t) => l.try_lock_for(t) as i32,
        None => refusable(l.lock_or_deadlock(), 1),
    })
}

/// Releases the lock. Returns 0, `PARKLOT_ENOTLOCKED` (nothing changed), or
/// `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_unlock(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| released(l.checked_unlock()))
}

/// Releases the lock, handing it to the oldest waiter if any. Returns as
/// `parklot_unlock`.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_unlock_fair(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| released(l.checked_unlock_fair()))
}

/// Whether the lock is held (1) or not (0); `PARKLOT_EINVAL` for null.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_is_locked(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| l.is_locked() as i32)
}

/// Releases `lock`, waits for a notify on `cond` or for `timeout_ns`
/// (negative: forever), and re-takes `lock`. Returns 1 if notified, 0 on
/// timeout, `PARKLOT_ENOTLOCKED` if `lock` was not held, `PARKLOT_EINVAL` for null.
///
/// # Safety
/// Both pointers are null or live; the caller holds `lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_condition_wait(
    cond: *const Condition,
    lock: *const Lock,
    timeout_ns: i64,
) -> i32 {
    // SAFETY: caller's contract; both types are one byte, so always aligned.
    let (Some(c), Some(l)) = (unsafe { cond.as_ref() }, unsafe { lock_ref(lock) }) else {
        return PARKLOT_EINVAL;
    };
    if !l.is_locked() {
        return PARKLOT_ENOTLOCKED;
    }
    let deadline = timeout_from_ns(timeout_ns).and_then(crate::clock::deadline_after);
    // SAFETY: the caller holds `lock` (checked as far as a lock without an owner can be).
    unsafe { c.wait_raw(l, deadline) as i32 }
}

/// Wakes the oldest waiter. Returns 1 if there was one, 0 if not,
/// `PARKLOT_EINVAL` for null.
///
/// # Safety
/// `cond` is null or live.
#[no_mangle]
pub unsafe extern "C" fn parklot_condition_notify_one(cond: *const Condition) -> i32 {
    // SAFETY: caller's contract.
    unsafe { cond.as_ref() }.map_or(PARKLOT_EINVAL, |c| c.notify_one() as i32)
}

/// Wakes every waiter: blocked ones are moved onto their lock's queue (none
/// woken while the lock is held, one if it is free) and wake as its waiters
/// do. Returns how many it released, or `PARKLOT_EINVAL` for null.
///
/// # Safety
/// `cond` is null or live.
#[no_mangle]
pub unsafe extern "C" fn parklot_condition_notify_all(cond: *const Condition) -> i64 {
    // SAFETY: caller's contract.
    unsafe { cond.as_ref() }.map_or(PARKLOT_EINVAL as i64, |c| c.notify_all() as i64)
}

fn wait_code(r: WaitResult) -> i32 {
    r as i32
}

/// `Atomics.wait` on a 32-bit word: 0 ok, 1 not-equal, 2 timed-out, or
/// `PARKLOT_EINVAL` (null or not 4-byte aligned). `timeout_ns` negative: forever.
///
/// # Safety
/// `addr` is null, misaligned, or points at a live int32 accessed only atomically.
#[no_mangle]
pub unsafe extern "C" fn parklot_wait32(addr: *const i32, expected: i32, timeout_ns: i64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { wait_at::<AtomicI32>(addr, expected, timeout_ns) }
}

/// `Atomics.wait` on a 64-bit word; results as `parklot_wait32` (8-byte alignment).
///
/// # Safety
/// As for `parklot_wait32`.
#[no_mangle]
pub unsafe extern "C" fn parklot_wait64(addr: *const i64, expected: i64, timeout_ns: i64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { wait_at::<AtomicI64>(addr, expected, timeout_ns) }
}

/// `parklot_wait32` and `parklot_wait64`.
///
/// # Safety
/// As for `parklot_wait32`.
unsafe fn wait_at<A: Word>(addr: *const A::Value, expected: A::Value, timeout_ns: i64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { A::at(addr) }.map_or(PARKLOT_EINVAL, |atomic| {
        wait_code(futex::wait(atomic, expected, timeout_from_ns(timeout_ns)))
    })
}

/// `Atomics.notify`: wakes up to `count` waiters on `addr`, oldest first
/// (`PARKLOT_NOTIFY_ALL` for all). Returns how many. Any address is accepted:
/// nobody waits on a bad one.
#[no_mangle]
pub extern "C" fn parklot_notify(addr: *const core::ffi::c_void, count: u64) -> u64 {
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    futex::notify_address(addr as usize, count) as u64
}

// ----- RwLock, Semaphore, Barrier, Once -----

use crate::{Barrier, BarrierError, BarrierWaitResult, Once, RawRwLock, RwLockPolicy, Semaphore};

/// A 4-byte-aligned, non-null pointer as a reference, or `None`.
///
/// # Safety
/// `p` is null, misaligned, or points at a live `T` for the call.
pub(crate) unsafe fn aligned_ref<'a, T>(p: *const T) -> Option<&'a T> {
    if !p.is_aligned() {
        return None;
    }
    // SAFETY: aligned (checked), null handled by as_ref, live by the caller.
    unsafe { p.as_ref() }
}

/// Writes a new object (`make`'s) at `p`: 0, or `PARKLOT_EINVAL` for a null
/// or misaligned `p` or arguments that are not `valid` (nothing written).
///
/// # Safety
/// `p` is null, misaligned, or points at writable memory for a `T` that no
/// thread uses yet.
unsafe fn init<T>(p: *mut T, valid: bool, make: impl FnOnce() -> T) -> i32 {
    if p.is_null() || !p.is_aligned() || !valid {
        return PARKLOT_EINVAL;
    }
    // SAFETY: non-null, aligned, writable and unused (caller's contract).
    unsafe { p.write(make()) };
    0
}

/// Turns a relative timeout (negative: forever, 0: one try) and the three
/// ways to take something (wait without end, try now, wait at most a
/// `Duration`) into the C result: 1 taken, 0 timed out.
fn timed(
    timeout_ns: i64,
    forever: impl FnOnce() -> i32,
    now: impl FnOnce() -> bool,
    within: impl FnOnce(Duration) -> bool,
) -> i32 {
    match timeout_from_ns(timeout_ns) {
        Some(t) => (now() || (!t.is_zero() && within(t))) as i32,
        None => forever(),
    }
}

/// The C functions of each way to hold a reader-writer lock (read, write,
/// upgradable read): take it (0 or `PARKLOT_EINVAL`), try it with a relative
/// timeout ([`timed`]'s 1 or 0, or `PARKLOT_EINVAL`), release it (0,
/// `PARKLOT_ENOTLOCKED` or `PARKLOT_EINVAL`), over the `RawRwLock` methods
/// named. `lock` is null, misaligned, or points at a live, initialised
/// `parklot_rwlock_t` (each function's safety contract).
macro_rules! rwlock_hold {
    ($(
        $(#[$doc:meta])* $what:literal: $take:ident, $try_for:ident, $release:ident
            = $lock:ident, $now:ident, $within:ident, $unlock:ident;
    )*) => {$(
        $(#[$doc])*
        #[doc = " Returns 0, `PARKLOT_EDEADLK` (deadlock detection refused the wait;"]
        #[doc = " nothing taken) or `PARKLOT_EINVAL`."]
        ///
        /// # Safety
        /// `lock` is null, misaligned, or points at a live, initialised `parklot_rwlock_t`.
        #[no_mangle]
        pub unsafe extern "C" fn $take(lock: *const RawRwLock) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { aligned_ref(lock) }.map_or(PARKLOT_EINVAL, |l| refusable(l.$lock(), 0))
        }

        #[doc = concat!("Takes ", $what, ", waiting at most `timeout_ns` (0: do not wait;")]
        /// negative: forever). Returns 1 if taken, 0 if not, `PARKLOT_EINVAL`.
        ///
        /// # Safety
        /// As for `parklot_rwlock_read`.
        #[no_mangle]
        pub unsafe extern "C" fn $try_for(lock: *const RawRwLock, timeout_ns: i64) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { aligned_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
                timed(timeout_ns, || refusable(l.$lock(), 1), || l.$now(), |t| l.$within(t))
            })
        }

        #[doc = concat!("Releases ", $what, ". Returns 0, `PARKLOT_ENOTLOCKED` (not held by")]
        /// anyone; nothing changed) or `PARKLOT_EINVAL`.
        ///
        /// # Safety
        /// As for `parklot_rwlock_read`.
        #[no_mangle]
        pub unsafe extern "C" fn $release(lock: *const RawRwLock) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { aligned_ref(lock) }.map_or(PARKLOT_EINVAL, |l| released(l.$unlock()))
        }
    )*};
}

/// A checked release as the C result: 0, or `PARKLOT_ENOTLOCKED` (nothing changed).
fn released(r: Result<(), crate::NotLocked>) -> i32 {
    r.map_or(PARKLOT_ENOTLOCKED, |()| 0)
}

/// Initialises a reader-writer lock: writer-preferring if `prefer_writers`
/// is non-zero. Returns 0 or `PARKLOT_EINVAL`.
///
/// # Safety
/// `lock` is null, misaligned, or points at writable memory for a
/// `parklot_rwlock_t` that no thread uses yet.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_init(lock: *mut RawRwLock, prefer_writers: i32) -> i32 {
    let policy = if prefer_writers != 0 {
        RwLockPolicy::PreferWriters
    } else {
        RwLockPolicy::PreferReaders
    };
    // SAFETY: forwarded from the caller.
    unsafe { init(lock, true, || RawRwLock::with_policy(policy)) }
}

rwlock_hold! {
    /// Takes a read (shared) lock.
    "a read lock": parklot_rwlock_read, parklot_rwlock_try_read_for, parklot_rwlock_unlock_read
        = lock_shared_or_deadlock, try_lock_shared, try_lock_shared_for, checked_unlock_shared;
    /// Takes the write (exclusive) lock.
    "the write lock": parklot_rwlock_write, parklot_rwlock_try_write_for, parklot_rwlock_unlock_write
        = lock_exclusive_or_deadlock, try_lock_exclusive, try_lock_exclusive_for, checked_unlock_exclusive;
    /// Takes an upgradable read: shared with plain readers, exclusive of
    /// writers and of other upgradable readers.
    "an upgradable read": parklot_rwlock_upgradable_read, parklot_rwlock_try_upgradable_read_for,
        parklot_rwlock_unlock_upgradable
        = lock_upgradable_or_deadlock, try_lock_upgradable, try_lock_upgradable_for, checked_unlock_upgradable;
}

/// Turns the caller's write lock into a read lock. Returns 0,
/// `PARKLOT_ENOTLOCKED` or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read`; the caller holds the write lock.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_downgrade(lock: *const RawRwLock) -> i32 {
    // SAFETY: forwarded from the caller, who holds the write lock.
    unsafe { change_held(lock, RawRwLock::is_write_held, RawRwLock::downgrade) }
}

/// Runs `change` on the lock if `held` says the hold it changes is there:
/// 0, `PARKLOT_ENOTLOCKED` (nothing changed) or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read`; `change` is sound when the caller holds
/// what `held` checks (the C caller's contract).
unsafe fn change_held(
    lock: *const RawRwLock,
    held: fn(&RawRwLock) -> bool,
    change: unsafe fn(&RawRwLock),
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        if !held(l) {
            return PARKLOT_ENOTLOCKED;
        }
        // SAFETY: the caller holds what `held` saw (our contract).
        unsafe { change(l) };
        0
    })
}

/// Turns the caller's upgradable read into the write lock, waiting for the
/// other readers to leave (new readers wait meanwhile). Returns 0,
/// `PARKLOT_ENOTLOCKED` (no upgradable read is held; nothing changed) or
/// `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read`; the caller holds the upgradable read.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_upgrade(lock: *const RawRwLock) -> i32 {
    // SAFETY: forwarded from the caller, who holds the upgradable read.
    unsafe { change_held(lock, RawRwLock::is_upgradable_held, RawRwLock::upgrade) }
}

/// Upgrades, waiting at most `timeout_ns` (0: do not wait; negative:
/// forever). Returns 1 if upgraded, 0 if not (the upgradable read is still
/// held), `PARKLOT_ENOTLOCKED` or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_upgrade`.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_try_upgrade_for(
    lock: *const RawRwLock,
    timeout_ns: i64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        if !l.is_upgradable_held() {
            return PARKLOT_ENOTLOCKED;
        }
        timed(
            timeout_ns,
            // SAFETY: the caller holds the upgradable read.
            || {
                // SAFETY: as above.
                unsafe { l.upgrade() };
                1
            },
            // SAFETY: as above; a failed try or timeout leaves it held.
            || unsafe { l.try_upgrade() },
            // SAFETY: as above.
            |t| unsafe { l.try_upgrade_for(t) },
        )
    })
}

/// Turns the caller's write lock into an upgradable read, letting waiting
/// plain readers in. Returns 0, `PARKLOT_ENOTLOCKED` or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read`; the caller holds the write lock.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_downgrade_to_upgradable(lock: *const RawRwLock) -> i32 {
    // SAFETY: forwarded from the caller, who holds the write lock.
    unsafe {
        change_held(
            lock,
            RawRwLock::is_write_held,
            RawRwLock::downgrade_to_upgradable,
        )
    }
}

/// Turns the caller's upgradable read into a plain read, letting another
/// upgradable reader in. Returns 0, `PARKLOT_ENOTLOCKED` or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read`; the caller holds the upgradable read.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_downgrade_upgradable(lock: *const RawRwLock) -> i32 {
    // SAFETY: forwarded from the caller, who holds the upgradable read.
    unsafe {
        change_held(
            lock,
            RawRwLock::is_upgradable_held,
            RawRwLock::downgrade_upgradable,
        )
    }
}

/// Initialises a semaphore with `permits` free permits. Returns 0 or
/// `PARKLOT_EINVAL` (a bad pointer, or more than 2^30 − 1 permits).
///
/// # Safety
/// `sem` is null, misaligned, or points at writable memory for a
/// `parklot_semaphore_t` that no thread uses yet.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_init(sem: *mut Semaphore, permits: u32) -> i32 {
    let valid = permits <= crate::MAX_PERMITS;
    // SAFETY: forwarded from the caller.
    unsafe { init(sem, valid, || Semaphore::new(permits)) }
}

/// Takes `n` permits, waiting at most `timeout_ns` (0: do not wait;
/// negative: forever). Returns 1 if taken, 0 if not, `PARKLOT_EINVAL` (also
/// for `n` over the most a semaphore holds).
///
/// # Safety
/// `sem` is null, misaligned, or points at a live, initialised `parklot_semaphore_t`.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_acquire(
    sem: *const Semaphore,
    n: u32,
    timeout_ns: i64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { aligned_ref(sem) } {
        Some(s) if n <= crate::MAX_PERMITS => timed(
            timeout_ns,
            || {
                s.acquire(n);
                1
            },
            || s.try_acquire(n),
            |t| s.try_acquire_for(n, t),
        ),
        _ => PARKLOT_EINVAL,
    }
}

/// Returns `n` permits. Returns 0, or `PARKLOT_EINVAL` (a bad pointer, or
/// more free permits than a semaphore holds: nothing changed).
///
/// # Safety
/// As for `parklot_semaphore_acquire`.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_release(sem: *const Semaphore, n: u32) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(sem) }.map_or(PARKLOT_EINVAL, |s| {
        if s.try_release(n) {
            0
        } else {
            PARKLOT_EINVAL
        }
    })
}

/// How many permits are free (a snapshot), or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_semaphore_acquire`.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_available(sem: *const Semaphore) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(sem) }.map_or(PARKLOT_EINVAL as i64, |s| i64::from(s.available()))
}

/// Initialises a barrier for `parties` threads. Returns 0 or `PARKLOT_EINVAL`
/// (a bad pointer, or more than 65535 parties).
///
/// # Safety
/// `barrier` is null, misaligned, or points at writable memory for a
/// `parklot_barrier_t` that no thread uses yet.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_init(barrier: *mut Barrier, parties: u32) -> i32 {
    let valid = parties <= crate::MAX_PARTIES;
    // SAFETY: forwarded from the caller.
    unsafe { init(barrier, valid, || Barrier::new(parties)) }
}

/// Waits until `parties` threads wait. Returns 1 for the one thread that
/// opened the barrier (the leader), 0 for the others,
/// `PARKLOT_BARRIER_BROKEN`, `PARKLOT_EINVAL`.
///
/// # Safety
/// `barrier` is null, misaligned, or points at a live, initialised
/// `parklot_barrier_t`, which outlives every wait at it.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_wait(barrier: *const Barrier) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(barrier) }.map_or(PARKLOT_EINVAL, |b| barrier_code(b.wait_checked()))
}

/// `parklot_barrier_wait`, waiting at most `timeout_ns` (negative: forever):
/// also `PARKLOT_BARRIER_TIMED_OUT` (this wait broke the barrier).
///
/// # Safety
/// As for `parklot_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_wait_for(barrier: *const Barrier, timeout_ns: i64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(barrier) }.map_or(PARKLOT_EINVAL, |b| {
        barrier_code(match timeout_from_ns(timeout_ns) {
            Some(timeout) => b.wait_for(timeout),
            None => b.wait_checked(),
        })
    })
}

/// Mends a broken barrier: nobody has arrived, and the threads waiting at it
/// now fail with `PARKLOT_BARRIER_BROKEN`. Returns 0 or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_reset(barrier: *const Barrier) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(barrier) }.map_or(PARKLOT_EINVAL, |b| {
        b.reset();
        0
    })
}

/// 1 if the barrier is broken, 0 if not, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_is_broken(barrier: *const Barrier) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(barrier) }.map_or(PARKLOT_EINVAL, |b| b.is_broken() as i32)
}

/// A barrier wait's outcome as C reads it: 1 leader, 0 passed, or an error.
pub(crate) fn barrier_code(r: Result<BarrierWaitResult, BarrierError>) -> i32 {
    match r {
        Ok(r) => r.is_leader() as i32,
        Err(BarrierError::Broken) => PARKLOT_BARRIER_BROKEN,
        Err(BarrierError::TimedOut) => PARKLOT_BARRIER_TIMED_OUT,
    }
}

/// Calls `f(context)` if no call through this `once` has completed, waiting
/// for one that another thread is making. Returns 0, `PARKLOT_EPOISONED` (a
/// Rust closure sharing this `Once` panicked: `f` did not run) or
/// `PARKLOT_EINVAL`. (`f` must return normally: a C function cannot unwind,
/// so C alone never poisons a `Once`.)
///
/// # Safety
/// `once` is null or points at a live `parklot_once_t`; `f` is safe to call
/// with `context`.
#[no_mangle]
pub unsafe extern "C" fn parklot_once(
    once: *const Once,
    f: Option<unsafe extern "C" fn(*mut core::ffi::c_void)>,
    context: *mut core::ffi::c_void,
) -> i32 {
    // SAFETY: caller's contract; a Once is one byte, so always aligned.
    let (Some(o), Some(f)) = (unsafe { once.as_ref() }, f) else {
        return PARKLOT_EINVAL;
    };
    // SAFETY: the caller vouches for `f` and `context`.
    if o.call_once_unless_poisoned(|| unsafe { f(context) }) {
        0
    } else {
        PARKLOT_EPOISONED
    }
}

/// Whether a call through `once` has completed (1) or not (0), or `PARKLOT_EINVAL`.
///
/// # Safety
/// `once` is null or points at a live `parklot_once_t`.
#[no_mangle]
pub unsafe extern "C" fn parklot_once_done(once: *const Once) -> i32 {
    // SAFETY: caller's contract.
    unsafe { once.as_ref() }.map_or(PARKLOT_EINVAL, |o| o.state().done() as i32)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    unsafe extern "C" fn count(context: *mut core::ffi::c_void) {
        // SAFETY: the tests pass a live u32.
        unsafe { *context.cast::<u32>() += 1 };
    }

    #[test]
    fn parklot_once_reports_a_poisoned_once_without_running_or_unwinding() {
        let once = Once::new();
        let r = std::panic::catch_unwind(|| once.call_once(|| panic!("a Rust closure fails")));
        assert!(r.is_err());
        let mut runs = 0u32;
        let context = (&mut runs as *mut u32).cast();
        // SAFETY: a live Once, a function that counts into the live `runs`.
        assert_eq!(
            unsafe { parklot_once(&once, Some(count), context) },
            PARKLOT_EPOISONED
        );
        assert_eq!(runs, 0);
        let fresh = Once::new();
        // SAFETY: as above.
        unsafe {
            assert_eq!(parklot_once(&fresh, Some(count), context), 0);
            assert_eq!(parklot_once(&fresh, Some(count), context), 0);
        }
        assert_eq!(runs, 1);
    }
}
