//! parklot's wasm module: the core's primitives exported to JS over raw
//! addresses in the shared linear memory.
//!
//! Every thread (the one that instantiated the module and every worker that
//! instantiated it on the same memory) calls [`thread_init`] once, before
//! anything else. Addresses are byte offsets into the memory; the caller gets
//! them from [`alloc`] and keeps them alive while any thread may use them.
//!
//! The exports are safe functions taking raw addresses because the caller is
//! JavaScript: the package's wrapper (js/src) checks every address (in
//! bounds, aligned, allocated as the right kind of object: `kinds` keeps
//! what was made where) before it calls in, and that check is what each
//! `// SAFETY:` below relies on.
//!
//! The benchmark-only exports (the lock peers, wait/notify loops) are in
//! `bench` and `bench_rwlock`, built only with the `bench` feature.

// The engine's own memory.atomic.wait32/notify: `threads` notifies, `bench` compares.
#![feature(stdarch_wasm_atomic_wait)]
// `kinds` finds where an allocation goes in its table with one search.
#![feature(btree_cursors)]

use core::cell::Cell;
use core::time::Duration;
use std::alloc::Layout;
use std::sync::atomic::{AtomicI32, AtomicI64};

use parklot::futex::{self, WaitResult};
use parklot::parking_lot::{self, AsyncWaiter};
use parklot::{Condition, Lock};
use wasm_bindgen::prelude::*;

#[cfg(feature = "bench")]
mod bench;
// Snapshot, deadlock detection, lock-order checking, thread names (js/src/diagnostics.ts).
mod diagnostics;
// Experiment 6's reader-writer loops (bench/wasm/rwlock.mjs).
#[cfg(feature = "bench")]
mod bench_rwlock;
// The global allocator: parklot's lock-free heap, safe to abandon mid-call.
mod heap;
// What lives where: the kind of every object the JS API made (`*At`, free, views).
mod kinds;
mod owner_died;
// The module's critical sections, and the poison a death inside one sets.
mod sections;
mod threads;
// The rest of the toolkit: reader-writer lock, semaphore, barrier, once.
mod toolkit;

#[wasm_bindgen]
extern "C" {
    /// Milliseconds (fractional) since this thread's time origin.
    #[wasm_bindgen(js_namespace = ["globalThis", "performance"], js_name = now)]
    fn performance_now() -> f64;

    /// This thread's time origin, in milliseconds since the Unix epoch.
    /// Each worker has its own, so `now()` alone is not comparable across threads.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["globalThis", "performance"], js_name = timeOrigin)]
    static TIME_ORIGIN_MS: f64;
}

std::thread_local! {
    /// `performance.timeOrigin` of this thread, in nanoseconds since the Unix epoch.
    static ORIGIN_NS: Cell<u64> = const { Cell::new(0) };
}

/// Monotonic nanoseconds on a clock all threads share: the thread's origin
/// (whole ns, computed once) plus `performance.now()`, which stays small and
/// so keeps its sub-microsecond precision.
fn now_ns() -> u64 {
    ORIGIN_NS.with(Cell::get) + (performance_now() * 1e6) as u64
}

/// Sets up the calling thread: installs parklot's clock and says whether the
/// thread may block (`false` on a browser page's main thread: the core then
/// never sleeps there, and calls that would have to sleep are refused). Call
/// it on every thread right after instantiating the module.
#[wasm_bindgen]
pub fn thread_init(may_block: bool) {
    let origin_ns = TIME_ORIGIN_MS.with(|ms| (ms * 1e6) as u64);
    ORIGIN_NS.with(|o| o.set(origin_ns));
    parklot::clock::install_time_source(now_ns);
    parklot::set_thread_may_block(may_block);
}

