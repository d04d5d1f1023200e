//! Settling a `waitAsync` promise on the waiting thread's event loop.
//!
//! Each thread that waits asynchronously has one Node-API thread-safe
//! function (made at its first `waitAsync`, finalized with its environment)
//! and a table of its pending waits: id → the parklot wait and a reference
//! to the promise's JS `settle(outcome)`. parklot calls a wait's waker on
//! whichever thread ends it (a notifier on another worker, or this thread's
//! timer); the waker queues `(id, outcome)` on the thread-safe function,
//! whose callback, on the waiting thread, takes the entry out of the table
//! and calls `settle`. One function per thread, not per wait: making and
//! closing one (a libuv handle, a cleanup hook) cost more than the whole
//! engine's `waitAsync` (measured: 23.8 µs per notified `waitAsync` against
//! the engine's 3.7 µs, bench/node).
//!
//! **Loop lifetime.** The thread-safe function is unreferenced: as with the
//! engine's own `Atomics.waitAsync` (Node 20, 22 and 24 alike), a pending
//! wait, timed or not, does not keep the loop alive. A wait settled on its
//! own thread (a notify there, or its timer) references the function until
//! its `settle` has run, as the engine runs its own promise job before the
//! loop ends.
//!
//! **Teardown.** When the thread's environment is torn down (a worker
//! exits), Node finalizes the thread-safe function: the finalizer cancels
//! every wait still in the table, so that no notify counts a waiter whose
//! thread is gone, and the wakers, which may be running on other threads at
//! that moment, are kept from touching the dying function by its slot's
//! mutex.

use napi::{sys, Env, Error, Result, Status};
use parklot::parking_lot::{WaitOutcome, Waker, WakerWait};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

/// The outcome numbers `settle` receives.
const OK: usize = 0;
const TIMED_OUT: usize = 1;
const CANCELLED: usize = 2;

/// A queued settlement, as the thread-safe function carries it:
/// `id << 3 | counted << 2 | outcome` (`counted`: it references the function).
const COUNTED: usize = 4;

/// A thread-safe function handle: a pointer that Node-API lets any thread use
/// until it is finalized.
struct Tsfn(sys::napi_threadsafe_function);
// SAFETY: Node-API's thread-safe functions are made to be called from any thread.
unsafe impl Send for Tsfn {}

/// What a waiting thread's wakers share, on any thread.
struct Shared {
    /// The thread-safe function, until its finalizer takes it.
    tsfn: Mutex<Option<Tsfn>>,
    /// Settlements queued from the owner thread whose `settle` has not run:
    /// while there are any, the function is referenced. Owner thread only.
    in_flight: AtomicUsize,
    owner: ThreadId,
    /// The owner's environment, used on the owner thread only.
    env: Env,
}

// SAFETY: `env` is only used on the owner thread (checked against `owner`);
// the rest is thread-safe.
unsafe impl Send for Shared {}
// SAFETY: as for Send.
unsafe impl Sync for Shared {}

/// A pending wait, in its thread's table.
struct Entry {
    wait: WakerWait,
    /// A strong reference to `settle` (which also keeps the wait's buffer
    /// alive: the JS wrapper's `settle` holds it).
    settle: sys::napi_ref,
}

/// A waiting thread's own state.
struct Thread {
    shared: Arc<Shared>,
    entries: HashMap<u32, Entry>,
    last_id: u32,
}

thread_local! {
    static THREAD: RefCell<Option<Thread>> = const { RefCell::new(None) };
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::GenericFailure, what.to_owned()))
    }
}

/// Queues a wait with `wait` (given the waker to queue it with) that settles
/// on this thread's loop by calling `settle(outcome)`: 0 woken ("ok"), 1
/// expired ("timed-out"), 2 cancelled. Returns its id, or 0 if it was not
/// queued ("not-equal": `settle` is never called).
pub(crate) fn queue(
    env: &Env,
    settle: sys::napi_value,
    wait: impl FnOnce(Waker) -> Option<WakerWait>,
) -> Result<u32> {
    let shared = shared(env)?;
    let id = THREAD.with_borrow_mut(|t| {
        let t = t.as_mut().expect("made by `shared`");
        loop {
            t.last_id = t.last_id.wrapping_add(1);
            if t.last_id != 0 && !t.entries.contains_key(&t.last_id) {
                return t.last_id;
            }
        }
    });
    let Some(wait) = wait(waker(shared, id)) else {
        return Ok(0);
    };
    let mut settle_ref = core::ptr::null_mut();
    // SAFETY: a live env of the current call and a value of it.
    let status = unsafe { sys::napi_create_reference(env.raw(), settle, 1, &mut settle_ref) };
    if status != sys::Status::napi_ok {
        wait.cancel(); // its settlement finds no entry and is dropped
        return check(status, "cannot keep the waitAsync callback").map(|()| 0);
    }
    THREAD.with_borrow_mut(|t| {
        let t = t.as_mut().expect("made by `shared`");
        t.entries.insert(
            id,
            Entry {
                wait,
                settle: settle_ref,
            },
        );
    });
    Ok(id)
}

/// The JS timer of wait `id` fired: ends it as timed out unless it already
/// ended. Returns whether it did.
pub(crate) fn expire(id: u32) -> bool {
    // The waker runs here, but touches only the shared half.
    THREAD.with_borrow(|t| {
        t.as_ref()
            .and_then(|t| t.entries.get(&id))
            .is_some_and(|e| e.wait.expire())
    })
}

