//! The C ABI of the toolkit's asynchronous forms (`parklot_*_async_*` in
//! `include/parklot.h`), for threads that may not block: a record
//! ([`AsyncWaiter`]) queues instead of the thread, and the embedder waits for
//! its word to turn 0 with whatever it has (a futex, `Atomics.waitAsync`),
//! then resumes. Each function is one step of a primitive's `*_async_*`
//! method, with the pointers checked first.

use crate::ffi::{aligned_ref, barrier_code, PARKLOT_EINVAL, PARKLOT_ENOTLOCKED};
use crate::parking_lot::AsyncWaiter;
use crate::{Barrier, BarrierError, BarrierWaitResult, Lock, Once, RawRwLock, Semaphore};

/// `parklot_async_waiter_t`: the record.
pub struct CAsyncWaiter {
    record: AsyncWaiter,
}

/// `parklot_barrier_wait_async_begin` and `_resume`: queued (wait on the
/// word, then resume).
pub const PARKLOT_BARRIER_QUEUED: i32 = 0;
/// `parklot_barrier_wait_async_resume` and `_cancel`: passed (not the leader).
pub const PARKLOT_BARRIER_PASSED: i32 = 1;
/// `parklot_barrier_wait_async_begin`: passed as the leader: this arrival opened it.
pub const PARKLOT_BARRIER_LEADER: i32 = 2;

impl CAsyncWaiter {
    /// Not queued: new, or its last wait settled. Its word is 0 exactly then,
    /// and no unparker touches it any more. (Takes a pending token: only a
    /// settled record, whose token nobody needs, gets here legitimately.)
    fn is_idle(&self) -> bool {
        self.record.poll().is_some()
    }
}

/// A new record, not queued, or NULL if memory ran out.
#[no_mangle]
pub extern "C" fn parklot_async_waiter_new() -> *mut CAsyncWaiter {
    let layout = std::alloc::Layout::new::<CAsyncWaiter>();
    // SAFETY: CAsyncWaiter is not zero-sized.
    let p = unsafe { std::alloc::alloc(layout) }.cast::<CAsyncWaiter>();
    if !p.is_null() {
        let w = CAsyncWaiter {
            record: AsyncWaiter::new(),
        };
        // SAFETY: freshly allocated for this layout.
        unsafe { p.write(w) };
    }
    p
}

/// Frees a record that is not queued: 0 (NULL too), or `PARKLOT_EINVAL`
/// (misaligned, or still queued: not freed).
///
/// # Safety
/// `waiter` is null, misaligned, or from `parklot_async_waiter_new` and not
/// freed; it is not used again once freed.
#[no_mangle]
pub unsafe extern "C" fn parklot_async_waiter_free(waiter: *mut CAsyncWaiter) -> i32 {
    if waiter.is_null() {
        return 0;
    }
    // SAFETY: forwarded from the caller.
    match unsafe { aligned_ref(waiter) } {
        Some(w) if w.is_idle() => {
            // SAFETY: allocated with the global allocator for this layout
            // (what a Box uses), not queued (checked), freed once (contract).
            drop(unsafe { Box::from_raw(waiter) });
            0
        }
        _ => PARKLOT_EINVAL,
    }
}

/// The record's 32-bit word (1 while queued, 0 once woken), or NULL for a bad pointer.
///
/// # Safety
/// `waiter` is null, misaligned, or a live record.
#[no_mangle]
pub unsafe extern "C" fn parklot_async_waiter_word(waiter: *const CAsyncWaiter) -> *const i32 {
    // SAFETY: forwarded from the caller.
    unsafe { aligned_ref(waiter) }.map_or(core::ptr::null(), |w| {
        // `word_address` exposed the word's provenance (a pointer cast to usize).
        core::ptr::with_exposed_provenance(w.record.word_address())
    })
}

