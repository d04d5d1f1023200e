//! `Condition`: a one-byte condition variable with no spurious wakeups
//! (seed 000, "WTF::Condition").
//!
//! The waiters' queue is the ParkingLot's, keyed by the condition's address.
//! The byte only caches whether that queue may be non-empty, so that a notify
//! with no waiter is a single load, and whether it may hold more than one,
//! so that a `notify_all` of one waiter wakes it without looking for a lock
//! to move it to:
//!
//! | value | meaning                                  |
//! |-------|------------------------------------------|
//! | 0     | nobody waits: notify returns at once     |
//! | 1 (`ONE`) | one thread may be waiting, no more   |
//! | 3 (`MANY`) | threads may be waiting, maybe more than one |
//!
//! It is set by a waiter under the queue lock, before it is queued (`ONE` if
//! it finds the queue empty, else `MANY`), and set back under the queue lock
//! by a notify (0 if it empties the queue, else `MANY`) or to 0 by the last
//! waiter to time out.
//!
//! A waiter releases the lock in `before_sleep`, after it is queued, so a
//! notify that follows the release is certain to find it; and it returns
//! "notified" only when an unpark claimed it: `notify_one` wakes exactly
//! the oldest waiter, asleep, about to sleep or async, and nobody else.
//!
//! `notify_all` does not wake every waiter to fight for the lock, of whom all
//! but one would park again at once on the lock (the thundering herd): it
//! moves them, still asleep, onto the lock's queue
//! ([`parking_lot::unpark_requeue`]), as parking_lot's `Condvar` does. If the
//! lock is held, it moves them all and sets the lock's `PARKED` bit, so that
//! the holder's release wakes the first; if it is free, it wakes the first
//! to take it and moves the rest, whose turn comes with each release. Every
//! waiter of a condition uses one lock ([`WrongLock`]), and the waiters say
//! which (the oldest's record), so no lock address is stored here. Async
//! waiters are woken instead of moved: they take the lock back through
//! their own protocol ([`Lock::lock_async_begin`]). `notify_all` returns
//! how many waiters it released, woken or moved; a moved waiter returns
//! "notified", even if its deadline passes on the lock's queue, and is then
//! treated as the lock's own waiters are (a hand-off, a timeout, reaping).
//!
//! A waiter whose owner is reaped (a terminated worker) leaves the queue as
//! if it had timed out; one that a `notify_one` chose before its owner could
//! act passes that notify on to the next waiter (as POSIX asks of a cancelled
//! waiter), so a dead waiter never swallows a wakeup a live one needed.

#[cfg(not(loom))]
use crate::clock::deadline_after;
use crate::clock::Instant;
use crate::diagnostics::Kind;
use crate::lock::Lock;
use crate::macros::{default_and_debug, message_error};
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, ParkResult, Requeue, UnparkToken};
use crate::sync::{AtomicU8, Ordering};
#[cfg(not(loom))]
use core::time::Duration;

/// The byte: one thread may be waiting, no more (see the module docs).
const ONE: u8 = 1;
/// The byte: threads may be waiting, maybe more than one.
const MANY: u8 = 3;

/// Unpark token of a `notify_one` (passed on if its waiter is reaped before
/// it acts on it).
const TOKEN_NOTIFY_ONE: UnparkToken = 3;
/// Unpark token of a `notify_all` that wakes every waiter (its waiters use
/// no one lock it could move them onto).
const TOKEN_NOTIFY_ALL: UnparkToken = 4;
// A waiter moved onto the lock is woken with the lock's tokens: ours must
// not read as its hand-off.
const _: () = assert!(
    !Lock::handed_over(TOKEN_NOTIFY_ONE)
        && !Lock::handed_over(TOKEN_NOTIFY_ALL)
        && !Lock::handed_over(Lock::TOKEN_WAKE)
);

/// What a condition waiter owes the others if its owner is reaped (see the
/// module docs).
static CONDITION_ABANDON: Abandon = Abandon {
    dequeued: |cond, was_last| owed_condition(cond).forget_waiters_if_last(was_last),
    settle: |_| {},
    claimed: |cond, token| {
        if token == TOKEN_NOTIFY_ONE {
            owed_condition(cond).notify_one();
        }
    },
};

/// A lock's address, what a condition's waiters are checked against.
fn lock_address(lock: &Lock) -> usize {
    lock as *const Lock as usize
}

