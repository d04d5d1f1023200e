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
//! millisecond, [`parking_lot::time_to_be_fair`] and
//! [`parking_lot::UnparkResult::time_to_be_fair`]):
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

use crate::blocking::{refuse_to_block, thread_may_block};
use crate::clock::{deadline_after, Instant};
use crate::lock::spin_limit;
use crate::parking_lot::{self, Abandon, AsyncWaiter, Owed, ParkResult, UnparkResult, UnparkToken};
use crate::sync::{self, AtomicU32, Ordering};
use core::time::Duration;

// Checked and asynchronous upgradable reads, for C and JS.
mod upgradable;
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
    /// writer would make the second read wait forever.
    #[default]
    PreferWriters,
    /// Readers enter whenever no writer holds the lock (like glibc's default
    /// `pthread_rwlock_t`), except when a starving writer is owed the lock.
    PreferReaders,
}

/// The kinds of waiter, each with its own parked bit and queue address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Class {
    Reader,
    Writer,
    /// The upgradable holder waiting for the other readers to leave.
    Upgrade,
    Upgradable,
}

impl Class {
    /// Its parked bit.
    #[inline]
    fn parked(self) -> u32 {
        match self {
            Class::Reader => READERS_PARKED,
            Class::Writer => WRITERS_PARKED,
            Class::Upgrade => UPGRADE_PARKED,
            Class::Upgradable => UPGRADABLE_PARKED,
        }
    }

    /// Its queue's offset from the word's address (the word is four bytes,
    /// so each class has an address of its own that no other object uses).
    #[inline]
    fn key_offset(self) -> usize {
        match self {
            Class::Reader => 0,
            Class::Writer => 1,
            Class::Upgrade => 2,
            Class::Upgradable => 3,
        }
    }

    /// The word after this class enters, if the word `s` lets it.
    #[inline]
    fn enter(self, s: u32) -> Option<u32> {
        match self {
            Class::Reader | Class::Upgradable => {
                let writer_waits = s & PREFER_WRITERS != 0 && s & WRITERS_PARKED != 0;
                if s & (WRITER | WRITER_FIRST) != 0 || writer_waits {
                    return None;
                }
                if self == Class::Upgradable {
                    if s & UPGRADABLE != 0 {
                        return None;
                    }
                    return add_reader(s).map(|s| s | UPGRADABLE);
                }
                add_reader(s)
            }
            Class::Writer => (s & (WRITER | READERS_MASK) == 0).then_some(s | WRITER),
            // Only the upgrader sets UPGRADE_PARKED, so once in it is stale.
            Class::Upgrade => (readers(s) == 1)
                .then(|| ((s - ONE_READER - UPGRADABLE) | WRITER) & !UPGRADE_PARKED),
        }
    }
}

impl Class {
    /// Whether this is a writer that readers keep out. Spinning cannot help
    /// it: new readers keep entering while its parked bit is clear (under
    /// either policy), so the gap it waits for may never come, and until the
    /// bit is set no hand-off can be owed to it. Under the writer preference
    /// the bit also stops new readers at once.
    #[inline]
    fn stopped_by_readers(self, s: u32) -> bool {
        self == Class::Writer && s & WRITER == 0
    }

    /// The class a const parameter names (for the `Abandon` tables).
    const fn of(code: u8) -> Class {
        match code {
            0 => Class::Reader,
            1 => Class::Writer,
            2 => Class::Upgrade,
            _ => Class::Upgradable,
        }
    }

    /// What a waiter of this class owes the others if its owner is reaped.
    fn abandon(self) -> &'static Abandon {
        match self {
            Class::Reader => &ABANDON[0],
            Class::Writer => &ABANDON[1],
            Class::Upgrade => &ABANDON[2],
            Class::Upgradable => &ABANDON[3],
        }
    }
}

/// What a waiter owes the others if its owner is reaped while queued or
/// before it acted on its wakeup (see [`parking_lot::Abandon`]): as the last
/// one queued, its class's parked bit, and then a look at whether that lets
/// others in (a writer's `WRITER_FIRST` may be keeping readers out); a hand-off it never took, the lock
/// (released, which wakes whoever is next); a wake to compete, that wake
/// (the lock is taken and released if free, which passes it on).
static ABANDON: [Abandon; 4] = [
    Abandon {
        dequeued: abandon_dequeued::<0>,
        settle: abandon_settle,
        claimed: abandon_claimed::<0>,
    },
    Abandon {
        dequeued: abandon_dequeued::<1>,
        settle: abandon_settle,
        claimed: abandon_claimed::<1>,
    },
    Abandon {
        dequeued: abandon_dequeued::<2>,
        settle: abandon_settle,
        claimed: abandon_claimed::<2>,
    },
    Abandon {
        dequeued: abandon_dequeued::<3>,
        settle: abandon_settle,
        claimed: abandon_claimed::<3>,
    },
];

