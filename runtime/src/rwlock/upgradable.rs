//! What callers that cannot prove what they hold (C, JS) need of the
//! upgradable read, on top of [`RawRwLock`]'s own algorithm: checked
//! releases and upgrades, the asynchronous upgradable read and upgrade for
//! threads that may not block, and the release of an upgradable read whose
//! holder is gone (a reaped worker).
//!
//! The state word is the parent's (see `rwlock.rs`); nothing here adds a
//! bit. An upgrade that waits has `WRITER` and `UPGRADABLE` both set, a
//! state no other hold can produce, which is how a release for a gone
//! holder tells a pending upgrade from a plain upgradable read.

use super::{readers, Class, RawRwLock, READERS_MASK, UPGRADABLE, UPGRADE_PARKED, WRITER};
use crate::parking_lot::AsyncWaiter;
use crate::sync::Ordering;

/// Who holds a [`RawRwLock`], from one load of its word (a snapshot that is
/// consistent with itself, unlike several separate queries).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RwLockHolders {
    /// How many hold a read, the upgradable reader included.
    pub readers: u32,
    /// A writer holds it, or an upgrade waits for the other readers to leave.
    pub exclusive: bool,
    /// An upgradable read is held (also while its upgrade waits).
    pub upgradable: bool,
}

impl RawRwLock {
    /// Who holds the lock now (a snapshot).
    #[inline]
    pub fn holders(&self) -> RwLockHolders {
        let s = self.state.load(Ordering::Relaxed);
        RwLockHolders {
            readers: readers(s),
            exclusive: s & WRITER != 0,
            upgradable: s & UPGRADABLE != 0,
        }
    }

    /// Whether an upgradable read is held (a snapshot; also while its
    /// upgrade waits for the other readers to leave).
    #[inline]
    pub fn is_locked_upgradable(&self) -> bool {
        self.state.load(Ordering::Relaxed) & UPGRADABLE != 0
    }

    /// Whether a writer holds the lock (a snapshot; unlike
    /// [`is_locked_exclusive`](Self::is_locked_exclusive), not while an
    /// upgrade still waits for the readers to leave).
    #[inline]
    pub fn is_write_held(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (WRITER | UPGRADABLE) == WRITER
    }