/// Both pointers checked, as references; `None` for a bad one.
///
/// # Safety
/// Each is null, misaligned, or points at a live, initialised object.
unsafe fn both<'a, T>(
    obj: *const T,
    waiter: *const CAsyncWaiter,
) -> Option<(&'a T, &'a CAsyncWaiter)> {
    // SAFETY: forwarded from the caller.
    unsafe { Some((aligned_ref(obj)?, aligned_ref(waiter)?)) }
}

/// A step that takes or queues, as the C result: 1 taken, 0 queued, or
/// `PARKLOT_EDEADLK` if deadlock detection refused to queue it (the cycle
/// kept for `parklot_last_deadlock`).
fn taken_or_queued(taken: bool) -> i32 {
    if taken {
        return 1;
    }
    match crate::acquire::async_refused() {
        Some(cycle) => {
            crate::diagnostics::keep_deadlock(cycle);
            crate::ffi::PARKLOT_EDEADLK
        }
        None => 0,
    }
}

/// Step 1 of an attempt: 1 taken now, 0 queued, `PARKLOT_EDEADLK` (refused,
/// not queued), `PARKLOT_EINVAL` (a bad pointer, or a waiter that is still
/// queued).
///
/// # Safety
/// As for [`both`]; `begin` is sound for a waiter that is not queued and
/// stays put until the attempt ends (the C caller's contract).
unsafe fn begin<T>(
    obj: *const T,
    waiter: *const CAsyncWaiter,
    begin: unsafe fn(&T, &AsyncWaiter) -> bool,
) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { both(obj, waiter) } {
        // SAFETY: not queued (checked); it stays put (the caller's contract).
        Some((o, w)) if w.is_idle() => taken_or_queued(unsafe { begin(o, &w.record) }),
        _ => PARKLOT_EINVAL,
    }
}

/// A later step (resume, cancel): its result as 1 or 0 (a resume that
/// queues again may be refused: `PARKLOT_EDEADLK`), or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for [`both`]; `step` is sound for this waiter (queued by this
/// object's begin, attempt not ended: the C caller's contract).
unsafe fn step<T>(
    obj: *const T,
    waiter: *const CAsyncWaiter,
    step: unsafe fn(&T, &AsyncWaiter) -> bool,
    queues: bool,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { both(obj, waiter) }.map_or(PARKLOT_EINVAL, |(o, w)| {
        // SAFETY: the caller's contract.
        let done = unsafe { step(o, &w.record) };
        if queues {
            taken_or_queued(done)
        } else {
            done as i32
        }
    })
}

/// Defines the three C steps over a primitive's begin/resume/cancel methods.
macro_rules! async_steps {
    ($obj:ty, $what:literal,
     $c_begin:ident = $begin:path, $c_resume:ident = $resume:path, $c_cancel:ident = $cancel:path) => {
        #[doc = concat!("Asynchronous ", $what, ", step 1: 1 taken now, 0 `waiter` queued, `PARKLOT_EINVAL`.")]
        ///
        /// # Safety
        /// `obj` is null, misaligned, or live and initialised; `waiter` is
        /// null, misaligned, or a live record that stays until the attempt ends.
        #[no_mangle]
        pub unsafe extern "C" fn $c_begin(obj: *const $obj, waiter: *const CAsyncWaiter) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { begin(obj, waiter, $begin) }
        }

        /// Step 2, once the waiter's word turned 0: 1 taken, 0 queued again,
        /// `PARKLOT_EINVAL`.
        ///
        /// # Safety
        /// As for step 1, and `waiter` was queued by step 1 on `obj`.
        #[no_mangle]
        pub unsafe extern "C" fn $c_resume(obj: *const $obj, waiter: *const CAsyncWaiter) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { step(obj, waiter, $resume, true) }
        }

        /// Gives up: 1 if it was taken after all (release it), 0 nothing held,
        /// `PARKLOT_EINVAL`.
        ///
        /// # Safety
        /// As for step 2, and the attempt has not ended.
        #[no_mangle]
        pub unsafe extern "C" fn $c_cancel(obj: *const $obj, waiter: *const CAsyncWaiter) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { step(obj, waiter, $cancel, false) }
        }
    };
}

