//! The rest of the toolkit exported to JS: the reader-writer
//! lock, the semaphore, the barrier and the once, over raw addresses as in
//! the crate root (the JS wrapper checks every address before it calls in:
//! kind, bounds, alignment; that check is what each `// SAFETY:` relies on).
//!
//! Like the Lock's, a reader-writer lock's holds and a running `Once` are
//! recorded per thread (`threads.rs`): a release, upgrade or downgrade of
//! what this thread does not hold is refused, and a gone thread's holds are
//! released when it is reaped. The semaphore's permits have no owner and are
//! not recorded.

use crate::threads::{self, Hold};
use crate::{acquired, at, diagnostics, owner_died, released, timeout, waiter_at};
use parklot::parking_lot::AsyncWaiter;
use parklot::{
    Barrier, BarrierError, BarrierWaitResult, Once, OnceBegin, OnceState, RawRwLock, RwLockPolicy,
    Semaphore,
};
use wasm_bindgen::prelude::*;

fn yes_no(taken: bool) -> u32 {
    if taken {
        acquired::YES
    } else {
        acquired::NO
    }
}

/// What a reader-writer lock call takes, releases or turns into (`mode`).
pub mod rw_mode {
    /// A read, shared with other readers.
    pub const READ: u32 = 0;
    /// The write lock.
    pub const WRITE: u32 = 1;
    /// An upgradable read: shared with readers, exclusive of writers and of
    /// other upgradable readers.
    pub const UPGRADABLE: u32 = 2;
    /// The write lock, from this thread's upgradable read (acquisitions only).
    pub const UPGRADE: u32 = 3;
}

/// One of a reader-writer lock's asynchronous steps (`RawRwLock`'s
/// `*_async_begin`, `*_async_resume`, `*_async_cancel`), with their contracts.
type AsyncStep = unsafe fn(&RawRwLock, &AsyncWaiter) -> bool;

/// The three asynchronous steps of one mode's acquisition.
struct AsyncSteps {
    begin: AsyncStep,
    resume: AsyncStep,
    cancel: AsyncStep,
}

/// The asynchronous steps of `mode` (`rw_mode::UPGRADE` for any mode past
/// `UPGRADABLE`: the exports refuse those before the first step).
fn async_steps(mode: u32) -> AsyncSteps {
    match mode {
        rw_mode::READ => AsyncSteps {
            begin: RawRwLock::lock_shared_async_begin,
            resume: RawRwLock::lock_shared_async_resume,
            cancel: RawRwLock::lock_shared_async_cancel,
        },
        rw_mode::WRITE => AsyncSteps {
            begin: RawRwLock::lock_exclusive_async_begin,
            resume: RawRwLock::lock_exclusive_async_resume,
            cancel: RawRwLock::lock_exclusive_async_cancel,
        },
        rw_mode::UPGRADABLE => AsyncSteps {
            begin: RawRwLock::lock_upgradable_async_begin,
            resume: RawRwLock::lock_upgradable_async_resume,
            cancel: RawRwLock::lock_upgradable_async_cancel,
        },
        _ => AsyncSteps {
            begin: RawRwLock::upgrade_async_begin,
            resume: RawRwLock::upgrade_async_resume,
            cancel: RawRwLock::upgrade_async_cancel,
        },
    }
}

/// The hold `mode` gives at `addr` (an upgrade gives the write lock);
/// `None` for an unknown mode.
fn hold_of(mode: u32, addr: u32) -> Option<Hold> {
    match mode {
        rw_mode::READ => Some(Hold::Read(addr)),
        rw_mode::WRITE | rw_mode::UPGRADE => Some(Hold::Write(addr)),
        rw_mode::UPGRADABLE => Some(Hold::Upgradable(addr)),
        _ => None,
    }
}

/// Whether the word says `mode` is held (by someone).
fn held_in(l: &RawRwLock, mode: u32) -> bool {
    match mode {
        rw_mode::READ => l.is_read_held(),
        rw_mode::WRITE => l.is_write_held(),
        _ => l.is_upgradable_held(),
    }
}

