//! Toy locks: seed 000's experimental lock algorithms ("Spinlocks", "Futex
//! Algorithms and ParkingLot", "Barging and Fairness"), for benchmarks only.
//!
//! Like WebKit's `ToyLocks.h`, they sit side by side in one file, each short
//! enough to read in one screen, all built on the same ParkingLot, so that a
//! benchmark compares locking protocols and nothing else. [`RawLock`] lets one
//! generic runner drive them and [`Lock`] and [`WordLock`] alike. Real code
//! should use [`Lock`]. Every toy is one byte (`repr(transparent)` over its
//! state) and queues its parked threads under that byte's address, which is
//! also the lock's. [`ThunderLock`] and [`CascadeLock`] use only
//! futex-like calls (park while the byte reads X; wake one or all), so they
//! could be built on futexes; [`HandoffLock`] and [`BargingLock`] need
//! `unpark_one`'s callback, which only a ParkingLot has.
//!
//! ## [`SpinLock`]: [`YieldSpinLock`], [`PauseSpinLock`]
//!
//! | state | meaning  |
//! |-------|----------|
//! | 0     | unlocked |
//! | 1     | locked   |
//!
//! lock: CAS 0 → 1; while that fails, load until 0 (test-and-test-and-set),
//! yielding the CPU or executing a spin hint (x86 `pause`) between loads.
//! unlock: store 0. No CAS on unlock, which is why the seed finds spinlocks
//! fastest with one thread; its spinlocks gained nothing from `pause`.
//!
//! ## [`ThunderLock`] and [`CascadeLock`]
//!
//! | state | name            | meaning                       |
//! |-------|-----------------|-------------------------------|
//! | 0     | `UNLOCKED`      |                               |
//! | 1     | `LOCKED`        | held, nobody parked           |
//! | 2     | `LOCKED_PARKED` | held, threads may be parked   |
//!
//! Both: lock is CAS 0 → 1; unlock is swap 0, and only if the swap returned
//! 2 a call into the ParkingLot.
//! - Thunder: spins like [`Lock`], then CAS 1 → 2 and parks while 2. Unlock
//!   wakes *all*: the herd races, all but one park again. It never has to know
//!   whether waiters remain, so three states suffice, and it stays correct if
//!   several locks share one address.
//! - Cascade (glibc's lowlevellock): spins, then swaps in 2 until the swap
//!   returns 0, parking while 2. A thread past its spin thus takes the lock as
//!   2: it cannot tell whether others are still parked, so it assumes they are
//!   and its unlock wakes one, which does the same (the cascade). The byte
//!   forgets 2 only when someone takes the lock by the fast CAS 0 → 1.
//!
//! ## [`HandoffLock`]
//!
//! | bit | name     | meaning                                        |
//! |-----|----------|------------------------------------------------|
//! | 0   | `LOCKED` | some thread holds the lock                     |
//! | 1   | `PARKED` | threads may be parked on this address          |
//!
//! Strict FIFO. Lock sets `PARKED` by CAS while `LOCKED` is set, then parks
//! while the byte reads `LOCKED | PARKED`; `PARKED` implies `LOCKED`, and lock
//! only ever CASes from 0, so nobody barges past a parked thread. Unlock is CAS
//! `LOCKED` → 0, or, with `PARKED` set, `unpark_one`, whose callback keeps
//! `LOCKED` set and hands the lock to the oldest parked thread (token
//! `TOKEN_HANDOFF`), leaving `PARKED` only if more remain; if the queue was
//! empty after all (a locker set `PARKED` but has not queued yet), it stores 0
//! and that locker's park fails and retries.
//!
//! ## [`BargingLock`]
//!
//! Seed 000's "configurable WTF::Lock", and like WebKit's `LockAlgorithm`
//! written once: it *is* a [`Lock`] (same byte, same states, same code, see
//! `lock.rs`), locked with a spin limit fixed at compile time instead of the
//! process-wide [`crate::spin_limit`]. It keeps Lock's eventual fairness (a
//! direct hand-off about once a millisecond), as WebKit's algorithm does.
//!
//! ## [`ThunderRwLock`]
//!
//! | bits  | name      | meaning                                   |
//! |-------|-----------|-------------------------------------------|
//! | 0     | `WRITER`  | a writer holds the lock                   |
//! | 1     | `PARKED`  | threads may be parked on this address     |
//! | 2..32 | readers   | how many readers hold it                  |
//!
//! A reader-preferring reader-writer lock with no hand-off, the control for
//! [`crate::RawRwLock`]'s fairness: readers enter whenever no writer holds
//! it, a writer when nobody does; a thread that may not enter spins like
//! [`Lock`], then sets `PARKED` and parks while the word still bars it. Whoever leaves the word free for
//! someone (a writer; the last reader) with `PARKED` set clears it and wakes
//! everyone to compete again, like [`ThunderLock`].
#![cfg(not(loom))]

