//! The ParkingLot's hashtable: buckets of FIFO queues keyed by address, the
//! table that grows with threads, and the lock-free "anyone here?" check.
//!
//! - a **table** of buckets, `2^bits` of them, at least `LOAD_FACTOR` per
//!   thread that has ever parked. It only grows, when a new thread first
//!   parks; growing locks every bucket, rehashes the queues into a table of
//!   twice the needed size and keeps the old, smaller table's pointer array
//!   (threads may still be reading it), so the retired memory is bounded by
//!   the current table's. Buckets themselves are reused across tables.
//! - a **bucket**: a [`WordLock`](crate::WordLock) and one FIFO queue shared by every address
//!   that hashes there; a dequeue takes the oldest waiter with the right key.
//!   The bucket lock is also the "queue lock" the API's callbacks run under.
//! - a **fairness timer** per bucket: when an unpark finds it expired it tells
//!   the caller `time_to_be_fair` and re-arms it a random 0–1 ms later, so a
//!   barging lock hands itself over directly about once a millisecond.
//! - a **waiter count** per bucket, so that an unpark on an address nobody
//!   waits on (an `Atomics.notify` with no waiter) returns without taking any
//!   lock: one read-modify-write of the count that changes nothing. Parkers
//!   count themselves in with a read-modify-write too, before `validate`; all
//!   of these are ordered on the count, so either the unparker sees the
//!   parker's count, or the parker synchronizes with the unparker and its
//!   `validate` sees the state the unparker changed before unparking. (A
//!   fence on each side would do the same, but `mfence` costs about 20 ns
//!   where measured; a locked add on a line in cache, a few.)

use super::record::{Owed, ThreadData};
use crate::critical::{SectionLock, WAIT_QUEUES};
use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, LockedCell, Ordering};
use crate::sys::now_ns;
use core::ptr;

/// Waiters taken out of a queue by [`Bucket::dequeue`], oldest first.
pub(super) struct Chain {
    pub(super) head: *const ThreadData,
    pub(super) len: usize,
}

/// Buckets per registered thread, at least (seed 000 and WebKit use 3).
pub(super) const LOAD_FACTOR: usize = 3;
/// Buckets in the first table: room for 5 threads before the first growth.
#[cfg(not(loom))]
const INITIAL_BUCKETS: usize = 16;
/// Under loom, a table so small that the first parking thread grows it, so
/// that the growth path is model-checked too.
#[cfg(loom)]
const INITIAL_BUCKETS: usize = 2;
/// The fairness timer re-arms to a random time in [0, this) nanoseconds:
/// "at worst one call to unlock() per millisecond will do a direct hand-off".
const FAIR_INTERVAL_NS: u32 = 1_000_000;

#[repr(align(64))] // one cache line each: unrelated addresses do not false-share
pub(super) struct Bucket {
    /// A WordLock whose holder and waiters count as inside the wait queues
    /// (`critical.rs`): a thread that dies there poisons the runtime.
    pub(super) lock: SectionLock<WAIT_QUEUES>,
    /// Oldest waiter. Guarded by `lock`.
    pub(super) head: LockedCell<*const ThreadData>,
    /// Newest waiter. Guarded by `lock`.
    tail: LockedCell<*const ThreadData>,
    /// Nanoseconds after which the next unpark is told to be fair. Guarded by `lock`.
    fair_timeout: LockedCell<u64>,
    /// xorshift32 state for the fairness timer. Guarded by `lock`.
    seed: LockedCell<u32>,
    /// Records queued here, plus parkers between counting themselves in and
    /// queuing. Changed only under `lock` (and read-modify-written without
    /// it, unchanged, by [`may_have_waiters`]).
    pub(super) waiters: AtomicUsize,
}

impl Bucket {
    fn new(seed: u32) -> Bucket {
        Bucket {
            lock: SectionLock::new(),
            head: LockedCell::new(ptr::null()),
            tail: LockedCell::new(ptr::null()),
            fair_timeout: LockedCell::new(now_ns()),
            seed: LockedCell::new(seed | 1),
            waiters: AtomicUsize::new(0),
        }
    }

