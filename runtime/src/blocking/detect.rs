//! Asking the engine whether the current thread may block (the `wasm-bindgen`
//! feature, wasm32 with atomics).
//!
//! `Atomics.wait` throws a `TypeError` where the agent may not suspend (a
//! browser page's main thread; the check comes before the value is compared)
//! and otherwise, with a zero timeout, returns at once ("timed-out"). So one
//! wait on a word of the module's own shared memory that nobody changes, with
//! timeout 0, tells which kind of thread this is, without sleeping and
//! without a `memory.atomic.wait32` that would trap.

use core::sync::atomic::AtomicI32;
use js_sys::{Atomics, Int32Array, WebAssembly};
use wasm_bindgen::JsCast;

/// Threads start out not knowing, and ask on their first wait.
pub(super) const ASKS: bool = true;

/// The word waited on: always 0, so a permitted wait times out at once.
static SCRATCH: AtomicI32 = AtomicI32::new(0);

/// `true` where `Atomics.wait` is allowed (workers, Node's main thread),
/// `false` where it throws (a page's main thread).
pub(super) fn current_thread_may_block() -> bool {
    // With atomics the module's memory is shared: its buffer is a
    // SharedArrayBuffer, which is what Atomics.wait accepts.
    let memory: WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let words = Int32Array::new(&memory.buffer());
    let index = SCRATCH.as_ptr() as u32 / 4;
    Atomics::wait_with_timeout(&words, index, 0, 0.0).is_ok()
}