/// Tells the core how many CPUs the host can run threads on at once
/// (`navigator.hardwareConcurrency`, `os.availableParallelism()`): a thread
/// that parks spins briefly before it sleeps only where another CPU can wake
/// it meanwhile. Until called, the module assumes one CPU and never spins.
/// Memory-wide: one call from any thread covers them all.
#[wasm_bindgen]
pub fn set_cpu_count(n: u32) {
    parklot::set_cpu_count(n);
}

/// Sets how long a parked thread spins before it sleeps, in iterations (0:
/// sleep at once); returns the previous limit. For the benchmarks' sweep.
#[wasm_bindgen]
pub fn set_park_spin_limit(spins: u32) -> u32 {
    let was = parklot::park_spin_limit();
    parklot::set_park_spin_limit(spins);
    was
}

/// A timeout in milliseconds as JS passes it, already coerced: `+∞` and NaN
/// wait forever, a negative one is zero, and so does any finite one too long
/// for a `Duration` (over 584 billion years: as the spec's arithmetic allows,
/// the wait outlasts the clock). Never panics.
fn timeout(ms: f64) -> Option<Duration> {
    if ms.is_nan() {
        return None;
    }
    Duration::try_from_secs_f64(ms.max(0.0) / 1e3).ok()
}

/// The layout of an [`alloc`]; `None` if `align` is not a power of two or
/// the size, rounded up to it, exceeds the address space.
fn layout(bytes: u32, align: u32) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1) as usize, align as usize).ok()
}

/// For the JS glue's test of trap recovery only: takes `bytes` (at most 4096)
/// of this thread's stack, then traps, as a bug in parklot would. It panics
/// on no input; nothing but that test calls it.
#[wasm_bindgen]
pub fn trap_for_test(bytes: u32) {
    let mut frame = [0u8; 4096];
    let used = &mut frame[..(bytes as usize).min(4096)];
    used.fill(1);
    core::hint::black_box(used);
    core::arch::wasm32::unreachable()
}

/// Allocates `bytes` zeroed bytes aligned to `align` (a power of two) and
/// returns their address. Zero bytes are a valid unlocked `Lock`. Returns 0,
/// never traps, if `align` is not a power of two or the memory is full (it
/// cannot grow past its maximum): the JS wrapper reports which.
#[wasm_bindgen]
pub fn alloc(bytes: u32, align: u32) -> u32 {
    let Some(layout) = layout(bytes, align) else {
        return 0;
    };
    // SAFETY: `layout` has a non-zero size (`layout` rounds 0 up to 1).
    unsafe { std::alloc::alloc_zeroed(layout) as u32 }
}

/// Frees memory from [`alloc`]; `bytes` and `align` must be the ones passed
/// to it. An `align` that `alloc` refused frees nothing.
#[wasm_bindgen]
pub fn free(ptr: u32, bytes: u32, align: u32) {
    let Some(layout) = layout(bytes, align) else {
        return;
    };
    // SAFETY: the caller passes an address `alloc` returned for this same
    // size and alignment, not yet freed (the JS wrapper owns that contract).
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) }
}

/// The primitive `T` at `addr`.
///
/// # Safety
/// `addr` must be the address of a live `T`, aligned for it (from [`alloc`];
/// a `RawRwLock`, `Semaphore` or `Barrier` set up by its `*_init`, a one-byte
/// `Lock`, `Condition` or `Once` zeroed or only ever used as one), that stays
/// allocated while used.
pub(crate) unsafe fn at<'a, T>(addr: u32) -> &'a T {
    // SAFETY: every primitive is repr(transparent) over its atomic state, so
    // live, aligned memory used only as a `T` is a valid `T`; the caller
    // vouches for the rest.
    unsafe { &*(addr as *const T) }
}

