//! `RawRwLock`: a reader-writer lock in one 32-bit word (seeds 003/004:
//! optimistic spinning, lock stealing, and a hand-off after a time threshold
//! so that neither readers nor writers starve, in a reader-preferring and a
//! writer-preferring mode).
//!
//! State word:
//!
//! | bits  | name                | meaning                                                      |
//! |-------|---------------------|--------------------------------------------------------------|
//! | 0     | `WRITER`            | held exclusively, or an upgrade waits for the readers to leave (then `UPGRADABLE` too) |
//! | 1     | `UPGRADABLE`        | an upgradable read is held (its holder is counted in `READERS`) |
//! | 2     | `READERS_PARKED`    | readers may be parked under the word's address               |
//! | 3     | `WRITERS_PARKED`    | writers may be parked under address + 1                       |
//! | 4     | `UPGRADE_PARKED`    | the upgrading holder may be parked under address + 2          |
//! | 5     | `UPGRADABLE_PARKED` | would-be upgradable readers may be parked under address + 3   |
//! | 6     | `WRITER_FIRST`      | a parked writer is owed the lock: no new readers; the next writer woken is handed it |
//! | 7     | `PREFER_WRITERS`    | the policy, fixed at construction                              |
//! | 8..32 | `READERS`           | how many hold a read (shared or upgradable)                  |
//!
//! Who may enter (the CAS that takes the lock, on the fast path and after
//! every wakeup; anyone enters whenever the word lets them, parked or not,
//! which is barging):
//! - a reader: no `WRITER`, no `WRITER_FIRST`, and under `PREFER_WRITERS` no
//!   `WRITERS_PARKED`; adds one to `READERS`;
//! - an upgradable reader: as a reader, and no `UPGRADABLE`;
//! - a recursive reader (`rwlock/recursive.rs`): as a reader, or whenever a
//!   read is held (with `WRITER` set, one besides the upgrader's);
//! - a writer: no `WRITER` and no `READERS`; sets `WRITER`;
//! - an upgrade: `READERS` is 1 (only the upgrader); drops its read and
//!   `UPGRADABLE` and sets `WRITER`. An upgrade that must wait sets `WRITER`
//!   first, so that no new reader enters meanwhile.
//!
//! A thread that may not enter spins (yields) up to the Lock's spin limit
//! while its class's parked bit is clear (once per acquisition: a wakeup
//! does not renew it; and not at all for a writer that readers keep out,
//! since new readers keep entering until its bit is set), then sets the
//! bit by CAS and parks
//! under its class's address if, under the queue lock, the bit is still set
//! and it still may not enter. Whoever changes the word so that a class may
//! enter and sees its parked bit wakes that class (`unblock`); the waker
//! clears the bit under the queue lock when no waiter of that class remains.
//!
//! Fairness, with the same per-bucket timer as [`crate::Lock`] (about once a
//! millisecond, [`parking_lot::time_to_be_fair`](crate::parking_lot::time_to_be_fair)
//! and [`parking_lot::UnparkResult::time_to_be_fair`](crate::parking_lot::UnparkResult::time_to_be_fair)):
//! - a writer that unlocks with readers parked hands the read lock to the
//!   whole batch of them (adds their count and keeps `WRITER` until then) when
//!   the timer says so: under `PREFER_WRITERS` this is what lets readers in
//!   while writers keep coming; otherwise readers are woken to compete;
//! - whoever wakes a writer that may enter hands it the lock (keeps or sets
//!   `WRITER`) when the timer says so or `WRITER_FIRST` is set;
//! - under the reader preference, a reader that leaves while others still
//!   read and writers are parked sets `WRITER_FIRST` when the writers'
//!   timer says so: new readers stop, the rest drain, and the last one hands
//!   the lock to a writer. Without this a stream of overlapping readers would
//!   keep a writer out forever.
//!
//! An unpark token of [`TOKEN_HANDOFF`] means the waker made the woken thread
//! the holder of what it asked for; [`TOKEN_RETRY`] means "try again".
//! Upgradable readers are only ever woken to retry. A waiter whose owner is
//! reaped (a terminated worker) gives back what it was handed and passes on
//! a wake (`ABANDON`). Holders are not tracked here: an embedder that knows
//! what a gone thread held releases it with the checked unlocks (the wasm
//! module keeps each worker's holds and does so when it reaps the worker).

