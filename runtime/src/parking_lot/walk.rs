//! Reading the queues, for the diagnostics' snapshot: one bucket at a time,
//! each under its lock, copied into memory reserved before the lock is taken
//! (nothing allocates under a queue lock).

use super::record::{ThreadData, Waits};
use super::table::{current_table, is_current, lock_bucket, Bucket};
use crate::diagnostics::Kind;
use crate::sync::Ordering;

/// One queued record, as [`queued`] read it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueuedRecord {
    /// The address it is queued on.
    pub key: usize,
    /// What its wait is for, as the waiter said ([`super::Owed::kind`]).
    pub kind: Kind,
    /// The thread that waits, or that made the async record.
    pub thread: u64,
    /// A blocked thread (else an async record).
    pub blocking: bool,
    /// When it was queued, in the runtime clock's nanoseconds.
    pub since_ns: u64,
    /// When its wait gives up, if it has a deadline.
    pub deadline_ns: Option<u64>,
}

/// Copies `bucket`'s queue (on `key` only, if given) into `out`, if it fits
/// in `out`'s spare room; else returns how many it needs.
///
/// # Safety
/// The bucket's lock is held.
unsafe fn copy_queue(
    bucket: &Bucket,
    key: Option<usize>,
    out: &mut Vec<QueuedRecord>,
) -> Result<(), usize> {
    // SAFETY: the lock guards the queue's links and its records' cells.
    unsafe {
        let n = bucket.queue_len();
        if n > out.capacity() - out.len() {
            return Err(n);
        }
        let mut p = bucket.head.get();
        while !p.is_null() {
            let r: &ThreadData = &*p;
            let k = r.key.get();
            if key.is_none_or(|want| want == k) {
                let deadline = r.deadline_ns.get();
                out.push(QueuedRecord {
                    key: k,
                    kind: r.owed.get().kind,
                    thread: r.thread,
                    blocking: r.waits.get() != Waits::Async,
                    since_ns: r.since_ns.get(),
                    deadline_ns: (deadline != u64::MAX).then_some(deadline),
                });
            }
            p = r.next.get();
        }
    }
    Ok(())
}

/// Every queued record, bucket by bucket. Each bucket's queue is read whole
/// under its lock; a record that a requeue moves between two buckets while
/// they are read may be seen in both or neither.
pub fn queued() -> Vec<QueuedRecord> {
    let mut out = Vec::new();
    'table: loop {
        out.clear();
        let table = current_table();
        for bucket in table.buckets() {
            loop {
                out.reserve(bucket.waiters.load(Ordering::Relaxed) + 4);
                bucket.lock.lock();
                if !is_current(table) {
                    // SAFETY: locked just above.
                    unsafe { bucket.lock.unlock() };
                    continue 'table;
                }
                // SAFETY: the bucket's lock is held.
                let copied = unsafe { copy_queue(bucket, None, &mut out) };
                // SAFETY: locked above.
                unsafe { bucket.lock.unlock() };
                match copied {
                    Ok(()) => break,
                    Err(needed) => out.reserve(needed),
                }
            }
        }
        return out;
    }
}

/// How many records are queued on `key` now.
pub fn queued_on(key: usize) -> usize {
    let mut out = Vec::new();
    loop {
        let bucket = lock_bucket(key);
        // SAFETY: `lock_bucket` locked it.
        let copied = unsafe { copy_queue(bucket, Some(key), &mut out) };
        // SAFETY: as above.
        unsafe { bucket.lock.unlock() };
        match copied {
            Ok(()) => return out.len(),
            Err(needed) => {
                out.clear();
                out.reserve(needed);
            }
        }
    }
}