/// The lock a queued waiter waits with ([`Owed::with`]).
///
/// # Safety
/// A waiter that waits with it is queued (on the condition or on the lock)
/// and its queue is locked: the lock outlives its waiters' waits.
unsafe fn lock_at<'a>(with: *const ()) -> &'a Lock {
    // SAFETY: per our contract; `Condition::owed` made it from a `&Lock`.
    unsafe { &*with.cast::<Lock>() }
}

/// The condition a wait that owes CONDITION_ABANDON was queued on.
fn owed_condition<'a>(object: *const ()) -> &'a Condition {
    // SAFETY: `Condition::owed` is the only maker of such debts, and a
    // condition outlives its waiters (park_owing's contract).
    unsafe { &*object.cast::<Condition>() }
}

/// Returned when a condition is waited on with a lock other than the one its
/// queued waiters use (parking_lot panics there too: a notify could not tell
/// which lock's data changed). Nothing was done: the lock is still held.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WrongLock;

message_error!(
    WrongLock,
    "this condition is being waited on with another lock: every waiter of a condition must use the same lock"
);

/// How a [`Condition::wait_owing`] ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Waited {
    /// A notify ended it (not the deadline).
    pub notified: bool,
    /// A `notify_all` moved the waiter onto the lock's queue and a release
    /// handed it the lock: the caller holds it. Else the caller takes it back.
    pub holding: bool,
}

/// A one-byte condition variable. `wait` returns only after a notify (or,
/// for the timed forms, a timeout); notifies with nobody waiting cost one load.
///
/// ```
/// use parklot::{Condition, Mutex};
/// use std::sync::Arc;
///
/// let pair = Arc::new((Mutex::new(false), Condition::new()));
/// let pair2 = pair.clone();
/// std::thread::spawn(move || {
///     *pair2.0.lock() = true;
///     pair2.1.notify_one();
/// });
/// let mut ready = pair.0.lock();
/// while !*ready {
///     pair.1.wait(&mut ready);
/// }
/// ```
#[repr(transparent)] // one byte, guaranteed: C and the wasm module rely on it
pub struct Condition {
    has_waiters: AtomicU8,
}

impl Condition {
    /// A condition nobody waits on.
    #[cfg(not(loom))]
    pub const fn new() -> Condition {
        Condition {
            has_waiters: AtomicU8::new(0),
        }
    }

    /// A condition nobody waits on.
    #[cfg(loom)]
    pub fn new() -> Condition {
        Condition {
            has_waiters: AtomicU8::new(0),
        }
    }

    /// Releases the guard's lock, waits for a notify, and takes the lock back.
    #[cfg(not(loom))]
    pub fn wait<T: ?Sized>(&self, guard: &mut crate::MutexGuard<'_, T>) {
        // SAFETY: the guard proves its lock is held; it is held again on return.
        unsafe { self.wait_raw(crate::MutexGuard::mutex(guard).raw(), None) };
    }

    /// Like [`wait`](Self::wait), for at most `timeout`. Ask the result
    /// [`timed_out()`](WaitTimeoutResult::timed_out), as with [`crate::Condvar`].
    #[cfg(not(loom))]
    pub fn wait_for<T: ?Sized>(
        &self,
        guard: &mut crate::MutexGuard<'_, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        // SAFETY: as in `wait`.
        let notified = unsafe {
            self.wait_raw(
                crate::MutexGuard::mutex(guard).raw(),
                deadline_after(timeout),
            )
        };
        WaitTimeoutResult::of(notified)
    }

    /// Like [`wait`](Self::wait), until `deadline` at the latest (a
    /// [`crate::Instant`], or a `std::time::Instant` converted with `.into()`).
    /// Ask the result [`timed_out()`](WaitTimeoutResult::timed_out).
    #[cfg(not(loom))]
    pub fn wait_until<T: ?Sized>(
        &self,
        guard: &mut crate::MutexGuard<'_, T>,
        deadline: impl Into<Instant>,
    ) -> WaitTimeoutResult {
        // SAFETY: as in `wait`.
        let notified =
            unsafe { self.wait_raw(crate::MutexGuard::mutex(guard).raw(), Some(deadline.into())) };
        WaitTimeoutResult::of(notified)
    }