async_steps!(
    Lock,
    "lock",
    parklot_lock_async_begin = Lock::lock_async_begin,
    parklot_lock_async_resume = Lock::lock_async_resume,
    parklot_lock_async_cancel = Lock::lock_async_cancel
);
async_steps!(
    RawRwLock,
    "read lock",
    parklot_rwlock_read_async_begin = RawRwLock::lock_shared_async_begin,
    parklot_rwlock_read_async_resume = RawRwLock::lock_shared_async_resume,
    parklot_rwlock_read_async_cancel = RawRwLock::lock_shared_async_cancel
);
async_steps!(
    RawRwLock,
    "write lock",
    parklot_rwlock_write_async_begin = RawRwLock::lock_exclusive_async_begin,
    parklot_rwlock_write_async_resume = RawRwLock::lock_exclusive_async_resume,
    parklot_rwlock_write_async_cancel = RawRwLock::lock_exclusive_async_cancel
);
async_steps!(
    RawRwLock,
    "upgradable read",
    parklot_rwlock_upgradable_read_async_begin = RawRwLock::lock_upgradable_async_begin,
    parklot_rwlock_upgradable_read_async_resume = RawRwLock::lock_upgradable_async_resume,
    parklot_rwlock_upgradable_read_async_cancel = RawRwLock::lock_upgradable_async_cancel
);

/// Asynchronous upgrade, step 1: 1 upgraded now, 0 `waiter` queued (new
/// readers wait meanwhile), `PARKLOT_ENOTLOCKED` (no upgradable read held, or
/// its upgrade already pending), `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read_async_begin`; the caller holds the upgradable read.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_upgrade_async_begin(
    lock: *const RawRwLock,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { both(lock, waiter) } {
        Some((l, _)) if !l.is_upgradable_held() => PARKLOT_ENOTLOCKED,
        // SAFETY: forwarded; an upgradable read is held with no upgrade pending.
        Some(_) => unsafe { begin(lock, waiter, RawRwLock::upgrade_async_begin) },
        None => PARKLOT_EINVAL,
    }
}

/// Step 2: 1 upgraded, 0 queued again, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 1, and `waiter` was queued by it on `lock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_upgrade_async_resume(
    lock: *const RawRwLock,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { step(lock, waiter, RawRwLock::upgrade_async_resume, true) }
}

/// Gives up: 1 upgraded after all (the write lock is held), 0 only the
/// upgradable read is held, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 2, and the attempt has not ended.
#[no_mangle]
pub unsafe extern "C" fn parklot_rwlock_upgrade_async_cancel(
    lock: *const RawRwLock,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { step(lock, waiter, RawRwLock::upgrade_async_cancel, false) }
}

/// A semaphore step for `n` permits, `PARKLOT_EINVAL` for more than a
/// semaphore holds (the Rust methods would panic).
///
/// # Safety
/// As for [`step`].
unsafe fn permits(
    sem: *const Semaphore,
    n: u32,
    waiter: *const CAsyncWaiter,
    idle_first: bool,
    step: unsafe fn(&Semaphore, u32, &AsyncWaiter) -> bool,
) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { both(sem, waiter) } {
        Some((s, w)) if n <= crate::MAX_PERMITS && (!idle_first || w.is_idle()) => {
            // SAFETY: the caller's contract (and not queued, for a begin).
            unsafe { step(s, n, &w.record) as i32 }
        }
        _ => PARKLOT_EINVAL,
    }
}

/// Asynchronous acquire of `n` permits, step 1: 1 taken now, 0 `waiter`
/// queued, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read_async_begin`, for a semaphore.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_acquire_async_begin(
    sem: *const Semaphore,
    n: u32,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { permits(sem, n, waiter, true, Semaphore::acquire_async_begin) }
}

