//! The C ABI, for embedders (a JS engine implementing `Atomics.wait/notify`,
//! C code sharing locks with Rust). Declared in `include/parklot.h`; built
//! into the crate's static library. Pointers are checked for null and
//! alignment; a bad one gets `PARKLOT_EINVAL` and touches nothing.

use crate::futex::{self, WaitResult};
use crate::{Condition, Lock};
use core::time::Duration;
use std::sync::atomic::{AtomicI32, AtomicI64};

/// A bad argument: a null or misaligned pointer.
pub const PARKLOT_EINVAL: i32 = -1;
/// `parklot_unlock` on a lock that is not locked.
pub const PARKLOT_ENOTLOCKED: i32 = -2;
/// `PARKLOT_EOWNERDEAD`: the lock was taken, but its last holder died holding it.
pub const PARKLOT_EOWNERDEAD: i32 = -3;

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
    match unsafe { lock_ref(lock) } {
        Some(l) => {
            l.lock();
            0
        }
        None => PARKLOT_EINVAL,
    }
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
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| match l.lock_checked() {
        Ok(()) => 0,
        Err(crate::OwnerDied) => PARKLOT_EOWNERDEAD,
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
        None => {
            l.lock();
            1
        }
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
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        l.checked_unlock().map_or(PARKLOT_ENOTLOCKED, |()| 0)
    })
}

/// Releases the lock, handing it to the oldest waiter if any. Returns as
/// `parklot_unlock`.
///
/// # Safety
/// As for `parklot_lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_unlock_fair(lock: *const Lock) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { lock_ref(lock) }.map_or(PARKLOT_EINVAL, |l| {
        l.checked_unlock_fair().map_or(PARKLOT_ENOTLOCKED, |()| 0)
    })
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

/// Wakes every waiter. Returns how many, or `PARKLOT_EINVAL` for null.
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
    // The atomic's alignment, not the integer's: from_ptr requires it, and on
    // some targets it is the larger of the two.
    if addr.is_null() || !addr.cast::<AtomicI32>().is_aligned() {
        return PARKLOT_EINVAL;
    }
    // SAFETY: non-null and aligned (checked); live and atomic by the caller's contract.
    let atomic = unsafe { AtomicI32::from_ptr(addr as *mut i32) };
    wait_code(futex::wait32(atomic, expected, timeout_from_ns(timeout_ns)))
}

/// `Atomics.wait` on a 64-bit word; results as `parklot_wait32` (8-byte alignment).
///
/// # Safety
/// As for `parklot_wait32`.
#[no_mangle]
pub unsafe extern "C" fn parklot_wait64(addr: *const i64, expected: i64, timeout_ns: i64) -> i32 {
    // As in parklot_wait32: i686 aligns i64 to 4 but AtomicI64 to 8.
    if addr.is_null() || !addr.cast::<AtomicI64>().is_aligned() {
        return PARKLOT_EINVAL;
    }
    // SAFETY: as in parklot_wait32.
    let atomic = unsafe { AtomicI64::from_ptr(addr as *mut i64) };
    wait_code(futex::wait64(atomic, expected, timeout_from_ns(timeout_ns)))
}

/// `Atomics.notify`: wakes up to `count` waiters on `addr`, oldest first
/// (`PARKLOT_NOTIFY_ALL` for all). Returns how many. Any address is accepted:
/// nobody waits on a bad one.
#[no_mangle]
pub extern "C" fn parklot_notify(addr: *const core::ffi::c_void, count: u64) -> u64 {
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    futex::notify_address(addr as usize, count) as u64
}
