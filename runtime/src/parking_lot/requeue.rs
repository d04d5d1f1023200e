//! Requeueing: waking some waiters of one address and moving others,
//! unclaimed, onto another address's queue, where that address's unparks
//! find them (parking_lot's `unpark_requeue` has this shape). A condition's
//! `notify_all` moves its waiters onto its lock's queue this way instead of
//! waking them all to fight for the lock, of whom all but one would park
//! again at once.
//!
//! A moved record sleeps on. From then on its wait ends as a wait on the new
//! address would: unparked with a token of that address's unparks, or timed
//! out there (its `timed_out` callback is told the new address), and it owes
//! what the requeue says it owes ([`Requeue::owed`]: the target primitive's
//! debt, since its next wakeup is that primitive's).
//!
//! Only records a thread blocks on are moved. An async record's owner
//! resumes by its primitive's own protocol, under the address it queued on
//! (it cancels there), so an async record chosen to move is woken instead,
//! and counted among the woken.

use super::record::{Owed, ThreadData, Waits};
use super::table::{lock_bucket, lock_bucket_pair, unlock_bucket_pair, Bucket};
use super::{claim_and_wake, UnparkResult, UnparkToken, WaitOutcome};
use crate::sync::Ordering;
use core::ptr;

/// The queue of a requeue's source address, as its `decide` callback sees
/// it (under the queue's lock).
pub struct Queued<'a> {
    bucket: &'a Bucket,
    key: usize,
}

impl Queued<'_> {
    /// What the oldest waiter waits with ([`Owed::with`]), or `None` if
    /// nobody waits.
    pub fn first_with(&self) -> Option<*const ()> {
        // SAFETY: `decide` runs with the bucket locked (`unpark_requeue`).
        unsafe { self.bucket.first(self.key) }.map(|w| unsafe { w.owed.get().with })
    }
}

/// What a requeue does, as its `decide` callback chooses.
#[derive(Copy, Clone, Debug)]
pub struct Requeue {
    /// Wake up to this many of the oldest waiters.
    pub wake: usize,
    /// Then move up to this many of the next ones onto the target's queue,
    /// behind the waiters already there, in their order.
    pub requeue: usize,
    /// What every waiter released (woken or moved) owes from now on, if its
    /// debt changes: a waiter moved onto a lock owes what the lock's own
    /// waiters owe if it is reaped. `None`: each keeps its own.
    pub owed: Option<Owed>,
}

