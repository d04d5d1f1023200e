//! Diagnostics: who holds what, who waits for what, and deadlocks caught as
//! they close instead of found in a frozen process.
//!
//! Three things, each switched at run time:
//! - **the snapshot** ([`snapshot`]): every queued waiter (from the
//!   ParkingLot's queues, always), every thread the runtime knows (named
//!   with [`set_thread_name`], reaped or not) and, while holds are tracked
//!   ([`set_tracking`]), what each thread holds;
//! - **deadlock detection** ([`crate::deadlock`]): an acquisition that
//!   would close a cycle of threads waiting for each other's locks fails at
//!   once with a [`DeadlockError`](crate::deadlock::DeadlockError);
//! - **lock-order checking** ([`crate::lock_order`]): the first pair of
//!   locks taken in both orders is reported, before any deadlock.
//!
//! **What is tracked.** Holds are known for the primitives that have one
//! owner: [`Lock`](crate::Lock) (so `Mutex`, `FairMutex` and a `Condition`'s
//! lock), the [`RawRwLock`](crate::RawRwLock)'s writer and upgradable
//! reader. Not tracked: shared reads (many holders and no owner to wait
//! on: a writer waiting for readers is shown waiting, but not as part of a
//! cycle), semaphore permits (any thread may release another's), a
//! `Once` being run, a `WordLock` (the ParkingLot's own lock, under every
//! queue), and locks taken before tracking was switched on (their release
//! is ignored).
//!
//! **Cost.** With everything off, every fast path pays one relaxed load of
//! a process-wide byte and a branch not taken ([`tracking`]), and a park
//! reads no clock; the snapshot pays the rest. With tracking on, each acquisition and
//! release of a tracked primitive takes one process-wide lock (the graph's)
//! and updates a table: it is a debugging mode, measured in `bench/`.

mod graph;

use crate::sync::{thread_local, Ordering};
use core::cell::Cell;
use core::sync::atomic::{AtomicU64, AtomicU8};

pub use graph::{
    check_deadlock, lock_order_violations, take_deadlock, Cycle, CycleStep, DeadlockError,
    LockOrderViolation,
};
#[cfg_attr(
    any(loom, all(target_family = "wasm", target_os = "unknown")),
    allow(unused_imports)
)]
pub(crate) use graph::{
    forget_lock_order, keep_deadlock, set_site, set_site_provider, unrefusable, wait_ended,
    will_wait,
};

/// What kind of primitive a wait or a hold is on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Not said by the waiter (an embedder's own wait).
    Unknown = 0,
    /// A [`Lock`](crate::Lock) (and the mutexes over it).
    Lock = 1,
    /// A reader-writer lock's shared read.
    RwLockRead = 2,
    /// A reader-writer lock's write lock.
    RwLockWrite = 3,
    /// A reader-writer lock's upgradable read (or its upgrade).
    RwLockUpgradable = 4,
    /// A [`Condition`](crate::Condition)'s wait for a notify.
    Condition = 5,
    /// A [`Semaphore`](crate::Semaphore)'s permits.
    Semaphore = 6,
    /// A [`Barrier`](crate::Barrier)'s generation.
    Barrier = 7,
    /// A [`Once`](crate::Once) being run by another thread.
    Once = 8,
    /// A futex wait (`Atomics.wait`, [`crate::wait32`]).
    Futex = 9,
}

impl Kind {
    /// The kind's name, as the JS and C APIs print it.
    pub fn name(self) -> &'static str {
        KIND_NAMES[self as usize].to_str().unwrap_or("unknown")
    }
}

/// Each [`Kind`]'s name, by its number (NUL-terminated for the C ABI).
pub(crate) const KIND_NAMES: [&core::ffi::CStr; 10] = [
    c"unknown",
    c"Lock",
    c"RwLock.read",
    c"RwLock.write",
    c"RwLock.upgradable",
    c"Condition",
    c"Semaphore",
    c"Barrier",
    c"Once",
    c"futex",
];

/// What is switched on: a bit each. Not a synchronisation variable (the
/// graph's own lock orders what the bits enable), so a plain atomic even
/// under loom, read Relaxed on every fast path.
static MODE: AtomicU8 = AtomicU8::new(0);
const TRACK: u8 = 1;
const DETECT: u8 = 2;
const ORDER: u8 = 4;