/// The lock a reaped waiter was queued on.
fn owed_rwlock<'a>(object: *const ()) -> &'a RawRwLock {
    // SAFETY: `RawRwLock::owed` is the only maker of these debts, and a lock
    // outlives its waiters (park_owing's contract).
    unsafe { &*object.cast::<RawRwLock>() }
}

fn abandon_dequeued<const CLASS: u8>(object: *const (), was_last: bool) {
    owed_rwlock(object).forget_parked_if_last(Class::of(CLASS), was_last);
}

/// As a waiter that timed out does: its parked bit (or a `WRITER_FIRST`
/// owed to it) may have been what kept others out.
fn abandon_settle(object: *const ()) {
    owed_rwlock(object).unblock(false);
}

fn abandon_claimed<const CLASS: u8>(object: *const (), token: UnparkToken) {
    owed_rwlock(object).pass_on(Class::of(CLASS), token);
}

#[inline]
fn readers(s: u32) -> u32 {
    s >> ONE_READER.trailing_zeros()
}

/// `s` with one more reader; `None` (treated as "may not enter") at the
/// 2^24 - 1 readers the word can count.
#[inline]
fn add_reader(s: u32) -> Option<u32> {
    s.checked_add(ONE_READER)
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

    /// Takes a shared (read) lock, spinning briefly and then parking.
    ///
    /// # Panics
    /// If it would park and this thread may not block
    /// ([`crate::set_thread_may_block`]).
    #[inline]
    pub fn lock_shared(&self) {
        if !self.try_enter_once(Class::Reader) {
            self.lock_slow(Class::Reader, None);
        }
    }

    /// Takes a shared lock if the word lets a reader in now.
    #[inline]
    pub fn try_lock_shared(&self) -> bool {
        self.try_enter(Class::Reader)
    }

    /// Takes a shared lock, waiting at most `timeout`. Returns whether it did.
    pub fn try_lock_shared_for(&self, timeout: Duration) -> bool {
        self.try_enter(Class::Reader) || self.lock_slow(Class::Reader, deadline_after(timeout))
    }

    /// Takes a shared lock, waiting until `deadline` at the latest.
    pub fn try_lock_shared_until(&self, deadline: impl Into<Instant>) -> bool {
        self.try_enter(Class::Reader) || self.lock_slow(Class::Reader, Some(deadline.into()))
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
        if s & WRITER == 0 || s & UPGRADABLE != 0 {
            return Err(crate::NotLocked);
        }
        // SAFETY: a writer holds the lock, and the caller speaks for it.
        unsafe { self.unlock_exclusive() };
        Ok(())
    }

    // ----- exclusive -----

    /// Takes the exclusive (write) lock, spinning briefly and then parking.
    ///
    /// # Panics
    /// As for [`lock_shared`](Self::lock_shared).
    #[inline]
    pub fn lock_exclusive(&self) {
        if !self.try_enter_once(Class::Writer) {
            self.lock_slow(Class::Writer, None);
        }
    }

    /// Takes the exclusive lock if it is free now.
    #[inline]
    pub fn try_lock_exclusive(&self) -> bool {
        self.try_enter(Class::Writer)
    }

    /// Takes the exclusive lock, waiting at most `timeout`.
    pub fn try_lock_exclusive_for(&self, timeout: Duration) -> bool {
        self.try_enter(Class::Writer) || self.lock_slow(Class::Writer, deadline_after(timeout))
    }

    /// Takes the exclusive lock, waiting until `deadline` at the latest.
    pub fn try_lock_exclusive_until(&self, deadline: impl Into<Instant>) -> bool {
        self.try_enter(Class::Writer) || self.lock_slow(Class::Writer, Some(deadline.into()))
    }

    /// Releases the exclusive lock. Parked threads are woken to compete,
    /// unless it is time to be fair, when they are handed the lock.
    ///
    /// # Safety
    /// The exclusive lock is held (by this thread or one that handed it over).
    #[inline]
    pub unsafe fn unlock_exclusive(&self) {
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
        self.writer_left(true);
    }

    // ----- upgradable -----

    /// Takes an upgradable read: shares with readers, excludes writers and
    /// other upgradable readers, and may later [`upgrade`](Self::upgrade).
    #[inline]
    pub fn lock_upgradable(&self) {
        if !self.try_enter_once(Class::Upgradable) {
            self.lock_slow(Class::Upgradable, None);
        }
    }

    /// Takes an upgradable read if the word lets one in now.
    #[inline]
    pub fn try_lock_upgradable(&self) -> bool {
        self.try_enter(Class::Upgradable)
    }

    /// Takes an upgradable read, waiting at most `timeout`.
    pub fn try_lock_upgradable_for(&self, timeout: Duration) -> bool {
        self.try_enter(Class::Upgradable)
            || self.lock_slow(Class::Upgradable, deadline_after(timeout))
    }

    /// Takes an upgradable read, waiting until `deadline` at the latest.
    pub fn try_lock_upgradable_until(&self, deadline: impl Into<Instant>) -> bool {
        self.try_enter(Class::Upgradable)
            || self.lock_slow(Class::Upgradable, Some(deadline.into()))
    }

    /// Releases an upgradable read.
    ///
    /// # Safety
    /// An upgradable read is held.
    #[inline]
    pub unsafe fn unlock_upgradable(&self) {
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
    }

    /// Upgrades if no other reader holds the lock now.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade(&self) -> bool {
        self.try_enter(Class::Upgrade)
    }

    /// Upgrades, waiting at most `timeout`; on `false` the upgradable read
    /// is still held.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade_for(&self, timeout: Duration) -> bool {
        self.try_enter(Class::Upgrade) || self.upgrade_slow(deadline_after(timeout))
    }

    /// Upgrades, waiting until `deadline` at the latest; on `false` the
    /// upgradable read is still held.
    ///
    /// # Safety
    /// An upgradable read is held.
    pub unsafe fn try_upgrade_until(&self, deadline: impl Into<Instant>) -> bool {
        self.try_enter(Class::Upgrade) || self.upgrade_slow(Some(deadline.into()))
    }

    // ----- downgrades -----

    /// Turns the exclusive lock into a shared one, letting waiting readers in.
    ///
    /// # Safety
    /// The exclusive lock is held.
    pub unsafe fn downgrade(&self) {
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
        let s = self.state.fetch_sub(UPGRADABLE, Ordering::Release) - UPGRADABLE;
        if s & UPGRADABLE_PARKED != 0 {
            self.unblock(false);
        }
    }

    // ----- asynchronous -----

    /// Asynchronous read, for threads that may not block, step 1: takes a
    /// read if the word lets a reader in, else queues `waiter` in the same
    /// queue as parked readers and returns `false`. Never blocks.
    ///
    /// When the waiter's word turns 0 (see [`AsyncWaiter`]), call
    /// [`lock_shared_async_resume`](Self::lock_shared_async_resume); to give
    /// up, [`lock_shared_async_cancel`](Self::lock_shared_async_cancel).
    ///
    /// # Safety
    /// `waiter` is not queued, and neither moves nor is dropped until this
    /// attempt ends (acquired, or cancelled).
    pub unsafe fn lock_shared_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_begin(Class::Reader, waiter) }
    }

    /// Step 2, after the waiter's word turned 0: `true` if the read is ours,
    /// `false` if the waiter is queued again.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_shared_async_begin` on this lock.
    pub unsafe fn lock_shared_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_resume(Class::Reader, waiter) }
    }

    /// Gives up an asynchronous read: `true` if the read was ours after all
    /// (the caller must release it), `false` if nothing is held.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_shared_async_begin` on this lock
    /// and the attempt has not ended.
    pub unsafe fn lock_shared_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_cancel(Class::Reader, waiter) }
    }

    /// [`lock_shared_async_begin`](Self::lock_shared_async_begin) for the write lock.
    ///
    /// # Safety
    /// As for `lock_shared_async_begin`.
    pub unsafe fn lock_exclusive_async_begin(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_begin(Class::Writer, waiter) }
    }

    /// [`lock_shared_async_resume`](Self::lock_shared_async_resume) for the write lock.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_exclusive_async_begin` on this lock.
    pub unsafe fn lock_exclusive_async_resume(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_resume(Class::Writer, waiter) }
    }

    /// [`lock_shared_async_cancel`](Self::lock_shared_async_cancel) for the write lock.
    ///
    /// # Safety
    /// `waiter` is the one queued by `lock_exclusive_async_begin` on this
    /// lock and the attempt has not ended.
    pub unsafe fn lock_exclusive_async_cancel(&self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.async_cancel(Class::Writer, waiter) }
    }

    /// The acquisition loop with the record queued instead of the thread
    /// parked, and no spinning (a thread that may not block must not wait).
    ///
    /// # Safety
    /// As for `lock_shared_async_begin`.
    unsafe fn async_begin(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        self.acquire_loop(class, 0, || {
            // SAFETY: the validate callback is one load; `waiter` per our contract.
            let queued = unsafe {
                parking_lot::park_async_owing(
                    self.key(class),
                    || self.should_park(class),
                    waiter,
                    self.owed(class),
                )
            };
            queued.then_some(false)
        })
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock.
    unsafe fn async_resume(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        match waiter.poll() {
            Some(TOKEN_HANDOFF) => {
                // As in lock_slow: the holders before us released into the word.
                self.state.load(Ordering::Acquire);
                true
            }
            // Woken to compete again: try once more, queueing again if need be.
            // SAFETY: the record is settled, so it may be queued again.
            Some(_) => unsafe { self.async_begin(class, waiter) },
            None => false,
        }
    }

    /// # Safety
    /// `waiter` was queued by `async_begin(class, ..)` on this lock and the
    /// attempt has not ended.
    unsafe fn async_cancel(&self, class: Class, waiter: &AsyncWaiter) -> bool {
        // SAFETY: the callback only edits this lock's word.
        let result = unsafe {
            parking_lot::cancel_async(self.key(class), waiter, |_, was_last| {
                self.forget_parked_if_last(class, was_last)
            })
        };
        match result {
            ParkResult::Unparked(TOKEN_HANDOFF) => {
                self.state.load(Ordering::Acquire);
                true
            }
            // A wake to compete: use it (if the lock is held, its release wakes
            // the others), so that it is not lost to them.
            ParkResult::Unparked(_) => self.try_enter(class),
            ParkResult::Invalid | ParkResult::TimedOut => {
                // Our bit may have been the one keeping others out.
                self.unblock(false);
                false
            }
        }
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

    // ----- the algorithm -----

    #[inline]
    fn key(&self, class: Class) -> usize {
        self as *const RawRwLock as usize + class.key_offset()
    }

    /// What a waiter of `class` on this lock owes if it is reaped.
    fn owed(&self, class: Class) -> Owed {
        Owed {
            abandon: class.abandon(),
            object: (self as *const RawRwLock).cast(),
            with: 0,
        }
    }

    /// For a reaped waiter that was woken before its owner could act: gives
    /// back a hand-off, or uses a wake to compete by taking and releasing
    /// the lock if it is free (which wakes the next), so nothing is lost.
    fn pass_on(&self, class: Class, token: UnparkToken) {
        if token != TOKEN_HANDOFF && (class == Class::Upgrade || !self.try_enter(class)) {
            // Held by someone else, whose release wakes the next; an upgrade
            // waiter's lock is held by its dead owner anyway.
            return;
        }
        // SAFETY: we hold what `class` takes (handed over, or just entered),
        // on behalf of the gone owner, who will never release it.
        unsafe {
            match class {
                Class::Reader => self.unlock_shared(),
                Class::Writer => self.unlock_exclusive(),
                Class::Upgradable => self.unlock_upgradable(),
                Class::Upgrade => {}
            }
        }
    }

    /// One attempt to enter: the fast path (a load and a CAS).
    #[inline]
    fn try_enter_once(&self, class: Class) -> bool {
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
    fn try_enter(&self, class: Class) -> bool {
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

    /// The acquisition loop every class shares: enter whenever the word lets
    /// us; while our class's parked bit is clear, yield and retry up to the
    /// spin limit; then set the bit and call `wait`, which queues us and
    /// returns `Some(acquired)` to finish or `None` to go around.
    #[inline]
    fn acquire_loop(
        &self,
        class: Class,
        limit: u32,
        mut wait: impl FnMut() -> Option<bool>,
    ) -> bool {
        let parked = class.parked();
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if let Some(new) = class.enter(s) {
                if self
                    .state
                    .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            if s & parked == 0 {
                if spins < limit && !class.stopped_by_readers(s) {
                    spins += 1;
                    sync::yield_now();
                    continue;
                }
                if self
                    .state
                    .compare_exchange_weak(s, s | parked, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
            }
            if let Some(acquired) = wait() {
                return acquired;
            }
            // Woken to compete, or the bit was gone when we went to park:
            // no new spin budget (as in WebKit's lock). Spinning again would
            // leave the bit clear for another round of yields, and a waiter
            // that keeps losing its bit that way is one no hand-off reaches.
        }
    }

    /// Whether a waiter of `class` should sleep: its bit is set and it still
    /// may not enter (checked under its queue's lock).
    #[inline]
    fn should_park(&self, class: Class) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & class.parked() != 0 && class.enter(s).is_none()
    }

    /// A waiter of `class` gave up as the last one queued: clear its bit.
    #[inline]
    fn forget_parked_if_last(&self, class: Class, was_last: bool) {
        if was_last {
            self.state.fetch_and(!class.parked(), Ordering::Relaxed);
        }
    }

    /// Spins, then parks until `class` is in or `deadline` passes.
    #[cold]
    fn lock_slow(&self, class: Class, deadline: Option<Instant>) -> bool {
        let acquired = self.acquire_loop(class, spin_limit(), || {
            if !thread_may_block() {
                refuse_to_block("RwLock: taking a held lock");
            }
            // SAFETY: the callbacks only read or edit this lock's word: no
            // panics, no ParkingLot calls.
            let result = unsafe {
                parking_lot::park_owing(
                    self.key(class),
                    || self.should_park(class),
                    || {},
                    |_, was_last| self.forget_parked_if_last(class, was_last),
                    deadline,
                    self.owed(class),
                )
            };
            match result {
                ParkResult::Unparked(TOKEN_HANDOFF) => {
                    // The waker made us the holder. Acquire: every earlier
                    // holder's release is in the word's release sequence.
                    self.state.load(Ordering::Acquire);
                    Some(true)
                }
                ParkResult::Unparked(_) | ParkResult::Invalid => None,
                ParkResult::TimedOut => Some(false),
            }
        });
        if !acquired {
            // Our bit may have been the one keeping others out.
            self.unblock(false);
        }
        acquired
    }

    /// Blocks new readers, then waits for the other readers to leave.
    #[cold]
    fn upgrade_slow(&self, deadline: Option<Instant>) -> bool {
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
    fn reader_left(&self, s: u32) {
        self.reader_left_with(s, false);
    }

    /// [`reader_left`](Self::reader_left); `force`: a fair release.
    fn reader_left_with(&self, s: u32, force: bool) {
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
    fn writer_left(&self, force_fair: bool) {
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
    fn unblock(&self, writer_woken: bool) {
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

const fn policy_bits(policy: RwLockPolicy) -> u32 {
    match policy {
        RwLockPolicy::PreferWriters => PREFER_WRITERS,
        RwLockPolicy::PreferReaders => 0,
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

#[cfg(not(loom))]
mod lock_api_impls {
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
}

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
#[cfg(not(loom))]
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
/// Proof of a shared hold on an [`RwLock`]; releases it when dropped.
#[cfg(not(loom))]
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;
/// Proof of the exclusive hold on an [`RwLock`]; releases it when dropped.
#[cfg(not(loom))]
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;
/// Proof of an upgradable read of an [`RwLock`]; releases it when dropped.
#[cfg(not(loom))]
pub type RwLockUpgradableReadGuard<'a, T> = lock_api::RwLockUpgradableReadGuard<'a, RawRwLock, T>;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::sync::Arc;

    const BOTH: [RwLockPolicy; 2] = [RwLockPolicy::PreferWriters, RwLockPolicy::PreferReaders];

    fn state(l: &RawRwLock) -> u32 {
        l.state.load(Ordering::Relaxed)
    }

    /// A reader that leaves while others read and writers are parked may
    /// set `WRITER_FIRST` when the writers' fairness timer fires. If the
    /// word it decided on is stale (the writers, or the other readers, left
    /// in between), nobody else would act on the bit, and new readers would
    /// wait for a writer that is not there (a deadlock seen in the wasm
    /// benchmark). Here the stale word is handed in directly.
    #[test]
    fn writer_first_on_a_stale_word_is_not_left_behind() {
        let l = RawRwLock::with_policy(RwLockPolicy::PreferReaders);
        l.lock_shared();
        let stale = state(&l) | WRITERS_PARKED | ONE_READER; // one more reader, a parked writer
                                                             // The writers' timer fires a random 0-1 ms after it last did: by now it is due.
        std::thread::sleep(std::time::Duration::from_micros(1500));
        l.reader_left_with(stale, false);
        assert_eq!(
            state(&l) & WRITER_FIRST,
            0,
            "WRITER_FIRST left set with no writer parked"
        );
        assert!(
            l.try_lock_shared(),
            "a new reader is kept out of a read-held lock"
        );
        // SAFETY: two reads are held, taken above.
        unsafe {
            l.unlock_shared();
            l.unlock_shared()
        };
    }

    /// Waits until `n` threads are queued under `class`'s address.
    fn wait_queued(l: &RawRwLock, class: Class, n: usize) {
        while parking_lot::parked_count(l.key(class)) != n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn is_four_bytes() {
        assert_eq!(core::mem::size_of::<RawRwLock>(), 4);
        assert_eq!(core::mem::size_of::<RwLock<()>>(), 4);
    }

    #[test]
    fn readers_share_writers_exclude() {
        for policy in BOTH {
            let l = RawRwLock::with_policy(policy);
            assert_eq!(l.policy(), policy);
            assert!(l.try_lock_shared() && l.try_lock_shared());
            assert_eq!(l.reader_count(), 2);
            assert!(!l.try_lock_exclusive());
            unsafe { l.unlock_shared() };
            unsafe { l.unlock_shared() };
            assert!(l.try_lock_exclusive());
            assert!(!l.try_lock_shared() && !l.try_lock_upgradable() && !l.try_lock_exclusive());
            unsafe { l.unlock_exclusive() };
            assert_eq!(state(&l), policy_bits(policy));
        }
    }

    #[test]
    fn upgradable_excludes_upgradable_and_writers_but_not_readers() {
        let l = RawRwLock::new();
        assert!(l.try_lock_upgradable());
        assert!(!l.try_lock_upgradable() && !l.try_lock_exclusive());
        assert!(l.try_lock_shared());
        assert!(!unsafe { l.try_upgrade() }, "a reader is still in");
        unsafe { l.unlock_shared() };
        assert!(unsafe { l.try_upgrade() });
        assert!(l.is_locked_exclusive() && l.reader_count() == 0);
        unsafe { l.downgrade_to_upgradable() };
        assert!(l.try_lock_shared());
        unsafe { l.downgrade_upgradable() };
        assert!(l.try_lock_upgradable(), "the upgradable slot is free again");
        unsafe {
            l.unlock_upgradable();
            l.unlock_shared();
            l.unlock_shared();
        }
        l.lock_exclusive();
        unsafe { l.downgrade() };
        assert_eq!(l.reader_count(), 1);
        unsafe { l.unlock_shared() };
        assert_eq!(state(&l), PREFER_WRITERS);
    }

    #[test]
    fn timeouts_give_up_and_leave_no_parked_bit() {
        for policy in BOTH {
            let l = RawRwLock::with_policy(policy);
            l.lock_exclusive();
            let start = Instant::now();
            assert!(!l.try_lock_shared_for(Duration::from_millis(10)));
            assert!(!l.try_lock_exclusive_for(Duration::from_millis(10)));
            assert!(!l.try_lock_upgradable_for(Duration::from_millis(10)));
            assert!(Instant::now() - start >= Duration::from_millis(30));
            unsafe { l.unlock_exclusive() };
            assert_eq!(state(&l), policy_bits(policy), "{policy:?}");
            l.lock_shared();
            assert!(!l.try_lock_exclusive_until(Instant::now() + Duration::from_millis(5)));
            unsafe { l.unlock_shared() };
            assert_eq!(state(&l), policy_bits(policy), "{policy:?}");
        }
    }

    #[test]
    fn a_timed_out_upgrade_keeps_the_upgradable_read_and_lets_readers_in() {
        let l = Arc::new(RawRwLock::new());
        l.lock_upgradable();
        l.lock_shared(); // another reader, that stays
        assert!(!unsafe { l.try_upgrade_for(Duration::from_millis(10)) });
        assert!(!l.is_locked_exclusive());
        assert!(l.try_lock_shared(), "readers enter again");
        unsafe {
            l.unlock_shared();
            l.unlock_shared();
            l.upgrade();
            l.unlock_exclusive();
        }
        assert_eq!(state(&l), PREFER_WRITERS);
    }

    #[test]
    fn an_upgrade_waits_for_the_readers_and_blocks_new_ones() {
        let l = Arc::new(RawRwLock::new());
        l.lock_shared();
        let l2 = l.clone();
        let upgraded = Arc::new(AtomicBool::new(false));
        let u2 = upgraded.clone();
        let t = std::thread::spawn(move || {
            l2.lock_upgradable();
            unsafe { l2.upgrade() };
            u2.store(true, Ordering::SeqCst);
            unsafe { l2.unlock_exclusive() };
        });
        while !l.is_locked_exclusive() {
            std::thread::yield_now();
        }
        assert!(
            !l.try_lock_shared(),
            "an upgrade in progress stops new readers"
        );
        assert!(!upgraded.load(Ordering::SeqCst));
        unsafe { l.unlock_shared() };
        t.join().unwrap();
        assert!(upgraded.load(Ordering::SeqCst));
        assert_eq!(state(&l), PREFER_WRITERS);
    }

    #[test]
    fn a_writers_unlock_wakes_every_parked_reader() {
        for policy in BOTH {
            let l = Arc::new(RawRwLock::with_policy(policy));
            l.lock_exclusive();
            let inside = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    let (l, inside) = (l.clone(), inside.clone());
                    std::thread::spawn(move || {
                        l.lock_shared();
                        inside.fetch_add(1, Ordering::SeqCst);
                        // Stay until all three are in: they must share.
                        while inside.load(Ordering::SeqCst) < 3 {
                            std::thread::yield_now();
                        }
                        unsafe { l.unlock_shared() };
                    })
                })
                .collect();
            wait_queued(&l, Class::Reader, 3);
            unsafe { l.unlock_exclusive() };
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(state(&l), policy_bits(policy), "{policy:?}");
        }
    }

    #[test]
    fn writer_preference_stops_new_readers_reader_preference_does_not() {
        for policy in BOTH {
            let l = Arc::new(RawRwLock::with_policy(policy));
            l.lock_shared();
            let l2 = l.clone();
            let w = std::thread::spawn(move || {
                l2.lock_exclusive();
                unsafe { l2.unlock_exclusive() };
            });
            wait_queued(&l, Class::Writer, 1);
            let reader_enters = l.try_lock_shared();
            assert_eq!(reader_enters, policy == RwLockPolicy::PreferReaders);
            if reader_enters {
                unsafe { l.unlock_shared() };
            }
            unsafe { l.unlock_shared() };
            w.join().unwrap();
            assert_eq!(state(&l), policy_bits(policy), "{policy:?}");
        }
    }

    #[test]
    fn a_fair_unlock_hands_the_lock_to_a_parked_writer() {
        let l = Arc::new(RawRwLock::new());
        l.lock_exclusive();
        let l2 = l.clone();
        let release = Arc::new(AtomicBool::new(false));
        let r2 = release.clone();
        let w = std::thread::spawn(move || {
            l2.lock_exclusive();
            while !r2.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            unsafe { l2.unlock_exclusive() };
        });
        wait_queued(&l, Class::Writer, 1);
        unsafe { l.unlock_exclusive_fair() };
        assert!(
            !l.try_lock_exclusive() && !l.try_lock_shared(),
            "handed over"
        );
        release.store(true, Ordering::SeqCst);
        w.join().unwrap();
        assert_eq!(state(&l), PREFER_WRITERS);
    }

    #[test]
    fn a_fair_read_unlock_hands_the_lock_to_a_parked_writer() {
        let l = Arc::new(RawRwLock::with_policy(RwLockPolicy::PreferReaders));
        l.lock_shared();
        let l2 = l.clone();
        let release = Arc::new(AtomicBool::new(false));
        let r2 = release.clone();
        let w = std::thread::spawn(move || {
            l2.lock_exclusive();
            while !r2.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            unsafe { l2.unlock_exclusive() };
        });
        wait_queued(&l, Class::Writer, 1);
        unsafe { l.unlock_shared_fair() };
        assert!(
            !l.try_lock_shared(),
            "handed to the writer: no reader barges in"
        );
        release.store(true, Ordering::SeqCst);
        w.join().unwrap();
        let m = RwLock::new(1);
        let g = m.read();
        RwLockReadGuard::unlock_fair(g);
        assert_eq!(state(&l), 0);
    }

    #[test]
    fn rwlock_guards_data() {
        for policy in BOTH {
            let m = Arc::new(RwLock::from_raw(RawRwLock::with_policy(policy), 0u64));
            let threads = if cfg!(miri) { 2 } else { 4 };
            let per = if cfg!(miri) { 20 } else { 5_000 };
            let hs: Vec<_> = (0..threads)
                .map(|i| {
                    let m = m.clone();
                    std::thread::spawn(move || {
                        for j in 0..per {
                            if (i + j) % 2 == 0 {
                                *m.write() += 1;
                            } else if j % 3 == 0 {
                                let up = m.upgradable_read();
                                let mut w = RwLockUpgradableReadGuard::upgrade(up);
                                *w += 1;
                            } else {
                                let r = m.read();
                                assert!(*r <= (threads * per) as u64);
                            }
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            let writes: u64 = (0..threads)
                .map(|i| (0..per).filter(|j| (i + j) % 2 == 0 || j % 3 == 0).count() as u64)
                .sum();
            assert_eq!(*m.read(), writes);
            assert_eq!(
                unsafe { m.raw() }.state.load(Ordering::Relaxed),
                policy_bits(policy)
            );
        }
    }

    #[test]
    fn async_read_and_write_queue_then_acquire_and_cancel_cleanly() {
        for policy in BOTH {
            let l = Arc::new(RawRwLock::with_policy(policy));
            let w = AsyncWaiter::new();
            assert!(
                unsafe { l.lock_exclusive_async_begin(&w) },
                "free: taken at once"
            );
            let r = AsyncWaiter::new();
            assert!(!unsafe { l.lock_shared_async_begin(&r) });
            assert_eq!(parking_lot::parked_count(l.key(Class::Reader)), 1);
            // Cancelled while still queued: nothing held, nothing left.
            assert!(!unsafe { l.lock_shared_async_cancel(&r) });
            assert_eq!(parking_lot::parked_count(l.key(Class::Reader)), 0);
            // Queued again, then the writer leaves: the reader's word turns.
            assert!(!unsafe { l.lock_shared_async_begin(&r) });
            unsafe { l.unlock_exclusive() };
            while r.poll().is_none() {
                std::thread::yield_now();
            }
            assert!(unsafe { l.lock_shared_async_resume(&r) });
            assert_eq!(l.reader_count(), 1);
            // A writer queues behind the reader; a fair handoff is not needed.
            let l2 = l.clone();
            let t = std::thread::spawn(move || {
                let w2 = AsyncWaiter::new();
                if unsafe { l2.lock_exclusive_async_begin(&w2) } {
                    unsafe { l2.unlock_exclusive() };
                    return;
                }
                loop {
                    while w2.poll().is_none() {
                        std::thread::yield_now();
                    }
                    if unsafe { l2.lock_exclusive_async_resume(&w2) } {
                        break;
                    }
                }
                unsafe { l2.unlock_exclusive() };
            });
            wait_queued(&l, Class::Writer, 1);
            unsafe { l.unlock_shared() };
            t.join().unwrap();
            assert_eq!(state(&l), policy_bits(policy), "{policy:?}");
        }
    }

    #[test]
    fn a_reaped_queued_waiter_owes_nothing_and_is_never_handed_the_lock() {
        let l = RawRwLock::new();
        l.lock_shared();
        let gone = AsyncWaiter::new();
        assert!(!unsafe { l.lock_exclusive_async_begin(&gone) });
        // SAFETY (test): nobody uses `gone` again.
        unsafe { parking_lot::abandon_async(&gone) };
        assert_eq!(parking_lot::parked_count(l.key(Class::Writer)), 0);
        unsafe { l.unlock_shared() };
        assert_eq!(state(&l), PREFER_WRITERS, "free, no parked bit");
    }

    #[test]
    fn a_handoff_the_reaped_owner_never_took_is_released() {
        for class in [Class::Reader, Class::Writer] {
            let l = RawRwLock::new();
            l.lock_exclusive();
            let gone = AsyncWaiter::new();
            assert!(!unsafe { l.async_begin(class, &gone) });
            unsafe { l.unlock_exclusive_fair() }; // hands it to the record
            assert!(l.is_locked(), "{class:?}: handed over");
            // SAFETY (test): nobody uses `gone` again.
            unsafe { parking_lot::abandon_async(&gone) };
            assert_eq!(
                state(&l),
                PREFER_WRITERS,
                "{class:?}: released for the gone owner"
            );
        }
    }

    #[test]
    fn a_thread_that_may_not_block_is_refused() {
        let l = Arc::new(RawRwLock::new());
        l.lock_exclusive();
        let l2 = l.clone();
        let err = std::thread::spawn(move || {
            crate::set_thread_may_block(false);
            l2.lock_shared();
        })
        .join()
        .unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("may not block"), "{msg}");
        unsafe { l.unlock_exclusive() };
    }
}