/// Wakes and moves waiters of `from` as `decide` says: under the queue locks
/// of both addresses, `decide` runs first (given `from`'s queue), then the
/// chosen waiters are taken out of `from`'s queue, the woken claimed, the
/// moved appended to `to`'s queue, and `callback` runs with what was done
/// (`unparked`, `requeued`, `may_have_more` for `from`) and returns the
/// token the woken receive. Their wakeups happen once both locks are
/// released. Returns what was done.
///
/// For `to`'s unparks, the moved records count as waiters parked there from
/// the moment `decide` runs: `decide` sees the target's state as a parker's
/// `validate` would (a lock's byte, say), and whatever it needs for the
/// target's unparks to find them (a lock's "parked" bit) it sets there or
/// in `callback`, both under `to`'s queue lock.
///
/// # Safety
/// - `decide` and `callback` run under bucket locks: they must not panic and
///   must not call into the ParkingLot;
/// - every waiter of `from` that may be moved understands the tokens of
///   `to`'s unparks (and the target's debt, `Requeue::owed`), and the
///   primitive at `to` outlives it;
/// - `from` and `to` differ.
pub unsafe fn unpark_requeue(
    from: usize,
    to: usize,
    decide: impl FnOnce(Queued<'_>) -> Requeue,
    callback: impl FnOnce(Requeue, UnparkResult) -> UnparkToken,
) -> UnparkResult {
    debug_assert_ne!(from, to, "a requeue onto its own address");
    let (source, target) = lock_bucket_pair(from, to);
    // Count in on the target before `decide` reads its state: the parker's
    // half of the handshake with `may_have_waiters` (see `enqueue`).
    target.waiters.fetch_add(1, Ordering::AcqRel);
    let op = decide(Queued {
        bucket: source,
        key: from,
    });
    let mut result = UnparkResult::default();
    // SAFETY: both bucket locks are held until `claim_and_wake` releases
    // them; the records taken out stay unclaimed (so alive) until it claims
    // them, and the moved ones are queued again under the target's lock.
    unsafe {
        let (chosen, rest) = source.dequeue(from, op.wake.saturating_add(op.requeue));
        // The woken, chained again through `next`, oldest first.
        let (mut woken, mut last): (*const ThreadData, *const ThreadData) =
            (ptr::null(), ptr::null());
        let mut cur = chosen.head;
        let mut seen = 0;
        while !cur.is_null() {
            let next = (*cur).next.get();
            let record = &*cur;
            if seen < op.wake || record.waits.get() == Waits::Async {
                if let Some(owed) = op.owed {
                    record.owed.set(owed);
                }
                record.next.set(ptr::null());
                if last.is_null() {
                    woken = cur;
                } else {
                    (*last).next.set(cur);
                }
                last = cur;
                result.unparked += 1;
            } else {
                target.append(to, record, op.owed);
                result.requeued += 1;
            }
            seen += 1;
            cur = next;
        }
        target.waiters.fetch_sub(1, Ordering::Relaxed);
        result.did_unpark = result.unparked > 0;
        result.may_have_more = source.has_waiter_from(rest, from);
        result.woken_settles_later =
            !woken.is_null() && (*woken).waits.get() == Waits::ThreadSettlingLater;
        let token = callback(op, result);
        claim_and_wake(woken, token, WaitOutcome::Woken(token), || {
            unlock_bucket_pair(source, target)
        });
    }
    result
}

/// What the oldest waiter queued on `key` waits with ([`Owed::with`]), if
/// anyone waits on `key`: for a primitive that must name the target of a
/// requeue before it locks both queues (a condition's lock). A snapshot:
/// `decide` checks it again ([`Queued::first_with`]).
pub fn waiting_with(key: usize) -> Option<*const ()> {
    let bucket = lock_bucket(key);
    // SAFETY: the bucket lock is held from lock_bucket until the unlock.
    unsafe {
        let with = bucket.first(key).map(|w| w.owed.get().with);
        bucket.lock.unlock();
        with
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::tests::park_one;
    use super::super::{
        park_with_waker, parked_count, unpark_all, unpark_one, ParkResult, WaitOutcome, Waker,
    };
    use super::*;
    use crate::clock::Instant;
    use std::sync::atomic::AtomicU32;
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    /// Two addresses to requeue between.
    fn keys(words: &[u64; 2]) -> (usize, usize) {
        (
            &words[0] as *const u64 as usize,
            &words[1] as *const u64 as usize,
        )
    }

    /// Requeues from `from` to `to` as `wake`/`requeue` say, handing `token`.
    fn requeue(from: usize, to: usize, wake: usize, requeue: usize, token: usize) -> UnparkResult {
        // SAFETY (test): the callbacks do nothing but answer.
        unsafe {
            unpark_requeue(
                from,
                to,
                |_| Requeue {
                    wake,
                    requeue,
                    owed: None,
                },
                |_, _| token,
            )
        }
    }

    #[test]
    fn wakes_the_oldest_and_moves_the_rest_in_order() {
        let words = [0u64; 2];
        let (from, to) = keys(&words);
        let queued = Arc::new(AtomicU32::new(0));
        let hs: Vec<_> = (0..4).map(|_| park_one(from, &queued, None)).collect();
        // SAFETY (test): the callbacks only check what they are given.
        let r = unsafe {
            unpark_requeue(
                from,
                to,
                |q| {
                    assert_eq!(q.first_with(), Some(ptr::null()));
                    Requeue {
                        wake: 1,
                        requeue: usize::MAX,
                        owed: None,
                    }
                },
                |_, r| {
                    assert_eq!((r.unparked, r.requeued, r.may_have_more), (1, 3, false));
                    5
                },
            )
        };
        assert_eq!((r.unparked, r.requeued), (1, 3));
        assert_eq!(parked_count(from), 0);
        assert_eq!(parked_count(to), 3, "moved, not woken");
        let mut hs = hs.into_iter();
        assert_eq!(
            hs.next().unwrap().join().unwrap().0,
            ParkResult::Unparked(5)
        );
        // The moved ones wake as waiters of `to`, oldest first.
        for h in hs {
            // SAFETY (test): the callback returns a constant.
            assert_eq!(unsafe { unpark_one(to, |_| 9) }.unparked, 1);
            assert_eq!(h.join().unwrap().0, ParkResult::Unparked(9));
        }
    }

    #[test]
    fn a_moved_waiter_that_times_out_leaves_the_new_queue_and_says_so() {
        let words = [0u64; 2];
        let (from, to) = keys(&words);
        let queued = Arc::new(AtomicU32::new(0));
        // Miri's clock runs fast while it interprets: give it room.
        let scale = if cfg!(miri) { 300 } else { 1 };
        let deadline = Instant::now() + Duration::from_millis(50) * scale;
        let hs: Vec<_> = (0..2)
            .map(|_| park_one(from, &queued, Some(deadline)))
            .collect();
        let r = requeue(from, to, 0, usize::MAX, 0);
        assert_eq!((r.unparked, r.requeued), (0, 2));
        for h in hs {
            assert_eq!(h.join().unwrap(), (ParkResult::TimedOut, Some(to)));
        }
        assert_eq!(parked_count(to), 0);
        assert_eq!(unpark_all(to), 0);
    }

    #[test]
    fn waker_records_are_woken_not_moved() {
        let words = [0u64; 2];
        let (from, to) = keys(&words);
        let (tx, rx) = mpsc::channel();
        let waker: Waker = Box::new(move |o| tx.send(o).unwrap());
        // SAFETY (test): validate does nothing.
        let _wait = unsafe { park_with_waker(from, || true, waker) }.unwrap();
        let blocked = park_one(from, &Arc::new(AtomicU32::new(0)), None);
        let r = requeue(from, to, 0, usize::MAX, 3);
        assert_eq!((r.unparked, r.requeued), (1, 1));
        assert_eq!(rx.try_recv(), Ok(WaitOutcome::Woken(3)));
        assert_eq!(unpark_all(to), 1);
        assert!(blocked.join().unwrap().0.is_unparked());
    }

    #[test]
    fn moves_between_buckets_and_within_one() {
        // Pairs of addresses whose buckets differ (both orders), then
        // coincide: the pair locking's cases.
        let words = vec![0u64; 512];
        let table = super::super::table::current_table();
        let key = |i: usize| &words[i] as *const u64 as usize;
        let shares = |i: usize| ptr::eq(table.bucket(key(i)), table.bucket(key(0)));
        let same = (1..words.len())
            .find(|&i| shares(i))
            .expect("two words in one bucket");
        let other = (1..words.len()).find(|&i| !shares(i)).unwrap();
        let queued = Arc::new(AtomicU32::new(0));
        for (from, to) in [
            (key(0), key(same)),
            (key(0), key(other)),
            (key(other), key(0)),
        ] {
            let h = park_one(from, &queued, None);
            assert_eq!(requeue(from, to, 0, 1, 0).requeued, 1);
            assert_eq!((parked_count(from), parked_count(to)), (0, 1));
            assert_eq!(unpark_all(to), 1);
            assert!(h.join().unwrap().0.is_unparked());
        }
    }
}