/// Whether this thread may take `mode` at `addr` (else `acquired::NOT_HELD`
/// for an upgrade without an upgradable read, or `acquired::ALREADY_HELD`
/// for what would wait for itself: anything while it writes, a write or an
/// upgradable read while it reads upgradably, a write while it reads).
/// Asked only before a wait without end: trying never deadlocks, and a
/// timed wait times out.
fn may_wait_for(l: &RawRwLock, addr: u32, mode: u32) -> Result<(), u32> {
    if mode == rw_mode::UPGRADE {
        let mine = threads::has(Hold::Upgradable(addr)).unwrap_or_else(|| l.is_upgradable_held());
        return if mine {
            Ok(())
        } else {
            Err(acquired::NOT_HELD)
        };
    }
    let conflicts = |h: Hold| match h {
        Hold::Write(a) => a == addr,
        Hold::Upgradable(a) => a == addr && mode != rw_mode::READ,
        Hold::Read(a) => a == addr && mode == rw_mode::WRITE,
        Hold::OnceRun(_) => false,
    };
    match threads::holds_any(conflicts) {
        Some(true) => Err(acquired::ALREADY_HELD),
        _ => Ok(()),
    }
}

/// Records that this thread took `mode` at `addr` and reports it:
/// `acquired::OWNER_DIED` for a write lock whose last writer died holding it.
///
/// Inlined where the word was just taken, so that the step begins with no
/// call in between (a call's prologue is where an engine stops a thread): a
/// thread stopped before its record is written (the push may allocate)
/// would leave a hold that no reaper releases, and its lock's waiters
/// waiting for ever; stopped inside the step, it poisons the runtime.
#[inline(always)]
fn took(addr: u32, mode: u32) -> u32 {
    let step = threads::begin_step();
    step.fault_point(threads::StepPoint::RwAcquire);
    if mode == rw_mode::UPGRADE {
        threads::remove(Hold::Upgradable(addr));
    }
    if let Some(hold) = hold_of(mode, addr) {
        threads::add(hold);
    }
    threads::end_step(step);
    let writes = mode == rw_mode::WRITE || mode == rw_mode::UPGRADE;
    if writes && owner_died::take(addr) {
        acquired::OWNER_DIED
    } else {
        acquired::YES
    }
}

