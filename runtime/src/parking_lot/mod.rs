//! The ParkingLot: queues of waiting threads, keyed by address, kept in one
//! process-wide concurrent hashtable (seed 000, "Implementing WTF::ParkingLot").
//!
//! A primitive keeps only a few bits of state in its own memory and asks the
//! ParkingLot to queue (park) or wake (unpark) threads under the address of
//! that state. The queue for an address only exists while someone waits on it,
//! and a waiter's record is its thread's own (a thread-local), so the memory
//! used here depends on the number of threads, never on the number of locks.
//!
//! Rooms, one idea each:
//! - `table`: the buckets, their FIFO queues, the table's growth, the
//!   fairness timer and the lock-free "anyone waiting?" count;
//! - `record`: a waiter's record, and what its wait owes others ([`Abandon`]);
//! - this file: parking and unparking;
//! - `async_waiter`: records that wait without a thread ([`AsyncWaiter`]);
//! - `waker`: records that call the embedder back when their wait ends
//!   ([`WakerWait`]);
//! - `task`: async records that wake a Rust task, for futures ([`TaskWaiter`]);
//! - `reap`: taking the records of a thread that is gone out of the queues.
//! - `cancel`: cancelling every wait on an address range (what an engine
//!   calls when it frees a buffer).
//! - `walk`: reading every queue, for the diagnostics' snapshot.
//! - `requeue`: waking some waiters of one address and moving the rest
//!   onto another's queue ([`unpark_requeue`]).
//!
//! **Exactness.** An unpark counts a waiter exactly when it takes the waiter's
//! record out of the queue under the bucket lock and claims it; that waiter's
//! wait then ends "unparked" with the unpark's token, whether it was asleep,
//! about to sleep, or an async record nobody is watching yet. Nothing else is
//! woken in its place, and nothing guesses from a waiter's memory whether its
//! owner still runs: a dead owner is learned from a real signal by the
//! embedder, which then reaps its records ([`abandon_thread`]).

mod async_waiter;
mod cancel;
mod reap;
mod record;
mod requeue;
mod table;
mod task;
mod waker;
mod walk;

use crate::clock::Instant;
use crate::sync::Ordering;
use crate::sys::{now_ns, UnparkHandle};
use record::{with_thread_data, ThreadData, Waits};
use table::{lock_bucket, lock_bucket_of};

pub use async_waiter::{
    cancel_async, cancel_async_owing, park_async, park_async_owing, AsyncWaiter,
};
pub use cancel::{cancel_range, interrupt_thread, CANCELLED_TOKEN};
#[cfg(all(test, not(loom)))]
pub(crate) use reap::abandon_thread_still_counted;
pub use reap::{abandon_async, abandon_async_holding, abandon_thread, ThreadRecord};
pub use record::{Abandon, Owed};
pub use requeue::{unpark_requeue, waiting_with, Queued, Requeue};
pub use table::{stats, Stats};
pub use task::TaskWaiter;
pub use waker::{park_with_waker, WaitOutcome, Waker, WakerWait};
pub use walk::{queued, queued_on, QueuedRecord};

/// A value an unparker hands to the thread it wakes (for example "you now own
/// the lock").
pub type UnparkToken = usize;

/// The token of a plain wakeup.
pub const DEFAULT_UNPARK_TOKEN: UnparkToken = 0;

/// How [`park_conditionally`] ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ParkResult {
    /// Woken by an unpark, which handed over this token.
    Unparked(UnparkToken),
    /// `validate` returned false: the thread did not park.
    Invalid,
    /// The deadline passed before any unpark claimed the thread.
    TimedOut,
}

impl ParkResult {
    /// Whether the thread was woken by an unpark.
    pub fn is_unparked(self) -> bool {
        matches!(self, ParkResult::Unparked(_))
    }
}

