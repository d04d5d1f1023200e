//! The C ABI of the diagnostics (`parklot.h`, "Diagnostics"): one call that
//! takes a snapshot and walks it through the caller's callbacks, the
//! switches, thread names, waiter counts, the last refusal's message, and
//! the lock-order reports. Kinds are `diagnostics::Kind`'s numbers.

use crate::deadlock;
use crate::diagnostics;
use crate::ffi::PARKLOT_EINVAL;
use core::ffi::{c_char, c_void, CStr};
use std::ffi::CString;

/// One queued waiter (`parklot_waiter_info_t`).
#[repr(C)]
pub struct WaiterInfo {
    address: usize,
    kind: u32,
    thread: u64,
    blocking: i32,
    since_ns: u64,
    /// -1: no timeout.
    deadline_ns: i64,
}

/// One hold (`parklot_hold_info_t`).
#[repr(C)]
pub struct HoldInfo {
    address: usize,
    kind: u32,
    thread: u64,
}

/// One thread (`parklot_thread_info_t`).
#[repr(C)]
pub struct ThreadInfo {
    id: u64,
    /// NUL-terminated, or null if unnamed; valid during the callback only.
    name: *const c_char,
    reaped: i32,
}

type OnWaiter = Option<unsafe extern "C" fn(*const WaiterInfo, *mut c_void) -> i32>;
type OnHold = Option<unsafe extern "C" fn(*const HoldInfo, *mut c_void) -> i32>;
type OnThread = Option<unsafe extern "C" fn(*const ThreadInfo, *mut c_void) -> i32>;

/// Takes a snapshot and calls each non-null callback once per waiter, hold
/// and thread, in that order; a callback returning nonzero stops the walk.
/// Returns how many waiters the snapshot had.
///
/// # Safety
/// Each callback is null or a function that may be called with `ctx`.
#[no_mangle]
pub unsafe extern "C" fn parklot_diagnostics(
    on_waiter: OnWaiter,
    on_hold: OnHold,
    on_thread: OnThread,
    ctx: *mut c_void,
) -> i32 {
    let snap = diagnostics::snapshot();
    let count = i32::try_from(snap.waiters.len()).unwrap_or(i32::MAX);
    let waiters = snap.waiters.iter().map(|w| WaiterInfo {
        address: w.address,
        kind: w.kind as u32,
        thread: w.thread,
        blocking: w.blocking.into(),
        since_ns: w.since_ns,
        deadline_ns: w
            .deadline_ns
            .map_or(-1, |d| i64::try_from(d).unwrap_or(i64::MAX)),
    });
    let holds = snap.holds.iter().map(|h| HoldInfo {
        address: h.address,
        kind: h.kind as u32,
        thread: h.thread,
    });
    // The names live as long as the walk over the threads.
    let names: Vec<Option<CString>> = snap
        .threads
        .iter()
        .map(|t| t.name.as_deref().and_then(|n| CString::new(n).ok()))
        .collect();
    let threads = snap.threads.iter().zip(&names).map(|(t, name)| ThreadInfo {
        id: t.id,
        name: name.as_ref().map_or(core::ptr::null(), |n| n.as_ptr()),
        reaped: t.reaped.into(),
    });
    // SAFETY: the caller's callbacks (our contract), each on a record that
    // outlives its call.
    unsafe {
        let _ = walk(waiters, on_waiter, ctx)
            && walk(holds, on_hold, ctx)
            && walk(threads, on_thread, ctx);
    }
    count
}

/// Calls `f` on each item until it returns nonzero; false if it did.
///
/// # Safety
/// `f` is null or may be called with `ctx`.
unsafe fn walk<T>(
    items: impl Iterator<Item = T>,
    f: Option<unsafe extern "C" fn(*const T, *mut c_void) -> i32>,
    ctx: *mut c_void,
) -> bool {
    let Some(f) = f else { return true };
    for item in items {
        // SAFETY: forwarded from the caller; `item` outlives the call.
        if unsafe { f(&item, ctx) } != 0 {
            return false;
        }
    }
    true
}

