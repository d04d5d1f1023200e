//! The ParkingLot: queues of waiting threads, keyed by address, kept in one
//! process-wide concurrent hashtable (seed 000, "Implementing WTF::ParkingLot").
//!
//! A primitive keeps only a few bits of state in its own memory and asks the
//! ParkingLot to queue (park) or wake (unpark) threads under the address of
//! that state. The queue for an address only exists while someone waits on it,
//! and a waiter's record is its thread's own (a thread-local), so the memory
//! used here depends on the number of threads, never on the number of locks.
//!
//! Layout:
//! - a **table** of buckets, `2^bits` of them, at least `LOAD_FACTOR` per
//!   thread that has ever parked. It only grows, when a new thread first
//!   parks; growing locks every bucket, rehashes the queues into a table of
//!   twice the needed size and keeps the old, smaller table's pointer array
//!   (threads may still be reading it), so the retired memory is bounded by
//!   the current table's. Buckets themselves are reused across tables.
//! - a **bucket**: a [`WordLock`] and one FIFO queue shared by every address
//!   that hashes there; a dequeue takes the oldest waiter with the right key.
//!   The bucket lock is also the "queue lock" the API's callbacks run under.
//! - a **fairness timer** per bucket: when an unpark finds it expired it tells
//!   the caller `time_to_be_fair` and re-arms it a random 0–1 ms later, so a
//!   barging lock hands itself over directly about once a millisecond.
//! - a **waiter count** per bucket, so that [`unpark_count`] on an address
//!   nobody waits on (an `Atomics.notify` with no waiter) returns without
//!   taking any lock: one read-modify-write of the count that changes
//!   nothing. Parkers count themselves in with a read-modify-write too, before
//!   `validate`; all of these are ordered on the count, so either the
//!   unparker sees the parker's count, or the parker synchronizes with the
//!   unparker and its `validate` sees the state the unparker changed before
//!   unparking. (A fence on each side would do the same, but `mfence` costs
//!   about 20 ns where measured; a locked add on a line in cache, a few.)

use crate::blocking::{refuse_to_block, thread_may_block};
use crate::clock::Instant;
use crate::sync::{thread_local, AtomicBool, AtomicPtr, AtomicUsize, LockedCell, Ordering};
use crate::sys::{now_ns, Parker, UnparkHandle, THREADS_CAN_VANISH};
use crate::word_lock::WordLock;
use core::ptr;

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
    /// At least one thread was dequeued and will be woken.
    pub did_unpark: bool,
    /// How many threads were dequeued.
    pub unparked: usize,
    /// Threads remain queued on the same address.
    pub may_have_more: bool,
    /// The bucket's fairness timer expired: a lock should hand itself over to
    /// the woken thread instead of letting others barge.
    pub time_to_be_fair: bool,
    /// The waiter chosen for the token is known to be alive and will act on
    /// it. Hand over something exclusive (a lock) only when this holds. It is
    /// checked when it matters (the fairness timer is due, or the caller asked)
    /// and otherwise left `true`: natively every queued thread is alive, and
    /// in wasm, where a terminated worker's record can stay queued, a wake
    /// that reaches nobody is followed by a wake of the next waiter.
    pub confirmed: bool,
}

/// Buckets per registered thread, at least (seed 000 and WebKit use 3).
const LOAD_FACTOR: usize = 3;
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

/// A thread's waiter record. One per thread, in a thread-local, reused by
/// every park; so parking allocates nothing.
struct ThreadData {
    parker: Parker,
    /// The address this thread is queued on. Guarded by the bucket lock.
    key: LockedCell<usize>,
    /// Next-newer waiter in the bucket's queue. Guarded by the bucket lock.
    next: LockedCell<*const ThreadData>,
    /// Set by the unparker under the bucket lock before it claims the parker;
    /// read by this thread after it wakes.
    token: LockedCell<UnparkToken>,
    /// An [`AsyncWaiter`]'s record: its owner is code that may never come
    /// back for it (see [`ThreadData::seen_alive`]).
    is_async: bool,
}

impl ThreadData {
    fn new(is_async: bool) -> ThreadData {
        let threads = globals().threads.fetch_add(1, Ordering::Relaxed) + 1;
        grow_table(threads);
        ThreadData {
            parker: Parker::new(),
            key: LockedCell::new(0),
            next: LockedCell::new(ptr::null()),
            token: LockedCell::new(DEFAULT_UNPARK_TOKEN),
            is_async,
        }
    }

