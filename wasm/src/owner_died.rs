//! Reader-writer locks whose writer died holding them. A `Lock` keeps its
//! owner-died mark in its own byte; a `RawRwLock`'s word has no bit to
//! spare, so the marks live here: a set of addresses, written by a reaper
//! before it releases the write lock, taken by the next thread that gets the
//! write lock (a write or an upgrade), which then reports `OWNER_DIED`.
//!
//! While no mark is set (the usual case), checking costs one relaxed load of
//! [`MARKED`]: the reaper adds the mark before its releasing store, and the
//! next writer's acquisition synchronizes with that store, so it sees the
//! count.

use core::cell::UnsafeCell;
use parklot::WordLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// How many marks are set.
static MARKED: AtomicU32 = AtomicU32::new(0);

/// The marked addresses, behind a WordLock (it spins rather than sleeps on
/// a thread that may not block).
struct Marks {
    lock: WordLock,
    addresses: UnsafeCell<Vec<u32>>,
}

// SAFETY: `addresses` is only touched with `lock` held.
unsafe impl Sync for Marks {}

static MARKS: Marks = Marks {
    lock: WordLock::new(),
    addresses: UnsafeCell::new(Vec::new()),
};

/// Runs `f` on the marked addresses, under their lock (an internal section:
/// a thread that dies inside it poisons the runtime, `sections.rs`).
fn with_marks<T>(f: impl FnOnce(&mut Vec<u32>) -> T) -> T {
    // SAFETY: the lock is held for the whole call.
    crate::sections::locked(&MARKS.lock, || f(unsafe { &mut *MARKS.addresses.get() }))
}

/// Marks the reader-writer lock at `addr`: its writer died holding it.
pub(crate) fn mark(addr: u32) {
    with_marks(|marks| {
        if !marks.contains(&addr) {
            marks.push(addr);
            MARKED.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// The address of the count of marks, which JS reads after an uncontended
/// write it took itself (js/src/rwlock.ts): only while it is not 0 does it
/// ask wasm for the lock's mark (`rwlock_owner_died`).
pub(crate) fn count_address() -> u32 {
    MARKED.as_ptr() as u32
}

/// Takes the mark of the lock at `addr`: whether its last writer died
/// holding it (the caller, which now holds the write lock, reports it).
#[inline]
pub(crate) fn take(addr: u32) -> bool {
    MARKED.load(Ordering::Relaxed) != 0 && take_slow(addr)
}

#[cold]
fn take_slow(addr: u32) -> bool {
    with_marks(|marks| match marks.iter().position(|&a| a == addr) {
        Some(i) => {
            marks.swap_remove(i);
            MARKED.fetch_sub(1, Ordering::Relaxed);
            true
        }
        None => false,
    })
}
