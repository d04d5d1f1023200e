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

/// lock_api's methods that forward to ours of the same name, the guard
/// carrying no state: `take` (lock, try, unlock: one way to hold the lock),
/// `timed` (try for a `Duration`, until an `Instant`), `unlock` (release),
/// `change` (turn one hold into another).
macro_rules! forward {
    (take $lock:ident, $try:ident, $unlock:ident) => {
        #[inline]
        fn $lock(&self) -> GuardSend {
            RawRwLock::$lock(self);
            g()
        }

        #[inline]
        fn $try(&self) -> Option<GuardSend> {
            RawRwLock::$try(self).then(g)
        }

        forward!(unlock $unlock);
    };
    (timed $for:ident, $until:ident) => {
        #[inline]
        fn $for(&self, timeout: Duration) -> Option<GuardSend> {
            RawRwLock::$for(self, timeout).then(g)
        }

        #[inline]
        fn $until(&self, deadline: Instant) -> Option<GuardSend> {
            RawRwLock::$until(self, deadline).then(g)
        }
    };
    (unlock $($unlock:ident),*) => {$(
        #[inline]
        unsafe fn $unlock(&self, _guard: GuardSend) {
            // SAFETY: forwarded from the caller.
            unsafe { RawRwLock::$unlock(self) }
        }
    )*};
    (change $($change:ident),*) => {$(
        unsafe fn $change(&self, _guard: GuardSend) -> GuardSend {
            // SAFETY: forwarded from the caller.
            unsafe { RawRwLock::$change(self) };
            g()
        }
    )*};
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

    forward!(take lock_shared, try_lock_shared, unlock_shared);
    forward!(take lock_exclusive, try_lock_exclusive, unlock_exclusive);

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
    forward!(unlock unlock_shared_fair, unlock_exclusive_fair);

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
    forward!(change downgrade);
}

// SAFETY: as for RawRwLock; a `None` result leaves the word as it was.
unsafe impl lock_api::RawRwLockTimed for RawRwLock {
    type Duration = Duration;
    type Instant = Instant;

    forward!(timed try_lock_shared_for, try_lock_shared_until);
    forward!(timed try_lock_exclusive_for, try_lock_exclusive_until);
}

// SAFETY: an upgradable read excludes other upgradable reads and writers
// (UPGRADABLE), and an upgrade returns only once READERS is just us, with
// an Acquire CAS after the other readers' Release exits.
unsafe impl lock_api::RawRwLockUpgrade for RawRwLock {
    type UpgradableGuard = GuardSend;

    forward!(take lock_upgradable, try_lock_upgradable, unlock_upgradable);
    forward!(change upgrade);

    unsafe fn try_upgrade(&self, guard: GuardSend) -> Result<GuardSend, GuardSend> {
        // SAFETY: forwarded from the caller.
        or_keep(unsafe { RawRwLock::try_upgrade(self) }, guard)
    }
}

// SAFETY: as for RawRwLockUpgrade and RawRwLockDowngrade.
unsafe impl lock_api::RawRwLockUpgradeDowngrade for RawRwLock {
    forward!(change downgrade_upgradable, downgrade_to_upgradable);
}

// SAFETY: as for RawRwLockUpgrade and RawRwLockTimed.
unsafe impl lock_api::RawRwLockUpgradeTimed for RawRwLock {
    forward!(timed try_lock_upgradable_for, try_lock_upgradable_until);

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
