//! How many waits this addon has queued (or is about to queue), in the
//! whole process: the JS `notify` reads it, through an `ArrayBuffer` over
//! the counter, and skips the addon altogether when it is 0 (a notify with
//! nobody waiting then costs no Node-API call).
//!
//! Why that read cannot miss a waiter: a wait counts itself in with a
//! sequentially consistent read-modify-write before the ParkingLot compares
//! its value, and the JS side reads the count with a read-modify-write too
//! (`Atomics.add(count, 0, 0)`) after its store. The two are ordered on the
//! counter: if the notifier's comes first and reads 0, the waiter's acquires
//! it, so the waiter's comparison sees the notifier's store and it does not
//! sleep; otherwise the notifier sees the count and calls the addon. (A load
//! could pass the notifier's earlier plain store: see `may_have_waiters` in
//! the core's `table.rs`, which does the same per bucket.)

use napi::{sys, Env, Error, Result, Status, Unknown};
use std::sync::atomic::{AtomicI32, Ordering};

static QUEUED: AtomicI32 = AtomicI32::new(0);

/// One wait, counted in from creation until it is dropped (after its wait
/// has left the queue, or was never queued).
pub(crate) struct Counted(());

impl Counted {
    pub(crate) fn new() -> Counted {
        QUEUED.fetch_add(1, Ordering::SeqCst);
        Counted(())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        QUEUED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An `ArrayBuffer` of 4 bytes over the counter (an `Int32Array` reads it).
pub(crate) fn counter_buffer(env: &Env) -> Result<Unknown<'_>> {
    let mut value = core::ptr::null_mut();
    // SAFETY: the counter is a static, so the memory outlives every buffer;
    // nothing frees it (no finalizer). JS only touches it with Atomics.
    let status = unsafe {
        sys::napi_create_external_arraybuffer(
            env.raw(),
            QUEUED.as_ptr().cast(),
            core::mem::size_of::<AtomicI32>(),
            None,
            core::ptr::null_mut(),
            &mut value,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(Error::new(
            Status::GenericFailure,
            "no external ArrayBuffer here",
        ));
    }
    // SAFETY: a value just made in this env.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}
