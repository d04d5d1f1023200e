//! What an engine calls when memory or a thread goes away: cancelling every
//! waiter on an address range ([`cancel_range`]: a buffer freed, a realm torn
//! down) and interrupting one thread's wait ([`interrupt_thread`]: terminate).
//!
//! A cancelled record is claimed as an unpark claims one, under its bucket
//! lock, but with [`CANCELLED_TOKEN`]: a parked thread wakes with
//! `Unparked(CANCELLED_TOKEN)`, an async record is polled as such, and a
//! waker record's waker runs with [`WaitOutcome::Cancelled`]. So a cancel
//! races with a notify, an expire or a reaper exactly as an unpark does, and
//! exactly one of them ends each wait.
//!
//! The range is scanned bucket by bucket (a cold path: one pass over the
//! table). If the table grows meanwhile, the scan starts over on the new
//! table; records already cancelled are out of every queue by then.

use super::record::ThreadData;
use super::table::current_table;
use super::{claim_and_wake, UnparkToken, WaitOutcome};
use core::ptr;

/// The token of a wait ended by [`cancel_range`] (no unpark hands it out:
/// futex notifies hand out 0, locks small constants).
pub const CANCELLED_TOKEN: UnparkToken = usize::MAX;

/// Cancels every wait queued on an address in `start..start + len`,
/// blocking or async, of any thread: each ends as cancelled (see the module
/// docs) and no later notify counts it. Returns how many it cancelled.
///
/// For memory that holds only futex-style words (an engine's
/// `SharedArrayBuffer`): a lock's waiter handed [`CANCELLED_TOKEN`] would
/// misread it. Waits queued on the range while this runs may be missed;
/// the caller stops new ones first (the buffer is unreachable).
pub fn cancel_range(start: usize, len: usize) -> usize {
    let end = start.saturating_add(len);
    if start >= end {
        return 0;
    }
    // SAFETY: the key is read under the bucket lock, as `scan` promises.
    scan(|d| (start..end).contains(&unsafe { d.key.get() }))
}

/// Interrupts `thread`'s blocking futex-style wait (one that owes nothing,
/// such as [`crate::futex::wait32`]), if it is queued in one now: the wait
/// returns as cancelled. Returns whether it did. What an engine's
/// `terminate` calls; a thread that is about to wait is not queued yet, so
/// the engine first sets its own "stop" flag, then calls this until the
/// thread has left. A lock's or condition's waiter is never interrupted.
///
/// Safe with any handle, even of a thread that has exited: a record is only
/// compared with the queued ones, never read.
pub fn interrupt_thread(thread: super::ThreadRecord) -> bool {
    // Compared by address alone: the handle is never turned back into a
    // pointer (it may be a dead thread's).
    let target = thread.to_address();
    // SAFETY: `owed` is read under the bucket lock, as `scan` promises, and
    // only of the queued record that is `target`.
    scan(|d| (d as *const ThreadData).addr() == target && unsafe { d.owed.get() }.object.is_null())
        > 0
}

/// Takes every queued record that `wanted` picks (under its bucket lock) out
/// of the queues, bucket by bucket, and ends each wait as cancelled.
/// Returns how many.
fn scan(mut wanted: impl FnMut(&ThreadData) -> bool) -> usize {
    let mut cancelled = 0;
    'scan: loop {
        let table = current_table();
        for bucket in table.buckets() {
            bucket.lock.lock();
            if !ptr::eq(current_table(), table) {
                // SAFETY: locked just above.
                unsafe { bucket.lock.unlock() };
                continue 'scan;
            }
            // SAFETY: the bucket lock is held until `claim_and_wake` releases
            // it; the taken records stay unclaimed (so alive) until it claims
            // them.
            unsafe {
                let (chain, _) = bucket.take(usize::MAX, &mut wanted);
                cancelled += chain.len;
                claim_and_wake(chain.head, CANCELLED_TOKEN, WaitOutcome::Cancelled, || {
                    bucket.lock.unlock()
                });
            }
        }
        return cancelled;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::futex::{self, WaitResult, NOTIFY_ALL};
    use crate::parking_lot::{park_with_waker, parked_count as waiter_count, Waker};
    use std::sync::atomic::AtomicI32;
    use std::sync::{mpsc, Arc};

    #[test]
    fn cancel_range_ends_blocking_and_waker_waits_in_the_range_only() {
        let words: Arc<[AtomicI32; 4]> = Arc::new(Default::default());
        let base = words.as_ptr() as usize;
        let (tx, rx) = mpsc::channel();
        let waker: Waker = Box::new(move |o| tx.send(o).unwrap());
        let _wait = futex::wait32_with_waker(&words[1], 0, waker).unwrap();
        let w = words.clone();
        let blocked = std::thread::spawn(move || futex::wait32(&w[2], 0, None));
        let w = words.clone();
        let outside = std::thread::spawn(move || futex::wait32(&w[3], 0, None));
        while waiter_count(base + 8) + waiter_count(base + 12) != 2 {
            std::thread::yield_now();
        }
        assert_eq!(waiter_count(base + 4), 1);
        // Words 0 to 2: the waker wait and the blocked thread, not word 3.
        assert_eq!(cancel_range(base, 12), 2);
        assert_eq!(rx.recv().unwrap(), WaitOutcome::Cancelled);
        assert_eq!(blocked.join().unwrap(), WaitResult::Cancelled);
        assert_eq!(waiter_count(base + 4) + waiter_count(base + 8), 0);
        assert_eq!(futex::notify(&words[1], NOTIFY_ALL), 0, "none left");
        assert_eq!(cancel_range(base, 0), 0);
        assert_eq!(futex::notify(&words[3], NOTIFY_ALL), 1);
        assert_eq!(outside.join().unwrap(), WaitResult::Ok);
    }

    #[test]
    fn cancel_racing_notify_ends_each_wait_once() {
        let word = AtomicI32::new(0);
        let key = &word as *const AtomicI32 as usize;
        let rounds = if cfg!(miri) { 20 } else { 1000 };
        for i in 0..rounds {
            let (tx, rx) = mpsc::channel();
            let waker: Waker = Box::new(move |o| tx.send(o).unwrap());
            // SAFETY: validate does nothing.
            let _wait = unsafe { park_with_waker(key, || true, waker) }.unwrap();
            let notifier = std::thread::spawn(move || futex::notify_address(key, 1));
            let cancelled = cancel_range(key, 4);
            let woken = notifier.join().unwrap();
            assert_eq!(cancelled + woken, 1, "round {i}");
            let want = if woken == 1 {
                WaitOutcome::Woken(0)
            } else {
                WaitOutcome::Cancelled
            };
            assert_eq!(rx.recv().unwrap(), want, "round {i}");
            assert!(rx.try_recv().is_err(), "round {i}: called once");
        }
    }

    #[test]
    fn interrupt_thread_ends_its_futex_wait_only() {
        let word = Arc::new(AtomicI32::new(0));
        let key = Arc::as_ptr(&word) as usize;
        let (tx, rx) = mpsc::channel();
        let w = word.clone();
        let t = std::thread::spawn(move || {
            tx.send(crate::parking_lot::ThreadRecord::current().unwrap())
                .unwrap();
            futex::wait32(&w, 0, None)
        });
        let thread = rx.recv().unwrap();
        while !interrupt_thread(thread) {
            std::thread::yield_now();
        }
        assert_eq!(t.join().unwrap(), WaitResult::Cancelled);
        assert_eq!(waiter_count(key), 0);
        assert!(!interrupt_thread(thread), "not waiting (and gone): nothing");
    }
}