/// What an unpark did, as its callback sees it (under the queue's lock) and as
/// it returns.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnparkResult {
    /// At least one waiter was dequeued and claimed: its wait ends with the
    /// callback's token.
    pub did_unpark: bool,
    /// How many waiters were dequeued and claimed.
    pub unparked: usize,
    /// How many waiters were moved to another address's queue, unclaimed
    /// ([`unpark_requeue`]; 0 for every other unpark).
    pub requeued: usize,
    /// Waiters remain queued on the same address.
    pub may_have_more: bool,
    /// The (first) waiter woken is a thread parked by
    /// [`park_owing_until_settled`]: it runs on its own once woken, acts on
    /// its token and calls [`settled`] (or is reaped); not an async record,
    /// whose owner resumes it whenever its event loop gets to it.
    pub woken_settles_later: bool,
    /// The bucket's fairness timer expired: a lock should hand itself over to
    /// the woken waiter instead of letting others barge.
    pub time_to_be_fair: bool,
}

/// The public forms of a park that owes something (see [`park_owing`]),
/// each with its doc: `spin` first or not, keep the token's debt until
/// [`settled`] (`settle_later`) or not, and who an unparker is told it wakes
/// (`waits`: [`Waits::ThreadSettlingLater`] only for a lock's own waiters,
/// which clear the mark or carry the bit a lock's release leaves them,
/// [`UnparkResult::woken_settles_later`]). Each one's safety contract is
/// [`park_owing`]'s, plus what its doc adds.
macro_rules! park_variant {
    ($(#[$doc:meta])* $name:ident: spin $spin:literal, settle_later $settle_later:literal, waits $waits:ident) => {
        $(#[$doc])*
        pub unsafe fn $name(
            key: usize,
            validate: impl FnOnce() -> bool,
            before_sleep: impl FnOnce(),
            timed_out: impl FnOnce(usize, bool),
            deadline: Option<Instant>,
            owed: Owed,
        ) -> ParkResult {
            let (spin, settle_later) = ($spin, $settle_later);
            with_thread_data(|me| {
                // SAFETY: a thread parks once at a time, so its record is not queued.
                if !unsafe { enqueue(key, validate, me, owed, Waits::$waits, deadline) } {
                    return ParkResult::Invalid;
                }
                before_sleep();
                let woken = match deadline {
                    None => {
                        me.parker.park(spin);
                        true
                    }
                    Some(deadline) => me.parker.park_until(deadline.as_nanos(), spin),
                };
                if woken {
                    // SAFETY: we observed the claim (Acquire).
                    return ParkResult::Unparked(unsafe { me.take_token(settle_later) });
                }
                // SAFETY: `me` was queued above; `park` finishes an in-flight wakeup.
                unsafe { leave_queue(me, timed_out, || me.parker.park(false), settle_later) }
            })
        }
    };
}

/// Parks the current thread in the queue for `key`, if `validate` agrees.
///
/// 1. Locks `key`'s queue and calls `validate`. If it returns false, unlocks
///    and returns [`ParkResult::Invalid`].
/// 2. Otherwise queues this thread, unlocks, and calls `before_sleep`.
/// 3. Sleeps until an unpark on `key` claims this thread (returning its token)
///    or until `deadline` passes. On a timeout the thread leaves the queue and
///    `timed_out(key, was_last)` runs under the queue's lock; `was_last` tells
///    whether no other thread is still queued on `key`. If a requeue moved
///    the thread ([`unpark_requeue`]), `key` there is the address it was
///    moved to, and the token an unpark of that address's.
///
/// Spurious wakeups never escape: the result is `Unparked` only after an unpark.
/// If the thread is reaped while queued ([`abandon_thread`]), nothing is owed
/// to anyone; primitives that owe something use [`park_owing`].
///
/// # Safety
/// - `validate` and `timed_out` run under a bucket lock: they must not panic
///   and must not call into the ParkingLot (nor take any lock that a thread
///   inside the ParkingLot may hold).
/// - `before_sleep` runs with this thread queued: it must not panic and must
///   not park (it may unpark).
///
/// On a thread marked unable to block ([`crate::set_thread_may_block`]) the
/// thread is queued the same way and then stays awake, watching its record,
/// instead of sleeping: see `sys`'s parkers.
pub unsafe fn park_conditionally(
    key: usize,
    validate: impl FnOnce() -> bool,
    before_sleep: impl FnOnce(),
    timed_out: impl FnOnce(usize, bool),
    deadline: Option<Instant>,
) -> ParkResult {
    // SAFETY: forwarded from the caller.
    unsafe {
        park_owing(
            key,
            validate,
            before_sleep,
            timed_out,
            deadline,
            Owed::NOTHING,
        )
    }
}

park_variant! {
    /// [`park_conditionally`] for a wait that owes the other waiters something if
    /// this thread is reaped while queued or before it acts on its wakeup
    /// (`owed`: a lock's next waiter must be woken in its place).
    ///
    /// # Safety
    /// As for [`park_conditionally`]; `owed.abandon`'s functions as their docs
    /// say, and `owed.object` is valid for them until every waiter that owes it
    /// has settled or been reaped.
    park_owing: spin false, settle_later false, waits Thread
}

park_variant! {
    /// [`park_owing`] for a wait whose wakeup is likely to come soon and is
    /// worth being awake for: once queued, the thread watches its record for a
    /// short, adaptive while before it sleeps (`sys/spin.rs`), so that a wakeup
    /// within it costs neither side a system call. For waits that another
    /// thread ends on purpose (futex waits, condition waits). Not for a lock's
    /// waiters: a lock spins before it queues, and a waiter that comes back at
    /// once after every unlock keeps the holder on its slow path (measured: a
    /// contended Lock in wasm fell from 104 to 30 million acquisitions a second).
    ///
    /// # Safety
    /// As for [`park_owing`].
    park_owing_spinning: spin true, settle_later false, waits Thread
}

park_variant! {
    /// [`park_owing`] whose debt outlives the wakeup: after an `Unparked` result
    /// the token stays on record as not yet acted on, so that a reaper who finds
    /// this thread gone passes it on (`owed.abandon.claimed`) as it would a
    /// token never taken, until the thread calls [`settled`]. For a primitive
    /// whose wakeup leaves state behind that only the woken thread clears (a
    /// lock's "a woken waiter is on its way" bit): it clears that state, then
    /// calls `settled`, so that a thread that dies in between is still reaped.
    ///
    /// # Safety
    /// As for [`park_owing`]; after an `Unparked` result the thread calls
    /// [`settled`] before it parks again.
    park_owing_until_settled: spin false, settle_later true, waits ThreadSettlingLater
}

park_variant! {
    /// [`park_owing_spinning`] whose debt outlives the wakeup, as
    /// [`park_owing_until_settled`]'s does, until the thread calls
    /// [`settled`]; but an unparker is told it wakes a plain thread
    /// ([`UnparkResult::woken_settles_later`] false): a lock's release leaves
    /// it no mark to clear nor bit to carry. For a condition's waiter in an
    /// embedder that reaps its threads (the wasm module): it acts on its
    /// wakeup (takes its lock back, or keeps the lock a requeue handed it)
    /// and records that before the debt ends, so that a thread stopped on
    /// its way back has its notify or its lock passed on by its reaper.
    ///
    /// # Safety
    /// As for [`park_owing`]; after an `Unparked` result the thread calls
    /// [`settled`] before it parks again (or parks again, which ends it too).
    park_owing_spinning_until_settled: spin true, settle_later true, waits Thread
}

/// Ends the debt of this thread's last [`park_owing_until_settled`] (or
/// [`park_owing_spinning_until_settled`]) wakeup:
/// it has acted on its token, and a reaper has nothing left to pass on.
/// (Parking again ends it too.)
pub fn settled() {
    with_thread_data(|me| me.token_pending.store(false, Ordering::Relaxed));
}

/// Locks `key`'s queue, runs `validate`, and if it agrees queues `me`
/// (owing `owed`, waited on as `waits` says). Returns whether `me` was
/// queued.
///
/// # Safety
/// As for [`park_conditionally`]'s `validate`; `me` is not queued anywhere.
unsafe fn enqueue(
    key: usize,
    validate: impl FnOnce() -> bool,
    me: &ThreadData,
    owed: Owed,
    waits: Waits,
    deadline: Option<Instant>,
) -> bool {
    // When it was queued, for the diagnostics' snapshot: only while they are
    // on, since a clock may be a call into the embedder (in wasm, JS's
    // `performance.now()`: reading it at every park cost a contended Lock
    // a third of its throughput there). Read before the queue lock.
    let since = if crate::diagnostics::tracking() {
        now_ns()
    } else {
        0
    };
    let bucket = lock_bucket(key);
    // Count in, then validate: the parker's half of the handshake with
    // `may_have_waiters`. Our read-modify-write and an unparker's are ordered
    // on the count: if ours is later, it acquires what the unparker stored
    // before unparking, so `validate` sees it; if earlier, the unparker sees 1.
    bucket.waiters.fetch_add(1, Ordering::AcqRel);
    let valid = validate();
    // SAFETY: the bucket lock is held and `me` is not queued (caller's contract).
    unsafe {
        if valid {
            // Whatever an earlier wakeup left owed was acted on before the
            // record queues again (a Lock's woken waiter queues only once its
            // byte says PARKED; an async record's claim its owner saw in the
            // word and never polled carries nothing): the debt a reaper finds
            // is this wait's. Only the owner writes it while it is in no
            // queue; an unparker sets it under this lock.
            me.token_pending.store(false, Ordering::Relaxed);
            me.key.set(key);
            me.queued_on.store(key, Ordering::Relaxed);
            me.owed.set(owed);
            me.waits.set(waits);
            me.since_ns.set(since);
            me.deadline_ns
                .set(deadline.map_or(u64::MAX, Instant::as_nanos));
            me.parker.prepare_park();
            bucket.push(me);
        } else {
            bucket.waiters.fetch_sub(1, Ordering::Relaxed);
        }
        bucket.lock.unlock();
    }
    valid
}

/// Settles a waiter that gave up (deadline passed, or cancelled) against the
/// wakers racing with it: either a waker claimed it first, and `finish_wakeup`
/// waits for that wakeup to complete before its token is returned, or it
/// leaves the queue and `timed_out(key, was_last)` runs under the queue lock,
/// `key` being the address it is queued on now (a requeue may have moved it).
///
/// # Safety
/// `me` was queued by `enqueue`; `timed_out` as for [`park_conditionally`].
unsafe fn leave_queue(
    me: &ThreadData,
    timed_out: impl FnOnce(usize, bool),
    finish_wakeup: impl FnOnce(),
    settle_later: bool,
) -> ParkResult {
    // SAFETY: queued, or claimed and not yet settled (so alive).
    let (bucket, key) = unsafe { lock_bucket_of(me) };
    if !me.parker.timed_out() {
        // SAFETY: locked by lock_bucket.
        unsafe { bucket.lock.unlock() };
        finish_wakeup();
        // SAFETY: written by the waker before it claimed us, under the bucket
        // lock we took after it.
        return ParkResult::Unparked(unsafe { me.take_token(settle_later) });
    }
    // SAFETY: the bucket lock is held and `me` is queued in this bucket
    // (rehashing moves waiters to the bucket lock_bucket finds for their key).
    unsafe {
        let was_last = bucket.remove(key, me);
        me.parker.forget_park();
        timed_out(key, was_last);
        bucket.lock.unlock();
    }
    ParkResult::TimedOut
}

/// Wakes the oldest waiter queued on `key`, if any. `callback` runs under the
/// queue's lock with what was done and returns the token the woken waiter
/// receives. Returns what was done.
///
/// # Safety
/// `callback` runs under a bucket lock: it must not panic and must not call
/// into the ParkingLot.
pub unsafe fn unpark_one(
    key: usize,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    // SAFETY: forwarded from the caller.
    unsafe { unpark_many(key, 1, callback) }
}

/// Wakes up to `count` waiters queued on `key`, oldest first, and returns how
/// many it woke: exactly the waiters whose waits end "unparked" because of it.
/// With nobody queued in `key`'s bucket this takes no lock (see `table`): a
/// notify with no waiter costs a hash and one uncontended read-modify-write.
#[inline]
pub fn unpark_count(key: usize, count: usize) -> usize {
    if count == 0 || !table::may_have_waiters(key) {
        return 0;
    }
    unpark_count_queued(key, count)
}

/// `unpark_count` past its no-waiter test, out of line so that the test is
/// all a notify with nobody waiting runs (no stack frame for the queue walk).
#[inline(never)]
fn unpark_count_queued(key: usize, count: usize) -> usize {
    // SAFETY: the callback does nothing.
    unsafe { unpark_inner(key, || count, false, |_| DEFAULT_UNPARK_TOKEN) }.unparked
}

/// Wakes every waiter queued on `key`. Returns how many.
pub fn unpark_all(key: usize) -> usize {
    unpark_count(key, usize::MAX)
}

/// Wakes up to `max` waiters queued on `key`, oldest first, handing each the
/// token `callback` returns (it runs once, under the queue's lock, after the
/// waiters were taken out of the queue). Every waiter taken out is claimed
/// and counted: its wait ends with that token.
///
/// # Safety
/// As for [`unpark_one`].
pub unsafe fn unpark_many(
    key: usize,
    max: usize,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    // SAFETY: forwarded from the caller.
    unsafe { unpark_inner(key, || max, true, callback) }
}

/// Runs `decide` under `key`'s queue lock and, if it returns a token, wakes
/// every waiter queued on `key` with it before the lock is released. A
/// state change and the wakeups it calls for are then one step to every
/// parker's `validate` (a barrier's opening: an arrival after it is not woken
/// by it). Returns how many it woke. Always takes the lock.
///
/// # Safety
/// As for [`unpark_one`], for `decide`.
pub unsafe fn unpark_all_if(key: usize, decide: impl FnOnce() -> Option<UnparkToken>) -> usize {
    let token = core::cell::Cell::new(None);
    let max = || {
        token.set(decide());
        if token.get().is_some() {
            usize::MAX
        } else {
            0
        }
    };
    // SAFETY: forwarded from the caller; the callback only reads `token`.
    unsafe {
        unpark_inner(key, max, false, |_| {
            token.get().unwrap_or(DEFAULT_UNPARK_TOKEN)
        })
    }
    .unparked
}

/// [`unpark_many`], waking up to `max()` waiters (`max` runs first, under
/// the queue's lock); without `fairness` the bucket's fairness timer is neither
/// read nor rearmed (`time_to_be_fair` stays false): a wakeup that hands
/// nothing over (a futex notify, `unpark_count`) must not use up the turn of
/// a lock in the same bucket, nor pay for a clock read (in wasm a call out to
/// JS) under the bucket lock.
///
/// # Safety
/// As for [`unpark_one`].
unsafe fn unpark_inner(
    key: usize,
    max: impl FnOnce() -> usize,
    fairness: bool,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    let bucket = lock_bucket(key);
    let mut result = UnparkResult::default();
    // SAFETY: the bucket lock is held until `claim_and_wake` releases it;
    // dequeued waiters stay unclaimed (so their records live) until it
    // claims them.
    unsafe {
        let (woken, rest) = bucket.dequeue(key, max());
        result.unparked = woken.len;
        result.did_unpark = woken.len > 0;
        result.may_have_more = bucket.has_waiter_from(rest, key);
        result.woken_settles_later =
            !woken.head.is_null() && (*woken.head).waits.get() == Waits::ThreadSettlingLater;
        // The clock is read only once a waiter is found, and only by an
        // unpark that can hand something over: a notify with nobody waiting
        // must stay cheap (in wasm the clock is a call out to JS).
        if result.did_unpark && fairness {
            result.time_to_be_fair = bucket.take_fairness(now_ns());
        }
        let token = callback(result);
        claim_and_wake(woken.head, token, WaitOutcome::Woken(token), || {
            bucket.lock.unlock()
        });
    }
    result
}

/// Ends the waits of a chain of records that were taken out of their queues
/// (`next`-linked, oldest first) with `token`: claims each under the bucket
/// lock(s), runs `unlock`, then wakes the sleeping owners and calls the
/// waker records' wakers with `outcome`, with no lock held. What every
/// unpark, a requeue's wakeups and a cancel share. Allocates nothing.
///
/// # Safety
/// The lock(s) `unlock` releases are held; the chain was taken out of its
/// queue under them and nobody else claims its records. A claimed waker
/// record lives on the queue's reference, which is ours until `call_back`
/// releases it (with no lock held, as it requires).
unsafe fn claim_and_wake(
    mut chain: *const ThreadData,
    token: UnparkToken,
    outcome: WaitOutcome,
    unlock: impl FnOnce(),
) {
    /// Wakeups that wait until the bucket lock is released; any beyond these
    /// are done under the lock (correct, just a longer hold), so that no
    /// unpark allocates.
    const DEFERRED: usize = 8;

    let mut deferred: [Option<UnparkHandle>; DEFERRED] = [const { None }; DEFERRED];
    let mut n = 0;
    // Claimed waker records, chained through `next`: their wakers run once
    // the lock is released.
    let mut callbacks: *const ThreadData = core::ptr::null();
    // SAFETY: per our contract the records live until claimed.
    unsafe {
        while !chain.is_null() {
            // Read everything before claiming: once claimed, the owner may run on.
            let next = (*chain).next.get();
            let has_waker = !(*chain).waker_record.get().is_null();
            (*chain).token.set(token);
            (*chain).token_pending.store(true, Ordering::Relaxed);
            let handle = (*chain).parker.unpark_lock();
            if has_waker {
                // The queue's reference to the record is ours now; a racing
                // give-up reads only the parker and the token after the claim.
                (*chain).next.set(callbacks);
                callbacks = chain;
                // Nobody sleeps on a waker record's word: finishing the claim
                // here lets a racing give-up return at once.
                handle.unpark();
            } else if n < DEFERRED {
                deferred[n] = Some(handle);
                n += 1;
            } else {
                handle.unpark();
            }
            chain = next;
        }
        unlock();
        for handle in deferred.into_iter().flatten() {
            handle.unpark();
        }
        while !callbacks.is_null() {
            let next = (*callbacks).next.get();
            waker::call_back((*callbacks).waker_record.get(), outcome);
            callbacks = next;
        }
    }
}

/// Whether it is time to be fair on `key`: the same per-bucket timer an
/// unpark consults for [`UnparkResult::time_to_be_fair`] (re-armed when it
/// fires), for a primitive that must choose whom to serve before it unparks,
/// such as a reader-writer lock choosing between its readers' and its
/// writers' queues. Takes `key`'s bucket lock, so only for slow paths.
pub fn time_to_be_fair(key: usize) -> bool {
    let bucket = lock_bucket(key);
    // SAFETY: the bucket lock is held from lock_bucket until the unlock.
    unsafe {
        let due = bucket.take_fairness(now_ns());
        bucket.lock.unlock();
        due
    }
}

/// What the oldest waiter queued on `key` waits with ([`Owed::with`]), if
/// anyone waits on `key`: how a condition tells that all its waiters use one
/// lock.
///
/// # Safety
/// Only from the `validate` callback of a park on `key`: that is, with
/// `key`'s bucket locked by this thread.
pub unsafe fn queued_with(key: usize) -> Option<*const ()> {
    // SAFETY: the caller holds `key`'s bucket lock, so the current table
    // cannot change (growth locks every bucket) and the queue is stable.
    unsafe { table::current_table().bucket(key).first(key) }.map(|w| unsafe { w.owed.get().with })
}

/// How many waiters are queued on `key` right now (a snapshot, O(queue)).
/// For diagnostics and for tests that must know a waiter is queued.
pub fn parked_count(key: usize) -> usize {
    let bucket = lock_bucket(key);
    // SAFETY: the bucket lock is held while we walk the queue.
    unsafe {
        let n = bucket.count(key);
        bucket.lock.unlock();
        n
    }
}

#[cfg(all(test, not(loom)))]
pub(super) mod tests {
    use super::table::{current_table, LOAD_FACTOR};
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32};
    use std::sync::Arc;
    use std::time::Duration;

    /// What a parked test thread ended with: its result, and the key its
    /// timeout was told.
    pub(super) type Parked = std::thread::JoinHandle<(ParkResult, Option<usize>)>;

    /// Parks a thread on `key` and returns once it is queued (`queued`
    /// counts the queued threads), so that the queue's order is known.
    pub(super) fn park_one(
        key: usize,
        queued: &Arc<AtomicU32>,
        deadline: Option<Instant>,
    ) -> Parked {
        let before = queued.load(Ordering::SeqCst);
        let q = queued.clone();
        let h = std::thread::spawn(move || {
            let mut timed_out_on = None;
            // SAFETY (test): the callbacks touch only test state.
            let r = unsafe {
                park_conditionally(
                    key,
                    || {
                        q.fetch_add(1, Ordering::SeqCst);
                        true
                    },
                    || {},
                    |key, _| timed_out_on = Some(key),
                    deadline,
                )
            };
            (r, timed_out_on)
        });
        while queued.load(Ordering::SeqCst) == before {
            std::thread::yield_now();
        }
        h
    }

    fn park_until_flag(flag: &AtomicBool, key: usize, deadline: Option<Instant>) -> ParkResult {
        unsafe {
            park_conditionally(
                key,
                || !flag.load(Ordering::SeqCst),
                || {},
                |_, _| {},
                deadline,
            )
        }
    }

    #[test]
    fn validate_false_means_invalid_and_no_sleep() {
        let r =
            unsafe { park_conditionally(1, || false, || panic!("must not run"), |_, _| {}, None) };
        assert_eq!(r, ParkResult::Invalid);
    }

    #[test]
    fn unpark_with_nobody_queued_reports_nothing() {
        let key = &0u8 as *const u8 as usize;
        let r = unsafe {
            unpark_one(key, |r| {
                assert!(!r.did_unpark && !r.may_have_more && !r.time_to_be_fair);
                7
            })
        };
        assert_eq!(r, UnparkResult::default());
        assert_eq!(unpark_all(key), 0);
    }

    #[test]
    fn token_reaches_the_woken_thread() {
        let flag = Arc::new(AtomicBool::new(false));
        let key = Arc::as_ptr(&flag) as usize;
        let f = flag.clone();
        let t = std::thread::spawn(move || park_until_flag(&f, key, None));
        loop {
            let r = unsafe { unpark_one(key, |r| if r.did_unpark { 42 } else { 0 }) };
            if r.did_unpark {
                assert!(!r.may_have_more);
                break;
            }
            std::thread::yield_now();
        }
        assert_eq!(t.join().unwrap(), ParkResult::Unparked(42));
    }

    #[test]
    fn timeout_reports_whether_it_was_last() {
        let flag = AtomicBool::new(false);
        let key = &flag as *const AtomicBool as usize;
        let start = Instant::now();
        let deadline = start + Duration::from_millis(20);
        let (r, last) = park_timing_out(key, deadline);
        assert_eq!(r, ParkResult::TimedOut);
        assert!(Instant::now() >= deadline, "returned early");
        assert_eq!(last, Some((key, true)));
    }

    /// Parks on `key` until `deadline`, returning the result and what
    /// `timed_out` was told (key, was_last), if it ran.
    fn park_timing_out(key: usize, deadline: Instant) -> (ParkResult, Option<(usize, bool)>) {
        let mut last = None;
        // SAFETY: the callbacks only record; they neither panic nor park.
        let r = unsafe {
            park_conditionally(
                key,
                || true,
                || {},
                |k, was_last| last = Some((k, was_last)),
                Some(deadline),
            )
        };
        (r, last)
    }

    #[test]
    fn a_timed_out_waiter_behind_another_sees_it_was_not_last() {
        let word = Box::new(0u64);
        let key = &*word as *const u64 as usize;
        let long = park_one(key, &Arc::new(AtomicU32::new(0)), None);
        let (r, last) = park_timing_out(key, Instant::now() + Duration::from_millis(5));
        assert_eq!(r, ParkResult::TimedOut);
        assert_eq!(last, Some((key, false)));
        assert_eq!(unpark_all(key), 1);
        assert!(long.join().unwrap().0.is_unparked());
    }

    #[test]
    fn unpark_count_wakes_oldest_first_and_counts() {
        let word = Box::new(0u64);
        let key = &*word as *const u64 as usize;
        let queued = Arc::new(AtomicU32::new(0));
        // Queued one at a time, so that the queue order is known.
        let hs: Vec<_> = (0..4).map(|_| park_one(key, &queued, None)).collect();
        let r = unsafe {
            unpark_many(key, 2, |r| {
                assert_eq!(r.unparked, 2);
                assert!(r.may_have_more);
                0
            })
        };
        assert_eq!(r.unparked, 2);
        let mut hs = hs.into_iter();
        for h in hs.by_ref().take(2) {
            assert!(h.join().unwrap().0.is_unparked(), "the oldest two");
        }
        assert_eq!(unpark_all(key), 2);
        for h in hs {
            assert!(h.join().unwrap().0.is_unparked());
        }
    }

    #[test]
    fn the_table_grows_with_threads_and_keeps_queues() {
        // Park more threads than the first table holds, on a few keys, while the
        // table grows under them; every one must still be found by its key.
        let words: Vec<Box<u64>> = (0..3).map(|_| Box::new(0u64)).collect();
        let keys: Vec<usize> = words.iter().map(|w| &**w as *const u64 as usize).collect();
        let n = if cfg!(miri) { 4 } else { 24 };
        let parked = Arc::new(AtomicU32::new(0));
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let (key, parked) = (keys[i % 3], parked.clone());
                std::thread::spawn(move || unsafe {
                    park_conditionally(
                        key,
                        || {
                            parked.fetch_add(1, Ordering::SeqCst);
                            true
                        },
                        || {},
                        |_, _| {},
                        None,
                    )
                })
            })
            .collect();
        while parked.load(Ordering::SeqCst) != n as u32 {
            std::thread::yield_now();
        }
        let s = stats();
        assert!(s.buckets >= LOAD_FACTOR * n.min(s.threads), "{s:?}");
        assert_waiter_counts_exact();
        let woken: usize = keys.iter().map(|&k| unpark_all(k)).sum();
        assert_eq!(woken, n);
        for h in hs {
            assert!(h.join().unwrap().is_unparked());
        }
        assert_waiter_counts_exact();
    }

    /// Every bucket's lock-free waiter count equals its queue's length (exact
    /// under the bucket's lock, whatever other tests park meanwhile).
    fn assert_waiter_counts_exact() {
        for bucket in current_table().buckets() {
            bucket.lock.lock();
            // SAFETY: the bucket lock is held while we walk the queue.
            unsafe {
                assert_eq!(bucket.waiters.load(Ordering::Relaxed), bucket.queue_len());
                bucket.lock.unlock();
            }
        }
    }

    #[test]
    fn waiter_counts_follow_timeouts_and_failed_validation() {
        let word = 0u32;
        let key = &word as *const u32 as usize;
        // SAFETY: the callbacks do nothing.
        let invalid = unsafe { park_conditionally(key, || false, || {}, |_, _| {}, None) };
        assert_eq!(invalid, ParkResult::Invalid);
        assert_waiter_counts_exact();
        let soon = crate::clock::deadline_after(Duration::from_millis(5));
        // SAFETY: the callbacks do nothing.
        let timed_out = unsafe { park_conditionally(key, || true, || {}, |_, _| {}, soon) };
        assert_eq!(timed_out, ParkResult::TimedOut);
        assert_waiter_counts_exact();
        assert_eq!(unpark_count(key, 1), 0);
    }

    #[test]
    fn notify_with_no_waiter_takes_no_lock() {
        // Hold the bucket of an address nobody waits on: an unpark_count that
        // took the lock would block until we let go. Other tests park
        // meanwhile, so pick a bucket that is empty while we hold it (nobody
        // can count in without its lock).
        let words = [0u64; 64];
        let (key, bucket) = words
            .iter()
            .find_map(|w| {
                let key = w as *const u64 as usize;
                let bucket = lock_bucket(key);
                if bucket.waiters.load(Ordering::Relaxed) == 0 {
                    return Some((key, bucket));
                }
                // SAFETY: locked by lock_bucket just above.
                unsafe { bucket.lock.unlock() };
                None
            })
            .expect("every bucket holds a waiter of another test");
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::spawn(move || tx.send(unpark_count(key, usize::MAX)).unwrap());
        let answer = rx.recv_timeout(Duration::from_secs(10));
        // SAFETY: locked by lock_bucket above.
        unsafe { bucket.lock.unlock() };
        h.join().unwrap();
        assert_eq!(
            answer,
            Ok(0),
            "unpark_count with no waiter waited for the bucket lock"
        );
    }
}