/// What an acquisition export returns.
pub mod acquired {
    /// Not taken (a try that failed, a timeout, or queued to wait).
    pub const NO: u32 = 0;
    /// Taken.
    pub const YES: u32 = 1;
    /// Taken, and its last owner died holding it: the data may be inconsistent.
    pub const OWNER_DIED: u32 = 2;
    /// Nothing done: this thread already holds it (locks are not reentrant).
    pub const ALREADY_HELD: u32 = 3;
    /// Nothing done: an upgrade without this thread's upgradable read.
    pub const NOT_HELD: u32 = 4;
    /// Nothing done: a freed `Lock` object's stand-in (`kinds::is_tombstone`).
    pub const FREED: u32 = 5;
    /// Nothing done, nothing queued: deadlock detection refused the wait,
    /// which would close a cycle (`diagnostics::diag_last_deadlock` says which).
    pub const DEADLOCK: u32 = 6;
}

/// What a release export returns.
pub mod released {
    /// Released.
    pub const OK: u32 = 0;
    /// Nothing done: nobody holds it.
    pub const NOT_LOCKED: u32 = 1;
    /// Nothing done: another thread holds it.
    pub const HELD_BY_ANOTHER: u32 = 2;
    /// Nothing done: a freed `Lock` object's stand-in (`kinds::is_tombstone`).
    pub const FREED: u32 = 3;
}

/// Records that this thread took the lock at `addr` and reports it.
/// Inlined: nothing may be called between taking a lock's byte and
/// recording it (see `release`). After a wakeup, the way from it to the
/// byte may pass calls: there the wakeup's debt stays on record
/// (`Lock::lock_or_deadlock_owing`) until [`settled`] below.
#[inline(always)]
fn took(addr: u32, lock: &Lock) -> u32 {
    threads::took(addr);
    if lock.take_owner_died() {
        acquired::OWNER_DIED
    } else {
        acquired::YES
    }
}

/// [`took`] if `taken`, else `acquired::NO`, or `acquired::DEADLOCK` if
/// deadlock detection refused the step (nothing held, nothing queued).
fn took_if(taken: bool, addr: u32, lock: &Lock) -> u32 {
    if taken {
        took(addr, lock)
    } else {
        diagnostics::refused_or_no()
    }
}

/// Acquires the lock at `addr`, parking the thread while it is held; or,
/// with deadlock detection on, `acquired::DEADLOCK` if waiting would close
/// a cycle (nothing done). Its uncontended acquisition is unseen by the
/// diagnostics: JS calls it only while they are off (it reads their mode
/// byte, [`diag_mode_address`]), else [`lock_seen`].
#[wasm_bindgen]
pub fn lock(addr: u32) -> u32 {
    lock_with(addr, Lock::try_lock_unseen)
}

/// [`lock`] while diagnostics are on: every acquisition reported. V8's JS
/// calls this one whatever the mode (it reads the mode byte after the CAS).
/// Inlined into the export wasm-bindgen wraps it in, as [`lock`] is: out of
/// line, the export was a call more, which cost V8 1.1-1.3 ns a lock +
/// unlock pair with [`unlock_seen`], all the diagnostics cost while off; a
/// load and a branch of the mode byte cost nothing measurable. (The macro
/// puts the attribute on the export too, where rustc ignores it.)
#[wasm_bindgen]
#[allow(unused_attributes)]
#[inline(always)]
pub fn lock_seen(addr: u32) -> u32 {
    lock_with(addr, Lock::try_lock)
}

/// The address of the diagnostics' mode byte (0: all off), which JS reads
/// to choose between [`lock`] and [`lock_seen`], [`unlock`] and
/// [`unlock_seen`].
#[wasm_bindgen]
pub fn diag_mode_address() -> u32 {
    parklot::diagnostics::mode_address() as u32
}

/// [`lock`]'s body, with the uncontended try of the caller's choosing.
#[inline(always)]
fn lock_with(addr: u32, try_lock: fn(&Lock) -> bool) -> u32 {
    // SAFETY (every `at::<Lock>` below): the JS wrapper passes the address of a
    // lock it allocated and checked.
    let lock = unsafe { at::<Lock>(addr) };
    // A free lock is not held by this thread: the list is looked at only
    // when the lock is taken. Between the byte and the record nothing is
    // called (`took` is inlined), so no engine can stop the thread there.
    if try_lock(lock) {
        took(addr, lock)
    } else {
        lock_contended(addr, lock)
    }
}