use crate::parking_lot::{
    park_conditionally, unpark_all, unpark_count, unpark_one, ParkResult, UnparkToken,
    DEFAULT_UNPARK_TOKEN,
};
use crate::sync::{self, AtomicU32, AtomicU8, Ordering};
use crate::{Lock, RawRwLock, RwLockPolicy, WordLock, DEFAULT_SPIN_LIMIT};

/// A lock as a benchmark sees it, so that one generic runner drives every lock.
///
/// # Safety
/// Implementations provide mutual exclusion: between `lock` returning and the
/// matching `unlock`, no other `lock` on the same lock returns, and `unlock`
/// makes the holder's writes visible to the next holder. Generic code relies
/// on this to guard plain data.
pub unsafe trait RawLock: Sync + Send {
    /// The name shown in benchmark tables.
    const NAME: &'static str;

    /// An unlocked lock.
    fn new() -> Self;

    /// Acquires the lock, waiting as long as it takes.
    fn lock(&self);

    /// Releases the lock.
    ///
    /// # Safety
    /// The caller holds the lock: this thread's `lock` on this lock, at this
    /// address (it has not moved since), returned and no `unlock` has matched
    /// it yet. (A pthread mutex wants the same thread, a Rust mutex unlocked
    /// through a guard it stored the same address; parklot's locks need neither.)
    unsafe fn unlock(&self);
}

/// Implements [`RawLock`] for a lock type (generic over `[...]`) named
/// `$name`, whose own `new` makes it, and whose `lock` and `unlock` (both
/// inline: they are the fast paths) run the given blocks with `$this` as
/// `&self`. Each invocation carries the `// SAFETY:` of its `unsafe impl`.
macro_rules! raw_lock {
    (
        impl[$($generics:tt)*] $t:ty, $name:expr, |$this:ident|
        lock $lock:block
        unlock $unlock:block
    ) => {
        unsafe impl<$($generics)*> RawLock for $t {
            const NAME: &'static str = $name;

            fn new() -> Self {
                Self::new()
            }

            #[inline]
            fn lock(&self) {
                let $this = self;
                $lock
            }

            #[inline]
            unsafe fn unlock(&self) {
                let $this = self;
                $unlock
            }
        }
    };
}

// SAFETY: Lock is the crate's mutual-exclusion lock.
raw_lock! {
    impl[] Lock, "parklot::Lock", |l|
    lock { Lock::lock(l) }
    unlock { Lock::unlock(l) }
}

// SAFETY: WordLock is the crate's mutual-exclusion lock for bucket queues.
raw_lock! {
    impl[] WordLock, "parklot::WordLock", |l|
    lock { WordLock::lock(l) }
    unlock {
        // SAFETY: the caller holds the lock (this method's contract).
        unsafe { WordLock::unlock(l) }
    }
}

/// The ParkingLot key of a toy: the address of its state byte.
#[inline]
fn key(state: &AtomicU8) -> usize {
    state as *const AtomicU8 as usize
}

