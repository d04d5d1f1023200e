//! The C ABI of what an engine calls when a buffer or a thread goes away,
//! and what its tests ask (`include/parklot.h`, "embedding"): cancel every
//! waiter on an address range, interrupt one thread's wait, count waiters.

use crate::futex;
use crate::parking_lot::{self, ThreadRecord};
use core::ffi::c_void;

use crate::ffi::PARKLOT_EINVAL;

/// Cancels every wait (blocking or async) on `start..start + len`; returns
/// how many. A blocking wait returns `PARKLOT_WAIT_CANCELLED`, an async one
/// calls its waker with `PARKLOT_ASYNC_CANCELLED`. Any range is accepted:
/// memory is never read.
#[no_mangle]
pub extern "C" fn parklot_cancel_range(start: *const c_void, len: usize) -> usize {
    futex::cancel_range(start.cast(), len)
}

/// How many waits (blocking and async) are queued on `addr` now.
#[no_mangle]
pub extern "C" fn parklot_waiter_count(addr: *const c_void) -> usize {
    futex::waiter_count(addr.cast())
}

/// The calling thread's handle for `parklot_thread_interrupt` (NULL while
/// the thread's locals are being torn down).
#[no_mangle]
pub extern "C" fn parklot_thread_self() -> *mut c_void {
    ThreadRecord::current().map_or(core::ptr::null_mut(), |r| r.to_address() as *mut c_void)
}

/// Interrupts `thread`'s `parklot_wait32`/`parklot_wait64` if it is queued
/// in one: it returns `PARKLOT_WAIT_CANCELLED`. Returns 1 if it did, 0 if
/// the thread was not waiting, `PARKLOT_EINVAL` for NULL.
///
/// # Safety
/// None needed: the handle is only compared with queued records.
#[no_mangle]
pub extern "C" fn parklot_thread_interrupt(thread: *mut c_void) -> i32 {
    if thread.is_null() {
        return PARKLOT_EINVAL;
    }
    // SAFETY: `interrupt_thread` never reads the record it is given.
    let thread = unsafe { ThreadRecord::from_address(thread as usize) };
    i32::from(parking_lot::interrupt_thread(thread))
}