/// [`took`] if `taken`, else `acquired::NO`, or `acquired::DEADLOCK` if
/// deadlock detection refused the step (nothing held, nothing queued).
#[inline(always)]
fn took_if(taken: bool, addr: u32, mode: u32) -> u32 {
    if taken {
        took(addr, mode)
    } else {
        diagnostics::refused_or_no()
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
    // A lock freed with a mark and allocated again starts clean.
    owner_died::take(addr);
    // SAFETY: an address the JS wrapper allocated for this lock, unused yet.
    unsafe { (addr as *mut RawRwLock).write(RawRwLock::with_policy(policy)) };
}

/// Takes `mode` (a `rw_mode`), waiting at most `timeout_ms` (+∞: forever;
/// 0: a try): `acquired::YES`, `NO`, `OWNER_DIED` (a write lock whose last
/// writer died; held now), `ALREADY_HELD` (waiting forever would wait for
/// this thread's own hold; nothing done), `NOT_HELD` (an upgrade without
/// an upgradable read; nothing done) or `DEADLOCK` (deadlock detection:
/// waiting would close a cycle; nothing done).
#[wasm_bindgen]
pub fn rwlock_acquire_for(addr: u32, mode: u32, timeout_ms: f64) -> u32 {
    if mode > rw_mode::UPGRADE {
        return acquired::NOT_HELD; // no such mode: nothing done
    }
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { at::<RawRwLock>(addr) };
    if mode == rw_mode::UPGRADE {
        if let Err(code) = may_wait_for(l, addr, mode) {
            return code;
        }
    }
    // SAFETY (the upgrade arms): this thread holds the upgradable read (checked above).
    let try_now = || match mode {
        rw_mode::READ => l.try_lock_shared(),
        rw_mode::WRITE => l.try_lock_exclusive(),
        rw_mode::UPGRADABLE => l.try_lock_upgradable(),
        _ => unsafe { l.try_upgrade() },
    };
    if try_now() {
        return took(addr, mode);
    }
    let wait = timeout(timeout_ms);
    if wait.is_none() {
        // Only a wait without end is refused: a timed one just times out.
        if let Err(code) = may_wait_for(l, addr, mode) {
            return code;
        }
    }
    // A wait without end is one whose deadline overflows the clock: it
    // gives up only when deadlock detection refuses it (`took_if` tells).
    let t = match wait {
        Some(t) if t.is_zero() => return acquired::NO,
        Some(t) => t,
        None => core::time::Duration::MAX,
    };
    // SAFETY (the upgrade arm): as above.
    let taken = match mode {
        rw_mode::READ => l.try_lock_shared_for(t),
        rw_mode::WRITE => l.try_lock_exclusive_for(t),
        rw_mode::UPGRADABLE => l.try_lock_upgradable_for(t),
        _ => unsafe { l.try_upgrade_for(t) },
    };
    took_if(taken, addr, mode)
}

/// The address of the count of owner-died marks (a u32, 0 while none is
/// set; `owner_died.rs`), for JS's uncontended writes.
#[wasm_bindgen]
pub fn rwlock_marks_address() -> u32 {
    owner_died::count_address()
}

/// For a write lock at `addr` this thread took in JS (js/src/rwlock.ts)
/// while a mark was set: takes the lock's mark, if it has one. Whether its
/// last writer died holding it (the caller reports `OWNER_DIED`).
#[wasm_bindgen]
pub fn rwlock_owner_died(addr: u32) -> bool {
    owner_died::take(addr)
}

/// Releases `mode` (`READ`, `WRITE` or `UPGRADABLE`), held by this thread:
/// `released::OK`, `NOT_LOCKED` (nobody holds it so) or `HELD_BY_ANOTHER`
/// (another thread does); nothing changed but on `OK`.
#[wasm_bindgen]
pub fn rwlock_release(addr: u32, mode: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { at::<RawRwLock>(addr) };
    let Some(hold) = hold_of(mode, addr).filter(|_| mode != rw_mode::UPGRADE) else {
        return released::NOT_LOCKED;
    };
    if !held_in(l, mode) {
        return released::NOT_LOCKED;
    }
    if threads::has(hold) == Some(false) {
        return released::HELD_BY_ANOTHER;
    }
    // The record first, then the word, as one step (`threads::begin_step`):
    // a thread stopped after the word with its record still there would have
    // its reaper release the lock again, by then maybe another thread's;
    // stopped in between, it poisons the runtime.
    let step = threads::begin_step();
    threads::remove(hold);
    step.fault_point(threads::StepPoint::RwRelease);
    let r = match mode {
        rw_mode::READ => l.checked_unlock_shared(),
        rw_mode::WRITE => l.checked_unlock_exclusive(),
        _ => l.checked_unlock_upgradable(),
    };
    if r.is_err() {
        // Not held so after all (an unregistered caller's word): the record,
        // if any, stays as it was (its room is still there).
        threads::add(hold);
    }
    threads::end_step(step);
    match r {
        Ok(()) => released::OK,
        Err(_) => released::NOT_LOCKED,
    }
}

/// Turns this thread's `from` hold into `to`: `WRITE` to `READ` or to
/// `UPGRADABLE`, or `UPGRADABLE` to `READ`. Returns as [`rwlock_release`]
/// (and `NOT_LOCKED` for another pair of modes).
#[wasm_bindgen]
pub fn rwlock_downgrade(addr: u32, from: u32, to: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { at::<RawRwLock>(addr) };
    let (Some(had), Some(gets)) = (hold_of(from, addr), hold_of(to, addr)) else {
        return released::NOT_LOCKED;
    };
    let pair = (from, to);
    let known = [
        (rw_mode::WRITE, rw_mode::READ),
        (rw_mode::WRITE, rw_mode::UPGRADABLE),
        (rw_mode::UPGRADABLE, rw_mode::READ),
    ];
    if !known.contains(&pair) || !held_in(l, from) {
        return released::NOT_LOCKED;
    }
    if threads::has(had) == Some(false) {
        return released::HELD_BY_ANOTHER;
    }
    // Word and record change as one step, as in `rwlock_release`.
    let step = threads::begin_step();
    // SAFETY: this thread holds `from` (its record, or the word for an
    // unregistered caller, says so).
    unsafe {
        match pair {
            (rw_mode::WRITE, rw_mode::READ) => l.downgrade(),
            (rw_mode::WRITE, _) => l.downgrade_to_upgradable(),
            _ => l.downgrade_upgradable(),
        }
    }
    threads::remove(had);
    threads::add(gets);
    threads::end_step(step);
    released::OK
}

/// Bit flags of [`rwlock_state`] below the reader count (`count << 3`).
pub mod rw_state {
    /// Plain or upgradable readers hold it.
    pub const READ: u32 = 1;
    /// A writer holds it (or an upgrade waits for the readers to leave).
    pub const WRITE: u32 = 2;
    /// An upgradable read is held.
    pub const UPGRADABLE: u32 = 4;
}

/// A snapshot for `state()`/diagnostics: `rw_state` flags, and the readers
/// (upgradable included) in the bits above them.
#[wasm_bindgen]
pub fn rwlock_state(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let l = unsafe { at::<RawRwLock>(addr) };
    let h = l.holders(); // one load: the flags and the count agree
    let mut s = h.readers.min(u32::MAX >> 3) << 3;
    if h.readers > 0 {
        s |= rw_state::READ;
    }
    if h.exclusive {
        s |= rw_state::WRITE;
    }
    if h.upgradable {
        s |= rw_state::UPGRADABLE;
    }
    s
}

/// Async acquisition of `mode`, step 1: taken now (as
/// [`rwlock_acquire_for`] reports it), or `acquired::NO` and `waiter`
/// queued, or `acquired::DEADLOCK` and nothing queued (deadlock detection).
/// Steps 2 and 3 as for `lock_async_resume`/`_cancel`. Waits on
/// this thread's own holds are not refused: a thread's async tasks take
/// turns. An upgrade without this thread's upgradable read: `NOT_HELD`.
#[wasm_bindgen]
pub fn rwlock_async_begin(addr: u32, mode: u32, waiter: u32) -> u32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (l, w) = unsafe { (at::<RawRwLock>(addr), waiter_at(waiter)) };
    if mode > rw_mode::UPGRADE {
        return acquired::NOT_HELD; // no such mode: nothing queued
    }
    if mode == rw_mode::UPGRADE {
        if let Err(code) = may_wait_for(l, addr, mode) {
            return code;
        }
    }
    // SAFETY: as above; an upgrade's upgradable read is held (checked above).
    took_if(unsafe { (async_steps(mode).begin)(l, w) }, addr, mode)
}