/// Whether any diagnostics that need the fast paths are on: the one load
/// every tracked fast path pays when they are off.
#[inline(always)]
pub(crate) fn tracking() -> bool {
    MODE.load(Ordering::Relaxed) != 0
}

fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

fn set_bit(bit: u8, on: bool) {
    let was = if on {
        MODE.fetch_or(bit, Ordering::Relaxed)
    } else {
        MODE.fetch_and(!bit, Ordering::Relaxed)
    };
    if was != 0 && was & !bit == 0 && !on {
        // Everything is off now: forget what was tracked, so that turning
        // it on again starts from a clean table (holds taken meanwhile are
        // unknown, and their releases ignored).
        graph::forget_holds();
    }
}

/// Switches hold tracking on or off for every thread: while on, the
/// snapshot says who holds each tracked lock. Deadlock detection and
/// lock-order checking track holds whatever this says.
pub fn set_tracking(on: bool) {
    set_bit(TRACK, on);
}

/// Whether holds are tracked now: on their own ([`set_tracking`]) or for
/// detection or lock-order checking.
pub fn is_tracking() -> bool {
    tracking()
}

/// The address of the byte that says what is switched on (0: nothing), for
/// an embedder whose own fast paths read it (non-zero: take the reported
/// calls, e.g. [`crate::Lock::try_lock`] rather than
/// [`crate::Lock::try_lock_unseen`]). It changes only through this module.
pub fn mode_address() -> usize {
    MODE.as_ptr() as usize
}

/// Whether [`set_tracking`]'s own switch is on.
pub fn is_tracking_holds() -> bool {
    mode() & TRACK != 0
}

/// The id of the calling thread, as the snapshot and the reports name it:
/// small numbers from 1, in the order threads first asked.
// Loom's thread-local macro (under loom) takes no `const` block.
#[allow(clippy::missing_const_for_thread_local)]
pub fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: Cell<u64> = Cell::new(0);
    }
    ID.with(|id| {
        if id.get() == 0 {
            id.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        id.get()
    })
}

/// Names the calling thread for the snapshot and the reports.
pub fn set_thread_name(name: &str) {
    graph::name_thread(thread_id(), name);
}

/// A tracked primitive at `resource` was just taken by this thread.
#[inline(always)]
pub(crate) fn acquired(resource: usize, kind: Kind) {
    if tracking() {
        graph::acquired(resource, kind, mode() & ORDER != 0);
    }
}

/// A tracked primitive at `resource` was just released (by its holder, or
/// by a reaper on a gone holder's behalf).
#[inline(always)]
pub(crate) fn released(resource: usize) {
    if tracking() {
        graph::released(resource);
    }
}

/// A thread the embedder learned is gone: it leaves the graph (its holds,
/// its waits) and the snapshot shows it reaped.
pub(crate) fn thread_gone(thread: u64) {
    graph::thread_gone(thread, tracking());
}

/// One queued waiter, as the snapshot shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// The address it waits on (a primitive's, or an `Atomics.wait` index's).
    pub address: usize,
    /// What it waits for, when the waiter said.
    pub kind: Kind,
    /// The thread that waits ([`thread_id`]), or that owns the async record.
    pub thread: u64,
    /// A blocked thread (else an async record: a `waitAsync`, a future, an
    /// awaited lock).
    pub blocking: bool,
    /// When it was queued, in the runtime clock's nanoseconds: 0 unless
    /// diagnostics were on ([`set_tracking`], detection or lock-order
    /// checking) when it queued (a park reads no clock otherwise: in wasm
    /// the clock is a call into JS), or where no clock is installed.
    pub since_ns: u64,
    /// When it gives up, in the same clock, if it has a timeout.
    pub deadline_ns: Option<u64>,
}

/// A thread the runtime knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its id ([`thread_id`]).
    pub id: u64,
    /// The name it was given, if any.
    pub name: Option<String>,
    /// It is gone and was reaped.
    pub reaped: bool,
}

/// A tracked primitive held by a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// The primitive's address.
    pub address: usize,
    /// What it is.
    pub kind: Kind,
    /// The holder ([`thread_id`]).
    pub thread: u64,
}

