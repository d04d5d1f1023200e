//! The rest of the toolkit exported to JS: the reader-writer
//! lock, the semaphore and the barrier, over raw addresses as in the crate
//! root (the JS wrapper checks every address before it calls in: kind,
//! bounds, alignment; that check is what each `// SAFETY:` relies on).
//!
//! Unlike the Lock, these keep no per-thread record of what a thread holds:
//! a release checks that the lock is held in that mode, not by whom.

use crate::{acquired, released, timeout, waiter_at};
use parklot::{Barrier, RawRwLock, RwLockPolicy, Semaphore};
use wasm_bindgen::prelude::*;

/// The `RawRwLock` at `addr`.
///
/// # Safety
/// `addr` is the 4-byte-aligned address of a live `RawRwLock` (from `alloc`,
/// set up by [`rwlock_init`]) that stays allocated while used.
unsafe fn rwlock_at<'a>(addr: u32) -> &'a RawRwLock {
    // SAFETY: the caller's contract; RawRwLock is repr(transparent) over an AtomicU32.
    unsafe { &*(addr as *const RawRwLock) }
}

fn yes_no(taken: bool) -> u32 {
    if taken {
        acquired::YES
    } else {
        acquired::NO
    }
}

/// Sets up the reader-writer lock at `addr` (4 zeroed bytes, aligned to 4)
/// with its policy.
#[wasm_bindgen]
pub fn rwlock_init(addr: u32, prefer_writers: bool) {
    let policy = if prefer_writers {
        RwLockPolicy::PreferWriters
    } else {
        RwLockPolicy::PreferReaders
    };
    // SAFETY: an address the JS wrapper allocated for this lock, unused yet.
    unsafe { (addr as *mut RawRwLock).write(RawRwLock::with_policy(policy)) };
}

/// Takes a read, waiting at most `timeout_ms` (+∞: forever; 0: a try).
#[wasm_bindgen]
pub fn rwlock_read_for(addr: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { rwlock_at(addr) };
    yes_no(match timeout(timeout_ms) {
        None => {
            l.lock_shared();
            true
        }
        Some(t) => l.try_lock_shared() || (!t.is_zero() && l.try_lock_shared_for(t)),
    })
}

/// Takes the write lock, waiting at most `timeout_ms` (+∞: forever; 0: a try).
#[wasm_bindgen]
pub fn rwlock_write_for(addr: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { rwlock_at(addr) };
    yes_no(match timeout(timeout_ms) {
        None => {
            l.lock_exclusive();
            true
        }
        Some(t) => l.try_lock_exclusive() || (!t.is_zero() && l.try_lock_exclusive_for(t)),
    })
}

/// Releases a read: `released::OK`, or `released::NOT_LOCKED` (nobody reads).
#[wasm_bindgen]
pub fn rwlock_unlock_read(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { rwlock_at(addr) };
    l.checked_unlock_shared()
        .map_or(released::NOT_LOCKED, |()| released::OK)
}

/// Releases the write lock: `released::OK`, or `released::NOT_LOCKED`.
#[wasm_bindgen]
pub fn rwlock_unlock_write(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { rwlock_at(addr) };
    l.checked_unlock_exclusive()
        .map_or(released::NOT_LOCKED, |()| released::OK)
}

/// 0 free, 1 read by `n` (the count in the upper bits: `n << 1 | 1`), or 2
/// written: a snapshot for `isLocked()`/diagnostics.
#[wasm_bindgen]
pub fn rwlock_state(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { rwlock_at(addr) };
    if l.is_locked_exclusive() {
        2
    } else if l.reader_count() > 0 {
        l.reader_count() << 1 | 1
    } else {
        0
    }
}