/// Takes the lock by one weak CAS `from` → `to`. Acquire: the previous
/// holder's critical section happens before ours.
#[inline]
fn cas_acquire(state: &AtomicU8, from: u8, to: u8) -> bool {
    state
        .compare_exchange_weak(from, to, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Marks a held lock as having parked threads by one weak CAS. Relaxed: it
/// publishes no data, and parking rechecks the byte under the queue lock.
#[inline]
fn cas_relaxed(state: &AtomicU8, from: u8, to: u8) -> bool {
    state
        .compare_exchange_weak(from, to, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// A toy's fast path: the CAS UNLOCKED (0) → LOCKED, else `slow`.
#[inline]
fn lock_or(state: &AtomicU8, slow: impl FnOnce()) {
    if !cas_acquire(state, UNLOCKED, LOCKED) {
        slow();
    }
}

/// ThunderLock's and CascadeLock's release: swaps in UNLOCKED (Release) and
/// returns whether threads may be parked (the swap took `LOCKED_PARKED`).
#[inline]
fn release_had_parked(state: &AtomicU8) -> bool {
    state.swap(UNLOCKED, Ordering::Release) == LOCKED_PARKED
}

/// FUTEX_WAIT on a byte: parks while `state` reads `expected`, checked under
/// the queue lock so that an unlock cannot slip between the check and the sleep.
fn park_while(state: &AtomicU8, expected: u8) -> ParkResult {
    // SAFETY: `validate` is one load and the other callbacks do nothing, so
    // none can panic or call into the ParkingLot.
    unsafe {
        park_conditionally(
            key(state),
            || state.load(Ordering::Relaxed) == expected,
            || {},
            |_, _| {},
            None,
        )
    }
}

/// A test-and-test-and-set spinlock that never parks. Waiting threads only
/// load the byte, which keeps its cache line shared until it reads 0, instead
/// of bouncing it with CASes; between loads they yield the CPU (`PAUSE =
/// false`) or run a spin hint, x86 `pause` (`PAUSE = true`).
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct SpinLock<const PAUSE: bool> {
    state: AtomicU8,
}

/// The spinlock that yields the CPU between attempts (on wasm, which has no
/// scheduler call, a spin hint).
pub type YieldSpinLock = SpinLock<false>;

/// The spinlock that runs a spin hint between attempts; never yields.
pub type PauseSpinLock = SpinLock<true>;

impl<const PAUSE: bool> SpinLock<PAUSE> {
    /// An unlocked lock.
    pub const fn new() -> Self {
        SpinLock {
            state: AtomicU8::new(0),
        }
    }
}

// SAFETY: only a CAS 0 → 1 takes the lock (Acquire) and only the holder's
// store of 0 (Release) frees it.
raw_lock! {
    impl[const PAUSE: bool] SpinLock<PAUSE>,
    if PAUSE { "PauseSpinLock" } else { "YieldSpinLock" }, |l|
    lock {
        while !cas_acquire(&l.state, 0, 1) {
            while l.state.load(Ordering::Relaxed) != 0 {
                if PAUSE {
                    sync::spin_loop();
                } else {
                    sync::yield_now();
                }
            }
        }
    }
    unlock { l.state.store(0, Ordering::Release) }
}

const UNLOCKED: u8 = 0;
const LOCKED: u8 = 1;
/// ThunderLock and CascadeLock: held, and threads may be parked.
const LOCKED_PARKED: u8 = 2;
/// HandoffLock: the `PARKED` bit, next to `LOCKED`.
const PARKED: u8 = 2;

/// Three states; unlock wakes every parked thread (a thundering herd).
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct ThunderLock {
    state: AtomicU8,
}

impl ThunderLock {
    /// An unlocked lock.
    pub const fn new() -> Self {
        ThunderLock {
            state: AtomicU8::new(UNLOCKED),
        }
    }

    #[cold]
    fn lock_slow(&self) {
        // The same spin policy as Lock (crate::spin_limit(), default 40 yields,
        // only while nobody is parked), so the benchmark sees only the unlock
        // protocol differ.
        let spin_limit = crate::spin_limit();
        let mut spins = 0;
        loop {
            match self.state.load(Ordering::Relaxed) {
                UNLOCKED if cas_acquire(&self.state, UNLOCKED, LOCKED) => return,
                UNLOCKED => continue,
                LOCKED if spins < spin_limit => {
                    spins += 1;
                    sync::yield_now();
                    continue;
                }
                LOCKED if !cas_relaxed(&self.state, LOCKED, LOCKED_PARKED) => continue,
                _ => {} // 2, or just set to 2: park.
            }
            // Woken or not, race again: the herd's losers set 2 and park anew.
            park_while(&self.state, LOCKED_PARKED);
            spins = 0;
        }
    }
}

// SAFETY: only a CAS from UNLOCKED takes the lock (Acquire) and only the
// holder's swap to UNLOCKED (Release) frees it. Every thread that parked saw 2
// under the queue lock; the unlock that swaps that 2 away then unparks all.
raw_lock! {
    impl[] ThunderLock, "ThunderLock", |l|
    lock { lock_or(&l.state, || l.lock_slow()) }
    unlock {
        if release_had_parked(&l.state) {
            unpark_all(key(&l.state));
        }
    }
}

/// glibc's lowlevellock: a thread that had to wait takes the lock as
/// `LOCKED_PARKED`, so unlock wakes one thread at a time, in a cascade.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct CascadeLock {
    state: AtomicU8,
}

impl CascadeLock {
    /// An unlocked lock.
    pub const fn new() -> Self {
        CascadeLock {
            state: AtomicU8::new(UNLOCKED),
        }
    }

    #[cold]
    fn lock_slow(&self) {
        // Like glibc's adaptive mutex, spin with trylocks whatever the state
        // says; the count is Lock's (crate::spin_limit(), default 40).
        for _ in 0..crate::spin_limit() {
            if self.state.load(Ordering::Relaxed) == UNLOCKED
                && cas_acquire(&self.state, UNLOCKED, LOCKED)
            {
                return;
            }
            sync::yield_now();
        }
        // From here on only swaps to 2: a CAS to 1 could take the lock while
        // others stay parked, and then nobody would wake them.
        while self.state.swap(LOCKED_PARKED, Ordering::Acquire) != UNLOCKED {
            park_while(&self.state, LOCKED_PARKED);
        }
    }
}

// SAFETY: the lock is taken only by a CAS or swap that finds UNLOCKED
// (Acquire) and freed only by the holder's swap to UNLOCKED (Release). A
// parked thread saw 2; the unlock that swaps that 2 away wakes one, which
// either takes the lock as 2 or sets 2 again before it parks.
raw_lock! {
    impl[] CascadeLock, "CascadeLock", |l|
    lock { lock_or(&l.state, || l.lock_slow()) }
    unlock {
        if release_had_parked(&l.state) {
            // FUTEX_WAKE 1: no callback needed.
            unpark_count(key(&l.state), 1);
        }
    }
}

/// Unpark token of HandoffLock: the unlocker kept `LOCKED` set for you.
const TOKEN_HANDOFF: UnparkToken = 1;

/// Strict FIFO: unlock hands the lock to the oldest parked thread and nobody
/// barges. No spinning either, which would let a spinner overtake the queue.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct HandoffLock {
    state: AtomicU8,
}

impl HandoffLock {
    /// An unlocked lock.
    pub const fn new() -> Self {
        HandoffLock {
            state: AtomicU8::new(0),
        }
    }

    #[cold]
    fn lock_slow(&self) {
        loop {
            let state = self.state.load(Ordering::Relaxed);
            // 0 means nobody holds it and nobody is parked (PARKED implies LOCKED).
            if state == 0 {
                if cas_acquire(&self.state, 0, LOCKED) {
                    return;
                }
                continue;
            }
            if state == LOCKED && !cas_relaxed(&self.state, LOCKED, LOCKED | PARKED) {
                continue;
            }
            // The handoff orders the unlocker's critical section before ours:
            // the token is written before the parker is claimed, and park
            // observes the claim with Acquire.
            if park_while(&self.state, LOCKED | PARKED) == ParkResult::Unparked(TOKEN_HANDOFF) {
                return;
            }
        }
    }

    #[cold]
    fn unlock_slow(&self) {
        // The byte is LOCKED | PARKED, and while we hold it only we change it.
        // SAFETY: the callback stores this lock's byte only: no panics, no
        // ParkingLot calls.
        unsafe {
            unpark_one(key(&self.state), |r| {
                // Nobody is queued any more (a reaped waiter left): free it.
                if !r.did_unpark {
                    debug_assert!(!r.may_have_more);
                    self.state.store(0, Ordering::Release);
                    return DEFAULT_UNPARK_TOKEN;
                }
                let next = if r.may_have_more {
                    LOCKED | PARKED
                } else {
                    LOCKED
                };
                self.state.store(next, Ordering::Relaxed);
                TOKEN_HANDOFF
            });
        }
    }
}

// SAFETY: the lock is taken by a CAS from 0 (Acquire) or by the handoff token,
// which the holder gives to one thread instead of freeing the byte.
raw_lock! {
    impl[] HandoffLock, "HandoffLock", |l|
    lock { lock_or(&l.state, || l.lock_slow()) }
    unlock {
        // Strong CAS: a spurious failure would take the slow path for nothing.
        if l
            .state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            l.unlock_slow();
        }
    }
}

/// Seed 000's configurable WTF::Lock: [`Lock`]'s algorithm with `SPIN_LIMIT`
/// yields before parking, fixed at compile time. The default, 40, is the
/// seed's measured optimum and Lock's own default.
///
/// A const generic rather than a field: the spin-limit sweep instantiates one
/// type per point, each naming itself in tables (`"BargingLock<20>"`), the
/// lock stays one byte, and no process-wide setting changes under a run.
#[derive(Debug, Default)]
#[repr(transparent)] // parks under its own address, which is its Lock's
pub struct BargingLock<const SPIN_LIMIT: u32 = DEFAULT_SPIN_LIMIT> {
    lock: Lock,
}

impl<const SPIN_LIMIT: u32> BargingLock<SPIN_LIMIT> {
    /// An unlocked lock.
    pub const fn new() -> Self {
        BargingLock { lock: Lock::new() }
    }

    /// `"BargingLock<40>"` and so on: each spin limit names itself in a table.
    const SPELLED: SpelledName = SpelledName::new("BargingLock<", SPIN_LIMIT, ">");
}

// SAFETY: it is a Lock, the crate's mutual-exclusion lock, locked and unlocked
// only through Lock's own paths.
raw_lock! {
    impl[const SPIN_LIMIT: u32] BargingLock<SPIN_LIMIT>, Self::SPELLED.as_str(), |l|
    lock { l.lock.lock_with_spin_limit(SPIN_LIMIT) }
    unlock { l.lock.unlock() }
}

/// A `&'static str` built at compile time from a prefix, a number and a suffix.
struct SpelledName {
    /// 32 bytes: "BargingLock<" (12) + u32::MAX (10 digits) + ">" (1) fit.
    bytes: [u8; 32],
    len: usize,
}

impl SpelledName {
    const fn new(prefix: &str, n: u32, suffix: &str) -> SpelledName {
        let mut name = SpelledName {
            bytes: [0; 32],
            len: 0,
        };
        name.push(prefix.as_bytes());
        let mut digits = [0u8; 10];
        let (mut start, mut n) = (digits.len(), n);
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        name.push(digits.split_at(start).1);
        name.push(suffix.as_bytes());
        name
    }

    const fn push(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            self.bytes[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
    }

    const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(s) => s,
            Err(_) => panic!("SpelledName holds ASCII only"),
        }
    }
}