/// Step 2 (same `n`): 1 taken, 0 queued again, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 1, and `waiter` was queued by it on `sem` for `n`.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_acquire_async_resume(
    sem: *const Semaphore,
    n: u32,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { permits(sem, n, waiter, false, Semaphore::acquire_async_resume) }
}

/// Gives up (same `n`): 1 the permits were taken after all (release them), 0
/// nothing held, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 2, and the attempt has not ended.
#[no_mangle]
pub unsafe extern "C" fn parklot_semaphore_acquire_async_cancel(
    sem: *const Semaphore,
    n: u32,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { permits(sem, n, waiter, false, Semaphore::acquire_async_cancel) }
}

/// Asynchronous barrier wait, step 1: arrives, and returns
/// `PARKLOT_BARRIER_LEADER` (this arrival opened it), `PARKLOT_BARRIER_QUEUED`,
/// `PARKLOT_BARRIER_BROKEN` or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for `parklot_rwlock_read_async_begin`, for a barrier, which outlives
/// the wait.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_wait_async_begin(
    barrier: *const Barrier,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { both(barrier, waiter) } {
        // SAFETY: not queued (checked); it stays put (the caller's contract).
        Some((b, w)) if w.is_idle() => match unsafe { b.wait_async_begin(&w.record) } {
            Some(r) => async_barrier_code(r),
            None => PARKLOT_BARRIER_QUEUED,
        },
        _ => PARKLOT_EINVAL,
    }
}

/// Step 2: `PARKLOT_BARRIER_PASSED` (not the leader), `PARKLOT_BARRIER_QUEUED`
/// (still queued: wait for the word), `PARKLOT_BARRIER_BROKEN`, `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 1, and `waiter` was queued by it on `barrier`.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_wait_async_resume(
    barrier: *const Barrier,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { both(barrier, waiter) }.map_or(PARKLOT_EINVAL, |(b, w)| {
        // SAFETY: queued by step 1 (the caller's contract).
        unsafe { b.wait_async_resume(&w.record) }.map_or(PARKLOT_BARRIER_QUEUED, async_barrier_code)
    })
}

/// Gives up, which breaks the barrier for the others: `PARKLOT_BARRIER_TIMED_OUT`,
/// or what ended the wait first: `PARKLOT_BARRIER_PASSED`,
/// `PARKLOT_BARRIER_BROKEN`; or `PARKLOT_EINVAL`.
///
/// # Safety
/// As for step 2, and the wait has not ended.
#[no_mangle]
pub unsafe extern "C" fn parklot_barrier_wait_async_cancel(
    barrier: *const Barrier,
    waiter: *const CAsyncWaiter,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { both(barrier, waiter) }.map_or(PARKLOT_EINVAL, |(b, w)| {
        // SAFETY: the caller's contract.
        async_barrier_code(unsafe { b.wait_async_cancel(&w.record) })
    })
}

/// An async barrier wait's outcome as C reads it: `PARKLOT_BARRIER_LEADER`,
/// `PARKLOT_BARRIER_PASSED`, or an error.
fn async_barrier_code(r: Result<BarrierWaitResult, BarrierError>) -> i32 {
    match r {
        Ok(r) if r.is_leader() => PARKLOT_BARRIER_LEADER,
        Ok(_) => PARKLOT_BARRIER_PASSED,
        Err(_) => barrier_code(r),
    }
}

/// `Once::wait_async_begin` as "took nothing" (1 no run in progress) or queued (0).
///
/// # Safety
/// As for `Once::wait_async_begin`.
unsafe fn once_begin(o: &Once, w: &AsyncWaiter) -> bool {
    // SAFETY: forwarded from the caller.
    !unsafe { o.wait_async_begin(w) }
}

/// After the word turned 0: waits again if another run started meanwhile.
///
/// # Safety
/// `w` was queued by `once_begin` on `o`.
unsafe fn once_resume(o: &Once, w: &AsyncWaiter) -> bool {
    // SAFETY: the record is settled once polled, so it may be queued again.
    w.poll().is_some() && unsafe { once_begin(o, w) }
}

