//! The address of a typed array's element: the key that parklot's
//! ParkingLot queues its waiters by. A `SharedArrayBuffer`'s data never
//! moves (a growable one reserves its maximum up front), so every thread
//! that views the same bytes, through any typed array and any byte offset,
//! computes the same address.

use napi::{sys, Env, Error, JsValue, Result, Status, Unknown};
use std::sync::atomic::{AtomicI32, AtomicI64};

/// The element an `Atomics.wait` or `notify` addresses.
pub(crate) enum Element<'a> {
    I32(&'a AtomicI32),
    I64(&'a AtomicI64),
}

impl Element<'_> {
    pub(crate) fn address(&self) -> usize {
        match self {
            Element::I32(a) => *a as *const AtomicI32 as usize,
            Element::I64(a) => *a as *const AtomicI64 as usize,
        }
    }
}

/// Element `index` of `view`, an `Int32Array` or `BigInt64Array` whose
/// length the JS wrapper has already checked (this re-checks it, so a bad
/// call throws instead of touching memory).
///
/// The reference lives as long as the call that got it: the typed array,
/// an argument of that call, keeps the buffer alive.
pub(crate) fn element<'a>(env: &Env, view: &Unknown<'a>, index: f64) -> Result<Element<'a>> {
    let mut kind: sys::napi_typedarray_type = -1;
    let mut length = 0usize;
    let mut data = core::ptr::null_mut();
    let mut buffer = core::ptr::null_mut();
    let mut byte_offset = 0usize;
    // SAFETY: every out-pointer is a live local; a non-typed-array fails
    // with a status, which we turn into an error.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env.raw(),
            view.raw(),
            &mut kind,
            &mut length,
            &mut data,
            &mut buffer,
            &mut byte_offset,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(Error::new(Status::InvalidArg, "not a typed array"));
    }
    if !(index >= 0.0 && index < length as f64) || data.is_null() {
        return Err(Error::new(Status::InvalidArg, "index out of range"));
    }
    let index = index as usize;
    // `data` already includes the view's byte offset. Typed arrays are
    // aligned to their element size, so the element is aligned too.
    match kind {
        sys::TypedarrayType::int32_array => {
            // SAFETY: in bounds (checked); a SharedArrayBuffer's bytes are
            // only ever accessed atomically by the Atomics API we serve, and
            // the buffer outlives the call (see above).
            Ok(Element::I32(unsafe {
                AtomicI32::from_ptr(data.cast::<i32>().add(index))
            }))
        }
        sys::TypedarrayType::bigint64_array => {
            // SAFETY: as for the Int32Array.
            Ok(Element::I64(unsafe {
                AtomicI64::from_ptr(data.cast::<i64>().add(index))
            }))
        }
        _ => Err(Error::new(
            Status::InvalidArg,
            "not an Int32Array or BigInt64Array",
        )),
    }
}