    /// Releases `lock`, waits for a notify or for `deadline`, and takes `lock`
    /// back. Returns whether it was notified.
    ///
    /// # Safety
    /// The caller holds `lock`.
    ///
    /// On a thread that may not block ([`crate::set_thread_may_block`]) it
    /// waits awake instead of parking.
    ///
    /// # Panics
    /// If other waiters wait with another lock ([`WrongLock`]); the lock is
    /// still held then.
    pub unsafe fn wait_raw(&self, lock: &Lock, deadline: Option<Instant>) -> bool {
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_wait_raw(lock, deadline) } {
            Ok(notified) => notified,
            Err(e) => panic!("Condition::wait: {e}"),
        }
    }

    /// [`wait_raw`](Self::wait_raw) that reports a [`WrongLock`] instead of
    /// panicking (and does nothing then: `lock` stays held).
    ///
    /// # Safety
    /// The caller holds `lock`.
    pub unsafe fn try_wait_raw(
        &self,
        lock: &Lock,
        deadline: Option<Instant>,
    ) -> Result<bool, WrongLock> {
        // SAFETY: forwarded from the caller.
        let waited = unsafe {
            self.wait_then_relock(lock, deadline, || {
                // Not refusable: this caller cannot be told (a cycle here is
                // left to `check_deadlock` and the snapshot).
                crate::diagnostics::unrefusable(|| lock.lock());
                Ok(())
            })
        };
        waited.map(|relocked| relocked.expect("an unrefusable re-acquisition"))
    }

    /// The wait of [`try_wait_raw`](Self::try_wait_raw) without taking
    /// `lock` back, for an embedder that reaps the threads it runs and
    /// records their holds (the wasm module). If [`Waited::holding`], a
    /// `notify_all` moved this waiter onto `lock`'s queue and its release
    /// handed it the lock: the caller holds it. Else the caller takes `lock`
    /// back itself, as it takes it anywhere else, so that nothing runs
    /// between the lock's byte and the record of the hold. Either way the
    /// wakeup's debt stays on record until the caller, having recorded the
    /// hold (or a refusal), calls [`parking_lot::settled`]: a thread stopped
    /// for good on its way back from its wakeup (in a call's prologue or at
    /// a loop's back edge, where engines stop a thread) has its reaper pass
    /// on the notify it was chosen for, or release the lock it was handed.
    /// Its reaper must not pass it on once the hold is recorded
    /// ([`parking_lot::abandon_thread`]'s `took`). `released` runs right
    /// after this thread, queued, released `lock` (not if the wait is
    /// refused): where the caller ends the step that forgets its hold.
    ///
    /// # Safety
    /// The caller holds `lock`; `released` must not panic nor park.
    pub unsafe fn wait_owing(
        &self,
        lock: &Lock,
        deadline: Option<Instant>,
        released: impl FnOnce(),
    ) -> Result<Waited, WrongLock> {
        // SAFETY: forwarded from the caller.
        let (result, moved) = unsafe { self.park_until_woken::<true>(lock, deadline, released) }?;
        let holding = matches!(result, ParkResult::Unparked(token) if Lock::handed_over(token));
        if holding {
            lock.handed_to_me();
        }
        Ok(Waited {
            notified: result.is_unparked() || moved,
            holding,
        })
    }

    /// The wait of both: `Ok(Ok(notified))` with `lock` held again by
    /// `relock` (or by the hand-off of a requeue), `Ok(Err(_))` if `relock`
    /// refused.
    ///
    /// # Safety
    /// As for `try_wait_raw`.
    unsafe fn wait_then_relock(
        &self,
        lock: &Lock,
        deadline: Option<Instant>,
        relock: impl FnOnce() -> Result<(), crate::deadlock::DeadlockError>,
    ) -> Result<Result<bool, crate::deadlock::DeadlockError>, WrongLock> {
        // SAFETY: forwarded from the caller.
        let (result, moved) = unsafe { self.park_until_woken::<false>(lock, deadline, || {}) }?;
        match result {
            // Moved onto the lock's queue, and handed the lock by its release.
            ParkResult::Unparked(token) if Lock::handed_over(token) => lock.handed_to_me(),
            _ => {
                if let Err(cycle) = relock() {
                    return Ok(Err(cycle));
                }
            }
        }
        Ok(Ok(result.is_unparked() || moved))
    }

    /// Queues this thread, releases `lock` (then runs `released`) and sleeps
    /// until notified or `deadline`. Returns how the park ended and whether
    /// the deadline passed on the lock's queue, where a `notify_all` had
    /// moved this waiter (it was notified). With `SETTLE_LATER` the wakeup's
    /// debt stays on record until [`parking_lot::settled`]
    /// ([`wait_owing`](Self::wait_owing)).
    ///
    /// # Safety
    /// As for `try_wait_raw`; `released` must not panic nor park.
    unsafe fn park_until_woken<const SETTLE_LATER: bool>(
        &self,
        lock: &Lock,
        deadline: Option<Instant>,
        released: impl FnOnce(),
    ) -> Result<(ParkResult, bool), WrongLock> {
        let mut wrong = false;
        // Set if the deadline passed on the lock's queue, where a notify_all
        // had moved this waiter: it was notified.
        let mut moved = false;
        // SAFETY: the park's `validate`, on this condition's key.
        let validate = || unsafe { self.check_and_mark(lock, &mut wrong) };
        let before_sleep = || {
            lock.unlock();
            released();
        };
        let timed_out = |key: usize, was_last| {
            if key == self.key() {
                self.forget_waiters_if_last(was_last);
            } else {
                // Left the lock's queue, as the lock's own waiters do.
                moved = true;
                lock.forget_parked_if_last(was_last);
            }
        };
        // SAFETY: the callbacks only read the queue and store this condition's
        // or the lock's byte (no panics, no ParkingLot locking); `before_sleep`
        // unlocks a lock the caller holds, which may unpark but never parks,
        // and runs `released`, which neither panics nor parks (our contract).
        let park = if SETTLE_LATER {
            parking_lot::park_owing_spinning_until_settled as unsafe fn(_, _, _, _, _, _) -> _
        } else {
            parking_lot::park_owing_spinning
        };
        let result = unsafe {
            park(
                self.key(),
                validate,
                before_sleep,
                timed_out,
                deadline,
                self.owed(lock),
            )
        };
        if wrong {
            return Err(WrongLock);
        }
        Ok((result, moved))
    }

    /// The `validate` of a wait with `lock`: refuses (setting `wrong`) if the
    /// queued waiters use another lock, else marks that someone waits.
    ///
    /// # Safety
    /// Only as a park's `validate` on this condition's key.
    unsafe fn check_and_mark(&self, lock: &Lock, wrong: &mut bool) -> bool {
        // SAFETY: we are the validate of a park on our key (the caller's contract).
        let queued = unsafe { parking_lot::queued_with(self.key()) };
        if queued.is_some_and(|with| with.addr() != lock_address(lock)) {
            *wrong = true;
            return false;
        }
        let byte = if queued.is_some() { MANY } else { ONE };
        self.has_waiters.store(byte, Ordering::Relaxed);
        true
    }

    /// Asynchronous wait, for threads that may not block: queues `waiter` on
    /// this condition, then releases `lock`. Once the waiter's word turns 0
    /// (see [`AsyncWaiter`]) it was notified; the caller then takes `lock`
    /// back (asynchronously, with [`Lock::lock_async_begin`]). To give up,
    /// call [`wait_async_cancel`](Self::wait_async_cancel).
    ///
    /// Returns [`WrongLock`], doing nothing (the lock stays held), if the
    /// queued waiters use another lock.
    ///
    /// # Safety
    /// The caller holds `lock`; `waiter` is not queued and neither moves nor
    /// is dropped until the wait is settled (notified, or cancelled).
    pub unsafe fn wait_async_begin(
        &self,
        lock: &Lock,
        waiter: &AsyncWaiter,
    ) -> Result<(), WrongLock> {
        let mut wrong = false;
        // SAFETY: the callback as in `try_wait_raw`; `waiter` per our contract.
        let queued = unsafe {
            parking_lot::park_async_owing(
                self.key(),
                || self.check_and_mark(lock, &mut wrong),
                waiter,
                self.owed(lock),
            )
        };
        if !queued {
            debug_assert!(wrong);
            return Err(WrongLock);
        }
        // Released only now that we are queued: no notify can be missed.
        lock.unlock();
        Ok(())
    }

    /// Gives up an asynchronous wait. Returns whether a notify claimed the
    /// waiter first (then the wait counts as notified). Leaves no queue entry.
    ///
    /// # Safety
    /// `waiter` was queued by `wait_async_begin` on this condition and the
    /// wait has not been settled.
    pub unsafe fn wait_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.cancel_settling(waiter, false) }
    }

    /// [`wait_async_cancel`](Self::wait_async_cancel) for a waiter that will
    /// take the lock back with the same record, as wasm's async wait does:
    /// a notify that came first stays owed (a reaper passes it on) until
    /// [`AsyncWaiter::settled`], once the lock is back.
    ///
    /// # Safety
    /// As for [`wait_async_cancel`](Self::wait_async_cancel).
    pub unsafe fn wait_async_cancel_owing(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.cancel_settling(waiter, true) }
    }

    /// The two cancels, the notify's debt ended now or left to the owner.
    ///
    /// # Safety
    /// As for [`wait_async_cancel`](Self::wait_async_cancel).
    unsafe fn cancel_settling(&self, waiter: &AsyncWaiter, owing: bool) -> bool {
        let left = |_, was_last| self.forget_waiters_if_last(was_last);
        // SAFETY: forwarded from the caller; the callback stores this
        // condition's byte.
        let result = unsafe {
            if owing {
                parking_lot::cancel_async_owing(self.key(), waiter, left)
            } else {
                parking_lot::cancel_async(self.key(), waiter, left)
            }
        };
        matches!(result, ParkResult::Unparked(_))
    }

    /// Whether waiters may be queued (for `Debug`).
    fn is_waited_on(&self) -> bool {
        self.has_waiters.load(Ordering::Relaxed) != 0
    }

    /// Wakes the oldest waiter. Returns whether there was one.
    #[inline]
    pub fn notify_one(&self) -> bool {
        // Relaxed suffices: a waiter sets the byte before it releases the lock,
        // and a notifier that changed the waited-for state under that lock
        // acquired it after that release.
        if self.has_waiters.load(Ordering::Relaxed) == 0 {
            return false;
        }
        self.notify_slow(1) != 0
    }

    /// Wakes every waiter: moves them onto the lock's queue, waking at most
    /// one (see the module docs). Returns how many there were.
    #[inline]
    pub fn notify_all(&self) -> usize {
        match self.has_waiters.load(Ordering::Relaxed) {
            0 => 0,
            // Nobody to move: wake it (or them, if others came meanwhile).
            ONE => self.notify_slow(usize::MAX),
            _ => self.notify_all_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn notify_all_slow(&self) -> usize {
        match parking_lot::waiting_with(self.key()) {
            Some(lock) if !lock.is_null() => self.requeue_onto(lock),
            // Nobody waits (the byte is cleared then) or without a lock.
            _ => self.notify_slow(usize::MAX),
        }
    }

    /// `notify_all` onto the lock at `lock`, which the waiters used a moment ago.
    fn requeue_onto(&self, lock: *const ()) -> usize {
        // SAFETY: the callbacks only read the queue and store this
        // condition's and the lock's bytes; they dereference the lock only
        // while a waiter that waits with it is queued. Every waiter of ours
        // understands the lock's tokens (`try_wait_raw`), or is async and
        // woken, not moved; it owes the lock's debt once moved.
        let r = unsafe {
            parking_lot::unpark_requeue(
                self.key(),
                lock.addr(),
                |queued| {
                    if queued.first_with() != Some(lock) {
                        // Since we looked, every waiter left and others came
                        // with another lock: wake them all.
                        return Requeue {
                            wake: usize::MAX,
                            requeue: 0,
                            owed: None,
                        };
                    }
                    let target = lock_at(lock);
                    // Held: move them all; its holder's release wakes the
                    // first. Free: wake the first to take it.
                    let wake = usize::from(!target.mark_parked_if_locked());
                    Requeue {
                        wake,
                        requeue: usize::MAX,
                        owed: Some(target.owed()),
                    }
                },
                |op, r| {
                    self.still_waiting(r.may_have_more);
                    if op.owed.is_none() {
                        return TOKEN_NOTIFY_ALL;
                    }
                    if op.wake > 0 && r.requeued > 0 {
                        // Moved onto a free lock: whoever releases it next
                        // (the woken waiter, or a barger) wakes the next.
                        lock_at(lock).mark_parked();
                    }
                    // The woken competes for the lock, owing what a waiter
                    // a release woke owes.
                    Lock::TOKEN_WAKE
                },
            )
        };
        r.unparked + r.requeued
    }

    // Never inlined: its queue walk's stack frame would otherwise be set up
    // by every notify, waiters or not.
    #[cold]
    #[inline(never)]
    fn notify_slow(&self, count: usize) -> usize {
        // SAFETY: the callback only stores this condition's byte.
        unsafe {
            parking_lot::unpark_many(self.key(), count, |r| {
                self.still_waiting(r.may_have_more);
                if count == 1 {
                    TOKEN_NOTIFY_ONE
                } else {
                    TOKEN_NOTIFY_ALL
                }
            })
        }
        .unparked
    }

    /// A notify, under the queue lock, left waiters queued or not.
    #[inline]
    fn still_waiting(&self, may_have_more: bool) {
        let byte = if may_have_more { MANY } else { 0 };
        self.has_waiters.store(byte, Ordering::Relaxed);
    }

    /// The last waiter left without a notify: nobody waits any more.
    #[inline]
    fn forget_waiters_if_last(&self, was_last: bool) {
        if was_last {
            self.has_waiters.store(0, Ordering::Relaxed);
        }
    }

    #[inline]
    fn key(&self) -> usize {
        self as *const Condition as usize
    }

    /// What a waiter on this condition with `lock` owes the others if it is
    /// reaped, and the lock it waits with.
    fn owed(&self, lock: &Lock) -> Owed {
        Owed {
            abandon: &CONDITION_ABANDON,
            object: (self as *const Condition).cast(),
            with: (lock as *const Lock).cast(),
            kind: Kind::Condition,
        }
    }
}

default_and_debug!(Condition {
    "has_waiters": is_waited_on
});

#[cfg(not(loom))]
mod lock_api_impls {
    use super::*;

    // SAFETY: `wait_raw` unlocks only after this thread is queued (so no notify
    // is missed), re-locks before returning, and Lock's guard has no state to
    // restore. It does not unwind between unlocking and re-locking.
    unsafe impl lock_api::RawCondvar for Condition {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: Condition = Condition::new();
        type RawMutex = Lock;

        unsafe fn wait(&self, mutex: &Lock, _guard: &mut lock_api::GuardSend) {
            // SAFETY: lock_api passes a held mutex.
            unsafe { self.wait_raw(mutex, None) };
        }

        fn notify_one(&self) -> bool {
            Condition::notify_one(self)
        }

        fn notify_all(&self) -> usize {
            Condition::notify_all(self)
        }
    }

    // SAFETY: as for RawCondvar.
    unsafe impl lock_api::RawCondvarTimed for Condition {
        fn checked_duration_to_instant(timeout: &Duration) -> Option<Instant> {
            deadline_after(*timeout)
        }

        unsafe fn wait_until(
            &self,
            mutex: &Lock,
            _guard: &mut lock_api::GuardSend,
            deadline: &Instant,
        ) -> bool {
            // SAFETY: lock_api passes a held mutex. lock_api wants "timed out".
            !unsafe { self.wait_raw(mutex, Some(*deadline)) }
        }
    }
}

/// How a timed wait on a [`Condition`] ended.
///
/// The crate's convention for timed calls: an acquisition (`try_lock_for`,
/// `try_read_for`, ...) returns whether it acquired; a condition wait returns
/// this, asked by the same name as the `WaitTimeoutResult` of parking_lot's
/// and lock_api's `Condvar` ([`crate::Condvar`]), so the two never read
/// inverted. Only the raw layer ([`Condition::wait_raw`], the C ABI, the
/// JavaScript package) answers a plain "notified?".
#[cfg(not(loom))]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult {
    timed_out: bool,
}

#[cfg(not(loom))]
impl WaitTimeoutResult {
    fn of(notified: bool) -> WaitTimeoutResult {
        WaitTimeoutResult {
            timed_out: !notified,
        }
    }

    /// The wait ended because its time ran out, not because of a notify.
    pub const fn timed_out(self) -> bool {
        self.timed_out
    }

    /// The wait ended because a notify chose this waiter.
    pub const fn notified(self) -> bool {
        !self.timed_out
    }
}

/// lock_api's condition variable over [`Condition`], with `wait_while` and
/// friends, for code written against lock_api.
#[cfg(not(loom))]
pub type Condvar = lock_api::Condvar<Condition>;

#[cfg(all(test, not(loom)))]
mod tests;
