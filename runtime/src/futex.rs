//! Futex-style wait and notify with the semantics of `Atomics.wait` and
//! `Atomics.notify` (ECMAScript, "DoWait" and "Atomics.notify"), served by the
//! ParkingLot instead of the engine's or kernel's waiter lists.
//!
//! - `wait` compares the value under the queue lock, so a notify that follows
//!   a store can never be missed: the result is `NotEqual`, `TimedOut` or,
//!   only after a notify, `Ok`.
//! - `notify` wakes the oldest waiters first and returns how many it woke.
//! - Waiters are keyed by address: a 32-bit and a 64-bit wait on the same
//!   address share one list, as in the spec.

use crate::clock::{deadline_after, Instant};
use crate::diagnostics::Kind;
#[cfg(doc)]
use crate::parking_lot::WaitOutcome;
use crate::parking_lot::{self, AsyncWaiter, Owed, ParkResult, Waker, WakerWait};
use crate::sync::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;

/// The atomics a waiter can sleep on, whose address is a wait key: the 32-
/// and 64-bit integers (`Atomics.wait` works on Int32Array and
/// BigInt64Array). Sealed, so that a reference to a reference, or any other
/// type, cannot be passed where its own address would become the key.
pub trait Waitable: sealed::Sealed {
    /// The address waiters on this atomic are keyed by.
    #[doc(hidden)]
    fn wait_key(&self) -> usize {
        self as *const Self as *const u8 as usize
    }
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! waitable {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Waitable for $t {}
    )*};
}
waitable!(AtomicI32, AtomicU32, AtomicI64, AtomicU64);

/// The words a wait compares (`Atomics.wait`'s Int32Array and BigInt64Array
/// elements): what [`wait32`]/[`wait64`] and their C and async forms share.
pub(crate) trait Word: Waitable + Sync {
    /// The integer the word holds.
    type Value: Copy + PartialEq;

    /// Whether the word holds `expected` now (SeqCst, as `Atomics.wait` reads).
    fn holds(&self, expected: Self::Value) -> bool;

    /// The atomic at `addr`, or `None` if `addr` is null or not aligned for
    /// the atomic (whose alignment, not the integer's, `from_ptr` requires:
    /// i686 aligns i64 to 4 but AtomicI64 to 8).
    ///
    /// # Safety
    /// `addr` is null, misaligned, or points at a live integer accessed only
    /// atomically for `'a`.
    #[cfg(not(loom))] // the C ABI's: loom's atomics have no `from_ptr`
    unsafe fn at<'a>(addr: *const Self::Value) -> Option<&'a Self>;
}

macro_rules! word {
    ($($t:ty: $v:ty),*) => {$(
        impl Word for $t {
            type Value = $v;

            #[inline]
            fn holds(&self, expected: $v) -> bool {
                self.load(Ordering::SeqCst) == expected
            }

            #[cfg(not(loom))]
            unsafe fn at<'a>(addr: *const $v) -> Option<&'a Self> {
                if addr.is_null() || !addr.cast::<$t>().is_aligned() {
                    return None;
                }
                // SAFETY: non-null and aligned (checked); live and atomic by
                // the caller's contract.
                Some(unsafe { <$t>::from_ptr(addr as *mut $v) })
            }
        }
    )*};
}
word!(AtomicI32: i32, AtomicI64: i64);

/// How a [`wait32`]/[`wait64`] ended (`Atomics.wait`'s three strings).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WaitResult {
    /// Woken by a notify: `"ok"`.
    Ok = 0,
    /// The value differed from `expected`: `"not-equal"`.
    NotEqual = 1,
    /// The timeout passed first: `"timed-out"`.
    TimedOut = 2,
    /// Ended by [`cancel_range`] (its buffer freed) or by an interrupt: no
    /// `Atomics.wait` string; the embedder decides what the caller sees.
    Cancelled = 3,
}

impl WaitResult {
    /// The string `Atomics.wait` returns for this result.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitResult::Ok => "ok",
            WaitResult::NotEqual => "not-equal",
            WaitResult::TimedOut => "timed-out",
            WaitResult::Cancelled => "cancelled",
        }
    }
}

/// `notify`'s count meaning "every waiter" (`Atomics.notify` with `count`
/// undefined or +∞).
pub const NOTIFY_ALL: usize = usize::MAX;