/// A reader-writer lock as a test or benchmark sees it.
///
/// # Safety
/// Implementations exclude a writer from everyone else while readers share,
/// and order each holder's writes before the next conflicting holder's.
pub unsafe trait RawRw: Sync + Send {
    /// The name shown in tables and failures.
    const NAME: &'static str;

    /// An unlocked lock.
    fn new() -> Self;

    /// Takes a read.
    fn lock_shared(&self);

    /// Releases a read.
    ///
    /// # Safety
    /// The caller holds a read of this lock.
    unsafe fn unlock_shared(&self);

    /// Takes the write lock.
    fn lock_exclusive(&self);

    /// Releases the write lock.
    ///
    /// # Safety
    /// The caller holds the write lock.
    unsafe fn unlock_exclusive(&self);

    /// Whether threads may be parked on it (a snapshot, for tests).
    fn has_parked(&self) -> bool;
}

/// `RawRw`'s takes and releases of each kind of hold (`$lock`, `$unlock`),
/// forwarded to the wrapped `RawRwLock`'s methods of the same names.
macro_rules! forward_holds {
    ($($lock:ident, $unlock:ident);*) => {$(
        #[inline]
        fn $lock(&self) {
            self.0.$lock()
        }

        #[inline]
        unsafe fn $unlock(&self) {
            // SAFETY: forwarded from the caller.
            unsafe { self.0.$unlock() }
        }
    )*};
}