/// The rest of [`lock`] when the lock was not free. Out of line: the
/// refusal it may return (a `DeadlockError`) is passed through the shadow
/// stack, whose frame, inlined, was set up and torn down on every
/// uncontended `lock` too. Not `#[cold]`: under contention this is the
/// path every `lock` takes.
#[inline(never)]
fn lock_contended(addr: u32, lock: &Lock) -> u32 {
    if threads::holds(addr) == Some(true) {
        return acquired::ALREADY_HELD;
    }
    if kinds::is_tombstone(addr) {
        return acquired::FREED;
    }
    let r = match lock.lock_or_deadlock_owing() {
        Ok(()) => took(addr, lock),
        Err(e) => diagnostics::refused(e),
    };
    settled();
    r
}

/// Ends the debt of this thread's last wakeup from a `Lock`'s queue, once
/// the acquisition's outcome is recorded: a thread stopped before this (a
/// terminated worker) has its wakeup passed on by its reaper, unless the
/// hold is on record, which the reaper releases (`threads::thread_reap`).
#[inline(always)]
fn settled() {
    parking_lot::settled();
}

/// Acquires the lock at `addr` if it is free; never waits (a lock this
/// thread holds is not free: `acquired::NO`).
#[wasm_bindgen]
pub fn try_lock(addr: u32) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(addr) };
    if lock.try_lock() {
        took(addr, lock)
    } else if kinds::is_tombstone(addr) {
        acquired::FREED
    } else {
        acquired::NO
    }
}

/// Acquires the lock at `addr`, waiting at most `timeout_ms`
/// (`acquired::DEADLOCK` as for [`lock`]).
#[wasm_bindgen]
pub fn lock_for(addr: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(addr) };
    if lock.try_lock() {
        return took(addr, lock);
    }
    if threads::holds(addr) == Some(true) {
        return acquired::ALREADY_HELD;
    }
    if kinds::is_tombstone(addr) {
        return acquired::FREED;
    }
    let taken = match timeout(timeout_ms) {
        // A try: nothing parks (a thread that may not block calls this too).
        Some(t) if t.is_zero() => false,
        Some(t) => lock.try_lock_for_owing(t),
        None => match lock.lock_or_deadlock_owing() {
            Ok(()) => true,
            Err(e) => {
                settled();
                return diagnostics::refused(e);
            }
        },
    };
    let r = took_if(taken, addr, lock);
    settled();
    r
}

/// Releases the lock at `addr` (fairly: handing it to the oldest waiter),
/// if this thread holds it; `seen`: reported to the diagnostics. Inlined
/// into each export, the flags constant there.
#[inline(always)]
fn release(addr: u32, fair: bool, seen: bool) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(addr) };
    if !lock.is_locked() {
        return released::NOT_LOCKED;
    }
    let forget = match threads::let_go(addr) {
        threads::LetGo::AtRelease(forget) => forget,
        threads::LetGo::Now(Some(true)) => return release_forgotten(lock, fair, seen),
        // Checked only here, off the path of a release by its holder.
        _ if kinds::is_tombstone(addr) => return released::FREED,
        threads::LetGo::Now(Some(false)) => return released::HELD_BY_ANOTHER,
        threads::LetGo::Now(None) => return release_forgotten(lock, fair, seen),
    };
    // This thread's only hold, still on record: the record is forgotten at
    // the moment the byte is given up (`ForgetOnlyHold`), with nothing in
    // between where an engine can stop a thread. Stopped before, the
    // thread still holds the lock by both, and its reaper releases it,
    // marked owner-died; after, by neither. Nobody queued: one CAS.
    if lock.unlock_if_uncontended(seen) {
        parklot::OnRelease::released(forget);
        return released::OK;
    }
    threads::test_point(threads::StepPoint::LockRelease);
    match lock.checked_unlock_recorded(fair, seen, forget) {
        Ok(()) => released::OK,
        Err(_) => {
            // Not locked after all (nothing changed): forget the record.
            parklot::OnRelease::released(forget);
            released::NOT_LOCKED
        }
    }
}

