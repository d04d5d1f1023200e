//! The slow paths: spinning, parking and the decisions of a release (whom
//! to wake, whom to hand the lock to), for every class of waiter.

use super::class::{readers, Class};
use super::{
    RawRwLock, ONE_READER, PREFER_WRITERS, READERS_PARKED, TOKEN_HANDOFF, TOKEN_RETRY,
    UPGRADABLE_PARKED, UPGRADE_PARKED, WRITER, WRITERS_PARKED, WRITER_FIRST,
};
use crate::acquire::{self, AcquireState, Look, Next};
use crate::clock::Instant;
use crate::lock::spin_limit;
use crate::parking_lot::{self, Owed, UnparkResult, UnparkToken};
use crate::sync::Ordering;

impl RawRwLock {
    #[inline]
    pub(super) fn key(&self, class: Class) -> usize {
        self as *const RawRwLock as usize + class.key_offset()
    }

    /// What a waiter of `class` on this lock owes if it is reaped.
    pub(super) fn owed(&self, class: Class) -> Owed {
        Owed {
            abandon: class.abandon(),
            object: (self as *const RawRwLock).cast(),
            with: core::ptr::null(),
            kind: class.kind(),
        }
    }

    /// For a reaped waiter that was woken before its owner could act: gives
    /// back a hand-off, or uses a wake to compete by taking and releasing
    /// the lock if it is free (which wakes the next), so nothing is lost.
    pub(super) fn pass_on(&self, class: Class, token: UnparkToken) {
        if token != TOKEN_HANDOFF && (class == Class::Upgrade || !self.try_enter(class)) {
            // Held by someone else, whose release wakes the next; an upgrade
            // waiter's lock is held by its dead owner anyway.
            return;
        }
        // SAFETY: we hold what `class` takes (handed over, or just entered),
        // on behalf of the gone owner, who will never release it.
        unsafe {
            match class {
                Class::Reader | Class::RecursiveReader => self.unlock_shared(),
                Class::Writer => self.unlock_exclusive(),
                Class::Upgradable => self.unlock_upgradable(),
                Class::Upgrade => {}
            }
        }
    }