/// Async step 2 (the waiter's word changed): taken, or `acquired::NO` and
/// queued again, or `acquired::DEADLOCK` (refused by deadlock detection:
/// nothing queued).
#[wasm_bindgen]
pub fn rwlock_async_resume(addr: u32, mode: u32, waiter: u32) -> u32 {
    diagnostics::forget_refusal();
    // SAFETY: as for rwlock_async_begin.
    let (l, w) = unsafe { (at::<RawRwLock>(addr), waiter_at(waiter)) };
    // SAFETY: as above; the record was queued by rwlock_async_begin for `mode`.
    took_if(unsafe { (async_steps(mode).resume)(l, w) }, addr, mode)
}

/// Async, giving up: taken after all (the caller holds it), or
/// `acquired::NO` (an upgrade: the upgradable read is still held).
#[wasm_bindgen]
pub fn rwlock_async_cancel(addr: u32, mode: u32, waiter: u32) -> u32 {
    // SAFETY: as for rwlock_async_begin.
    let (l, w) = unsafe { (at::<RawRwLock>(addr), waiter_at(waiter)) };
    // SAFETY: as above; the attempt has not ended. A cancel queues nothing,
    // so nothing is refused.
    if unsafe { (async_steps(mode).cancel)(l, w) } {
        took(addr, mode)
    } else {
        acquired::NO
    }
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
    let s = unsafe { at::<Semaphore>(addr) };
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
    unsafe { at::<Semaphore>(addr) }.try_release(n)
}

/// The free permits (a snapshot).
#[wasm_bindgen]
pub fn semaphore_available(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    unsafe { at::<Semaphore>(addr) }.available()
}