/// Sleeps while `*atomic == expected`, until notified or until `timeout`
/// (`None`: forever) has passed.
pub fn wait32(atomic: &AtomicI32, expected: i32, timeout: Option<Duration>) -> WaitResult {
    wait(atomic, expected, timeout)
}

/// [`wait32`] with an absolute deadline.
pub fn wait32_until(atomic: &AtomicI32, expected: i32, deadline: Option<Instant>) -> WaitResult {
    wait_until(atomic, expected, deadline)
}

/// Sleeps while `*atomic == expected`, until notified or until `timeout`
/// (`None`: forever) has passed.
pub fn wait64(atomic: &AtomicI64, expected: i64, timeout: Option<Duration>) -> WaitResult {
    wait(atomic, expected, timeout)
}

/// [`wait64`] with an absolute deadline.
pub fn wait64_until(atomic: &AtomicI64, expected: i64, deadline: Option<Instant>) -> WaitResult {
    wait_until(atomic, expected, deadline)
}

/// [`wait32`] and [`wait64`].
pub(crate) fn wait<A: Word>(
    atomic: &A,
    expected: A::Value,
    timeout: Option<Duration>,
) -> WaitResult {
    wait_until(atomic, expected, timeout.and_then(deadline_after))
}

/// [`wait32_until`] and [`wait64_until`].
fn wait_until<A: Word>(atomic: &A, expected: A::Value, deadline: Option<Instant>) -> WaitResult {
    wait_keyed(atomic.wait_key(), || atomic.holds(expected), deadline)
}

/// Wakes up to `count` threads waiting on `atomic`'s address, oldest first
/// ([`NOTIFY_ALL`] for all). Returns how many it woke.
///
/// Only an atomic a waiter can sleep on is accepted: passing a reference to
/// one by reference, which would key on the reference's own address and wake
/// nobody, does not compile.
///
/// ```compile_fail,E0277
/// use std::sync::atomic::AtomicI32;
/// fn wake_one(word: &AtomicI32) -> usize {
///     parklot::futex::notify(&word, 1) // `&&AtomicI32`: refused
/// }
/// ```
/// ```
/// use std::sync::atomic::AtomicI32;
/// fn wake_one(word: &AtomicI32) -> usize {
///     parklot::futex::notify(word, 1)
/// }
/// assert_eq!(wake_one(&AtomicI32::new(0)), 0);
/// ```
pub fn notify<A: Waitable>(atomic: &A, count: usize) -> usize {
    notify_address(atomic.wait_key(), count)
}

/// [`notify`] by address, for embedders that hold a raw address.
#[inline]
pub fn notify_address(address: usize, count: usize) -> usize {
    if count == 0 {
        return 0;
    }
    parking_lot::unpark_count(address, count)
}

/// Cancels every wait (blocking or async, any thread) on an address in
/// `start..start + len`: what an engine calls when it frees a buffer or tears
/// down a realm, so that no later buffer at the same address meets its
/// waiters. A blocking wait returns [`WaitResult::Cancelled`], a waker's wait
/// calls back with [`WaitOutcome::Cancelled`]. Returns how many it cancelled.
/// For futex words only (see [`parking_lot::cancel_range`]).
///
/// ```
/// use parklot::futex::{cancel_range, wait32_with_waker, waiter_count};
/// use parklot::parking_lot::WaitOutcome;
/// use std::sync::atomic::AtomicI32;
///
/// let buffer = [AtomicI32::new(0), AtomicI32::new(0)];
/// let (tx, rx) = std::sync::mpsc::channel();
/// let _w = wait32_with_waker(&buffer[1], 0, Box::new(move |o| tx.send(o).unwrap()));
/// assert_eq!(waiter_count(&buffer[1] as *const AtomicI32 as *const u8), 1);
/// assert_eq!(cancel_range(buffer.as_ptr().cast(), 8), 1);
/// assert_eq!(rx.recv().unwrap(), WaitOutcome::Cancelled);
/// ```
pub fn cancel_range(start: *const u8, len: usize) -> usize {
    parking_lot::cancel_range(start as usize, len)
}

/// How many waits, blocking and async, are queued on `address` now (a
/// snapshot for tests: V8's `%AtomicsNumWaitersForTesting` plus its async
/// count).
pub fn waiter_count(address: *const u8) -> usize {
    parking_lot::parked_count(address as usize)
}