    /// How many records are queued here.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn queue_len(&self) -> usize {
        let mut n = 0;
        // SAFETY: the caller holds the lock, which guards the links.
        unsafe {
            let mut p = self.head.get();
            while !p.is_null() {
                n += 1;
                p = (*p).next.get();
            }
        }
        n
    }

    /// Appends `data`, which the caller has already counted in `waiters`.
    ///
    /// # Safety
    /// `lock` is held and `data` is not queued anywhere.
    pub(super) unsafe fn push(&self, data: &ThreadData) {
        // SAFETY: the caller holds the bucket lock, which guards every field touched.
        unsafe {
            data.next.set(ptr::null());
            let tail = self.tail.get();
            if tail.is_null() {
                self.head.set(data);
            } else {
                (*tail).next.set(data);
            }
            self.tail.set(data);
        }
    }

    /// Counts `data` into `waiters` and appends it, queued on `key` from now
    /// on (and owing `owed`, if given): how a requeue moves a record here.
    ///
    /// # Safety
    /// `lock` is held, and so is the lock of the bucket `data` was taken out
    /// of (its owner may be reading `queued_on` to find it); `data` is not
    /// queued anywhere.
    pub(super) unsafe fn append(&self, key: usize, data: &ThreadData, owed: Option<Owed>) {
        self.waiters.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller holds both locks that guard the record's cells.
        unsafe {
            data.key.set(key);
            if let Some(owed) = owed {
                data.owed.set(owed);
            }
            self.push(data);
        }
        data.queued_on.store(key, Ordering::Relaxed);
    }

    /// Unlinks `data`, whose predecessor is `prev` (null: it is the head), and
    /// counts it out of `waiters`.
    ///
    /// # Safety
    /// `lock` is held and `data` is queued here after `prev`.
    unsafe fn unlink(&self, prev: *const ThreadData, data: &ThreadData) {
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the caller holds the bucket lock; `prev` and `data` are queued here.
        unsafe {
            let next = data.next.get();
            if prev.is_null() {
                self.head.set(next);
            } else {
                (*prev).next.set(next);
            }
            if ptr::eq(self.tail.get(), data) {
                self.tail.set(prev);
            }
        }
    }

    /// Whether any waiter from `from` on is queued on `key`.
    ///
    /// # Safety
    /// `lock` is held and `from` is null or queued here.
    pub(super) unsafe fn has_waiter_from(&self, from: *const ThreadData, key: usize) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.first_from(from, key) }.is_some()
    }

    /// The oldest waiter from `from` on that is queued on `key`.
    ///
    /// # Safety
    /// `lock` is held and `from` is null or queued here.
    unsafe fn first_from(&self, mut from: *const ThreadData, key: usize) -> Option<&ThreadData> {
        // SAFETY: the caller holds the bucket lock, so the chain is stable.
        unsafe {
            while !from.is_null() {
                if (*from).key.get() == key {
                    return Some(&*from);
                }
                from = (*from).next.get();
            }
        }
        None
    }

    /// Takes up to `max` waiters queued on `key` out of the queue, oldest
    /// first (see [`take`](Self::take)).
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn dequeue(&self, key: usize, max: usize) -> (Chain, *const ThreadData) {
        // SAFETY: the caller holds the lock; the key is read under it.
        unsafe { self.take(max, |d| d.key.get() == key) }
    }

    /// Takes up to `max` of the waiters that `wanted` picks out of the queue,
    /// oldest first, and counts them out of `waiters`. Returns them chained
    /// through their `next` fields, and the first waiter it did not look at
    /// (null once it looked at all).
    ///
    /// # Safety
    /// `lock` is held; `wanted` reads only cells the bucket lock guards.
    pub(super) unsafe fn take(
        &self,
        max: usize,
        mut wanted: impl FnMut(&ThreadData) -> bool,
    ) -> (Chain, *const ThreadData) {
        let mut chain = Chain {
            head: ptr::null(),
            len: 0,
        };
        let mut tail: *const ThreadData = ptr::null();
        // SAFETY: the caller holds the bucket lock, which guards every link.
        unsafe {
            let mut prev: *const ThreadData = ptr::null();
            let mut cur = self.head.get();
            while !cur.is_null() && chain.len < max {
                let next = (*cur).next.get();
                if wanted(&*cur) {
                    self.unlink(prev, &*cur);
                    (*cur).next.set(ptr::null());
                    if tail.is_null() {
                        chain.head = cur;
                    } else {
                        (*tail).next.set(cur);
                    }
                    tail = cur;
                    chain.len += 1;
                } else {
                    prev = cur;
                }
                cur = next;
            }
            (chain, cur)
        }
    }

    /// Takes `data`, queued on `key`, out of the queue. Returns whether no
    /// other waiter on `key` is left.
    ///
    /// # Safety
    /// `lock` is held and `data` is queued here.
    pub(super) unsafe fn remove(&self, key: usize, data: &ThreadData) -> bool {
        // SAFETY: the caller holds the bucket lock and `data` is in this queue.
        unsafe {
            let mut prev: *const ThreadData = ptr::null();
            let mut cur = self.head.get();
            while !ptr::eq(cur, data) {
                debug_assert!(
                    !cur.is_null(),
                    "a waiter that left is missing from its queue"
                );
                prev = cur;
                cur = (*cur).next.get();
            }
            self.unlink(prev, data);
            !self.has_waiter_from(self.head.get(), key)
        }
    }

    /// The oldest waiter queued on `key`.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn first(&self, key: usize) -> Option<&ThreadData> {
        // SAFETY: the caller holds the bucket lock.
        unsafe { self.first_from(self.head.get(), key) }
    }

    /// How many waiters are queued on `key`.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn count(&self, key: usize) -> usize {
        let mut n = 0;
        // SAFETY: the caller holds the bucket lock, so the chain is stable.
        unsafe {
            let mut cur = self.head.get();
            while !cur.is_null() {
                n += usize::from((*cur).key.get() == key);
                cur = (*cur).next.get();
            }
        }
        n
    }

    /// Whether the fairness timer has expired.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn fairness_due(&self, now: u64) -> bool {
        // SAFETY: the caller holds the bucket lock.
        now > unsafe { self.fair_timeout.get() }
    }

    /// Whether the fairness timer has expired at `now`; if it has, re-arms
    /// it. What every unpark asks, and [`super::time_to_be_fair`] too.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn take_fairness(&self, now: u64) -> bool {
        // SAFETY: the caller holds the bucket lock.
        unsafe {
            let due = self.fairness_due(now);
            if due {
                self.rearm_fairness(now);
            }
            due
        }
    }

    /// Re-arms the fairness timer a random 0–1 ms after `now`.
    ///
    /// # Safety
    /// `lock` is held.
    pub(super) unsafe fn rearm_fairness(&self, now: u64) {
        // SAFETY: the caller holds the bucket lock.
        unsafe {
            let mut x = self.seed.get();
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            self.seed.set(x);
            self.fair_timeout.set(now + u64::from(x % FAIR_INTERVAL_NS));
        }
    }
}