/// The calling thread's id, as the snapshot names it.
#[no_mangle]
pub extern "C" fn parklot_thread_id() -> u64 {
    diagnostics::thread_id()
}

/// Names the calling thread (UTF-8, NUL-terminated; copied). Returns 0, or
/// `PARKLOT_EINVAL` for null or invalid UTF-8.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn parklot_set_thread_name(name: *const c_char) -> i32 {
    if name.is_null() {
        return PARKLOT_EINVAL;
    }
    // SAFETY: non-null and NUL-terminated (caller's contract).
    match unsafe { CStr::from_ptr(name) }.to_str() {
        Ok(n) => {
            diagnostics::set_thread_name(n);
            0
        }
        Err(_) => PARKLOT_EINVAL,
    }
}

/// The name of kind number `kind` ("Lock", "RwLock.write", ...), static;
/// "unknown" for any other number.
#[no_mangle]
pub extern "C" fn parklot_kind_name(kind: u32) -> *const c_char {
    let names = &diagnostics::KIND_NAMES;
    names.get(kind as usize).unwrap_or(&names[0]).as_ptr()
}

/// A switch as C sets it: 0 off, 1 on; returns the previous state, or
/// `PARKLOT_EINVAL` (nothing changed) for any other value.
fn switch(on: i32, was: bool, set: fn(bool)) -> i32 {
    if on != 0 && on != 1 {
        return PARKLOT_EINVAL;
    }
    set(on == 1);
    was.into()
}

/// Deadlock detection on (1) or off (0); returns the previous state.
#[no_mangle]
pub extern "C" fn parklot_set_deadlock_detection(on: i32) -> i32 {
    switch(on, deadlock::is_enabled(), deadlock::set_enabled)
}

/// Hold tracking for the snapshot on (1) or off (0); returns the previous
/// state of this switch alone.
#[no_mangle]
pub extern "C" fn parklot_set_hold_tracking(on: i32) -> i32 {
    switch(
        on,
        diagnostics::is_tracking_holds(),
        diagnostics::set_tracking,
    )
}

/// Lock-order checking on (1) or off (0); returns the previous state.
#[no_mangle]
pub extern "C" fn parklot_set_lock_order_checking(on: i32) -> i32 {
    switch(
        on,
        crate::lock_order::is_enabled(),
        crate::lock_order::set_enabled,
    )
}

/// Copies the message of the deadlock the calling thread's last refused
/// acquisition returned (`PARKLOT_EDEADLK`), NUL-terminated and cut to fit
/// `len` bytes, into `buf`, and forgets it. Returns the message's full
/// length (without the NUL), or 0 if there is none.
///
/// # Safety
/// `buf` is null (then `len` must be 0) or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn parklot_last_deadlock(buf: *mut c_char, len: usize) -> usize {
    let Some(error) = deadlock::take_deadlock() else {
        return 0;
    };
    // SAFETY: forwarded from the caller.
    unsafe { copy_out(&error.to_string(), buf, len) }
}

/// The lock-order inversions seen so far: the `index`th one's message
/// into `buf` as for [`parklot_last_deadlock`]; 0 past the last one.
///
/// # Safety
/// As for `parklot_last_deadlock`.
#[no_mangle]
pub unsafe extern "C" fn parklot_lock_order_violation(
    index: usize,
    buf: *mut c_char,
    len: usize,
) -> usize {
    match crate::lock_order::violations().get(index) {
        // SAFETY: forwarded from the caller.
        Some(v) => unsafe { copy_out(&v.to_string(), buf, len) },
        None => 0,
    }
}

/// Writes `text` NUL-terminated into `buf`, cut to `len` bytes; returns
/// `text`'s length.
///
/// # Safety
/// `buf` is null (then nothing is written) or writable for `len` bytes.
unsafe fn copy_out(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        // SAFETY: `buf` holds `len` > n bytes (caller's contract).
        unsafe {
            core::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), buf, n);
            *buf.add(n) = 0;
        }
    }
    text.len()
}