async_steps!(
    Once,
    "wait for a running call (1: none runs now, call `parklot_once`)",
    parklot_once_wait_async_begin = once_begin,
    parklot_once_wait_async_resume = once_resume,
    parklot_once_wait_async_cancel = Once::wait_async_cancel
);

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn an_async_read_waits_for_the_writer_and_a_cancel_leaves_nothing() {
        let lock = RawRwLock::new();
        let w = parklot_async_waiter_new();
        lock.lock_exclusive();
        // SAFETY: a live lock and record, used by this thread only.
        unsafe {
            assert_eq!(parklot_rwlock_read_async_begin(&lock, w), 0);
            assert_eq!(parklot_rwlock_read_async_begin(&lock, w), PARKLOT_EINVAL);
            assert_eq!(parklot_async_waiter_free(w), PARKLOT_EINVAL);
            assert_eq!(parklot_rwlock_read_async_resume(&lock, w), 0);
            lock.unlock_exclusive();
            assert_eq!(parklot_rwlock_read_async_resume(&lock, w), 1);
            lock.unlock_shared();
            lock.lock_exclusive();
            assert_eq!(parklot_rwlock_write_async_begin(&lock, w), 0);
            assert_eq!(parklot_rwlock_write_async_cancel(&lock, w), 0);
            lock.unlock_exclusive();
            assert!(lock.try_lock_exclusive());
            lock.unlock_exclusive();
            assert_eq!(parklot_async_waiter_free(w), 0);
        }
    }

    #[test]
    fn bad_pointers_and_too_many_permits_are_refused() {
        let sem = Semaphore::new(0);
        let w = parklot_async_waiter_new();
        let odd = (w as *const u8).wrapping_add(1).cast::<CAsyncWaiter>();
        // SAFETY: null and misaligned pointers are checked before any use.
        unsafe {
            assert_eq!(
                parklot_semaphore_acquire_async_begin(&sem, 1, core::ptr::null()),
                PARKLOT_EINVAL
            );
            assert_eq!(
                parklot_semaphore_acquire_async_begin(&sem, 1, odd),
                PARKLOT_EINVAL
            );
            assert_eq!(
                parklot_semaphore_acquire_async_begin(core::ptr::null(), 1, w),
                PARKLOT_EINVAL
            );
            assert_eq!(
                parklot_semaphore_acquire_async_begin(&sem, crate::MAX_PERMITS + 1, w),
                PARKLOT_EINVAL
            );
            assert_eq!(
                parklot_rwlock_upgrade_async_begin(&RawRwLock::new(), w),
                PARKLOT_ENOTLOCKED
            );
            assert!(parklot_async_waiter_word(core::ptr::null()).is_null());
            assert_eq!(parklot_async_waiter_free(core::ptr::null_mut()), 0);
            assert_eq!(parklot_async_waiter_free(w), 0);
        }
    }

    #[test]
    fn a_barrier_of_two_lets_an_async_arrival_through_with_a_blocking_one() {
        let barrier = Barrier::new(2);
        let w = parklot_async_waiter_new();
        // SAFETY: a live barrier and record; the record outlives the wait.
        unsafe {
            assert_eq!(
                parklot_barrier_wait_async_begin(&barrier, w),
                PARKLOT_BARRIER_QUEUED
            );
            assert_eq!(
                parklot_barrier_wait_async_resume(&barrier, w),
                PARKLOT_BARRIER_QUEUED
            );
            std::thread::scope(|s| {
                s.spawn(|| assert!(barrier.wait().is_leader()));
            });
            assert_eq!(
                parklot_barrier_wait_async_resume(&barrier, w),
                PARKLOT_BARRIER_PASSED
            );
            assert_eq!(parklot_async_waiter_free(w), 0);
        }
    }
}