/// [`release`] of a hold already forgotten (one of several this thread
/// held), or of a lock an unregistered caller holds: until the byte is
/// released too, a thread stopped here would leave a lock nobody holds and
/// nobody releases. Nobody queued: one CAS, with no call in between (where
/// an engine can stop a thread). Else the whole protocol, whose calls run
/// inside `sections::lock_step`, so that a death there poisons the runtime.
#[inline(always)]
fn release_forgotten(lock: &Lock, fair: bool, seen: bool) -> u32 {
    if lock.unlock_if_uncontended(seen) {
        return released::OK;
    }
    sections::lock_step(|| match lock.checked_unlock_recorded(fair, seen, ()) {
        Ok(()) => released::OK,
        Err(_) => released::NOT_LOCKED,
    })
}

/// Releases the lock at `addr`, held by this thread, unseen by the
/// diagnostics (called only while they are off, as [`lock`] is).
#[wasm_bindgen]
pub fn unlock(addr: u32) -> u32 {
    release(addr, false, false)
}

/// [`unlock`] while diagnostics are on: the release reported. Inlined into
/// its export, as [`lock_seen`] is.
#[wasm_bindgen]
#[allow(unused_attributes)]
#[inline(always)]
pub fn unlock_seen(addr: u32) -> u32 {
    release(addr, false, true)
}

/// Releases the lock at `addr`, held by this thread, handing it to the
/// oldest waiter if any.
#[wasm_bindgen]
pub fn unlock_fair(addr: u32) -> u32 {
    release(addr, true, true)
}

/// Whether the lock at `addr` is held (a snapshot).
#[wasm_bindgen]
pub fn is_locked(addr: u32) -> bool {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    unsafe { at::<Lock>(addr) }.is_locked()
}

/// The waiter record at `addr`.
///
/// # Safety
/// `addr` came from [`waiter_new`] and was not freed.
unsafe fn waiter_at<'a>(addr: u32) -> &'a AsyncWaiter {
    // SAFETY: `waiter_new` boxed an AsyncWaiter there; it lives until `waiter_free`.
    unsafe { &*(addr as *const AsyncWaiter) }
}

/// A new record for asynchronous waits, or 0 if the memory is full (reuse it: each one counts as a waiter
/// for the ParkingLot's size). Its word ([`waiter_word`]) is 1 while queued.
#[wasm_bindgen]
pub fn waiter_new() -> u32 {
    // Not `Box::new`, which traps when the memory is full: 0 tells the JS
    // wrapper to report that instead.
    let layout = Layout::new::<AsyncWaiter>();
    // SAFETY: AsyncWaiter is not zero-sized.
    let record = unsafe { std::alloc::alloc(layout) }.cast::<AsyncWaiter>();
    if !record.is_null() {
        // SAFETY: freshly allocated for this layout; `waiter_free` turns it
        // into a Box, which the global allocator and this layout allow.
        unsafe { record.write(AsyncWaiter::new()) };
        threads::waiter_made(record);
        kinds::record_internal(record as u32, layout);
    }
    record as u32
}

/// Frees a record from [`waiter_new`] that is not in a wait.
#[wasm_bindgen]
pub fn waiter_free(waiter: u32) {
    threads::waiter_freed(waiter as *const AsyncWaiter);
    kinds::forget_internal(waiter);
    // SAFETY: the JS wrapper frees each record once, outside any wait.
    drop(unsafe { Box::from_raw(waiter as *mut AsyncWaiter) });
}