    /// One attempt to enter: the fast path (a load and a CAS).
    #[inline]
    pub(super) fn try_enter_once(&self, class: Class) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        match class.enter(s) {
            Some(new) => self
                .state
                .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
                .is_ok(),
            None => false,
        }
    }

    /// Enters if the word lets `class` in, retrying only while the word
    /// changes under a CAS that it would still allow.
    #[inline]
    pub(super) fn try_enter(&self, class: Class) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        while let Some(new) = class.enter(s) {
            match self
                .state
                .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Whether a waiter of `class` should sleep: its bit is set and it still
    /// may not enter (checked under its queue's lock).
    #[inline]
    pub(super) fn should_park(&self, class: Class) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & class.parked() != 0 && class.enter(s).is_none()
    }

    /// A waiter of `class` gave up as the last one queued: clear its bit.
    #[inline]
    pub(super) fn forget_parked_if_last(&self, class: Class, was_last: bool) {
        if was_last {
            self.state.fetch_and(!class.parked(), Ordering::Relaxed);
        }
    }

    /// Spins, then parks until `class` is in or `deadline` passes.
    #[cold]
    pub(super) fn lock_slow(&self, class: Class, deadline: Option<Instant>) -> bool {
        acquire::park_blocking(&self.waiter(class), spin_limit(), deadline)
    }

    /// This lock as the acquire skeleton sees a waiter of `class`.
    #[inline]
    pub(super) fn waiter(&self, class: Class) -> ClassWaiter<'_> {
        ClassWaiter { lock: self, class }
    }

    /// Blocks new readers, then waits for the other readers to leave.
    #[cold]
    pub(super) fn upgrade_slow(&self, deadline: Option<Instant>) -> bool {
        // We hold UPGRADABLE, so no writer holds WRITER.
        self.state.fetch_or(WRITER, Ordering::Acquire);
        let upgraded = self.lock_slow(Class::Upgrade, deadline);
        if !upgraded {
            self.state
                .fetch_and(!(WRITER | UPGRADE_PARKED), Ordering::Release);
            self.unblock(false);
        }
        upgraded
    }

    /// A shared or upgradable read was released, leaving the word `s`, in
    /// which writers or an upgrade wait.
    #[cold]
    pub(super) fn reader_left(&self, s: u32) {
        self.reader_left_with(s, false);
    }

    /// [`reader_left`](Self::reader_left); `force`: a fair release.
    pub(super) fn reader_left_with(&self, s: u32, force: bool) {
        if s & UPGRADE_PARKED != 0 && readers(s) == 1 {
            // Only the upgrader reads now: wake it (it is the only one that
            // may wait on that address).
            // SAFETY: the callback edits this lock's word only.
            unsafe {
                parking_lot::unpark_one(self.key(Class::Upgrade), |_| {
                    self.state.fetch_and(!UPGRADE_PARKED, Ordering::Relaxed);
                    TOKEN_RETRY
                });
            }
        } else if readers(s) == 0 || s & UPGRADABLE_PARKED != 0 {
            self.unblock_with(false, force);
        } else if s & (PREFER_WRITERS | WRITER_FIRST) == 0
            && s & WRITERS_PARKED != 0
            && parking_lot::time_to_be_fair(self.key(Class::Writer))
        {
            // Reader preference with overlapping readers: without this a
            // parked writer would wait for a gap that may never come.
            let now = self.state.fetch_or(WRITER_FIRST, Ordering::Relaxed) | WRITER_FIRST;
            if now & WRITERS_PARKED == 0 || readers(now) == 0 {
                // `s` is stale: the parked writers or the other readers left
                // before the bit landed, so no reader's release will act on
                // it. Act on it here (clear it, or hand the lock to a
                // writer), or new readers would wait on a free lock forever.
                self.unblock(false);
            }
        }
    }

    /// Releases the exclusive lock the slow way: decides, still holding
    /// `WRITER`, whom to hand it to or wake.
    #[cold]
    pub(super) fn writer_left(&self, force_fair: bool) {
        let s = self.state.load(Ordering::Relaxed);
        let prefer_writers = s & PREFER_WRITERS != 0;
        let writers_first = s & WRITERS_PARKED != 0 && (prefer_writers || s & WRITER_FIRST != 0);
        if s & READERS_PARKED != 0
            && (!writers_first
                || (s & WRITER_FIRST == 0 && parking_lot::time_to_be_fair(self.key(Class::Reader))))
        {
            // The readers' turn: waking them also releases WRITER, and hands
            // them the lock if it is time to be fair (or forced; or when the
            // writers would otherwise be preferred: then the timer said so).
            let force = force_fair || writers_first;
            let woke = self.wake_readers(WRITER, force);
            self.unblock(woke == Wake::Handed);
            return;
        }
        if s & WRITERS_PARKED != 0 {
            match self.wake_writer(WRITER, force_fair) {
                Wake::Handed => {}
                Wake::Woke => self.unblock(true),
                Wake::Nobody => self.unblock(false),
            }
            return;
        }
        self.state.fetch_and(!WRITER, Ordering::Release);
        self.unblock(false);
    }

    /// Wakes the oldest parked writer, releasing `release` (our `WRITER`, or
    /// nothing) in the same step. Hands it the lock if it is time to be
    /// fair, `WRITER_FIRST` says a writer is owed it, or `force`.
    fn wake_writer(&self, release: u32, force: bool) -> Wake {
        let mut handed = false;
        // SAFETY: the callback edits this lock's word only.
        let r = unsafe {
            parking_lot::unpark_one(self.key(Class::Writer), |r| {
                self.update(|s| {
                    let mut n = s & !release;
                    if !r.may_have_more {
                        n &= !WRITERS_PARKED;
                    }
                    handed = false;
                    let owed = force || r.time_to_be_fair || s & WRITER_FIRST != 0;
                    if r.did_unpark && owed {
                        if let Some(held) = Class::Writer.enter(n) {
                            handed = true;
                            return held & !WRITER_FIRST;
                        }
                    }
                    if !r.did_unpark {
                        n &= !WRITER_FIRST;
                    }
                    n
                });
                token(handed)
            })
        };
        Wake::of(r.did_unpark, handed)
    }

    /// Wakes every parked reader, releasing `release` (our `WRITER`, or
    /// nothing) in the same step, and hands them all the read lock if it is
    /// time to be fair or `force`.
    fn wake_readers(&self, release: u32, force: bool) -> Wake {
        let mut handed = false;
        // SAFETY: the callback edits this lock's word only.
        let r = unsafe {
            parking_lot::unpark_many(self.key(Class::Reader), usize::MAX, |r: UnparkResult| {
                self.update(|s| {
                    let mut n = s & !release;
                    if !r.may_have_more {
                        n &= !READERS_PARKED;
                    }
                    handed = false;
                    let count = u32::try_from(r.unparked).unwrap_or(u32::MAX);
                    if r.did_unpark && (force || r.time_to_be_fair) && n & WRITER == 0 {
                        if let Some(held) = count
                            .checked_mul(ONE_READER)
                            .and_then(|add| n.checked_add(add))
                        {
                            handed = true;
                            return held;
                        }
                    }
                    n
                });
                token(handed)
            })
        };
        Wake::of(r.did_unpark, handed)
    }

    /// The word changed so that parked threads may be able to enter: wake
    /// them, the side the policy prefers first. `writer_woken`: a writer was
    /// just woken (or handed the lock), so do not wake another. Each round
    /// that wakes nobody clears a parked bit, so the loop ends.
    #[cold]
    pub(super) fn unblock(&self, writer_woken: bool) {
        self.unblock_with(writer_woken, false);
    }

    /// [`unblock`](Self::unblock); `force`: hand the lock over to whoever
    /// it wakes, whatever the fairness timer says (a fair release).
    fn unblock_with(&self, mut writer_woken: bool, force: bool) {
        loop {
            let mut s = self.state.load(Ordering::Relaxed);
            if s & WRITER_FIRST != 0 && s & WRITERS_PARKED == 0 {
                // Nobody left to be fair to.
                s = self.state.fetch_and(!WRITER_FIRST, Ordering::Relaxed) & !WRITER_FIRST;
            }
            let writer_may = s & WRITERS_PARKED != 0 && Class::Writer.enter(s).is_some();
            let reader_may = s & READERS_PARKED != 0 && Class::Reader.enter(s).is_some();
            if writer_may && !writer_woken && (!reader_may || s & PREFER_WRITERS != 0) {
                match self.wake_writer(0, force) {
                    Wake::Handed => return,
                    Wake::Woke => writer_woken = true,
                    Wake::Nobody => {}
                }
                continue;
            }
            if reader_may && self.wake_readers(0, force) == Wake::Nobody {
                continue;
            }
            if reader_may {
                s = self.state.load(Ordering::Relaxed);
            }
            if s & UPGRADABLE_PARKED != 0 && Class::Upgradable.enter(s).is_some() {
                // SAFETY: the callback edits this lock's word only.
                unsafe {
                    parking_lot::unpark_one(self.key(Class::Upgradable), |r| {
                        if !r.may_have_more {
                            self.state.fetch_and(!UPGRADABLE_PARKED, Ordering::Relaxed);
                        }
                        TOKEN_RETRY
                    });
                }
            }
            return;
        }
    }

    /// Applies `f` to the word atomically (a CAS loop; `f` may run more than
    /// once). AcqRel: it may release our hold, or hand one over.
    #[inline]
    fn update(&self, mut f: impl FnMut(u32) -> u32) {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            match self
                .state
                .compare_exchange_weak(s, f(s), Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
    }
}

