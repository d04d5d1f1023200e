//! The C ABI of waits that call back (`parklot_wait32_async` and friends in
//! `include/parklot.h`): an engine's `Atomics.waitAsync`. A handle is a boxed
//! [`WakerWait`]; the waker is a C function pointer and its data.

use crate::futex::{self, Word};
use crate::parking_lot::{WaitOutcome, WakerWait};
use core::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicI64};

use crate::ffi::PARKLOT_EINVAL;

/// The waker's `outcome`: woken by `parklot_notify` ("ok").
pub const PARKLOT_ASYNC_WOKEN: i32 = 0;
/// The waker's `outcome`: ended by `parklot_async_wait_expire` ("timed-out").
pub const PARKLOT_ASYNC_TIMED_OUT: i32 = 2;
/// The waker's `outcome`: ended by `parklot_async_wait_cancel`.
pub const PARKLOT_ASYNC_CANCELLED: i32 = 3;

/// `parklot_waker_fn`: called once with `data` and the outcome.
pub type WakerFn = unsafe extern "C" fn(data: *mut c_void, outcome: i32);

/// A C waker: the function and its data, moved to whichever thread ends the wait.
struct CWaker {
    call: WakerFn,
    data: *mut c_void,
}

// SAFETY: the header requires that the waker may run on any thread with its data.
unsafe impl Send for CWaker {}

impl CWaker {
    fn into_waker(self) -> crate::parking_lot::Waker {
        Box::new(move |outcome| {
            let code = match outcome {
                WaitOutcome::Woken(_) => PARKLOT_ASYNC_WOKEN,
                WaitOutcome::TimedOut => PARKLOT_ASYNC_TIMED_OUT,
                WaitOutcome::Cancelled => PARKLOT_ASYNC_CANCELLED,
            };
            // Bind the whole struct so the closure captures it (and its Send).
            let this = self;
            // SAFETY: the caller of parklot_wait*_async vouched for the pair.
            unsafe { (this.call)(this.data, code) }
        })
    }
}

/// Stores the handle (or NULL) and returns the wait's first result.
///
/// # Safety
/// `out` is a valid pointer to write a handle to.
unsafe fn hand_out(wait: Option<WakerWait>, out: *mut *mut WakerWait) -> i32 {
    let (code, handle) = match wait {
        Some(w) => (0, Box::into_raw(Box::new(w))),
        None => (1, core::ptr::null_mut()),
    };
    // SAFETY: caller's contract.
    unsafe { out.write(handle) };
    code
}

/// Defines the C `Atomics.waitAsync` of each word size, over [`wait_async_at`].
macro_rules! wait_async {
    ($($(#[$doc:meta])* $name:ident: $value:ty => $atomic:ty;)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            addr: *const $value,
            expected: $value,
            waker: Option<WakerFn>,
            data: *mut c_void,
            wait: *mut *mut WakerWait,
        ) -> i32 {
            // SAFETY: forwarded from the caller.
            unsafe { wait_async_at::<$atomic>(addr, expected, waker, data, wait) }
        }
    )*};
}

wait_async! {
    /// `Atomics.waitAsync` on a 32-bit word: 0 (queued; `*wait` is the handle),
    /// 1 (not-equal; `*wait` is NULL and `waker` is never called) or
    /// `PARKLOT_EINVAL`.
    ///
    /// # Safety
    /// `addr` as for `parklot_wait32`; `wait` is null or writable; `waker` may be
    /// called with `data` once, on any thread.
    parklot_wait32_async: i32 => AtomicI32;
    /// [`parklot_wait32_async`] on a 64-bit word (8-byte aligned).
    ///
    /// # Safety
    /// As for `parklot_wait32_async`.
    parklot_wait64_async: i64 => AtomicI64;
}

/// `parklot_wait32_async` and `parklot_wait64_async`.
///
/// # Safety
/// As for `parklot_wait32_async`.
unsafe fn wait_async_at<A: Word>(
    addr: *const A::Value,
    expected: A::Value,
    waker: Option<WakerFn>,
    data: *mut c_void,
    wait: *mut *mut WakerWait,
) -> i32 {
    // SAFETY: `addr` as the caller's contract says.
    let (Some(call), Some(atomic)) = (waker, unsafe { A::at(addr) }) else {
        return PARKLOT_EINVAL;
    };
    if wait.is_null() {
        return PARKLOT_EINVAL;
    }
    let w = futex::with_waker(atomic, expected, CWaker { call, data }.into_waker());
    // SAFETY: `wait` is non-null (checked) and writable (caller's contract).
    unsafe { hand_out(w, wait) }
}

/// # Safety
/// `wait` is null or a handle not yet released.
unsafe fn handle<'a>(wait: *const WakerWait) -> Option<&'a WakerWait> {
    // SAFETY: caller's contract.
    unsafe { wait.as_ref() }
}

/// The embedder's timer fired: ends the wait as timed out unless it already
/// ended. Returns 1 if it did (the waker ran on this thread), 0 if not,
/// `PARKLOT_EINVAL` for NULL.
///
/// # Safety
/// `wait` is null or a handle not yet released.
#[no_mangle]
pub unsafe extern "C" fn parklot_async_wait_expire(wait: *const WakerWait) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { handle(wait) }.map_or(PARKLOT_EINVAL, |w| w.expire() as i32)
}

/// Ends the wait as cancelled unless it already ended: returns as
/// `parklot_async_wait_expire`.
///
/// # Safety
/// As for `parklot_async_wait_expire`.
#[no_mangle]
pub unsafe extern "C" fn parklot_async_wait_cancel(wait: *const WakerWait) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { handle(wait) }.map_or(PARKLOT_EINVAL, |w| w.cancel() as i32)
}

/// Frees the handle. Does not end the wait: a pending wait still ends (and
/// calls its waker) when notified. NULL is ignored.
///
/// # Safety
/// `wait` is null or a handle not yet released; it is not used again.
#[no_mangle]
pub unsafe extern "C" fn parklot_async_wait_release(wait: *mut WakerWait) {
    if !wait.is_null() {
        // SAFETY: made by Box::into_raw in hand_out, released once (caller's contract).
        drop(unsafe { Box::from_raw(wait) });
    }
}