/// Asynchronous `wait32`, for threads that may not block (the core of
/// `Atomics.waitAsync`): queues `waiter` if `*atomic == expected` (compared
/// under the queue lock) and returns `true`; returns `false` ("not-equal")
/// otherwise. Once the waiter's word turns 0 the result is `Ok`; to give up
/// (the timeout), call [`wait_async_cancel`].
///
/// # Safety
/// `waiter` is not queued and neither moves nor is dropped until the wait is
/// settled.
pub unsafe fn wait32_async_begin(atomic: &AtomicI32, expected: i32, waiter: &AsyncWaiter) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { async_begin(atomic, expected, waiter) }
}

/// [`wait32_async_begin`] for a 64-bit word.
///
/// # Safety
/// As for [`wait32_async_begin`].
pub unsafe fn wait64_async_begin(atomic: &AtomicI64, expected: i64, waiter: &AsyncWaiter) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { async_begin(atomic, expected, waiter) }
}

/// [`wait32_async_begin`] and [`wait64_async_begin`].
///
/// # Safety
/// As for [`wait32_async_begin`].
unsafe fn async_begin<A: Word>(atomic: &A, expected: A::Value, waiter: &AsyncWaiter) -> bool {
    // SAFETY: one atomic load; `waiter` per our contract.
    unsafe { parking_lot::park_async(atomic.wait_key(), || atomic.holds(expected), waiter) }
}

/// Gives up an asynchronous wait on `address`: `TimedOut`, or `Ok` if a
/// notify claimed the waiter first. Leaves no queue entry.
///
/// # Safety
/// `waiter` was queued on `address` by `wait32_async_begin`/`wait64_async_begin`
/// and the wait has not been settled.
pub unsafe fn wait_async_cancel(address: usize, waiter: &AsyncWaiter) -> WaitResult {
    // SAFETY: forwarded; the callback does nothing.
    match unsafe { parking_lot::cancel_async(address, waiter, |_, _| {}) } {
        ParkResult::Unparked(parking_lot::CANCELLED_TOKEN) => WaitResult::Cancelled,
        ParkResult::Unparked(_) => WaitResult::Ok,
        ParkResult::Invalid | ParkResult::TimedOut => WaitResult::TimedOut,
    }
}

/// Asynchronous `wait32` that calls back (the core of an engine's
/// `Atomics.waitAsync`): if `*atomic == expected` (compared under the queue
/// lock) queues a wait that calls `waker` once, with no lock held, when a
/// notify wakes it ([`WaitOutcome::Woken`], `"ok"`) or when the returned
/// handle is expired (`"timed-out"`) or cancelled. `None`: `"not-equal"`,
/// and `waker` is dropped uncalled.
///
/// ```
/// use parklot::futex::{notify, wait32_with_waker, NOTIFY_ALL};
/// use parklot::parking_lot::WaitOutcome;
/// use std::sync::atomic::AtomicI32;
///
/// let word = AtomicI32::new(0);
/// let (tx, rx) = std::sync::mpsc::channel();
/// let wait = wait32_with_waker(&word, 0, Box::new(move |o| tx.send(o).unwrap())).unwrap();
/// assert_eq!(notify(&word, NOTIFY_ALL), 1);
/// assert_eq!(rx.recv().unwrap(), WaitOutcome::Woken(0));
/// assert!(!wait.expire(), "already woken");
/// ```
pub fn wait32_with_waker(atomic: &AtomicI32, expected: i32, waker: Waker) -> Option<WakerWait> {
    with_waker(atomic, expected, waker)
}

/// [`wait32_with_waker`] for a 64-bit word.
pub fn wait64_with_waker(atomic: &AtomicI64, expected: i64, waker: Waker) -> Option<WakerWait> {
    with_waker(atomic, expected, waker)
}

/// [`wait32_with_waker`] and [`wait64_with_waker`].
pub(crate) fn with_waker<A: Word>(
    atomic: &A,
    expected: A::Value,
    waker: Waker,
) -> Option<WakerWait> {
    // SAFETY: validate is one atomic load: it cannot panic or re-enter.
    unsafe { parking_lot::park_with_waker(atomic.wait_key(), || atomic.holds(expected), waker) }
}