/// The address of the record's 32-bit word, for `Atomics.waitAsync(word, 1)`.
#[wasm_bindgen]
pub fn waiter_word(waiter: u32) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    unsafe { waiter_at(waiter) }.word_address() as u32
}

/// The waker's token once a wait ended in a wakeup, or -1 while still queued.
#[wasm_bindgen]
pub fn waiter_poll(waiter: u32) -> i32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    unsafe { waiter_at(waiter) }.poll().map_or(-1, |t| t as i32)
}

/// Async lock, step 1: taken now (`acquired::YES`/`OWNER_DIED`), else
/// `acquired::NO` and `waiter` is queued, or `acquired::DEADLOCK` and
/// nothing queued (deadlock detection: waiting would close a cycle). A lock
/// this thread holds is waited for like any other: on a thread that cannot
/// block, several async tasks take turns, and whichever holds it will
/// unlock it.
#[wasm_bindgen]
pub fn lock_async_begin(addr: u32, waiter: u32) -> u32 {
    // SAFETY: the JS wrapper keeps the record alive and uses it for one wait at a time.
    let lock = unsafe { at::<Lock>(addr) };
    // SAFETY: as above.
    let waiter = unsafe { waiter_at(waiter) };
    // SAFETY: as above.
    let r = took_if(unsafe { lock.lock_async_begin(waiter) }, addr, lock);
    // A condition's async waiter takes its lock back with the record its
    // notify claimed, whose debt lasts until here (js/src/condition.ts): one
    // that took the lock, or was refused, settles once that is recorded. A
    // record queued again (`NO`) owes nothing more (its queueing ended the
    // debt), and must not settle: a release may have handed it the lock
    // already, a debt its reaper must still find.
    if r != acquired::NO {
        waiter.settled();
    }
    r
}

/// Async lock, step 2 (the waiter's word changed): taken, or `acquired::NO`
/// and queued again, or `acquired::DEADLOCK` as for [`lock_async_begin`].
#[wasm_bindgen]
pub fn lock_async_resume(addr: u32, waiter: u32) -> u32 {
    diagnostics::forget_refusal();
    // SAFETY: as for lock_async_begin.
    let lock = unsafe { at::<Lock>(addr) };
    // SAFETY: as for lock_async_begin.
    let waiter = unsafe { waiter_at(waiter) };
    // SAFETY: as for lock_async_begin.
    let r = took_if(unsafe { lock.lock_async_resume_owing(waiter) }, addr, lock);
    // After the record, as for a blocking wakeup (`settled`).
    waiter.settled();
    r
}

/// Async lock, giving up: taken after all (the caller holds it), or `acquired::NO`.
#[wasm_bindgen]
pub fn lock_async_cancel(addr: u32, waiter: u32) -> u32 {
    // SAFETY: as for lock_async_begin.
    let lock = unsafe { at::<Lock>(addr) };
    // A cancel queues nothing, so nothing is refused.
    // SAFETY: as for lock_async_begin.
    if unsafe { lock.lock_async_cancel(waiter_at(waiter)) } {
        took(addr, lock)
    } else {
        acquired::NO
    }
}

/// What `condition_wait` returns: bit flags.
pub mod waited {
    /// A notify ended the wait (else the timeout did).
    pub const NOTIFIED: u32 = 1;
    /// The lock, taken back, had lost its last owner (it died holding it).
    pub const OWNER_DIED: u32 = 2;
    /// Nothing done: this thread does not hold the lock.
    pub const NOT_HELD: u32 = 4;
    /// Nothing done: the condition's queued waiters use another lock.
    pub const WRONG_LOCK: u32 = 8;
    /// The wait ended, but deadlock detection refused to take the lock back
    /// (a cycle would close): the lock is not held.
    pub const DEADLOCK: u32 = 16;
}