/// The world at one moment (each queue is read whole under its own lock,
/// one queue after another).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// When it was taken, in the runtime clock's nanoseconds.
    pub now_ns: u64,
    /// Every queued waiter, grouped by address, oldest first per address.
    pub waiters: Vec<Waiter>,
    /// Every thread named, seen holding or waiting, or reaped.
    pub threads: Vec<ThreadInfo>,
    /// What each thread holds (while tracking is on; empty otherwise), in
    /// no particular order.
    pub holds: Vec<Hold>,
    /// Whether holds were tracked when it was taken.
    pub tracking: bool,
    /// Whether deadlock detection was on.
    pub detecting: bool,
}

impl Snapshot {
    /// How many waiters are queued on `address`.
    pub fn waiter_count(&self, address: usize) -> usize {
        self.waiters.iter().filter(|w| w.address == address).count()
    }
}

/// Takes a snapshot: cheap enough to call every 100 ms (one queue lock at a
/// time, held while its waiters are copied out).
pub fn snapshot() -> Snapshot {
    let mut waiters: Vec<Waiter> = crate::parking_lot::queued()
        .into_iter()
        .map(|q| Waiter {
            address: q.key,
            kind: q.kind,
            thread: q.thread,
            blocking: q.blocking,
            since_ns: q.since_ns,
            deadline_ns: q.deadline_ns,
        })
        .collect();
    group_by_address(&mut waiters);
    let (threads, holds) = graph::threads_and_holds(waiters.iter().map(|w| w.thread));
    Snapshot {
        now_ns: crate::sys::now_ns(),
        waiters,
        threads,
        holds,
        tracking: tracking(),
        detecting: mode() & DETECT != 0,
    }
}

/// Groups `waiters` by address, keeping each queue's order (FIFO, as the
/// walk read it): an insertion sort, stable, written out because the
/// library's sorts would add several KB to the wasm module, and queues are
/// short and mostly grouped already (one bucket after another).
fn group_by_address(waiters: &mut [Waiter]) {
    for i in 1..waiters.len() {
        let mut j = i;
        while j > 0 && waiters[j - 1].address > waiters[j].address {
            waiters.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// How many waiters are queued on `address` now (a snapshot of one queue).
pub fn waiter_count(address: usize) -> usize {
    crate::parking_lot::queued_on(address)
}

pub(crate) fn detecting() -> bool {
    mode() & DETECT != 0
}

pub(crate) fn set_detecting(on: bool) {
    set_bit(DETECT, on);
}

pub(crate) fn set_ordering(on: bool) {
    set_bit(ORDER, on);
}

pub(crate) fn ordering() -> bool {
    mode() & ORDER != 0
}

// Also run under Miri (scripts/test.sh): the queue walk reads records other
// threads own, under their bucket's lock.
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::parking_lot::{park_conditionally, unpark_all, ParkResult};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn the_snapshot_sees_a_parked_thread_and_its_deadline() {
        let flag = Arc::new(AtomicBool::new(false));
        let key = Arc::as_ptr(&flag) as usize;
        let parked = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                set_thread_name("parked");
                let deadline = crate::Instant::now() + core::time::Duration::from_secs(60);
                // SAFETY: the callbacks touch nothing.
                let r = unsafe {
                    park_conditionally(
                        key,
                        || !flag.load(Ordering::Relaxed),
                        || {},
                        |_, _| {},
                        Some(deadline),
                    )
                };
                assert!(matches!(r, ParkResult::Unparked(_) | ParkResult::Invalid));
            })
        };
        while waiter_count(key) == 0 {
            std::thread::yield_now();
        }
        let snap = snapshot();
        let w = snap.waiters.iter().find(|w| w.address == key).unwrap();
        assert!(w.blocking && w.deadline_ns.is_some() && w.kind == Kind::Unknown);
        let t = snap.threads.iter().find(|t| t.id == w.thread).unwrap();
        assert_eq!(t.name.as_deref(), Some("parked"));
        flag.store(true, Ordering::Relaxed);
        unpark_all(key);
        parked.join().unwrap();
        assert_eq!(waiter_count(key), 0);
    }
}