pub(super) struct Table {
    /// `2^bits` buckets, leaked on purpose: buckets move to every later table.
    pub(super) buckets: Box<[*const Bucket]>,
    /// Read by the hash only (under loom every key shares bucket 0).
    #[cfg_attr(loom, allow(dead_code))]
    bits: u32,
    /// The table this one replaced, kept alive forever (see the module docs).
    _retired: *const Table,
    /// Set, before the counts are reset, when a larger table replaces this
    /// one: its hashing no longer finds queues, so [`may_have_waiters`] must
    /// not trust its buckets' counts.
    replaced: AtomicBool,
}

impl Table {
    /// A table of `len` (a power of two) buckets, reusing `previous`'s.
    fn new(len: usize, previous: Option<&Table>) -> Box<Table> {
        debug_assert!(len.is_power_of_two() && len >= 2);
        let reused = previous.map_or(&[][..], |p| &p.buckets[..]);
        let buckets = (0..len)
            .map(|i| match reused.get(i) {
                Some(&b) => b,
                None => Box::into_raw(Box::new(Bucket::new(
                    0x9E37_79B9u32.wrapping_mul(i as u32 + 1),
                ))) as *const Bucket,
            })
            .collect();
        Box::new(Table {
            buckets,
            bits: len.trailing_zeros(),
            _retired: previous.map_or(ptr::null(), |p| p),
            replaced: AtomicBool::new(false),
        })
    }