/// Releases the lock, waits for a notify (or the timeout), re-takes the lock.
/// The caller must hold the lock (else `waited::NOT_HELD`, nothing done).
#[wasm_bindgen]
pub fn condition_wait(cond: u32, lock_addr: u32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(lock_addr) };
    if !lock.is_locked() || threads::holds(lock_addr) == Some(false) {
        return waited::NOT_HELD;
    }
    let deadline = timeout(timeout_ms).and_then(|t| parklot::Instant::now().checked_add(t));
    // While waiting, this thread does not hold the lock: its record and the
    // lock's byte change as one step (`threads::begin_step`), from before
    // it queues until it has released the byte and forgotten the hold, so
    // that a thread stopped between the two poisons the runtime instead of
    // leaving a lock that nobody holds (or a record of a hold it no longer
    // has, which its reaper would release from under the next owner).
    let step = Cell::new(Some(threads::begin_step()));
    let end_step = || {
        if let Some(step) = step.take() {
            threads::end_step(step);
        }
    };
    let released = || {
        if let Some(step) = step.take() {
            step.fault_point(threads::StepPoint::ConditionWait);
            threads::forget(lock_addr);
            threads::end_step(step);
        }
    };
    // SAFETY: this thread holds the lock (checked above); `released` only
    // writes this thread's own records.
    let woken = unsafe { at::<Condition>(cond).wait_owing(lock, deadline, released) };
    end_step(); // refused: never released, still held
    let Ok(woken) = woken else {
        return waited::WRONG_LOCK;
    };
    // The lock back, and its record, before the wakeup's debt ends: handed
    // over by a release (after a requeue), or taken as `lock` takes it, with
    // nothing called between the byte and the record.
    let taken = if woken.holding {
        took(lock_addr, lock)
    } else {
        lock_with(lock_addr, Lock::try_lock)
    };
    settled();
    let notified = if woken.notified { waited::NOTIFIED } else { 0 };
    match taken {
        acquired::YES => notified,
        acquired::OWNER_DIED => notified | waited::OWNER_DIED,
        // Waited, and not taken back: not held.
        acquired::DEADLOCK => waited::DEADLOCK,
        // Neither held (let go above) nor freed (a tombstone is never held).
        other => unreachable!("condition_wait: the lock taken back said {other}"),
    }
}

/// Wakes the oldest waiter; whether there was one.
#[wasm_bindgen]
pub fn condition_notify_one(cond: u32) -> bool {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    unsafe { at::<Condition>(cond) }.notify_one()
}

/// Wakes every waiter; how many.
#[wasm_bindgen]
pub fn condition_notify_all(cond: u32) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    unsafe { at::<Condition>(cond) }.notify_all() as u32
}

/// Async wait: queues `waiter`, then releases the lock, which this thread
/// must hold. Returns 0, or `waited::NOT_HELD` / `waited::WRONG_LOCK` with
/// nothing done.
#[wasm_bindgen]
pub fn condition_wait_async_begin(cond: u32, lock_addr: u32, waiter: u32) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(lock_addr) };
    if !lock.is_locked() || threads::holds(lock_addr) == Some(false) {
        return waited::NOT_HELD;
    }
    // The byte released and the hold forgotten as one step, as in
    // `condition_wait`.
    let step = threads::begin_step();
    // SAFETY: this thread holds the lock (checked above); record as for lock_async_begin.
    let r = match unsafe { at::<Condition>(cond).wait_async_begin(lock, waiter_at(waiter)) } {
        Ok(()) => {
            threads::forget(lock_addr);
            0
        }
        Err(_) => waited::WRONG_LOCK,
    };
    threads::end_step(step);
    r
}

/// Async wait, giving up: whether a notify came first. That notify stays
/// owed until the lock is back (`lock_async_begin` settles it), as one the
/// waiter's word reported does (js/src/condition.ts).
#[wasm_bindgen]
pub fn condition_wait_async_cancel(cond: u32, waiter: u32) -> bool {
    // SAFETY: as for condition_wait_async_begin.
    unsafe { at::<Condition>(cond).wait_async_cancel_owing(waiter_at(waiter)) }
}