/// A waiter of one class on a [`RawRwLock`], for the acquire skeleton: the
/// class says who may enter, which bit it parks under and where it queues.
pub(super) struct ClassWaiter<'a> {
    lock: &'a RawRwLock,
    class: Class,
}

// SAFETY: the callbacks only load or clear bits of the lock's word, and a
// lock outlives its waiters (the class's debt).
unsafe impl AcquireState for ClassWaiter<'_> {
    type Word = u32;
    type Round = ();
    // Woken to compete, or the bit was gone when we went to park: no new
    // spin budget. Spinning again would leave the bit clear for another
    // round of yields, and a waiter that keeps losing its bit that way is
    // one no hand-off reaches.
    const RESPIN_AFTER_WAKE: bool = false;

    #[inline]
    fn look(&self, _: ()) -> Look<u32> {
        let s = self.lock.state.load(Ordering::Relaxed);
        if let Some(new) = self.class.enter(s) {
            return match self.lock.state.compare_exchange_weak(
                s,
                new,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => Look::Acquired,
                Err(_) => Look::Raced,
            };
        }
        if s & self.class.parked() != 0 {
            return Look::Queue;
        }
        Look::Unmarked {
            word: s,
            may_spin: !self.class.stopped_by_readers(s),
        }
    }

    #[inline]
    fn mark_parked(&self, seen: u32) -> bool {
        let parked = seen | self.class.parked();
        self.lock
            .state
            .compare_exchange_weak(seen, parked, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    fn queue_key(&self, _: ()) -> usize {
        self.lock.key(self.class)
    }

    fn kind(&self) -> crate::diagnostics::Kind {
        self.class.kind()
    }

    // Holds are recorded under the lock's address. An upgrade waits for
    // readers, which are not recorded, while its thread holds the
    // upgradable read: under the lock's address it would find itself.
    fn resource(&self) -> usize {
        match self.class {
            Class::Upgrade => self.lock.key(Class::Upgrade),
            _ => self.lock as *const RawRwLock as usize,
        }
    }

    fn should_park(&self, _: ()) -> bool {
        self.lock.should_park(self.class)
    }

    fn left_queue(&self, _: (), was_last: bool) {
        self.lock.forget_parked_if_last(self.class, was_last);
    }

    fn debt(&self, _: ()) -> Owed {
        self.lock.owed(self.class)
    }

    fn woken(&self, _: (), token: UnparkToken, _: bool) -> Next<()> {
        if token == TOKEN_HANDOFF {
            // The waker made us the holder. Acquire: every earlier
            // holder's release is in the word's release sequence.
            self.lock.state.load(Ordering::Acquire);
            Next::Done(true)
        } else {
            Next::Again(())
        }
    }

    fn gave_up(&self, _: ()) {
        // Our bit may have been the one keeping others out.
        self.lock.unblock(false);
    }

    fn cancelled_after_wake(&self, round: (), token: UnparkToken) -> bool {
        match self.woken(round, token, false) {
            Next::Done(acquired) => acquired,
            // A wake to compete: use it (if the lock is held, its release
            // wakes the others), so that it is not lost to them.
            Next::Again(()) => self.lock.try_enter(self.class),
        }
    }
}

/// What waking one class did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Wake {
    /// Nobody was queued.
    Nobody,
    /// Woken to compete.
    Woke,
    /// Woken holding the lock.
    Handed,
}

impl Wake {
    fn of(did_unpark: bool, handed: bool) -> Wake {
        match (did_unpark, handed) {
            (_, true) => Wake::Handed,
            (true, false) => Wake::Woke,
            (false, false) => Wake::Nobody,
        }
    }
}

#[inline]
fn token(handed: bool) -> UnparkToken {
    if handed {
        TOKEN_HANDOFF
    } else {
        TOKEN_RETRY
    }
}
