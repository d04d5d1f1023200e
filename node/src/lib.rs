//! parklot's Node-API addon: the waiting and waking half of `Atomics.wait`,
//! `Atomics.notify` and `Atomics.waitAsync` on any `SharedArrayBuffer`,
//! served by parklot's process-wide ParkingLot (one per process, shared by
//! the main thread and every worker that loads the addon).
//!
//! The spec's argument validation and coercion live in the JS wrapper
//! (`node/lib/atomics.cjs`), which calls these with a checked typed array,
//! an in-bounds index, the coerced value and the timeout in milliseconds.
//!
//! - `view`: a typed array element's address, the waiters' key;
//! - `blocking`: the blocking wait, which a stopping worker interrupts;
//! - `event_loop`: settling a `waitAsync` promise on its thread's loop;
//! - `queued`: the count of queued waits that lets `notify` skip the addon.

mod blocking;
mod event_loop;
mod queued;
mod view;

use napi::{Env, Error, JsValue, Result, Status, Unknown};
use napi_derive::napi;
use parklot::futex::{self, NOTIFY_ALL};
use parklot::parking_lot::{Waker, WakerWait};
use std::time::Duration;
use view::{element, Element};

/// A timeout in milliseconds (`+∞` allowed, already `max(t, 0)`) as parklot's.
fn timeout(ms: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(ms / 1000.0).ok()
}

/// The 64-bit value a BigInt64Array wait compares with, passed as two halves
/// (saves a BigInt conversion on each side).
fn join(high: i32, low: u32) -> i64 {
    ((high as i64) << 32) | low as i64
}

fn wait_code(r: futex::WaitResult) -> u32 {
    r as u32
}

/// The value a wait compares with, of the kind of element it is for.
enum Expected {
    I32(i32),
    I64(i64),
}

/// Element `index` of `view`, if its kind is `expected`'s, as the way to
/// queue a wait on it, handed to `wait` (which blocks or goes async).
fn waiting<R>(
    env: &Env,
    view: &Unknown,
    index: f64,
    expected: Expected,
    wait: impl FnOnce(&mut dyn FnMut(Waker) -> Option<WakerWait>) -> Result<R>,
) -> Result<R> {
    match (element(env, view, index)?, expected) {
        (Element::I32(a), Expected::I32(v)) => wait(&mut |w| futex::wait32_with_waker(a, v, w)),
        (Element::I64(a), Expected::I64(v)) => wait(&mut |w| futex::wait64_with_waker(a, v, w)),
        _ => Err(wrong_kind()),
    }
}

/// A blocking wait, counted as queued (see `queued`) while it lasts.
fn wait_blocking(env: &Env, view: &Unknown, index: f64, value: Expected, ms: f64) -> Result<u32> {
    waiting(env, view, index, value, |queue| {
        let _counted = queued::Counted::new();
        Ok(wait_code(blocking::wait(env, timeout(ms), queue)))
    })
}

/// Blocking wait on element `index` of an Int32Array: 0 ok, 1 not-equal, 2 timed-out.
#[napi(js_name = "wait32")]
pub fn wait32(env: Env, view: Unknown, index: f64, value: i32, timeout_ms: f64) -> Result<u32> {
    wait_blocking(&env, &view, index, Expected::I32(value), timeout_ms)
}

/// Blocking wait on element `index` of a BigInt64Array (value as two halves).
#[napi(js_name = "wait64")]
pub fn wait64(
    env: Env,
    view: Unknown,
    index: f64,
    high: i32,
    low: u32,
    timeout_ms: f64,
) -> Result<u32> {
    let value = Expected::I64(join(high, low));
    wait_blocking(&env, &view, index, value, timeout_ms)
}

/// The address of element 0 of `view` (an Int32Array or BigInt64Array of
/// length 1 or more), for [`notify_address`]: a SharedArrayBuffer's data
/// never moves, so the JS wrapper keeps it per typed array.
#[napi(js_name = "address")]
pub fn address(env: Env, view: Unknown) -> Result<f64> {
    Ok(element(&env, &view, 0.0)?.address() as f64)
}

/// `Atomics.notify` by address ([`address`] plus the element's byte offset):
/// wakes up to `count` waiters (`+∞`: all), returns how many. An address is
/// only a key, never read, so any number is harmless.
#[napi(js_name = "notifyAddress")]
pub fn notify_address(address: f64, count: f64) -> f64 {
    let count = if count >= usize::MAX as f64 {
        NOTIFY_ALL
    } else {
        count as usize
    };
    futex::notify_address(address as usize, count) as f64
}

/// An `ArrayBuffer` over the process-wide count of this addon's queued
/// waits, for the JS `notify` (see `queued`).
#[napi(js_name = "queuedCounter")]
pub fn queued_counter(env: &Env) -> Result<Unknown<'_>> {
    queued::counter_buffer(env)
}

/// How many waits, blocking and async, of any thread, are queued on element
/// `index` of `view` right now (for tests).
#[napi(js_name = "waiterCount")]
pub fn waiter_count(env: Env, view: Unknown, index: f64) -> Result<f64> {
    let address = element(&env, &view, index)?.address();
    Ok(futex::waiter_count(address as *const u8) as f64)
}

/// Queues an asynchronous wait on element `index` of an Int32Array and
/// returns its id, or 0 ("not-equal"). `settle(outcome)` runs once on this
/// thread's loop: 0 woken ("ok"), 1 expired ("timed-out"), 2 cancelled.
#[napi(js_name = "waitAsync32")]
pub fn wait_async32(
    env: Env,
    view: Unknown,
    index: f64,
    value: i32,
    settle: Unknown,
) -> Result<u32> {
    waiting(&env, &view, index, Expected::I32(value), |queue| {
        event_loop::queue(&env, settle.raw(), queue)
    })
}

/// [`wait_async32`] on a BigInt64Array (value as two halves).
#[napi(js_name = "waitAsync64")]
pub fn wait_async64(
    env: Env,
    view: Unknown,
    index: f64,
    high: i32,
    low: u32,
    settle: Unknown,
) -> Result<u32> {
    let value = Expected::I64(join(high, low));
    waiting(&env, &view, index, value, |queue| {
        event_loop::queue(&env, settle.raw(), queue)
    })
}

/// The JS timer of pending `waitAsync` `id` (of this thread) fired: ends it
/// as timed out unless it already ended. Returns whether it did.
#[napi(js_name = "expire")]
pub fn expire(id: u32) -> bool {
    event_loop::expire(id)
}

fn wrong_kind() -> Error {
    Error::new(Status::InvalidArg, "wrong typed array kind for this call")
}