fn wait_keyed(key: usize, equal: impl FnOnce() -> bool, deadline: Option<Instant>) -> WaitResult {
    // Spinning first: a notify is what the waiter waits for, and when it
    // comes within the spin neither side makes a system call.
    // SAFETY: `equal` is one atomic load: it cannot panic or re-enter.
    let parked = unsafe {
        parking_lot::park_owing_spinning(
            key,
            equal,
            || {},
            |_, _| {},
            deadline,
            Owed::nothing(Kind::Futex),
        )
    };
    match parked {
        ParkResult::Unparked(parking_lot::CANCELLED_TOKEN) => WaitResult::Cancelled,
        ParkResult::Unparked(_) => WaitResult::Ok,
        ParkResult::Invalid => WaitResult::NotEqual,
        ParkResult::TimedOut => WaitResult::TimedOut,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn not_equal_returns_at_once() {
        let a = AtomicI32::new(5);
        assert_eq!(wait32(&a, 4, None), WaitResult::NotEqual);
        let b = AtomicI64::new(1 << 40);
        assert_eq!(wait64(&b, 1, None), WaitResult::NotEqual);
    }

    #[test]
    fn zero_timeout_times_out_when_equal() {
        let a = AtomicI32::new(5);
        assert_eq!(wait32(&a, 5, Some(Duration::ZERO)), WaitResult::TimedOut);
        assert_eq!(WaitResult::TimedOut.as_str(), "timed-out");
    }

    #[test]
    fn notify_with_no_waiter_or_zero_count_wakes_nobody() {
        let a = AtomicI32::new(0);
        assert_eq!(notify(&a, NOTIFY_ALL), 0);
        assert_eq!(notify(&a, 0), 0);
    }

    #[test]
    fn notify_wakes_a_waiter_with_ok() {
        let a = Arc::new(AtomicI32::new(0));
        let a2 = a.clone();
        let t = std::thread::spawn(move || wait32(&a2, 0, Some(Duration::from_secs(30))));
        while notify(&*a, 1) == 0 {
            std::thread::yield_now();
        }
        assert_eq!(t.join().unwrap(), WaitResult::Ok);
    }

    #[test]
    fn a_reaped_async_waiter_leaves_the_queue_and_is_not_counted() {
        let a = Arc::new(AtomicI32::new(0));
        let key = Arc::as_ptr(&a) as usize;
        let gone = AsyncWaiter::new();
        assert!(!unsafe { wait32_async_begin(&a, 1, &gone) }, "not-equal");
        assert!(unsafe { wait32_async_begin(&a, 0, &gone) });
        // A blocking waiter queues behind the async one, whose owner is then
        // known to be gone and reaped.
        let a2 = a.clone();
        let t = std::thread::spawn(move || wait32(&a2, 0, None));
        while crate::parking_lot::parked_count(key) != 2 {
            std::thread::yield_now();
        }
        // SAFETY: nobody uses `gone` for a wait again.
        unsafe { crate::parking_lot::abandon_async(&gone) };
        assert_eq!(crate::parking_lot::parked_count(key), 1);
        assert_eq!(notify(&*a, NOTIFY_ALL), 1, "only the live waiter counts");
        assert_eq!(t.join().unwrap(), WaitResult::Ok);
        // Timed out: cancelled, no stale entry.
        let w = AsyncWaiter::new();
        assert!(unsafe { wait32_async_begin(&a, 0, &w) });
        assert_eq!(unsafe { wait_async_cancel(key, &w) }, WaitResult::TimedOut);
        assert_eq!(notify(&*a, NOTIFY_ALL), 0);
    }

    #[test]
    fn a_32_and_a_64_bit_wait_on_one_address_share_a_list() {
        let a = Arc::new(AtomicI64::new(0));
        let a2 = a.clone();
        let t = std::thread::spawn(move || {
            // SAFETY (test): the low half of an aligned i64, as an Int32Array
            // over the same bytes would see it.
            let half = unsafe { &*(Arc::as_ptr(&a2) as *const AtomicI32) };
            wait32(half, 0, None)
        });
        while notify(&*a, NOTIFY_ALL) == 0 {
            std::thread::yield_now();
        }
        assert_eq!(t.join().unwrap(), WaitResult::Ok);
    }
}