    /// Whether a plain (not upgradable) read is held (a snapshot, from one
    /// load of the word: an upgradable reader entering or leaving meanwhile
    /// cannot make a held read look absent).
    #[inline]
    pub fn is_read_held(&self) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        readers(s) > u32::from(s & UPGRADABLE != 0)
    }

    /// Whether an upgradable read is held with no upgrade pending (a snapshot).
    #[inline]
    pub fn is_upgradable_held(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (WRITER | UPGRADABLE) == UPGRADABLE
    }

    /// Like [`unlock_upgradable`](Self::unlock_upgradable), but a lock with
    /// no upgradable read (or one whose upgrade is waiting) is reported and
    /// left untouched, for callers that cannot prove they hold it.
    pub fn checked_unlock_upgradable(&self) -> Result<(), crate::NotLocked> {
        // SAFETY: if held, an upgradable read is held, and the caller speaks for it.
        unsafe { self.release_if(self.is_upgradable_held(), Self::unlock_upgradable) }
    }

    async_acquires! {
        Class::Upgradable;
        /// Asynchronous upgradable read, step 1: takes it if the word lets one
        /// in, else queues `waiter` with the parked upgradable readers and
        /// returns `false`. Steps 2 and 3 as for
        /// [`lock_shared_async_resume`](Self::lock_shared_async_resume) and
        /// [`lock_shared_async_cancel`](Self::lock_shared_async_cancel), with
        /// the `upgradable` functions below.
        ///
        /// # Safety
        /// As for [`lock_shared_async_begin`](Self::lock_shared_async_begin).
        lock_upgradable_async_begin,
        /// Step 2: `true` if the upgradable read is ours, `false` if queued again.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_upgradable_async_begin` on this lock.
        lock_upgradable_async_resume,
        /// Gives up: `true` if the upgradable read was ours after all (the
        /// caller must release it), `false` if nothing is held.
        ///
        /// # Safety
        /// `waiter` is the one queued by `lock_upgradable_async_begin` on this
        /// lock and the attempt has not ended.
        lock_upgradable_async_cancel,
    }

    /// Asynchronous upgrade, step 1: upgrades now if no other reader holds
    /// the lock; else blocks new readers (as [`upgrade`](Self::upgrade)
    /// does), queues `waiter` and returns `false`.
    ///
    /// # Safety
    /// An upgradable read is held by the caller, with no upgrade pending;
    /// `waiter` as for [`lock_shared_async_begin`](Self::lock_shared_async_begin).
    pub unsafe fn upgrade_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        if self.try_enter(Class::Upgrade) {
            return self.took(Class::Upgrade, true);
        }
        // We hold UPGRADABLE, so no writer holds WRITER.
        self.state.fetch_or(WRITER, Ordering::Acquire);
        // SAFETY: forwarded from the caller.
        self.took(Class::Upgrade, unsafe {
            self.async_begin(Class::Upgrade, waiter)
        })
    }

    /// Step 2: `true` if upgraded, `false` if queued again.
    ///
    /// # Safety
    /// `waiter` is the one queued by `upgrade_async_begin` on this lock.
    pub unsafe fn upgrade_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        self.took(Class::Upgrade, unsafe {
            self.async_resume(Class::Upgrade, waiter)
        })
    }

    /// Gives up an asynchronous upgrade: `true` if it upgraded after all
    /// (the caller holds the write lock), `false` if the caller still holds
    /// just its upgradable read (and new readers may enter again).
    ///
    /// # Safety
    /// `waiter` is the one queued by `upgrade_async_begin` on this lock and
    /// the attempt has not ended.
    pub unsafe fn upgrade_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        if unsafe { self.async_cancel(Class::Upgrade, waiter) } {
            return self.took(Class::Upgrade, true);
        }
        self.withdraw_upgrade();
        false
    }

    /// Releases, for a holder that is gone, its upgradable read, with the
    /// upgrade it was waiting for if any (its wait must have left the queue
    /// already: the reaper abandons the thread's records first).
    ///
    /// # Safety
    /// The upgradable read is held by a thread that will never run again.
    pub unsafe fn unlock_upgradable_of_gone_holder(&self) {
        if self.state.load(Ordering::Relaxed) & WRITER != 0 {
            self.withdraw_upgrade();
        }
        // SAFETY: the upgradable read is held (caller's contract), on behalf
        // of a holder that will never release it.
        unsafe { self.unlock_upgradable() };
    }

    /// A pending upgrade gives up: new readers may enter again.
    fn withdraw_upgrade(&self) {
        debug_assert!(self.state.load(Ordering::Relaxed) & READERS_MASK != 0);
        self.state
            .fetch_and(!(WRITER | UPGRADE_PARKED), Ordering::Release);
        self.unblock(false);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Polls `waiter` until its wait ends (woken), at most a few seconds.
    fn woken(waiter: &AsyncWaiter) -> bool {
        for _ in 0..5000 {
            if waiter.poll().is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        false
    }

    /// Checks a checked release of the last hold of `l`: it released, and
    /// left the lock free with nobody parked.
    fn released_last(l: &RawRwLock, released: Result<(), crate::NotLocked>) {
        assert!(released.is_ok());
        assert!(!l.is_locked() && !l.has_parked());
    }

    /// Runs `test` on a new lock `l` with an upgradable read and a plain
    /// read, and an async upgrade queued with a new `w`, which waits for the
    /// plain read to leave; `test` ends the attempt.
    fn with_pending_upgrade(test: impl FnOnce(&RawRwLock, &AsyncWaiter)) {
        let l = RawRwLock::new();
        let w = AsyncWaiter::new();
        l.lock_upgradable();
        l.lock_shared();
        // SAFETY: we hold the upgradable read; `w` is new, and stays put
        // until `test` ends its attempt.
        assert!(!unsafe { l.upgrade_async_begin(&w) });
        assert!(l.is_locked_exclusive(), "a pending upgrade blocks readers");
        test(&l, &w);
    }

    /// A read stays visibly held while upgradable readers come and go: the
    /// check reads the word once (two loads, of the count and then of the
    /// upgradable bit, can see our read counted beside a bit that was not
    /// there yet, and call it the upgradable reader's).
    #[test]
    fn a_held_read_is_seen_while_upgradable_readers_come_and_go() {
        use std::sync::atomic::{AtomicBool, AtomicU32};
        let l = RawRwLock::with_policy(super::super::RwLockPolicy::PreferReaders);
        let (done, churns) = (AtomicBool::new(false), AtomicU32::new(0));
        l.lock_shared();
        let mut misses = 0;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    l.lock_upgradable();
                    // SAFETY: taken just above.
                    unsafe { l.unlock_upgradable() };
                    churns.fetch_add(1, Ordering::Relaxed);
                }
            });
            let start = std::time::Instant::now();
            let enough = if cfg!(miri) { 20 } else { 100_000 };
            while churns.load(Ordering::Relaxed) < enough
                && start.elapsed() < std::time::Duration::from_secs(5)
            {
                misses += u32::from(!l.is_read_held());
            }
            done.store(true, Ordering::Relaxed);
        });
        assert_eq!(misses, 0, "our read looked absent");
        assert!(l.checked_unlock_shared().is_ok());
        assert!(!l.is_read_held());
    }

    #[test]
    fn checked_unlock_upgradable_refuses_what_is_not_held() {
        let l = RawRwLock::new();
        assert!(l.checked_unlock_upgradable().is_err());
        l.lock_shared();
        assert!(
            l.checked_unlock_upgradable().is_err(),
            "a plain read is not upgradable"
        );
        assert_eq!(l.reader_count(), 1);
        l.lock_upgradable();
        assert!(l.is_locked_upgradable());
        let both = RwLockHolders {
            readers: 2,
            exclusive: false,
            upgradable: true,
        };
        assert_eq!(l.holders(), both);
        assert!(l.checked_unlock_upgradable().is_ok());
        assert!(!l.is_locked_upgradable());
        assert!(l.checked_unlock_shared().is_ok());
        assert!(!l.is_locked());
    }

    #[test]
    fn async_upgradable_read_waits_for_the_other_upgradable_read() {
        let l = RawRwLock::new();
        l.lock_upgradable();
        let w = AsyncWaiter::new();
        // SAFETY: `w` is new and outlives the attempt, which ends below.
        unsafe {
            assert!(!l.lock_upgradable_async_begin(&w));
            assert!(l.try_lock_shared(), "plain readers still enter");
            l.unlock_shared();
            l.unlock_upgradable();
            assert!(woken(&w));
            assert!(l.lock_upgradable_async_resume(&w));
        }
        assert!(l.is_locked_upgradable());
        released_last(&l, l.checked_unlock_upgradable());
    }

    #[test]
    fn async_upgrade_waits_for_readers_and_its_cancel_lets_readers_in() {
        with_pending_upgrade(|l, w| {
            // SAFETY: `w` outlives each attempt, each ended below; the
            // upgradable read is held throughout.
            unsafe {
                assert!(!l.try_lock_shared(), "new readers stay out");
                assert!(!l.upgrade_async_cancel(w));
                assert!(
                    l.try_lock_shared(),
                    "a withdrawn upgrade lets them in again"
                );
                l.unlock_shared();

                assert!(!l.upgrade_async_begin(w));
                l.unlock_shared();
                assert!(woken(w));
                assert!(l.upgrade_async_resume(w));
            }
            assert!(l.is_write_held() && !l.is_locked_upgradable());
            assert_eq!(l.reader_count(), 0);
            released_last(l, l.checked_unlock_exclusive());
        });
    }

    #[test]
    fn a_gone_holders_pending_upgrade_is_released_with_its_read() {
        with_pending_upgrade(|l, w| {
            // SAFETY: we play the upgradable read's gone holder: its record is
            // abandoned (as a reaper does) before the release, and not used again.
            unsafe {
                crate::parking_lot::abandon_async(w);
                assert!(l.is_locked_exclusive(), "the upgrade still blocks readers");
                l.unlock_upgradable_of_gone_holder();
            }
            assert!(!l.is_locked_exclusive() && !l.is_locked_upgradable());
            assert_eq!(l.reader_count(), 1, "the other reader still reads");
            assert!(l.try_lock_shared());
            assert!(l.checked_unlock_shared().is_ok());
            released_last(l, l.checked_unlock_shared());
            assert!(l.try_lock_exclusive());
        });
    }
}