/// # Safety
/// `addr` is a 4-aligned address inside the memory (checked by the wrapper).
unsafe fn i32_at<'a>(addr: u32) -> &'a AtomicI32 {
    // SAFETY: aligned and in bounds per the caller; shared memory is always live.
    unsafe { &*(addr as *const AtomicI32) }
}

/// # Safety
/// `addr` is an 8-aligned address inside the memory (checked by the wrapper).
unsafe fn i64_at<'a>(addr: u32) -> &'a AtomicI64 {
    // SAFETY: as for i32_at.
    unsafe { &*(addr as *const AtomicI64) }
}

/// `Atomics.wait` on an Int32Array element: 0 "ok", 1 "not-equal", 2 "timed-out".
#[wasm_bindgen]
pub fn atomics_wait32(addr: u32, expected: i32, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    futex::wait32(unsafe { i32_at(addr) }, expected, timeout(timeout_ms)) as u32
}

/// `Atomics.wait` on a BigInt64Array element; results as `atomics_wait32`.
#[wasm_bindgen]
pub fn atomics_wait64(addr: u32, expected: i64, timeout_ms: f64) -> u32 {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    futex::wait64(unsafe { i64_at(addr) }, expected, timeout(timeout_ms)) as u32
}

/// `Atomics.notify`: wakes up to `count` waiters (`u32::MAX`: all), oldest first.
#[wasm_bindgen]
pub fn atomics_notify(addr: u32, count: u32) -> u32 {
    let count = if count == u32::MAX {
        futex::NOTIFY_ALL
    } else {
        count as usize
    };
    futex::notify_address(addr as usize, count) as u32
}

/// `Atomics.waitAsync` step 1 on 32 bits: `true` queued, `false` not-equal.
#[wasm_bindgen]
pub fn atomics_wait32_async_begin(addr: u32, expected: i32, waiter: u32) -> bool {
    // SAFETY: as for lock_async_begin and i32_at.
    unsafe { futex::wait32_async_begin(i32_at(addr), expected, waiter_at(waiter)) }
}

/// `Atomics.waitAsync` step 1 on 64 bits.
#[wasm_bindgen]
pub fn atomics_wait64_async_begin(addr: u32, expected: i64, waiter: u32) -> bool {
    // SAFETY: as for lock_async_begin and i64_at.
    unsafe { futex::wait64_async_begin(i64_at(addr), expected, waiter_at(waiter)) }
}

/// `Atomics.waitAsync` timing out: 2 "timed-out", or 0 "ok" if a notify came first.
#[wasm_bindgen]
pub fn atomics_wait_async_cancel(addr: u32, waiter: u32) -> u32 {
    // SAFETY: as for lock_async_begin.
    let r: WaitResult = unsafe { futex::wait_async_cancel(addr as usize, waiter_at(waiter)) };
    r as u32
}

/// `iterations` times: lock, increment the plain (non-atomic) u64 at
/// `counter_addr`, unlock. With correct locking, N threads running it on the
/// same lock and counter add exactly N * iterations.
#[wasm_bindgen]
pub fn lock_increment_loop(lock_addr: u32, counter_addr: u32, iterations: u32) {
    // SAFETY: an address the JS wrapper allocated and checked (module docs).
    let lock = unsafe { at::<Lock>(lock_addr) };
    let counter = counter_addr as *mut u64;
    for _ in 0..iterations {
        lock.lock();
        // SAFETY: `counter_addr` is a live, 8-aligned u64 from `alloc`, and
        // every thread touches it only while holding `lock`, so this access
        // is exclusive; lock's Acquire and unlock's Release order it.
        unsafe { *counter += 1 };
        lock.unlock();
    }
}