    #[inline]
    pub(super) fn bucket(&self, key: usize) -> &'static Bucket {
        self.bucket_at(self.index(key))
    }

    /// The place of `key`'s bucket in this table: Fibonacci hashing, the
    /// top bits of key × 2^64/φ.
    #[cfg(not(loom))]
    #[inline]
    fn index(&self, key: usize) -> usize {
        ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// Loom replays executions and needs each to touch the same objects,
    /// but heap addresses differ between runs: every key shares bucket 0,
    /// which also model-checks the collided-queue case.
    #[cfg(loom)]
    #[inline]
    fn index(&self, _key: usize) -> usize {
        0
    }

    #[inline]
    fn bucket_at(&self, index: usize) -> &'static Bucket {
        // SAFETY: buckets are leaked, so they live forever.
        unsafe { &*self.buckets[index] }
    }

    pub(super) fn buckets(&self) -> impl Iterator<Item = &'static Bucket> + '_ {
        // SAFETY: buckets are leaked, so they live forever.
        self.buckets.iter().map(|&b| unsafe { &*b })
    }
}

pub(super) struct Globals {
    /// The current table; null until the first park or unpark.
    table: AtomicPtr<Table>,
    /// Threads with a live waiter record.
    pub(super) threads: AtomicUsize,
}

#[cfg(not(loom))]
static GLOBALS: Globals = Globals {
    table: AtomicPtr::new(ptr::null_mut()),
    threads: AtomicUsize::new(0),
};
#[cfg(loom)]
loom::lazy_static! {
    static ref GLOBALS: Globals = Globals { table: AtomicPtr::new(ptr::null_mut()), threads: AtomicUsize::new(0) };
}

#[inline]
pub(super) fn globals() -> &'static Globals {
    &GLOBALS
}

pub(super) fn current_table() -> &'static Table {
    let table = globals().table.load(Ordering::Acquire);
    if !table.is_null() {
        // SAFETY: published tables are never freed.
        return unsafe { &*table };
    }
    let fresh = Box::into_raw(Table::new(INITIAL_BUCKETS, None));
    match globals().table.compare_exchange(
        ptr::null_mut(),
        fresh,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: just published; never freed from now on.
        Ok(_) => unsafe { &*fresh },
        Err(winner) => {
            // SAFETY: `fresh` was never published, so nobody else can see it
            // or its buckets.
            unsafe {
                let fresh = Box::from_raw(fresh);
                for &b in fresh.buckets.iter() {
                    drop(Box::from_raw(b as *mut Bucket));
                }
                &*winner
            }
        }
    }
}

/// Whether `table` is the current table. Relaxed, as in [`lock_bucket`]:
/// asked with one of its buckets locked, which a replacement must take.
pub(super) fn is_current(table: &Table) -> bool {
    ptr::eq(globals().table.load(Ordering::Relaxed), table)
}

/// Locks the bucket that holds `key`'s queue in the current table.
pub(super) fn lock_bucket(key: usize) -> &'static Bucket {
    loop {
        let table = current_table();
        let bucket = table.bucket(key);
        bucket.lock.lock();
        // Relaxed is enough: a table is replaced only while all its buckets are
        // locked, and that replacement happens-before our acquiring this one.
        if ptr::eq(globals().table.load(Ordering::Relaxed), table) {
            return bucket;
        }
        // SAFETY: we locked it just above.
        unsafe { bucket.lock.unlock() };
    }
}

