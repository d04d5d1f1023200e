//! The blocking `Atomics.wait`: a parklot wait with a waker, and the calling
//! thread asleep on a condition variable until the waker runs.
//!
//! Why not park the thread in the ParkingLot directly: a worker blocked in
//! native code is never interrupted by Node. `worker.terminate()` and the
//! process's exit (which joins its workers) would wait for it forever, where
//! the engine's own `Atomics.wait` wakes up. So the thread sleeps in slices
//! of [`SLICE`], and between slices asks Node whether its environment is
//! stopping; if it is, it cancels the wait (no notify counts it) and returns.
//! The wait stays queued across slices, so FIFO order and exact counts are
//! those of a plain parklot wait.

use napi::{sys, Env};
use parklot::futex::WaitResult;
use parklot::parking_lot::{WaitOutcome, Waker, WakerWait};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often a sleeping wait checks whether its thread is being stopped:
/// the most a `worker.terminate()` waits for a worker blocked in `wait`.
const SLICE: Duration = Duration::from_millis(100);

/// Where the waker leaves the outcome for the sleeping thread.
#[derive(Default)]
struct Signal {
    outcome: Mutex<Option<WaitOutcome>>,
    woken: Condvar,
}

/// Queues a wait with `queue` and sleeps until it ends or `timeout` passes.
pub(crate) fn wait(
    env: &Env,
    timeout: Option<Duration>,
    queue: impl FnOnce(Waker) -> Option<WakerWait>,
) -> WaitResult {
    let signal = Arc::new(Signal::default());
    let s = signal.clone();
    let waker: Waker = Box::new(move |outcome| {
        *s.outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        s.woken.notify_one();
    });
    let Some(wait) = queue(waker) else {
        return WaitResult::NotEqual;
    };
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    let lock_outcome = || {
        signal
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    let mut given_up = false;
    let mut outcome = lock_outcome();
    loop {
        match *outcome {
            Some(WaitOutcome::Woken(_)) => return WaitResult::Ok,
            Some(WaitOutcome::TimedOut | WaitOutcome::Cancelled) => return WaitResult::TimedOut,
            None => {}
        }
        let now = Instant::now();
        let expired = !given_up && deadline.is_some_and(|d| now >= d);
        if !expired {
            // After giving up, a racing notify's waker is about to run: wait for it.
            let slice = match deadline {
                Some(d) if !given_up => SLICE.min(d - now),
                _ => SLICE,
            };
            outcome = signal
                .woken
                .wait_timeout(outcome, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if outcome.is_some() || given_up || !stopping(env) {
                continue;
            }
        }
        // Giving up (the deadline passed, or the environment is stopping),
        // unlocked: the waker runs on this thread if the expiry or cancel wins.
        drop(outcome);
        given_up = true;
        if expired {
            wait.expire();
        } else {
            wait.cancel();
        }
        outcome = lock_outcome();
    }
}

/// Whether Node is stopping this thread's environment (a terminated worker,
/// an exiting process): Node-API refuses to run JS then, which a property
/// read shows.
fn stopping(env: &Env) -> bool {
    let mut global = core::ptr::null_mut();
    let mut value = core::ptr::null_mut();
    // SAFETY: a live env of the current call, on its thread; a NUL-terminated name.
    unsafe {
        sys::napi_get_global(env.raw(), &mut global) != sys::Status::napi_ok
            || sys::napi_get_named_property(env.raw(), global, c"Atomics".as_ptr(), &mut value)
                != sys::Status::napi_ok
    }
}
