//! Settling a `waitAsync` promise on the waiting thread's event loop.
//!
//! Each pending wait owns a Node-API thread-safe function over the JS
//! `settle(outcome)` callback of its promise. parklot calls the wait's waker
//! on whichever thread ends it (a notifier on another worker, or this
//! thread's timer); the waker queues one call of the thread-safe function,
//! which runs `settle` on the waiting thread's loop, and releases it. While
//! the wait is pending the thread-safe function is referenced, so the loop
//! stays alive; it never blocks the loop.
//!
//! When the waiting thread's environment is torn down (a worker exits), Node
//! finalizes the thread-safe function: the finalizer cancels the wait, so
//! that no notify counts a waiter whose thread is gone, and the waker, which
//! may be running on another thread at that moment, is kept from touching
//! the dying function by the `tsfn` slot's mutex.

use napi::{sys, Env, Error, Result, Status};
use parklot::parking_lot::{WaitOutcome, Waker, WakerWait};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The outcome numbers `settle` receives.
const OK: usize = 0;
const TIMED_OUT: usize = 1;
const CANCELLED: usize = 2;

/// A thread-safe function handle: a pointer that Node-API lets any thread use
/// until it is released or finalized.
struct Tsfn(sys::napi_threadsafe_function);
// SAFETY: Node-API's thread-safe functions are made to be called from any thread.
unsafe impl Send for Tsfn {}

/// One pending `waitAsync`, shared by its waker, its JS handle (for the
/// timer's `expire`) and its thread-safe function's finalizer.
pub struct Pending {
    /// The thread-safe function, until the waker or the finalizer takes it.
    tsfn: Mutex<Option<Tsfn>>,
    /// The parklot wait, once queued.
    wait: Mutex<Option<WakerWait>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pending {
    /// Creates the pending wait and its thread-safe function over `settle`.
    pub(crate) fn new(env: &Env, settle: sys::napi_value) -> Result<Arc<Pending>> {
        let pending = Arc::new(Pending {
            tsfn: Mutex::new(None),
            wait: Mutex::new(None),
        });
        let mut name = core::ptr::null_mut();
        let label = "parklot.waitAsync";
        // SAFETY: a valid env and a UTF-8 buffer of the given length.
        check(unsafe {
            sys::napi_create_string_utf8(
                env.raw(),
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            )
        })?;
        let finalize_data = Arc::into_raw(pending.clone()) as *mut c_void;
        let mut tsfn = core::ptr::null_mut();
        // SAFETY: `settle` is a function value of this call; the finalizer
        // takes back the reference passed as its data.
        let status = unsafe {
            sys::napi_create_threadsafe_function(
                env.raw(),
                settle,
                core::ptr::null_mut(),
                name,
                0,
                1,
                finalize_data,
                Some(finalize),
                core::ptr::null_mut(),
                Some(call_settle),
                &mut tsfn,
            )
        };
        if status != sys::Status::napi_ok {
            // SAFETY: not handed to Node, so the reference is still ours.
            drop(unsafe { Arc::from_raw(finalize_data as *const Pending) });
            return Err(Error::new(
                Status::GenericFailure,
                "cannot create the waitAsync callback",
            ));
        }
        *locked(&pending.tsfn) = Some(Tsfn(tsfn));
        Ok(pending)
    }

    /// The waker to queue the parklot wait with.
    pub(crate) fn waker(self: &Arc<Pending>) -> Waker {
        let pending = self.clone();
        Box::new(move |outcome| {
            let code = match outcome {
                WaitOutcome::Woken(_) => OK,
                WaitOutcome::TimedOut => TIMED_OUT,
                WaitOutcome::Cancelled => CANCELLED,
            };
            pending.deliver(code);
        })
    }

    /// Keeps the queued wait, for `expire` and the finalizer.
    pub(crate) fn set_wait(&self, wait: WakerWait) {
        *locked(&self.wait) = Some(wait);
    }

    /// Queues `settle(code)` on the waiting thread's loop and lets the
    /// thread-safe function go; or just lets it go (`None`: not queued).
    fn deliver_or_drop(&self, code: Option<usize>) {
        let mut slot = locked(&self.tsfn);
        if let Some(Tsfn(tsfn)) = slot.take() {
            // SAFETY: not yet released (we took it out of the slot, under the
            // mutex the finalizer also takes), so still valid.
            unsafe {
                if let Some(code) = code {
                    sys::napi_call_threadsafe_function(
                        tsfn,
                        code as *mut c_void,
                        sys::ThreadsafeFunctionCallMode::nonblocking,
                    );
                }
                sys::napi_release_threadsafe_function(
                    tsfn,
                    sys::ThreadsafeFunctionReleaseMode::release,
                );
            }
        }
    }

    fn deliver(&self, code: usize) {
        self.deliver_or_drop(Some(code));
    }

    /// The wait was not queued ("not-equal"): nothing will be delivered.
    pub(crate) fn abandon(&self) {
        self.deliver_or_drop(None);
    }

    /// The JS timer fired: ends the wait as timed out unless it ended.
    pub(crate) fn expire(&self) -> bool {
        locked(&self.wait).as_ref().is_some_and(WakerWait::expire)
    }
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::GenericFailure, "Node-API call failed"))
    }
}

/// Runs on the waiting thread's loop: `settle(outcome)`.
unsafe extern "C" fn call_settle(
    env: sys::napi_env,
    settle: sys::napi_value,
    _context: *mut c_void,
    data: *mut c_void,
) {
    if env.is_null() || settle.is_null() {
        return; // the environment is going away: nobody is left to settle
    }
    let mut outcome = core::ptr::null_mut();
    let mut undefined = core::ptr::null_mut();
    let mut ignored = core::ptr::null_mut();
    // SAFETY: called by Node on the loop's thread with a live env and the
    // function the thread-safe function was made over. A throwing `settle`
    // leaves its exception pending, which Node reports as uncaught.
    unsafe {
        sys::napi_create_uint32(env, data as usize as u32, &mut outcome);
        sys::napi_get_undefined(env, &mut undefined);
        sys::napi_call_function(env, undefined, settle, 1, &outcome, &mut ignored);
    }
}

/// Runs once the thread-safe function is gone: released by the waker, or
/// finalized because its environment is torn down. In the second case the
/// wait is still queued: cancel it.
unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the reference made in `Pending::new` for us.
    let pending = unsafe { Arc::from_raw(data as *const Pending) };
    // The function is dying: a waker that runs from now on must not use it.
    let _dying = locked(&pending.tsfn).take();
    let wait = locked(&pending.wait).take();
    if let Some(wait) = wait {
        wait.cancel();
    }
}