/// Locks the bucket that holds `data`'s queue, wherever a requeue has moved
/// it. Returns the bucket and the key `data` is queued on.
///
/// # Safety
/// `data` is queued (or was claimed out of its queue and is still alive).
pub(super) unsafe fn lock_bucket_of(data: &ThreadData) -> (&'static Bucket, usize) {
    loop {
        let key = data.queued_on.load(Ordering::Relaxed);
        let bucket = lock_bucket(key);
        // A move away from `key` needs the lock we now hold, and one that
        // happened before we took it is visible to us (the lock's order).
        if data.queued_on.load(Ordering::Relaxed) == key {
            return (bucket, key);
        }
        // SAFETY: locked by lock_bucket just above.
        unsafe { bucket.lock.unlock() };
    }
}

/// Locks the buckets of `a` and `b` (once, if they are one bucket), in the
/// order of their places in the table, the order `grow_table` locks every
/// bucket in, so that two pairs or a pair and a growth never deadlock.
pub(super) fn lock_bucket_pair(a: usize, b: usize) -> (&'static Bucket, &'static Bucket) {
    loop {
        let table = current_table();
        let (ia, ib) = (table.index(a), table.index(b));
        let (first, second) = (table.bucket_at(ia.min(ib)), table.bucket_at(ia.max(ib)));
        first.lock.lock();
        if ia != ib {
            second.lock.lock();
        }
        // As in lock_bucket: a replacement happens with every bucket locked.
        if ptr::eq(globals().table.load(Ordering::Relaxed), table) {
            return (table.bucket_at(ia), table.bucket_at(ib));
        }
        // SAFETY: locked just above.
        unsafe {
            if ia != ib {
                second.lock.unlock();
            }
            first.lock.unlock();
        }
    }
}

/// Unlocks what [`lock_bucket_pair`] locked.
///
/// # Safety
/// `a` and `b` are what `lock_bucket_pair` returned, still locked by us.
pub(super) unsafe fn unlock_bucket_pair(a: &Bucket, b: &Bucket) {
    // SAFETY: per our contract.
    unsafe {
        a.lock.unlock();
        if !ptr::eq(a, b) {
            b.lock.unlock();
        }
    }
}

/// Makes room for `threads` threads: called when a thread first parks.
pub(super) fn grow_table(threads: usize) {
    let old = loop {
        let table = current_table();
        if table.buckets.len() >= LOAD_FACTOR * threads {
            return;
        }
        for b in table.buckets() {
            b.lock.lock();
        }
        if ptr::eq(globals().table.load(Ordering::Relaxed), table) {
            break table;
        }
        for b in table.buckets() {
            // SAFETY: locked by the loop above.
            unsafe { b.lock.unlock() };
        }
    };

    let new = Table::new((LOAD_FACTOR * threads * 2).next_power_of_two(), Some(old));
    // Take every queue apart, oldest bucket first, and re-append each waiter
    // to its new bucket. Each address's waiters sit in one old bucket in FIFO
    // order, so each address's order survives.
    // Set before the counts are reset below (see there).
    old.replaced.store(true, Ordering::Relaxed);
    // SAFETY: every old bucket is locked by us; the new table's other buckets
    // are not yet published, so nobody else can see them.
    unsafe {
        let mut moved: Vec<*const ThreadData> = Vec::new();
        for b in old.buckets() {
            let mut cur = b.head.get();
            while !cur.is_null() {
                moved.push(cur);
                cur = (*cur).next.get();
            }
            b.head.set(ptr::null());
            b.tail.set(ptr::null());
            // No parker sits between counting in and queuing: we hold its lock.
            // A read-modify-write (after `replaced` is set), so that an
            // unparker reading this bucket through the old table either
            // comes before it (and we, hence the new table's parkers, see its
            // stores) or after it (and sees `replaced`).
            b.waiters.swap(0, Ordering::AcqRel);
        }
        for data in moved {
            let bucket = new.bucket((*data).key.get());
            bucket.waiters.fetch_add(1, Ordering::Relaxed);
            bucket.push(&*data);
        }
    }
    let new: &'static Table = Box::leak(new);
    globals()
        .table
        .store(new as *const Table as *mut Table, Ordering::Release);
    for b in old.buckets() {
        // SAFETY: locked by the loop above.
        unsafe { b.lock.unlock() };
    }
}