/// Async acquire of `n` permits, step 1: taken now, or `acquired::NO` and
/// `waiter` queued. Steps 2 and 3 as for `lock_async_resume`/`_cancel`.
#[wasm_bindgen]
pub fn semaphore_async_begin(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (s, w) = unsafe { (at::<Semaphore>(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    yes_no(unsafe { s.acquire_async_begin(n, w) })
}

/// Async acquire, step 2 (the waiter's word changed).
#[wasm_bindgen]
pub fn semaphore_async_resume(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: as for semaphore_async_begin.
    let (s, w) = unsafe { (at::<Semaphore>(addr), waiter_at(waiter)) };
    // SAFETY: as above; queued by semaphore_async_begin with the same `n`.
    yes_no(unsafe { s.acquire_async_resume(n, w) })
}

/// Async acquire, giving up: taken after all (the caller holds them), or `acquired::NO`.
#[wasm_bindgen]
pub fn semaphore_async_cancel(addr: u32, n: u32, waiter: u32) -> u32 {
    // SAFETY: as for semaphore_async_begin.
    let (s, w) = unsafe { (at::<Semaphore>(addr), waiter_at(waiter)) };
    // SAFETY: as above; the attempt has not ended.
    yes_no(unsafe { s.acquire_async_cancel(n, w) })
}

/// Sets up the barrier at `addr` (8 bytes, aligned to 4) for `parties`.
#[wasm_bindgen]
pub fn barrier_init(addr: u32, parties: u32) {
    // SAFETY: an address the JS wrapper allocated for it, unused yet.
    unsafe { (addr as *mut Barrier).write(Barrier::new(parties)) };
}

/// What a barrier wait export returns (the JS wrapper's `BarrierResult`).
pub mod barrier_result {
    /// Through, not the leader.
    pub const PASSED: u32 = 0;
    /// Through: this arrival opened the barrier.
    pub const LEADER: u32 = 1;
    /// The barrier is broken (a party gave up, died, or it was reset meanwhile).
    pub const BROKEN: u32 = 2;
    /// This wait gave up first (its timeout, a cancel) and broke the barrier.
    pub const TIMED_OUT: u32 = 3;
    /// Queued (async begin or resume): wait for the record's word.
    pub const QUEUED: u32 = 4;
}

fn barrier_code(r: Result<BarrierWaitResult, BarrierError>) -> u32 {
    match r {
        Ok(r) if r.is_leader() => barrier_result::LEADER,
        Ok(_) => barrier_result::PASSED,
        Err(BarrierError::Broken) => barrier_result::BROKEN,
        Err(BarrierError::TimedOut) => barrier_result::TIMED_OUT,
    }
}

/// Waits at the barrier at `addr`, at most `timeout_ms` (+∞: forever); a
/// `barrier_result` (not `QUEUED`).
#[wasm_bindgen]
pub fn barrier_wait(addr: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper checked, of a barrier it set up.
    let b = unsafe { at::<Barrier>(addr) };
    barrier_code(match timeout(timeout_ms) {
        Some(t) => b.wait_for(t),
        None => b.wait_checked(),
    })
}

/// Mends the barrier at `addr`: nobody arrived, not broken; its waiters now
/// are told `BROKEN`.
#[wasm_bindgen]
pub fn barrier_reset(addr: u32) {
    // SAFETY: as for barrier_wait.
    unsafe { at::<Barrier>(addr) }.reset()
}

/// Whether the barrier at `addr` is broken.
#[wasm_bindgen]
pub fn barrier_is_broken(addr: u32) -> bool {
    // SAFETY: as for barrier_wait.
    unsafe { at::<Barrier>(addr) }.is_broken()
}

/// Async barrier wait, step 1: `LEADER`, `BROKEN`, or `QUEUED` (`waiter`
/// queued: resume once its word turns 0).
#[wasm_bindgen]
pub fn barrier_async_begin(addr: u32, waiter: u32) -> u32 {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (b, w) = unsafe { (at::<Barrier>(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    unsafe { b.wait_async_begin(w) }.map_or(barrier_result::QUEUED, barrier_code)
}

/// Async barrier wait, step 2: `PASSED`, `BROKEN`, or `QUEUED` (not woken yet).
#[wasm_bindgen]
pub fn barrier_async_resume(addr: u32, waiter: u32) -> u32 {
    // SAFETY: as for barrier_async_begin.
    let (b, w) = unsafe { (at::<Barrier>(addr), waiter_at(waiter)) };
    // SAFETY: as above; queued by barrier_async_begin.
    unsafe { b.wait_async_resume(w) }.map_or(barrier_result::QUEUED, barrier_code)
}

/// Gives up an async barrier wait, breaking the barrier: `TIMED_OUT`, or
/// what ended the wait first (`PASSED`, `BROKEN`). Leaves no queue entry.
#[wasm_bindgen]
pub fn barrier_async_cancel(addr: u32, waiter: u32) -> u32 {
    // SAFETY: as for barrier_async_begin.
    let (b, w) = unsafe { (at::<Barrier>(addr), waiter_at(waiter)) };
    // SAFETY: as above; the record is queued and its wait not ended.
    barrier_code(unsafe { b.wait_async_cancel(w) })
}

/// What [`once_begin`] found.
pub mod once_begun {
    /// A run completed: nothing to do.
    pub const DONE: u32 = 0;
    /// A run failed (threw, or its thread died) and poison is not ignored.
    pub const POISONED: u32 = 1;
    /// Another thread runs it: wait, then begin again.
    pub const RUNNING: u32 = 2;
    /// This thread runs it (a call from inside its own function): waiting
    /// would wait for itself.
    pub const RUNNING_HERE: u32 = 3;
    /// Claimed: run the function, then call `once_finish`.
    pub const RUN: u32 = 4;
    /// Claimed, after a failed run (`force` only).
    pub const RUN_POISONED: u32 = 5;
}

/// Claims the run of the `Once` at `addr` for this thread, or says why not
/// (`once_begun`). `force`: run even if poisoned. Never waits.
#[wasm_bindgen]
pub fn once_begin(addr: u32, force: bool) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    let o = unsafe { at::<Once>(addr) };
    match o.try_begin(force) {
        OnceBegin::Done => once_begun::DONE,
        OnceBegin::Poisoned => once_begun::POISONED,
        OnceBegin::Running if threads::has(Hold::OnceRun(addr)) == Some(true) => {
            once_begun::RUNNING_HERE
        }
        OnceBegin::Running => once_begun::RUNNING,
        OnceBegin::Run(before) => {
            threads::add(Hold::OnceRun(addr));
            if before == OnceState::Poisoned {
                once_begun::RUN_POISONED
            } else {
                once_begun::RUN
            }
        }
    }
}

/// Ends this thread's run: done for good if `completed`, else poisoned;
/// wakes every waiter. `false` (nothing done) if this thread is not running it.
#[wasm_bindgen]
pub fn once_finish(addr: u32, completed: bool) -> bool {
    // SAFETY: an address the JS wrapper checked (module docs).
    let o = unsafe { at::<Once>(addr) };
    let mine =
        threads::remove(Hold::OnceRun(addr)).unwrap_or_else(|| o.state() == OnceState::InProgress);
    if mine {
        // SAFETY: this thread claimed the run (its record says so) and has not ended it.
        unsafe { o.finish(completed) };
    }
    mine
}

/// Waits (blocking) while another thread runs the `Once`, at most
/// `timeout_ms` (+∞: forever); whether the run ended (or none was running).
#[wasm_bindgen]
pub fn once_wait(addr: u32, timeout_ms: f64) -> bool {
    // SAFETY: an address the JS wrapper checked (module docs).
    let o = unsafe { at::<Once>(addr) };
    let deadline = timeout(timeout_ms).and_then(|t| parklot::Instant::now().checked_add(t));
    o.wait_while_running(deadline)
}

/// Async wait while another thread runs the `Once`: `true` and `waiter`
/// queued (its word turns 0 when the run ends), or `false` (none runs).
#[wasm_bindgen]
pub fn once_wait_async_begin(addr: u32, waiter: u32) -> bool {
    // SAFETY: addresses the JS wrapper checked; it keeps the record alive and
    // uses it for one wait at a time.
    let (o, w) = unsafe { (at::<Once>(addr), waiter_at(waiter)) };
    // SAFETY: as above.
    unsafe { o.wait_async_begin(w) }
}

/// Async wait, giving up: whether the run ended first.
#[wasm_bindgen]
pub fn once_wait_async_cancel(addr: u32, waiter: u32) -> bool {
    // SAFETY: as for once_wait_async_begin.
    let (o, w) = unsafe { (at::<Once>(addr), waiter_at(waiter)) };
    // SAFETY: as above; queued by once_wait_async_begin, not settled.
    unsafe { o.wait_async_cancel(w) }
}

/// Where the `Once` stands: 0 new, 1 poisoned, 2 running, 3 done.
#[wasm_bindgen]
pub fn once_state(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper checked (module docs).
    match unsafe { at::<Once>(addr) }.state() {
        OnceState::New => 0,
        OnceState::Poisoned => 1,
        OnceState::InProgress => 2,
        OnceState::Done => 3,
    }
}