/// This thread's shared half, made with the thread-safe function at its
/// first wait.
fn shared(env: &Env) -> Result<Arc<Shared>> {
    if let Some(shared) = THREAD.with_borrow(|t| t.as_ref().map(|t| t.shared.clone())) {
        return Ok(shared);
    }
    let shared = Arc::new(Shared {
        tsfn: Mutex::new(None),
        in_flight: AtomicUsize::new(0),
        owner: std::thread::current().id(),
        env: *env,
    });
    let mut name = core::ptr::null_mut();
    let label = "parklot.waitAsync";
    // SAFETY: a valid env and a UTF-8 buffer of the given length.
    check(
        unsafe {
            sys::napi_create_string_utf8(
                env.raw(),
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            )
        },
        "cannot name the waitAsync callback",
    )?;
    let data = Arc::into_raw(shared.clone()) as *mut c_void;
    let mut tsfn = core::ptr::null_mut();
    // SAFETY: no JS function (the callback calls each wait's own); the
    // finalizer takes back the reference passed as its data, which is also
    // the context the callback reads.
    let status = unsafe {
        sys::napi_create_threadsafe_function(
            env.raw(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            name,
            0,
            1,
            data,
            Some(finalize),
            data,
            Some(call_settle),
            &mut tsfn,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: not handed to Node, so the reference is still ours.
        drop(unsafe { Arc::from_raw(data as *const Shared) });
        return check(status, "cannot create the waitAsync callback").map(|()| shared);
    }
    // SAFETY: just created on this thread. (It fails only for bad arguments.)
    unsafe { sys::napi_unref_threadsafe_function(env.raw(), tsfn) };
    *locked(&shared.tsfn) = Some(Tsfn(tsfn));
    THREAD.set(Some(Thread {
        shared: shared.clone(),
        entries: HashMap::new(),
        last_id: 0,
    }));
    Ok(shared)
}

/// The waker of wait `id`: queues its settlement on the owner's loop.
fn waker(shared: Arc<Shared>, id: u32) -> Waker {
    // Counted while the waker lives: until it has run, or was dropped
    // because the wait was never queued.
    let counted = crate::queued::Counted::new();
    Box::new(move |outcome| {
        let _counted = counted;
        let code = match outcome {
            WaitOutcome::Woken(_) => OK,
            WaitOutcome::TimedOut => TIMED_OUT,
            WaitOutcome::Cancelled => CANCELLED,
        };
        let slot = locked(&shared.tsfn);
        let Some(Tsfn(tsfn)) = *slot else {
            return; // the owner is being torn down: nobody is left to settle
        };
        let mut data = (id as usize) << 3 | code;
        if std::thread::current().id() == shared.owner {
            data |= COUNTED;
            if shared.in_flight.fetch_add(1, Ordering::Relaxed) == 0 {
                // SAFETY: on the owner thread, whose env is alive while the
                // function is (the finalizer empties the slot first).
                unsafe { sys::napi_ref_threadsafe_function(shared.env.raw(), tsfn) };
            }
        }
        // SAFETY: not finalized (still in the slot, under the mutex the
        // finalizer also takes).
        unsafe {
            sys::napi_call_threadsafe_function(
                tsfn,
                data as *mut c_void,
                sys::ThreadsafeFunctionCallMode::nonblocking,
            );
        }
    })
}

/// Runs on the waiting thread's loop: takes the wait's entry and calls its
/// `settle(outcome)`.
unsafe extern "C" fn call_settle(
    env: sys::napi_env,
    _js: sys::napi_value,
    context: *mut c_void,
    data: *mut c_void,
) {
    if env.is_null() {
        return; // the environment is going away: nobody is left to settle
    }
    let data = data as usize;
    // SAFETY: the context is the finalizer's reference, alive until it runs
    // (after the last call).
    let shared = unsafe { &*(context as *const Shared) };
    if data & COUNTED != 0 && shared.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
        if let Some(Tsfn(tsfn)) = *locked(&shared.tsfn) {
            // SAFETY: on the owner thread, with its live env.
            unsafe { sys::napi_unref_threadsafe_function(env, tsfn) };
        }
    }
    let id = (data >> 3) as u32;
    let Some(entry) = THREAD.with_borrow_mut(|t| t.as_mut().and_then(|t| t.entries.remove(&id)))
    else {
        return; // cancelled before it was entered (see `queue`)
    };
    let mut settle = core::ptr::null_mut();
    let mut outcome = core::ptr::null_mut();
    let mut undefined = core::ptr::null_mut();
    let mut ignored = core::ptr::null_mut();
    // SAFETY: called by Node on the loop's thread with a live env; the
    // reference was made in it. A throwing `settle` leaves its exception
    // pending, which Node reports as uncaught.
    unsafe {
        sys::napi_get_reference_value(env, entry.settle, &mut settle);
        sys::napi_delete_reference(env, entry.settle);
        sys::napi_create_uint32(env, (data & 3) as u32, &mut outcome);
        sys::napi_get_undefined(env, &mut undefined);
        sys::napi_call_function(env, undefined, settle, 1, &outcome, &mut ignored);
    }
}

/// Runs once the thread-safe function is finalized, its environment torn
/// down: cancels every wait the thread still has queued.
unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the reference made in `shared` for us.
    let shared = unsafe { Arc::from_raw(data as *const Shared) };
    // The function is dying: a waker that runs from now on must not use it.
    let _dying = locked(&shared.tsfn).take();
    let thread = THREAD.take();
    // The references die with the environment; the waits must leave the queues.
    for entry in thread.into_iter().flat_map(|t| t.entries.into_values()) {
        entry.wait.cancel();
    }
}