/// [`RawRwLock`] with its policy fixed in the type, for generic runners.
#[repr(transparent)]
pub struct PolicyRwLock<const PREFER_WRITERS: bool>(RawRwLock);

// SAFETY: RawRwLock is the crate's reader-writer lock.
unsafe impl<const PREFER_WRITERS: bool> RawRw for PolicyRwLock<PREFER_WRITERS> {
    const NAME: &'static str = if PREFER_WRITERS {
        "parklot::RwLock (writer-preferring)"
    } else {
        "parklot::RwLock (reader-preferring)"
    };

    fn new() -> Self {
        let policy = if PREFER_WRITERS {
            RwLockPolicy::PreferWriters
        } else {
            RwLockPolicy::PreferReaders
        };
        PolicyRwLock(RawRwLock::with_policy(policy))
    }

    forward_holds!(lock_shared, unlock_shared; lock_exclusive, unlock_exclusive);

    fn has_parked(&self) -> bool {
        self.0.has_parked()
    }
}

/// A reader-preferring reader-writer lock without hand-off: see the module docs.
#[repr(transparent)]
pub struct ThunderRwLock {
    state: AtomicU32,
}

const RW_WRITER: u32 = 1;
const RW_PARKED: u32 = 2;
const RW_READER: u32 = 4;