/// Whether anyone may be queued on `key`, decided without any lock: false
/// only if, at a point after the caller's earlier stores, `key`'s bucket held
/// no waiter and no parker was between counting in and validating.
///
/// The unparker's half of the handshake in `enqueue`: a read-modify-write of
/// the bucket's count that adds nothing. If it comes after a parker's count-in
/// we see that parker; if before, the parker's read-modify-write acquires our
/// release, so its `validate` sees every store we made before this call and it
/// does not sleep. Through a replaced table (a stale pointer) the same holds
/// against the rehash's reset of the count: before it, the rehash (and every
/// parker in the new table) sees our stores; after it, we see `replaced` and
/// answer "maybe": its hashing no longer finds queues.
///
/// The read-modify-write is the cost floor of a notify with nobody waiting,
/// and it cannot be a plain load: the caller's earlier stores may be plain
/// (a Release store, a non-atomic store before `Atomics.notify`), and a load
/// may pass them, so that we read 0 while a parker validates against the
/// old value and sleeps. A full fence is the least that orders them (Linux's
/// `futex_wake` issues one before it reads its bucket's waiter count, for the
/// same reason). Measured in V8's wasm on the benchmark VM: this whole test,
/// inlined into a notify loop, costs 5.2 ns, most of it the read-modify-write
/// (a SeqCst load alone: 0.6 ns), and `memory.atomic.notify` with nobody
/// waiting 29 to 32 ns; so no exact notify can be much more than 6x faster
/// than the engine's there. A fence and a load instead of the
/// read-modify-write cost 21 ns (V8 emits `atomic.fence` as `mfence`).
#[inline]
pub(super) fn may_have_waiters(key: usize) -> bool {
    let mut table = globals().table.load(Ordering::Acquire);
    if table.is_null() {
        // Nobody has parked yet. Make that an RMW too (null to null), so that
        // the thread that creates the table synchronizes with us.
        match globals().table.compare_exchange(
            ptr::null_mut(),
            ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return false,
            Err(created) => table = created,
        }
    }
    // SAFETY: published tables are never freed.
    let table = unsafe { &*table };
    table.bucket(key).waiters.fetch_add(0, Ordering::AcqRel) != 0
        || table.replaced.load(Ordering::Relaxed)
}

/// A snapshot of the ParkingLot's size, for embedders and tests that check
/// that it depends on threads alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Threads that have a waiter record (they have parked and not exited).
    pub threads: usize,
    /// Buckets in the current table.
    pub buckets: usize,
    /// Tables replaced by growth and kept alive.
    pub retired_tables: usize,
    /// Bytes held: buckets plus every table's pointer array.
    pub bytes: usize,
}

/// The ParkingLot's current size.
pub fn stats() -> Stats {
    let table = current_table();
    let mut retired_tables = 0;
    let mut bytes = table.buckets.len() * core::mem::size_of::<Bucket>();
    let mut t: *const Table = table;
    while !t.is_null() {
        // SAFETY: tables are never freed.
        let tt = unsafe { &*t };
        bytes += core::mem::size_of::<Table>()
            + tt.buckets.len() * core::mem::size_of::<*const Bucket>();
        if !ptr::eq(t, table) {
            retired_tables += 1;
        }
        t = tt._retired;
    }
    Stats {
        threads: globals().threads.load(Ordering::Relaxed),
        buckets: table.buckets.len(),
        retired_tables,
        bytes,
    }
}