    /// Whether this record's owner may be gone for good: a wasm worker can be
    /// terminated while parked, and an async record's owner may never come back.
    fn can_vanish(&self) -> bool {
        THREADS_CAN_VANISH || self.is_async
    }

    /// Whether this queued waiter is certainly alive: a native thread always
    /// is; one that can vanish only if it is waiting on its word right now.
    /// Under the bucket lock.
    fn seen_alive(&self) -> bool {
        !self.can_vanish() || self.parker.probe_waiting()
    }
}

// Under loom, thread-locals are dropped after the model's statics, so the
// decrement would touch a dead static; the count only sizes the table, and
// each model execution starts from zero anyway.
#[cfg(not(loom))]
impl Drop for ThreadData {
    fn drop(&mut self) {
        globals().threads.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` with this thread's record: the thread-local one, or a fresh one on
/// the stack while the thread-locals are being torn down.
fn with_thread_data<T>(f: impl FnOnce(&ThreadData) -> T) -> T {
    thread_local! {
        static THREAD_DATA: ThreadData = ThreadData::new(false);
    }
    let mut fallback = None;
    let data = THREAD_DATA
        .try_with(|d| d as *const ThreadData)
        .unwrap_or_else(|_| fallback.insert(ThreadData::new(false)) as *const ThreadData);
    // SAFETY: the thread-local lives until the thread exits, and `fallback`
    // until this function returns; both outlast `f`.
    f(unsafe { &*data })
}

#[repr(align(64))] // one cache line each: unrelated addresses do not false-share
struct Bucket {
    lock: WordLock,
    /// Oldest waiter. Guarded by `lock`.
    head: LockedCell<*const ThreadData>,
    /// Newest waiter. Guarded by `lock`.
    tail: LockedCell<*const ThreadData>,
    /// Nanoseconds after which the next unpark is told to be fair. Guarded by `lock`.
    fair_timeout: LockedCell<u64>,
    /// xorshift32 state for the fairness timer. Guarded by `lock`.
    seed: LockedCell<u32>,
    /// Records queued here, plus parkers between counting themselves in and
    /// queuing. Changed only under `lock` (and read-modify-written without
    /// it, unchanged, by [`may_have_waiters`]).
    waiters: AtomicUsize,
}

impl Bucket {
    fn new(seed: u32) -> Bucket {
        Bucket {
            lock: WordLock::new(),
            head: LockedCell::new(ptr::null()),
            tail: LockedCell::new(ptr::null()),
            fair_timeout: LockedCell::new(now_ns()),
            seed: LockedCell::new(seed | 1),
            waiters: AtomicUsize::new(0),
        }
    }

    /// Appends `data`, which the caller has already counted in `waiters`.
    ///
    /// # Safety
    /// `lock` is held and `data` is not queued anywhere.
    unsafe fn push(&self, data: &ThreadData) {
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
    unsafe fn has_waiter_from(&self, mut from: *const ThreadData, key: usize) -> bool {
        // SAFETY: the caller holds the bucket lock, so the chain is stable.
        unsafe {
            while !from.is_null() {
                if (*from).key.get() == key {
                    return true;
                }
                from = (*from).next.get();
            }
        }
        false
    }

    /// Whether the fairness timer has expired.
    ///
    /// # Safety
    /// `lock` is held.
    unsafe fn fairness_due(&self, now: u64) -> bool {
        // SAFETY: the caller holds the bucket lock.
        now > unsafe { self.fair_timeout.get() }
    }

    /// Re-arms the fairness timer a random 0–1 ms after `now`.
    ///
    /// # Safety
    /// `lock` is held.
    unsafe fn rearm_fairness(&self, now: u64) {
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

struct Table {
    /// `2^bits` buckets, leaked on purpose: buckets move to every later table.
    buckets: Box<[*const Bucket]>,
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
    fn bucket(&self, key: usize) -> &'static Bucket {
        // Fibonacci hashing: the top bits of key × 2^64/φ.
        #[cfg(not(loom))]
        let index = ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize;
        // Loom replays executions and needs each to touch the same objects,
        // but heap addresses differ between runs: every key shares bucket 0,
        // which also model-checks the collided-queue case.
        #[cfg(loom)]
        let index = {
            let _ = key;
            0
        };
        // SAFETY: buckets are leaked, so they live forever.
        unsafe { &*self.buckets[index] }
    }

    fn buckets(&self) -> impl Iterator<Item = &'static Bucket> + '_ {
        // SAFETY: buckets are leaked, so they live forever.
        self.buckets.iter().map(|&b| unsafe { &*b })
    }
}

struct Globals {
    /// The current table; null until the first park or unpark.
    table: AtomicPtr<Table>,
    /// Threads with a live waiter record.
    threads: AtomicUsize,
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
fn globals() -> &'static Globals {
    &GLOBALS
}

fn current_table() -> &'static Table {
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

/// Locks the bucket that holds `key`'s queue in the current table.
fn lock_bucket(key: usize) -> &'static Bucket {
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

/// Makes room for `threads` threads: called when a thread first parks.
fn grow_table(threads: usize) {
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

/// Parks the current thread in the queue for `key`, if `validate` agrees.
///
/// 1. Locks `key`'s queue and calls `validate`. If it returns false, unlocks
///    and returns [`ParkResult::Invalid`].
/// 2. Otherwise queues this thread, unlocks, and calls `before_sleep`.
/// 3. Sleeps until an unpark on `key` claims this thread (returning its token)
///    or until `deadline` passes. On a timeout the thread leaves the queue and
///    `timed_out(key, was_last)` runs under the queue's lock; `was_last` tells
///    whether no other thread is still queued on `key`.
///
/// Spurious wakeups never escape: the result is `Unparked` only after an unpark.
///
/// # Safety
/// - `validate` and `timed_out` run under a bucket lock: they must not panic
///   and must not call into the ParkingLot (nor take any lock that a thread
///   inside the ParkingLot may hold).
/// - `before_sleep` runs with this thread queued: it must not panic and must
///   not park (it may unpark).
///
/// # Panics
/// On a thread marked unable to block ([`crate::set_thread_may_block`]).
pub unsafe fn park_conditionally(
    key: usize,
    validate: impl FnOnce() -> bool,
    before_sleep: impl FnOnce(),
    timed_out: impl FnOnce(usize, bool),
    deadline: Option<Instant>,
) -> ParkResult {
    if !thread_may_block() {
        refuse_to_block("parking");
    }
    with_thread_data(|me| {
        // SAFETY: a thread parks once at a time, so its record is not queued.
        if !unsafe { enqueue(key, validate, me) } {
            return ParkResult::Invalid;
        }
        before_sleep();
        let woken = match deadline {
            None => {
                me.parker.park();
                true
            }
            Some(deadline) => me.parker.park_until(deadline.as_nanos()),
        };
        if woken {
            // SAFETY: the waker wrote the token before claiming the parker,
            // and we observed the claim (Acquire).
            return ParkResult::Unparked(unsafe { me.token.get() });
        }
        // SAFETY: `me` was queued on `key` above; `park` finishes an
        // in-flight wakeup.
        unsafe { leave_queue(key, me, timed_out, || me.parker.park()) }
    })
}

/// Locks `key`'s queue, runs `validate`, and if it agrees queues `me`.
/// Returns whether `me` was queued.
///
/// # Safety
/// As for [`park_conditionally`]'s `validate`; `me` is not queued anywhere.
unsafe fn enqueue(key: usize, validate: impl FnOnce() -> bool, me: &ThreadData) -> bool {
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
            me.key.set(key);
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
/// leaves the queue and `timed_out(key, was_last)` runs under the queue lock.
///
/// # Safety
/// `me` was queued on `key` by `enqueue`; `timed_out` as for [`park_conditionally`].
unsafe fn leave_queue(
    key: usize,
    me: &ThreadData,
    timed_out: impl FnOnce(usize, bool),
    finish_wakeup: impl FnOnce(),
) -> ParkResult {
    let bucket = lock_bucket(key);
    if !me.parker.timed_out() {
        // SAFETY: locked by lock_bucket.
        unsafe { bucket.lock.unlock() };
        finish_wakeup();
        // SAFETY: written by the waker before it claimed us, under the bucket
        // lock we took after it.
        return ParkResult::Unparked(unsafe { me.token.get() });
    }
    // SAFETY: the bucket lock is held and `me` is still queued in this bucket
    // (rehashing moves waiters to the bucket lock_bucket finds for their key).
    unsafe {
        let mut prev: *const ThreadData = ptr::null();
        let mut cur = bucket.head.get();
        while !ptr::eq(cur, me) {
            debug_assert!(
                !cur.is_null(),
                "a waiter that gave up is missing from its queue"
            );
            prev = cur;
            cur = (*cur).next.get();
        }
        bucket.unlink(prev, me);
        let was_last = !bucket.has_waiter_from(bucket.head.get(), key);
        timed_out(key, was_last);
        bucket.lock.unlock();
    }
    ParkResult::TimedOut
}

/// A waiter that is not a sleeping thread: a record that queues in the same
/// ParkingLot queues as parked threads, for callers that must not block (a
/// browser page's main thread). Its state word reads 1 while it is queued and
/// unclaimed and turns 0, with a wake on the word, when an unpark claims it;
/// in wasm, `Atomics.waitAsync` on [`word_address`](Self::word_address)
/// resolves then.
///
/// The protocol: [`park_async`] queues it; when its word turns 0,
/// [`poll`](Self::poll) returns the waker's token; to give up (a timeout,
/// a cancellation), [`cancel_async`] takes it out of the queue or, if a waker
/// won the race, returns that waker's token. A record can be reused after
/// either. Creating one counts as one more waiter for sizing the table, so
/// keep and reuse records rather than creating one per wait.
pub struct AsyncWaiter {
    data: ThreadData,
}

impl AsyncWaiter {
    /// A record that is not queued.
    pub fn new() -> AsyncWaiter {
        AsyncWaiter {
            data: ThreadData::new(true),
        }
    }

    /// The address of the 32-bit word that is 1 while queued and unclaimed.
    pub fn word_address(&self) -> usize {
        self.data.parker.word_address()
    }

    /// The waker's token once an unpark has claimed this record and finished
    /// waking it; `None` while it is still queued.
    pub fn poll(&self) -> Option<UnparkToken> {
        // SAFETY: the waker wrote the token before completing the wakeup,
        // which `is_unparked` observes with Acquire.
        self.data
            .parker
            .is_unparked()
            .then(|| unsafe { self.data.token.get() })
    }
}

impl Default for AsyncWaiter {
    fn default() -> Self {
        AsyncWaiter::new()
    }
}

/// Queues `waiter` on `key` if `validate` (run under the queue lock) agrees,
/// without sleeping. Returns whether it was queued.
///
/// # Safety
/// - `validate` as for [`park_conditionally`];
/// - `waiter` is not queued (it is new, or its last wait was settled by
///   `poll` returning a token or by `cancel_async`), and it neither moves nor
///   is dropped until that wait is settled.
pub unsafe fn park_async(
    key: usize,
    validate: impl FnOnce() -> bool,
    waiter: &AsyncWaiter,
) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { enqueue(key, validate, &waiter.data) }
}

/// Gives up an asynchronous wait: takes `waiter` out of `key`'s queue and runs
/// `timed_out(key, was_last)` under the queue lock, returning `TimedOut`; or,
/// if an unpark claimed it first, returns `Unparked` with the waker's token.
/// Never blocks.
///
/// # Safety
/// `waiter` was queued on `key` by [`park_async`] and not settled since;
/// `timed_out` as for [`park_conditionally`].
pub unsafe fn cancel_async(
    key: usize,
    waiter: &AsyncWaiter,
    timed_out: impl FnOnce(usize, bool),
) -> ParkResult {
    // SAFETY: forwarded from the caller. A claimed word parker is complete at
    // once; the portable one completes a few instructions after its claim.
    unsafe {
        leave_queue(key, &waiter.data, timed_out, || {
            while !waiter.data.parker.is_unparked() {
                crate::sync::spin_loop();
            }
        })
    }
}

/// Wakes the oldest thread parked on `key`, if any. `callback` runs under the
/// queue's lock with what was done and returns the token the woken thread
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
    unsafe { unpark_many(key, 1, false, callback) }
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
#[inline]
fn may_have_waiters(key: usize) -> bool {
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

/// Wakes up to `count` threads parked on `key`, oldest first. Returns how many.
/// With nobody parked in `key`'s bucket this takes no lock (the waiter count
/// described in the module docs): a notify with no waiter costs a hash, two
/// loads and one uncontended read-modify-write.
pub fn unpark_count(key: usize, count: usize) -> usize {
    if !may_have_waiters(key) {
        return 0;
    }
    // SAFETY: the callback does nothing.
    let woken = unsafe { unpark_many(key, count, false, |_| DEFAULT_UNPARK_TOKEN) }.unparked;
    // Waiters that may be gone are woken on top of `count` (see `unpark_many`).
    woken.min(count)
}

/// Wakes every thread parked on `key`. Returns how many.
pub fn unpark_all(key: usize) -> usize {
    unpark_count(key, usize::MAX)
}

/// Wakes up to `max` threads parked on `key`, oldest first, handing each the
/// token `callback` returns (it runs once, under the queue's lock).
///
/// Records whose owner may be gone (see [`ThreadData::can_vanish`]) must not
/// swallow a wakeup a live waiter needs, nor be handed a lock:
/// - when the result will be used to hand something over (`confirm`, or the
///   fairness timer is due), waiters are probed before they are chosen: one
///   not seen waiting is woken and dropped from the queue without counting
///   toward `max` or getting the token, and the next one is taken too, so
///   that [`UnparkResult::confirmed`] tells whether the chosen one is alive;
/// - otherwise nothing is probed, and a wake that finds its owner not waiting
///   (running, or gone) is followed, after the queue lock is released, by a
///   plain wake of the next waiter.
///
/// # Safety
/// As for [`unpark_one`].
pub(crate) unsafe fn unpark_many(
    key: usize,
    max: usize,
    confirm: bool,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    /// Wakeups that wait until the bucket lock is released; any beyond these
    /// are done under the lock (correct, just a longer hold), so that no
    /// unpark allocates.
    const DEFERRED: usize = 8;

    let bucket = lock_bucket(key);
    let mut result = UnparkResult::default();
    // Dequeued waiters, chained through their (now free) `next` fields. While
    // chained, a waiter's token cell says whether it counted (was seen alive,
    // or was not probed) until the callback's token replaces it.
    let mut woken_head: *const ThreadData = ptr::null();
    let mut woken_tail: *const ThreadData = ptr::null();
    let mut counted = 0;
    // The clock is read only once a waiter is found: a notify with nobody
    // waiting must stay cheap (in wasm the clock is a call out to JS).
    let mut now = 0;
    let mut fair_due = false;
    let mut probe = confirm;
    // SAFETY: the bucket lock is held for the whole block; dequeued waiters stay
    // parked (so their records live) until we claim their parkers below.
    let missed = unsafe {
        let mut prev: *const ThreadData = ptr::null();
        let mut cur = bucket.head.get();
        while !cur.is_null() && counted < max {
            let next = (*cur).next.get();
            if (*cur).key.get() == key {
                if result.unparked == 0 {
                    now = now_ns();
                    fair_due = bucket.fairness_due(now);
                    probe |= fair_due;
                }
                bucket.unlink(prev, &*cur);
                (*cur).next.set(ptr::null());
                if woken_tail.is_null() {
                    woken_head = cur;
                } else {
                    (*woken_tail).next.set(cur);
                }
                woken_tail = cur;
                result.unparked += 1;
                result.confirmed = !probe || (*cur).seen_alive();
                counted += usize::from(result.confirmed);
                (*cur).token.set(usize::from(result.confirmed));
            } else {
                prev = cur;
            }
            cur = next;
        }
        result.did_unpark = result.unparked > 0;
        result.may_have_more = bucket.has_waiter_from(cur, key);
        result.time_to_be_fair = result.did_unpark && fair_due;
        if result.time_to_be_fair {
            bucket.rearm_fairness(now);
        }
        let token = callback(result);

        // (handle, whether a wake that finds nobody means a live waiter was missed)
        let mut deferred: [Option<(UnparkHandle, bool)>; DEFERRED] = [const { None }; DEFERRED];
        let mut n = 0;
        let mut missed = 0;
        let mut cur = woken_head;
        while !cur.is_null() {
            // Read everything before claiming: once claimed, the thread may run on.
            let next = (*cur).next.get();
            let counted = (*cur).token.get() == 1;
            let recheck = counted && !probe && (*cur).can_vanish();
            (*cur)
                .token
                .set(if counted { token } else { DEFAULT_UNPARK_TOKEN });
            let handle = (*cur).parker.unpark_lock();
            if n < DEFERRED {
                deferred[n] = Some((handle, recheck));
                n += 1;
            } else if !handle.unpark() && recheck {
                missed += 1;
            }
            cur = next;
        }
        bucket.lock.unlock();
        for (handle, recheck) in deferred.into_iter().flatten() {
            if !handle.unpark() && recheck {
                missed += 1;
            }
        }
        missed
    };
    if missed > 0 {
        // Those owners were not waiting: running (they will see the claim) or
        // gone. Wake as many more, so that a gone one costs nobody a wakeup.
        // SAFETY: the callback does nothing.
        let no_token: fn(UnparkResult) -> UnparkToken = |_| DEFAULT_UNPARK_TOKEN;
        let more = unsafe { unpark_many(key, missed, false, no_token) };
        result.unparked += more.unparked;
    }
    result
}

/// How many threads are parked on `key` right now (a snapshot, O(queue)).
/// For diagnostics and for tests that must know a waiter is queued.
pub fn parked_count(key: usize) -> usize {
    let bucket = lock_bucket(key);
    let mut n = 0;
    // SAFETY: the bucket lock is held while we walk the queue.
    unsafe {
        let mut cur = bucket.head.get();
        while !cur.is_null() {
            n += usize::from((*cur).key.get() == key);
            cur = (*cur).next.get();
        }
        bucket.lock.unlock();
    }
    n
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32};
    use std::sync::Arc;
    use std::time::Duration;

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
        let mut last = None;
        let r = unsafe {
            park_conditionally(
                key,
                || true,
                || {},
                |k, was_last| last = Some((k, was_last)),
                Some(deadline),
            )
        };
        assert_eq!(r, ParkResult::TimedOut);
        assert!(Instant::now() >= deadline, "returned early");
        assert_eq!(last, Some((key, true)));
    }

    #[test]
    fn a_timed_out_waiter_behind_another_sees_it_was_not_last() {
        let word = Box::new(0u64);
        let key = &*word as *const u64 as usize;
        let parked = Arc::new(AtomicU32::new(0));
        let p = parked.clone();
        let long = std::thread::spawn(move || unsafe {
            park_conditionally(
                key,
                || {
                    p.fetch_add(1, Ordering::SeqCst);
                    true
                },
                || {},
                |_, _| {},
                None,
            )
        });
        while parked.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        let mut last = None;
        let r = unsafe {
            park_conditionally(
                key,
                || true,
                || {},
                |_, w| last = Some(w),
                Some(Instant::now() + Duration::from_millis(5)),
            )
        };
        assert_eq!(r, ParkResult::TimedOut);
        assert_eq!(last, Some(false));
        assert_eq!(unpark_all(key), 1);
        assert!(long.join().unwrap().is_unparked());
    }

    #[test]
    fn unpark_count_wakes_oldest_first_and_counts() {
        let word = Box::new(0u64);
        let key = &*word as *const u64 as usize;
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let queued = Arc::new(AtomicU32::new(0));
        let mut hs = Vec::new();
        for i in 0..4u32 {
            let (order, q) = (order.clone(), queued.clone());
            hs.push(std::thread::spawn(move || {
                let r = unsafe {
                    park_conditionally(
                        key,
                        || {
                            q.fetch_add(1, Ordering::SeqCst);
                            true
                        },
                        || {},
                        |_, _| {},
                        None,
                    )
                };
                assert!(r.is_unparked());
                order.lock().unwrap().push(i);
            }));
            // Queue them one at a time so that the queue order is known.
            while queued.load(Ordering::SeqCst) != i + 1 {
                std::thread::yield_now();
            }
        }
        let r = unsafe {
            unpark_many(key, 2, false, |r| {
                assert_eq!(r.unparked, 2);
                assert!(r.may_have_more);
                0
            })
        };
        assert_eq!(r.unparked, 2);
        while order.lock().unwrap().len() < 2 {
            std::thread::yield_now();
        }
        let mut first_two = order.lock().unwrap().clone();
        first_two.sort();
        assert_eq!(first_two, vec![0, 1]);
        assert_eq!(unpark_all(key), 2);
        for h in hs {
            h.join().unwrap();
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
            let mut queued = 0;
            // SAFETY: the bucket lock is held while we walk the queue.
            unsafe {
                let mut cur = bucket.head.get();
                while !cur.is_null() {
                    queued += 1;
                    cur = (*cur).next.get();
                }
                assert_eq!(bucket.waiters.load(Ordering::Relaxed), queued);
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