impl ThunderRwLock {
    /// Takes the lock once `enter` says the word lets us in (and gives the
    /// word to CAS in), parking while it does not.
    fn acquire(&self, enter: impl Fn(u32) -> Option<u32>) {
        let key = self as *const ThunderRwLock as usize;
        // The same spin policy as Lock and RawRwLock, so that only the
        // unlock protocol differs.
        let spin_limit = crate::spin_limit();
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if let Some(new) = enter(s) {
                if cas_acquire_u32(&self.state, s, new) {
                    return;
                }
                continue;
            }
            if s & RW_PARKED == 0 && spins < spin_limit {
                spins += 1;
                sync::yield_now();
                continue;
            }
            if s & RW_PARKED == 0 && !cas_acquire_u32(&self.state, s, s | RW_PARKED) {
                continue;
            }
            spins = 0;
            // SAFETY: the callbacks only read this lock's word.
            unsafe {
                park_conditionally(
                    key,
                    || {
                        let s = self.state.load(Ordering::Relaxed);
                        s & RW_PARKED != 0 && enter(s).is_none()
                    },
                    || {},
                    |_, _| {},
                    None,
                );
            }
        }
    }

    /// The word now lets someone in: if anyone may be parked, wake them all.
    fn wake_all_if_parked(&self) {
        if self.state.fetch_and(!RW_PARKED, Ordering::Relaxed) & RW_PARKED != 0 {
            unpark_all(self as *const ThunderRwLock as usize);
        }
    }
}

/// A CAS that takes (Acquire) or marks the word.
#[inline]
fn cas_acquire_u32(state: &AtomicU32, current: u32, new: u32) -> bool {
    state
        .compare_exchange_weak(current, new, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

// SAFETY: a reader enters only with WRITER clear and is counted; a writer
// only with no readers and no writer; releases are Release.
unsafe impl RawRw for ThunderRwLock {
    const NAME: &'static str = "ThunderRwLock (reader-preferring, no hand-off)";

    fn new() -> Self {
        ThunderRwLock {
            state: AtomicU32::new(0),
        }
    }

    fn lock_shared(&self) {
        self.acquire(|s| (s & RW_WRITER == 0).then(|| s + RW_READER));
    }

    unsafe fn unlock_shared(&self) {
        let s = self.state.fetch_sub(RW_READER, Ordering::Release) - RW_READER;
        if s < RW_READER && s & RW_PARKED != 0 {
            self.wake_all_if_parked();
        }
    }

    fn lock_exclusive(&self) {
        self.acquire(|s| (s & !RW_PARKED == 0).then_some(s | RW_WRITER));
    }

    unsafe fn unlock_exclusive(&self) {
        if self.state.fetch_and(!RW_WRITER, Ordering::Release) & RW_PARKED != 0 {
            self.wake_all_if_parked();
        }
    }

    fn has_parked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & RW_PARKED != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
