//! parklot's core: a WebKit-style ParkingLot and the primitives built on it.
//!
//! - [`parking_lot`]: queues of waiting threads keyed by address, in one
//!   concurrent hashtable whose size depends on threads, not on locks.
//! - [`Lock`] (one byte) and [`Mutex<T>`] over it: barging, adaptive, eventually fair.
//! - [`Condition`] (one byte): no spurious wakeups; notify with nobody waiting is a load.
//! - [`WordLock`]: a pointer-sized lock that needs no ParkingLot (it guards the buckets).
//! - [`futex`]: `wait32`/`wait64`/`notify` with the semantics of `Atomics.wait`/`Atomics.notify`.
//! - [`heap`]: a lock-free allocator a thread may abandon mid-call (the wasm module's).
//! - [`critical`]: which internal section a thread is inside, and the poison a death there sets.
//!
//! Layers, bottom up: `sys` (parker, clock), `word_lock`, `parking_lot`, then
//! the primitives. Only `sys` knows the target; under `--cfg loom` only `sync`
//! knows it is being model-checked.
//!
//! ```
//! use parklot::{Condition, Mutex};
//! use std::sync::Arc;
//!
//! let queue = Arc::new((Mutex::new(Vec::new()), Condition::new()));
//! let q = queue.clone();
//! let producer = std::thread::spawn(move || {
//!     for i in 0..3 {
//!         q.0.lock().push(i);
//!         q.1.notify_one();
//!     }
//! });
//! let mut got = Vec::new();
//! while got.len() < 3 {
//!     let mut items = queue.0.lock();
//!     while items.is_empty() {
//!         queue.1.wait(&mut items);
//!     }
//!     got.append(&mut items);
//! }
//! producer.join().unwrap();
//! assert_eq!(got, [0, 1, 2]);
//! ```
#![cfg_attr(
    all(target_family = "wasm", target_feature = "atomics"),
    feature(stdarch_wasm_atomic_wait)
)]
#![warn(missing_docs)]

mod macros;

mod acquire;
mod blocking;
pub mod clock;
mod condition;
pub mod critical;
pub mod deadlock;
pub mod diagnostics;
pub mod futex;
pub mod lock_order;
// Futures for async Rust over the primitives' asynchronous steps.
#[cfg(not(loom))]
pub mod futures;
pub mod heap;
mod lock;
pub mod parking_lot;
// The rest of the toolkit: reader-writer lock, semaphore, barrier, once.
mod barrier;
#[cfg(not(loom))]
mod mutexes;
mod once;
mod rwlock;
mod semaphore;
mod sync;
mod sys;
// A lock whose holder a reaper can take over (the wasm module's kind table).
mod takeover_lock;
pub mod toy_locks;
// Threads for the unit tests: spawning, contending, waiting awake.
#[cfg(all(test, not(loom)))]
mod test_threads;
mod word_lock;

#[cfg(all(test, not(loom)))]
mod test_util;

// The C ABI (`include/parklot.h`). Not in wasm32-unknown-unknown builds:
// there JS calls in through wasm-bindgen (the `parklot-wasm` crate), and
// the C functions were 88 of the module's 199 exports, shipped to every
// page; emscripten and WASI builds, whose callers are C, keep it.
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi;
// The C ABI of waits that call back.
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi_async_wait;
// The C ABI of the toolkit's asynchronous forms (a record queues, not the thread).
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi_async_toolkit;
// The C ABI's process-wide tuning knobs.
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi_tuning;
// The C ABI of the diagnostics.
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi_diagnostics;
// The C ABI of what an engine calls when a buffer or a thread goes away.
#[cfg(not(any(loom, all(target_family = "wasm", target_os = "unknown"))))]
mod ffi_embedding;

pub use blocking::{set_thread_may_block, thread_may_block};
pub use clock::Instant;
#[cfg(not(loom))]
pub use condition::Condvar;
pub use condition::{Condition, Waited, WrongLock};
pub use futex::{notify, wait32, wait64, WaitResult, NOTIFY_ALL};
#[cfg(not(loom))]
pub use futures::{CondvarAsync, MutexAsync, RwLockAsync};
pub use lock::{
    carry_parked, set_carry_parked, set_spin_limit, spin_limit, Lock, NotLocked, OnRelease,
    OwnerDied, DEFAULT_SPIN_LIMIT,
};
#[cfg(not(loom))]
pub use lock::{MappedMutexGuard, Mutex, MutexGuard};
pub use sys::{park_spin_limit, set_cpu_count, set_park_spin_limit, DEFAULT_PARK_SPIN_LIMIT};
pub use takeover_lock::TakeoverLock;
pub use word_lock::WordLock;
// The rest of the toolkit: reader-writer lock, semaphore, barrier, once.
pub use barrier::{Barrier, BarrierError, BarrierWaitResult, MAX_PARTIES};
#[cfg(not(loom))]
pub use condition::WaitTimeoutResult;
#[cfg(not(loom))]
pub use mutexes::{
    const_fair_mutex, const_mutex, const_reentrant_mutex, const_rwlock, CurrentThreadId, FairLock,
    FairMutex, FairMutexGuard, ReentrantMutex, ReentrantMutexGuard,
};
pub use once::{Once, OnceBegin, OnceState};
pub use rwlock::{RawRwLock, RwLockHolders, RwLockPolicy};
#[cfg(not(loom))]
pub use rwlock::{
    ReadRecursive, RwLock, RwLockReadGuard, RwLockUpgradableReadGuard, RwLockWriteGuard,
};
pub use semaphore::{Semaphore, MAX_PERMITS};

/// The README's Rust examples, compiled and run as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