use crate::clock::{deadline_after, Instant};
use crate::macros::cfg_items;
use crate::parking_lot::UnparkToken;
use crate::sync::{AtomicU32, Ordering};
use core::time::Duration;

/// The four ways to take one class of hold (a [`Class`]), each with its doc:
/// `lock` (spins briefly, then parks), `try` (now or not), `for` a
/// `Duration`, `until` an `Instant`.
macro_rules! acquires {
    (
        $class:expr;
        $(#[$lock_doc:meta])* $lock:ident,
        $(#[$try_doc:meta])* $try:ident,
        $(#[$for_doc:meta])* $for:ident,
        $(#[$until_doc:meta])* $until:ident,
        $(#[$refusable_doc:meta])* $refusable:ident,
    ) => {
        $(#[$lock_doc])*
        #[inline]
        pub fn $lock(&self) {
            // The slow path gives up without a deadline only when deadlock
            // detection refuses the wait.
            if !self.try_enter_once($class) && !self.lock_slow($class, None) {
                $crate::deadlock::refused();
            }
            self.took($class, true);
        }

        $(#[$try_doc])*
        #[inline]
        pub fn $try(&self) -> bool {
            self.took($class, self.try_enter($class))
        }

        $(#[$for_doc])*
        pub fn $for(&self, timeout: core::time::Duration) -> bool {
            let taken = self.try_enter($class)
                || self.lock_slow($class, $crate::clock::deadline_after(timeout));
            self.took($class, taken)
        }

        $(#[$until_doc])*
        pub fn $until(&self, deadline: impl Into<$crate::clock::Instant>) -> bool {
            let taken = self.try_enter($class) || self.lock_slow($class, Some(deadline.into()));
            self.took($class, taken)
        }

        $(#[$refusable_doc])*
        pub fn $refusable(&self) -> Result<(), $crate::deadlock::DeadlockError> {
            if !self.try_enter_once($class) && !self.lock_slow($class, None) {
                return Err($crate::deadlock::take_deadlock().expect("refused by detection"));
            }
            self.took($class, true);
            Ok(())
        }
    };
}

/// The three asynchronous steps of one class of hold, for threads that may
/// not block (`asynchronous.rs`), each with its doc: `begin` (take it now or
/// queue the waiter), `resume` (after the waiter's word turned 0), `cancel`
/// (give up). Each is `unsafe`, with the contract its doc states.
macro_rules! async_acquires {
    (
        $class:expr;
        $(#[$begin_doc:meta])* $begin:ident,
        $(#[$resume_doc:meta])* $resume:ident,
        $(#[$cancel_doc:meta])* $cancel:ident,
    ) => {
        $(#[$begin_doc])*
        pub unsafe fn $begin(&self, waiter: &AsyncWaiter) -> bool {
            // SAFETY: forwarded from the caller.
            self.took($class, unsafe { self.async_begin($class, waiter) })
        }

        $(#[$resume_doc])*
        pub unsafe fn $resume(&self, waiter: &AsyncWaiter) -> bool {
            // SAFETY: forwarded from the caller.
            self.took($class, unsafe { self.async_resume($class, waiter) })
        }

        $(#[$cancel_doc])*
        pub unsafe fn $cancel(&self, waiter: &AsyncWaiter) -> bool {
            // SAFETY: forwarded from the caller.
            self.took($class, unsafe { self.async_cancel($class, waiter) })
        }
    };
}

mod algorithm;
mod asynchronous;
mod class;
#[cfg(not(loom))]
mod lock_api_impls;
// Reads that enter whenever a read is held (parking_lot's read_recursive).
mod recursive;
#[cfg(all(test, not(loom)))]
mod tests;
// Checked and asynchronous upgradable reads, for C and JS.
mod upgradable;

use class::{readers, Class};
#[cfg(not(loom))]
pub use recursive::ReadRecursive;
pub use upgradable::RwLockHolders;

const WRITER: u32 = 1;
const UPGRADABLE: u32 = 1 << 1;
const READERS_PARKED: u32 = 1 << 2;
const WRITERS_PARKED: u32 = 1 << 3;
const UPGRADE_PARKED: u32 = 1 << 4;
const UPGRADABLE_PARKED: u32 = 1 << 5;
const WRITER_FIRST: u32 = 1 << 6;
const PREFER_WRITERS: u32 = 1 << 7;
const ONE_READER: u32 = 1 << 8;
const READERS_MASK: u32 = !(ONE_READER - 1);

/// Unpark token: you now hold what you asked for.
const TOKEN_HANDOFF: UnparkToken = 1;
/// Unpark token: compete for the lock again.
const TOKEN_RETRY: UnparkToken = 0;

/// Which side a [`RawRwLock`] lets in first when both wait. Either way,
/// neither side starves: about once a millisecond the other side is handed
/// the lock directly.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum RwLockPolicy {
    /// New readers wait while a writer is parked (like parking_lot's RwLock).
    /// A thread that already reads must not read again recursively: a parked
    /// writer would make the second read wait forever (use
    /// [`RawRwLock::lock_shared_recursive`] or [`ReadRecursive`] for that).
    #[default]
    PreferWriters,
    /// Readers enter whenever no writer holds the lock (like glibc's default
    /// `pthread_rwlock_t`), except when a starving writer is owed the lock.
    PreferReaders,
}

/// A reader-writer lock in one 32-bit word: readers share it, writers
/// exclude everyone; barging with a short adaptive spin, then parking;
/// upgradable reads; eventual fairness by direct hand-off (see the module
/// docs for the state word). For data guarded by it, use [`RwLock`].
///
/// ```
/// let l = parklot::RawRwLock::new();
/// l.lock_shared();
/// assert!(l.try_lock_shared() && !l.try_lock_exclusive());
/// // SAFETY: two reads are held, taken just above.
/// unsafe { l.unlock_shared(); l.unlock_shared() };
/// l.lock_exclusive();
/// assert!(!l.try_lock_shared());
/// // SAFETY: the write lock is held, taken just above.
/// unsafe { l.unlock_exclusive() };
/// ```
#[repr(transparent)] // four bytes: C and the wasm module rely on it
pub struct RawRwLock {
    state: AtomicU32,
}

impl RawRwLock {
    /// An unlocked lock that prefers writers ([`RwLockPolicy::PreferWriters`]).
    #[cfg(not(loom))]
    pub const fn new() -> RawRwLock {
        RawRwLock::with_policy(RwLockPolicy::PreferWriters)
    }

    /// An unlocked lock with the given policy.
    #[cfg(not(loom))]
    pub const fn with_policy(policy: RwLockPolicy) -> RawRwLock {
        RawRwLock {
            state: AtomicU32::new(policy_bits(policy)),
        }
    }

    /// An unlocked lock that prefers writers ([`RwLockPolicy::PreferWriters`]).
    #[cfg(loom)]
    pub fn new() -> RawRwLock {
        RawRwLock::with_policy(RwLockPolicy::PreferWriters)
    }

    /// An unlocked lock with the given policy.
    #[cfg(loom)]
    pub fn with_policy(policy: RwLockPolicy) -> RawRwLock {
        RawRwLock {
            state: AtomicU32::new(policy_bits(policy)),
        }
    }

    /// The policy chosen at construction.
    pub fn policy(&self) -> RwLockPolicy {
        if self.state.load(Ordering::Relaxed) & PREFER_WRITERS != 0 {
            RwLockPolicy::PreferWriters
        } else {
            RwLockPolicy::PreferReaders
        }
    }

    // ----- shared -----

    acquires! {
        Class::Reader;
        /// Takes a shared (read) lock, spinning briefly and then parking.
        ///
        /// On a thread that may not block ([`crate::set_thread_may_block`]) it
        /// waits awake, in the same queue, instead of parking.
        lock_shared,
        /// Takes a shared lock if the word lets a reader in now.
        try_lock_shared,
        /// Takes a shared lock, waiting at most `timeout`. Returns whether it did.
        try_lock_shared_for,
        /// Takes a shared lock, waiting until `deadline` at the latest.
        try_lock_shared_until,
        /// Takes a read like [`lock_shared`](Self::lock_shared), or, with deadlock
        /// detection on ([`crate::deadlock`]), returns the cycle waiting would
        /// close, taking nothing.
        lock_shared_or_deadlock,
    }

    /// Releases a shared lock.
    ///
    /// # Safety
    /// This thread (or one it handed the read to) holds a shared lock.
    #[inline]
    pub unsafe fn unlock_shared(&self) {
        let s = self.state.fetch_sub(ONE_READER, Ordering::Release) - ONE_READER;
        if s & (WRITERS_PARKED | UPGRADE_PARKED) != 0 {
            self.reader_left(s);
        }
    }

    /// Releases a shared lock; if it was the last read and threads wait,
    /// hands the lock to them (no barging).
    ///
    /// # Safety
    /// As for [`unlock_shared`](Self::unlock_shared).
    pub unsafe fn unlock_shared_fair(&self) {
        let s = self.state.fetch_sub(ONE_READER, Ordering::Release) - ONE_READER;
        if s & (WRITERS_PARKED | UPGRADE_PARKED | READERS_PARKED) != 0 {
            self.reader_left_with(s, true);
        }
    }

    /// Like [`unlock_shared`](Self::unlock_shared), but a lock nobody reads
    /// (plainly: an upgradable read alone does not count) is reported and
    /// left untouched, for callers that cannot prove they hold it (C, JS).
    pub fn checked_unlock_shared(&self) -> Result<(), crate::NotLocked> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let plain_readers = readers(s) - u32::from(s & UPGRADABLE != 0);
            if plain_readers == 0 {
                return Err(crate::NotLocked);
            }
            match self.state.compare_exchange_weak(
                s,
                s - ONE_READER,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        let s = s - ONE_READER;
        if s & (WRITERS_PARKED | UPGRADE_PARKED) != 0 {
            self.reader_left(s);
        }
        Ok(())
    }

    /// Like [`unlock_exclusive`](Self::unlock_exclusive), but a lock no
    /// writer holds is reported and left untouched.
    pub fn checked_unlock_exclusive(&self) -> Result<(), crate::NotLocked> {
        let s = self.state.load(Ordering::Relaxed);
        // An upgrade still waiting for readers holds WRITER but not the lock.
        let held = s & WRITER != 0 && s & UPGRADABLE == 0;
        // SAFETY: if `held`, a writer holds the lock, and the caller speaks for it.
        unsafe { self.release_if(held, Self::unlock_exclusive) }
    }

    /// Runs `unlock` if `held`; else reports [`NotLocked`](crate::NotLocked)
    /// and changes nothing.
    ///
    /// # Safety
    /// If `held`, the caller may release the hold `unlock` releases.
    unsafe fn release_if(
        &self,
        held: bool,
        unlock: unsafe fn(&Self),
    ) -> Result<(), crate::NotLocked> {
        if !held {
            return Err(crate::NotLocked);
        }
        // SAFETY: the hold is there and the caller may release it (our contract).
        unsafe { unlock(self) };
        Ok(())
    }

    // ----- exclusive -----

    acquires! {
        Class::Writer;
        /// Takes the exclusive (write) lock, spinning briefly and then parking.
        ///
        /// # Panics
        /// As for [`lock_shared`](Self::lock_shared).
        lock_exclusive,
        /// Takes the exclusive lock if it is free now.
        try_lock_exclusive,
        /// Takes the exclusive lock, waiting at most `timeout`.
        try_lock_exclusive_for,
        /// Takes the exclusive lock, waiting until `deadline` at the latest.
        try_lock_exclusive_until,
        /// Takes the write lock like [`lock_exclusive`](Self::lock_exclusive), or, with deadlock
        /// detection on ([`crate::deadlock`]), returns the cycle waiting would
        /// close, taking nothing.
        lock_exclusive_or_deadlock,
    }

    /// Releases the exclusive lock. Parked threads are woken to compete,
    /// unless it is time to be fair, when they are handed the lock.
    ///
    /// # Safety
    /// The exclusive lock is held (by this thread or one that handed it over).
    #[inline]
    pub unsafe fn unlock_exclusive(&self) {
        self.let_go();
        let s = self.state.load(Ordering::Relaxed);
        if s & !PREFER_WRITERS != WRITER
            || self
                .state
                .compare_exchange_weak(s, s & !WRITER, Ordering::Release, Ordering::Relaxed)
                .is_err()
        {
            self.writer_left(false);
        }
    }

    /// Releases the exclusive lock and hands it directly to parked threads,
    /// if any (the side the policy prefers).
    ///
    /// # Safety
    /// As for [`unlock_exclusive`](Self::unlock_exclusive).
    pub unsafe fn unlock_exclusive_fair(&self) {
        self.let_go();
        self.writer_left(true);
    }

    // ----- upgradable -----

    acquires! {
        Class::Upgradable;
        /// Takes an upgradable read: shares with readers, excludes writers and
        /// other upgradable readers, and may later [`upgrade`](Self::upgrade).
        lock_upgradable,
        /// Takes an upgradable read if the word lets one in now.
        try_lock_upgradable,
        /// Takes an upgradable read, waiting at most `timeout`.
        try_lock_upgradable_for,
        /// Takes an upgradable read, waiting until `deadline` at the latest.
        try_lock_upgradable_until,
        /// Takes an upgradable read like [`lock_upgradable`](Self::lock_upgradable), or, with deadlock
        /// detection on ([`crate::deadlock`]), returns the cycle waiting would
        /// close, taking nothing.
        lock_upgradable_or_deadlock,
    }

    /// Releases an upgradable read.
    ///
    /// # Safety
    /// An upgradable read is held.
    #[inline]
    pub unsafe fn unlock_upgradable(&self) {
        self.let_go();
        let s = self
            .state
            .fetch_sub(ONE_READER + UPGRADABLE, Ordering::Release)
            - (ONE_READER + UPGRADABLE);
        if s & (WRITERS_PARKED | UPGRADABLE_PARKED) != 0 {
            self.reader_left(s);
        }
    }

    /// Turns an upgradable read into the exclusive lock, waiting for the
    /// other readers to leave (new readers wait meanwhile).
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn upgrade(&self) {
        if !self.try_enter(Class::Upgrade) {
            self.upgrade_slow(None);
        }
        self.took(Class::Upgrade, true);
    }

    /// Upgrades if no other reader holds the lock now.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade(&self) -> bool {
        self.took(Class::Upgrade, self.try_enter(Class::Upgrade))
    }

    /// Upgrades, waiting at most `timeout`; on `false` the upgradable read
    /// is still held.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade_for(&self, timeout: Duration) -> bool {
        let taken = self.try_enter(Class::Upgrade) || self.upgrade_slow(deadline_after(timeout));
        self.took(Class::Upgrade, taken)
    }

    /// Upgrades, waiting until `deadline` at the latest; on `false` the
    /// upgradable read is still held.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade_until(&self, deadline: impl Into<Instant>) -> bool {
        let taken = self.try_enter(Class::Upgrade) || self.upgrade_slow(Some(deadline.into()));
        self.took(Class::Upgrade, taken)
    }

    // ----- downgrades -----

    /// Turns the exclusive lock into a shared one, letting waiting readers in.
    ///
    /// # Safety
    /// The exclusive lock is held.
    pub unsafe fn downgrade(&self) {
        self.let_go();
        let s = self
            .state
            .fetch_add(ONE_READER - WRITER, Ordering::Release)
            .wrapping_add(ONE_READER - WRITER);
        if s & (READERS_PARKED | UPGRADABLE_PARKED) != 0 {
            self.unblock(false);
        }
    }

    /// Turns the exclusive lock into an upgradable read.
    ///
    /// # Safety
    /// The exclusive lock is held.
    pub unsafe fn downgrade_to_upgradable(&self) {
        self.took(Class::Upgradable, true);
        let delta = ONE_READER + UPGRADABLE - WRITER;
        let s = self
            .state
            .fetch_add(delta, Ordering::Release)
            .wrapping_add(delta);
        if s & READERS_PARKED != 0 {
            self.unblock(false);
        }
    }

    /// Turns an upgradable read into a plain shared one.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn downgrade_upgradable(&self) {
        self.let_go();
        let s = self.state.fetch_sub(UPGRADABLE, Ordering::Release) - UPGRADABLE;
        if s & UPGRADABLE_PARKED != 0 {
            self.unblock(false);
        }
    }

    // ----- diagnostics -----

    /// Reports a hold of `class` to the diagnostics if `taken` and the
    /// class has one owner; returns `taken`. One relaxed load when they are
    /// off (`class` is a constant at every call, so reads fold away).
    #[inline(always)]
    fn took(&self, class: Class, taken: bool) -> bool {
        if taken && class.has_owner() {
            let kind = match class {
                Class::Upgradable => crate::diagnostics::Kind::RwLockUpgradable,
                _ => crate::diagnostics::Kind::RwLockWrite,
            };
            crate::diagnostics::acquired(self as *const RawRwLock as usize, kind);
        }
        taken
    }

    /// Reports that this thread's owned hold (write or upgradable) ends.
    #[inline(always)]
    fn let_go(&self) {
        crate::diagnostics::released(self as *const RawRwLock as usize);
    }

    // ----- snapshots -----

    /// Whether anyone holds the lock, in any mode (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (WRITER | READERS_MASK) != 0
    }

    /// Whether a writer holds the lock (a snapshot; also while an upgrade
    /// waits for readers to leave).
    #[inline]
    pub fn is_locked_exclusive(&self) -> bool {
        self.state.load(Ordering::Relaxed) & WRITER != 0
    }

    /// Whether threads may be parked waiting for the lock, or a marker of
    /// fairness is set (a snapshot; all clear when nobody waits for long).
    pub fn has_parked(&self) -> bool {
        let waiting = READERS_PARKED | WRITERS_PARKED | UPGRADE_PARKED | UPGRADABLE_PARKED;
        self.state.load(Ordering::Relaxed) & (waiting | WRITER_FIRST) != 0
    }

    /// How many hold a read, upgradable included (a snapshot).
    pub fn reader_count(&self) -> u32 {
        readers(self.state.load(Ordering::Relaxed))
    }
}

const fn policy_bits(policy: RwLockPolicy) -> u32 {
    match policy {
        RwLockPolicy::PreferWriters => PREFER_WRITERS,
        RwLockPolicy::PreferReaders => 0,
    }
}

impl Default for RawRwLock {
    fn default() -> Self {
        RawRwLock::new()
    }
}

impl core::fmt::Debug for RawRwLock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        f.debug_struct("RawRwLock")
            .field("policy", &self.policy())
            .field("writer", &(s & WRITER != 0))
            .field("upgradable", &(s & UPGRADABLE != 0))
            .field("readers", &readers(s))
            .finish()
    }
}

cfg_items! {
    #[cfg(not(loom))]

    /// Data guarded by a [`RawRwLock`] (writer-preferring; for the other policy,
    /// `RwLock::from_raw(RawRwLock::with_policy(RwLockPolicy::PreferReaders), data)`).
    ///
    /// ```
    /// let config = parklot::RwLock::new(vec![1, 2]);
    /// assert_eq!(config.read().len(), 2);
    /// config.write().push(3);
    /// let up = config.upgradable_read();
    /// let mut w = parklot::RwLockUpgradableReadGuard::upgrade(up);
    /// w.push(4);
    /// assert_eq!(*parklot::RwLockWriteGuard::downgrade(w), [1, 2, 3, 4]);
    /// ```
    pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
    /// Proof of a shared hold on an [`RwLock`]; releases it when dropped.
    pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;
    /// Proof of the exclusive hold on an [`RwLock`]; releases it when dropped.
    pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;
    /// Proof of an upgradable read of an [`RwLock`]; releases it when dropped.
    pub type RwLockUpgradableReadGuard<'a, T> = lock_api::RwLockUpgradableReadGuard<'a, RawRwLock, T>;
}
