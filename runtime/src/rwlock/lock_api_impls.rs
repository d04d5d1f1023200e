//! lock_api's traits, which give [`RwLock`] its guards.

use super::*;
use lock_api::GuardSend;

/// The guard state of a stateless acquisition.
#[inline]
fn g() -> GuardSend {
    GuardSend::new()
}

/// `Ok` with a fresh guard if `done`, else `Err` with the one we had.
#[inline]
fn or_keep(done: bool, kept: GuardSend) -> Result<GuardSend, GuardSend> {
    if done {
        Ok(g())
    } else {
        Err(kept)
    }
}

// SAFETY: a shared lock is returned only once READERS counts us and no
// WRITER is set; an exclusive one only once WRITER is ours and READERS is
// 0; only holders release, and every acquisition is Acquire, every
// release Release. Guards carry no state, so any thread may unlock.
unsafe impl lock_api::RawRwLock for RawRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawRwLock = RawRwLock::new();
    type SharedGuard = GuardSend;
    type ExclusiveGuard = GuardSend;

    #[inline]
    fn lock_shared(&self) -> GuardSend {
        RawRwLock::lock_shared(self);
        g()
    }

    #[inline]
    fn try_lock_shared(&self) -> Option<GuardSend> {
        RawRwLock::try_lock_shared(self).then(g)
    }

    #[inline]
    unsafe fn unlock_shared(&self, _guard: GuardSend) {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_shared(self) }
    }

    #[inline]
    fn lock_exclusive(&self) -> GuardSend {
        RawRwLock::lock_exclusive(self);
        g()
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<GuardSend> {
        RawRwLock::try_lock_exclusive(self).then(g)
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _guard: GuardSend) {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_exclusive(self) }
    }

    fn is_locked(&self) -> bool {
        RawRwLock::is_locked(self)
    }

    fn is_locked_exclusive(&self) -> bool {
        RawRwLock::is_locked_exclusive(self)
    }
}

// SAFETY: as for RawRwLock; the fair unlocks release the same
// acquisitions, only handing them over instead of letting others barge.
unsafe impl lock_api::RawRwLockFair for RawRwLock {
    unsafe fn unlock_shared_fair(&self, _guard: GuardSend) {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_shared_fair(self) }
    }

    unsafe fn unlock_exclusive_fair(&self, _guard: GuardSend) {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_exclusive_fair(self) }
    }

    /// Re-takes the read recursively: the thread may hold other reads of
    /// this lock (`read_recursive`), and a plain read would then wait
    /// behind the writer it just yielded to, forever.
    unsafe fn bump_shared(&self, _guard: &mut GuardSend) {
        if !self.has_parked() {
            return; // nobody to yield to
        }
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_shared_fair(self) };
        // The caller's guard speaks for a read again only once it is back.
        let unwinding = AbortOnUnwind;
        RawRwLock::lock_shared_recursive(self);
        core::mem::forget(unwinding);
    }
}

/// Aborts if dropped: held across a re-acquisition that must not unwind,
/// since a guard would then speak for a hold given up (as lock_api's own
/// `bump` does).
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

// SAFETY: as for RawRwLock; a downgrade keeps a read for the writer.
unsafe impl lock_api::RawRwLockDowngrade for RawRwLock {
    unsafe fn downgrade(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade(self) };
        g()
    }
}

// SAFETY: as for RawRwLock; a `None` result leaves the word as it was.
unsafe impl lock_api::RawRwLockTimed for RawRwLock {
    type Duration = Duration;
    type Instant = Instant;

    fn try_lock_shared_for(&self, timeout: Duration) -> Option<GuardSend> {
        RawRwLock::try_lock_shared_for(self, timeout).then(g)
    }

    fn try_lock_shared_until(&self, deadline: Instant) -> Option<GuardSend> {
        RawRwLock::try_lock_shared_until(self, deadline).then(g)
    }

    fn try_lock_exclusive_for(&self, timeout: Duration) -> Option<GuardSend> {
        RawRwLock::try_lock_exclusive_for(self, timeout).then(g)
    }

    fn try_lock_exclusive_until(&self, deadline: Instant) -> Option<GuardSend> {
        RawRwLock::try_lock_exclusive_until(self, deadline).then(g)
    }
}

// SAFETY: an upgradable read excludes other upgradable reads and writers
// (UPGRADABLE), and an upgrade returns only once READERS is just us, with
// an Acquire CAS after the other readers' Release exits.
unsafe impl lock_api::RawRwLockUpgrade for RawRwLock {
    type UpgradableGuard = GuardSend;

    #[inline]
    fn lock_upgradable(&self) -> GuardSend {
        RawRwLock::lock_upgradable(self);
        g()
    }

    #[inline]
    fn try_lock_upgradable(&self) -> Option<GuardSend> {
        RawRwLock::try_lock_upgradable(self).then(g)
    }

    #[inline]
    unsafe fn unlock_upgradable(&self, _guard: GuardSend) {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::unlock_upgradable(self) }
    }

    unsafe fn upgrade(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::upgrade(self) };
        g()
    }

    unsafe fn try_upgrade(&self, guard: GuardSend) -> Result<GuardSend, GuardSend> {
        // SAFETY: forwarded from the caller.
        or_keep(unsafe { RawRwLock::try_upgrade(self) }, guard)
    }
}

// SAFETY: as for RawRwLockUpgrade and RawRwLockDowngrade.
unsafe impl lock_api::RawRwLockUpgradeDowngrade for RawRwLock {
    unsafe fn downgrade_upgradable(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade_upgradable(self) };
        g()
    }

    unsafe fn downgrade_to_upgradable(&self, _guard: GuardSend) -> GuardSend {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade_to_upgradable(self) };
        g()
    }
}

// SAFETY: as for RawRwLockUpgrade and RawRwLockTimed.
unsafe impl lock_api::RawRwLockUpgradeTimed for RawRwLock {
    fn try_lock_upgradable_for(&self, timeout: Duration) -> Option<GuardSend> {
        RawRwLock::try_lock_upgradable_for(self, timeout).then(g)
    }

    fn try_lock_upgradable_until(&self, deadline: Instant) -> Option<GuardSend> {
        RawRwLock::try_lock_upgradable_until(self, deadline).then(g)
    }

    unsafe fn try_upgrade_for(
        &self,
        guard: GuardSend,
        timeout: Duration,
    ) -> Result<GuardSend, GuardSend> {
        // SAFETY: forwarded from the caller.
        or_keep(unsafe { RawRwLock::try_upgrade_for(self, timeout) }, guard)
    }

    unsafe fn try_upgrade_until(
        &self,
        guard: GuardSend,
        deadline: Instant,
    ) -> Result<GuardSend, GuardSend> {
        // SAFETY: forwarded from the caller.
        or_keep(
            unsafe { RawRwLock::try_upgrade_until(self, deadline) },
            guard,
        )
    }
}