/// Async read or write (`write`), step 1: taken now, or `acquired::NO` and
/// `waiter` queued. Steps 2 and 3 as for `lock_async_resume`/`_cancel`.
#[wasm_bindgen]
pub fn rwlock_async_begin(addr: u32, write: bool, waiter: u32) -> u32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (l, w) = unsafe { (rwlock_at(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    yes_no(unsafe {
        if write {
            l.lock_exclusive_async_begin(w)
        } else {
            l.lock_shared_async_begin(w)
        }
    })
}

/// Async step 2 (the waiter's word changed): taken, or `acquired::NO` and queued again.
#[wasm_bindgen]
pub fn rwlock_async_resume(addr: u32, write: bool, waiter: u32) -> u32 {
    // SAFETY: as for rwlock_async_begin.
    let (l, w) = unsafe { (rwlock_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; the record was queued by rwlock_async_begin.
    yes_no(unsafe {
        if write {
            l.lock_exclusive_async_resume(w)
        } else {
            l.lock_shared_async_resume(w)
        }
    })
}

/// Async, giving up: taken after all (the caller holds it), or `acquired::NO`.
#[wasm_bindgen]
pub fn rwlock_async_cancel(addr: u32, write: bool, waiter: u32) -> u32 {
    // SAFETY: as for rwlock_async_begin.
    let (l, w) = unsafe { (rwlock_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; the attempt has not ended.
    yes_no(unsafe {
        if write {
            l.lock_exclusive_async_cancel(w)
        } else {
            l.lock_shared_async_cancel(w)
        }
    })
}

/// The `Semaphore` at `addr`.
///
/// # Safety
/// As for [`rwlock_at`], for a semaphore set up by [`semaphore_init`].
unsafe fn semaphore_at<'a>(addr: u32) -> &'a Semaphore {
    // SAFETY: the caller's contract; Semaphore is repr(transparent) over an AtomicU32.
    unsafe { &*(addr as *const Semaphore) }
}

/// Sets up the semaphore at `addr` with `permits` (at most `MAX_PERMITS`,
/// which the wrapper checks).
#[wasm_bindgen]
pub fn semaphore_init(addr: u32, permits: u32) {
    // SAFETY: an address the JS wrapper allocated for it, unused yet.
    unsafe { (addr as *mut Semaphore).write(Semaphore::new(permits)) };
}

/// Takes `n` permits, waiting at most `timeout_ms` (+∞: forever; 0: a try).
#[wasm_bindgen]
pub fn semaphore_acquire_for(addr: u32, n: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let s = unsafe { semaphore_at(addr) };
    yes_no(match timeout(timeout_ms) {
        None => {
            s.acquire(n);
            true
        }
        Some(t) => s.try_acquire(n) || (!t.is_zero() && s.try_acquire_for(n, t)),
    })
}

/// Returns `n` permits; `false` (nothing changed) past `MAX_PERMITS`.
#[wasm_bindgen]
pub fn semaphore_release(addr: u32, n: u32) -> bool {
    // SAFETY: an address the JS wrapper checked (module docs).
    unsafe { semaphore_at(addr) }.try_release(n)
}

/// The free permits (a snapshot).
#[wasm_bindgen]
pub fn semaphore_available(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    unsafe { semaphore_at(addr) }.available()
}

/// Async acquire of `n` permits, step 1: taken now, or `acquired::NO` and
/// `waiter` queued. Steps 2 and 3 as for `lock_async_resume`/`_cancel`.
#[wasm_bindgen]
pub fn semaphore_async_begin(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (s, w) = unsafe { (semaphore_at(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    yes_no(unsafe { s.acquire_async_begin(n, w) })
}

/// Async acquire, step 2 (the waiter's word changed).
#[wasm_bindgen]
pub fn semaphore_async_resume(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: as for semaphore_async_begin.
    let (s, w) = unsafe { (semaphore_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; queued by semaphore_async_begin with the same `n`.
    yes_no(unsafe { s.acquire_async_resume(n, w) })
}

/// Async acquire, giving up: taken after all (the caller holds them), or `acquired::NO`.
#[wasm_bindgen]
pub fn semaphore_async_cancel(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: as for semaphore_async_begin.
    let (s, w) = unsafe { (semaphore_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; the attempt has not ended.
    yes_no(unsafe { s.acquire_async_cancel(n, w) })
}

/// Sets up the barrier at `addr` (8 bytes, aligned to 4) for `parties`.
#[wasm_bindgen]
pub fn barrier_init(addr: u32, parties: u32) {
    // SAFETY: an address the JS wrapper allocated for it, unused yet.
    unsafe { (addr as *mut Barrier).write(Barrier::new(parties)) };
}

/// Waits at the barrier at `addr`; whether this thread was the leader.
#[wasm_bindgen]
pub fn barrier_wait(addr: u32) -> bool {
    // SAFETY: an address the JS wrapper checked, of a barrier it set up.
    unsafe { barrier_at(addr) }.wait().is_leader()
}

/// The `Barrier` at `addr`.
///
/// # Safety
/// As for [`rwlock_at`], for a barrier set up by [`barrier_init`].
unsafe fn barrier_at<'a>(addr: u32) -> &'a Barrier {
    // SAFETY: the caller's contract.
    unsafe { &*(addr as *const Barrier) }
}

/// What `barrier_async_begin` returns beside a generation: the barrier
/// opened by this arrival.
pub const BARRIER_LEADER: i32 = -1;
/// ... or opened meanwhile (through, not the leader).
pub const BARRIER_PASSED: i32 = -2;

/// Async barrier wait, step 1: `BARRIER_LEADER`, `BARRIER_PASSED`, or the
/// generation (0 or more) to pass to `barrier_async_resume`, `waiter` queued.
#[wasm_bindgen]
pub fn barrier_async_begin(addr: u32, waiter: u32) -> i32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (b, w) = unsafe { (barrier_at(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    match unsafe { b.wait_async_begin(w) } {
        Ok(true) => BARRIER_LEADER,
        Ok(false) => BARRIER_PASSED,
        // The generation sits in the upper 16 bits: shifted down, it fits.
        Err(generation) => (generation >> 16) as i32,
    }
}

/// Async barrier wait, step 2: whether the barrier opened past `generation`
/// (else `waiter` is queued again).
#[wasm_bindgen]
pub fn barrier_async_resume(addr: u32, generation: i32, waiter: u32) -> bool {
    // SAFETY: as for barrier_async_begin.
    let (b, w) = unsafe { (barrier_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; queued by barrier_async_begin for this generation.
    unsafe { b.wait_async_resume((generation as u32) << 16, w) }
}

/// Stops watching an async barrier wait (the arrival still counts).
#[wasm_bindgen]
pub fn barrier_async_abandon(addr: u32, waiter: u32) {
    // SAFETY: as for barrier_async_begin.
    let (b, w) = unsafe { (barrier_at(addr), waiter_at(waiter)) };
    // SAFETY: as above; the record is queued and not settled.
    unsafe { b.wait_async_abandon(w) }
}
