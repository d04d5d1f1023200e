//! The module's internal critical sections (`parklot::critical`): `locked`,
//! which every one of them goes through; a directory in which a reaper finds
//! a thread's marker by the thread's tag, without any lock (the dead thread
//! may hold the registry's); and the exports through which the JS glue
//! reads and sets the poison.

use core::sync::atomic::{AtomicU64, Ordering};
use parklot::critical::{self, Section, EMBEDDER_SECTIONS};
use parklot::WordLock;
use wasm_bindgen::prelude::*;

/// The thread registry (`threads.rs`); js/src/errors.ts names each section.
pub(crate) const REGISTRY: Section = EMBEDDER_SECTIONS;
/// Any other table of the module's (the owner-died marks) taken through [`locked`].
pub(crate) const TABLES: Section = EMBEDDER_SECTIONS + 1;
/// A hold's record and its lock's word out of step: the contended release
/// of a `Lock` that is one of several the thread holds, after its record of
/// holding it is gone and before its byte is released (lib.rs,
/// `release_forgotten`; a thread's only hold stays on record until the byte
/// is given up, and needs no section); and the poison's name for a thread
/// stopped inside a reader-writer lock's acquisition, release or downgrade
/// (`threads::begin_step`). A thread that dies there leaves a lock nobody holds
/// and no reaper can release, or a record that makes its reaper release a
/// lock another thread holds by then.
pub(crate) const LOCK_STEP: Section = EMBEDDER_SECTIONS + 2;
/// The kind table (kinds.rs), behind its own lock (`parklot::TakeoverLock`):
/// a thread that dies inside it is repaired after, not poisoned
/// ([`recover_kind_table`]); only a trap there (a bug) poisons the runtime.
pub(crate) const KIND_TABLE: Section = EMBEDDER_SECTIONS + 3;

/// Runs `f`, the rest of a `Lock`'s contended release (of one of several
/// holds, already forgotten), inside
/// [`LOCK_STEP`]: a thread terminated there (in a call's prologue, where an
/// engine stops a thread) poisons the runtime when reaped, instead of
/// leaving a lock that nobody will release (its waiters then waited for
/// ever: the death test's stuck survivors).
#[inline(always)]
pub(crate) fn lock_step<T>(f: impl FnOnce() -> T) -> T {
    critical::enter(LOCK_STEP);
    let r = f();
    critical::leave();
    r
}

/// Runs `f` with `lock` (one of the module's own internal locks: the
/// registry's, the owner-died marks') held. Every internal critical section
/// of the module goes through here (but the kind table's, which enters
/// [`KIND_TABLE`] around its own lock), so that a reaper knows when a thread died
/// inside one (leaving the lock held, or its queue half-edited): the
/// thread counts as inside `TABLES` from before it asks for the lock until
/// after it released it (`parklot::critical`, the marker).
pub(crate) fn locked<T>(lock: &WordLock, f: impl FnOnce() -> T) -> T {
    locked_in(TABLES, lock, f)
}

/// [`locked`], naming the section.
pub(crate) fn locked_in<T>(section: Section, lock: &WordLock, f: impl FnOnce() -> T) -> T {
    critical::enter(section);
    lock.lock();
    let r = f();
    // SAFETY: locked just above, by this thread.
    unsafe { lock.unlock() };
    critical::leave();
    r
}

/// Threads registered at once, at most: 1024. A 1 GiB memory holds at most
/// 512 worker stacks of 2 MiB (wasm-bindgen's), so every thread finds a slot.
const SLOTS: usize = 1024;

/// One slot per registered thread: its marker's address (bits 0–31, never
/// 0) and its tag (bits 32–63); 0 is a free slot. Claimed by the thread as
/// it registers, freed when it unregisters or is reaped.
static DIRECTORY: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

fn slot(tag: u32, marker: usize) -> u64 {
    (u64::from(tag) << 32) | marker as u64
}

/// Lists the calling thread under `tag` (a thread registered twice has two
/// slots). A thread that finds no slot is registered without one: a reaper
/// then cannot tell whether it died inside a section.
pub(crate) fn claim(tag: u32) {
    let me = slot(tag, critical::marker_address());
    for s in &DIRECTORY {
        if s.compare_exchange(0, me, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// Frees one slot of thread `tag`.
pub(crate) fn release(tag: u32) {
    for s in &DIRECTORY {
        let v = s.load(Ordering::Relaxed);
        if v != 0
            && (v >> 32) as u32 == tag
            && s.compare_exchange(v, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
}

/// The section thread `tag`, which is gone, died inside, if any.
pub(crate) fn inside(tag: u32) -> Option<Section> {
    DIRECTORY.iter().find_map(|s| {
        let v = s.load(Ordering::Acquire);
        // SAFETY: a listed thread's storage lives until it is reaped (its
        // slot is freed first), and the caller knows it is gone.
        (v != 0 && (v >> 32) as u32 == tag)
            .then(|| unsafe { critical::inside(v as u32 as usize) })?
    })
}

/// Repairs what thread `tag`, which is gone, left inside [`KIND_TABLE`]
/// (kinds.rs, `recover_from`: the table is kept twice, and its lock names
/// its holder), and then counts the thread as inside no section. Whether it
/// did; not if the thread was inside another section too, and the runtime
/// must be poisoned then.
pub(crate) fn recover_kind_table(tag: u32) -> bool {
    DIRECTORY.iter().any(|s| {
        let v = s.load(Ordering::Acquire);
        if v == 0 || (v >> 32) as u32 != tag {
            return false;
        }
        let at = v as u32 as usize;
        // SAFETY: a listed thread's storage lives until it is reaped, and
        // the caller knows it is gone (as in `inside`).
        let m = unsafe { critical::marker(at) };
        if critical::depth(m) != 1 || unsafe { critical::inside(at) } != Some(KIND_TABLE) {
            return false;
        }
        crate::kinds::recover_from(at as u32);
        // SAFETY: as above; the thread is gone.
        unsafe { critical::forget_gone(at) };
        true
    })
}

/// Whether a listed thread other than `tag` stays inside a section while we
/// watch (a few thousand reads of its marker, microseconds). A reaper asks
/// before it reaps: a section held by a thread that died and is not reaped
/// yet would make it wait for ever, with its own event loop (which would
/// deliver that death) stuck behind it. So it backs off and tries again
/// later instead, and the holder's reaping, or its leaving the section,
/// comes first. A live thread inside one leaves, or comes back with a new
/// entry count in its marker, within the watch: only a thread that died
/// there (or waits behind one that did, or was descheduled) holds the
/// reaper back. A live thread's marker may be read as its thread-local
/// storage is being freed: a stale value only makes the reaper try again.
pub(crate) fn others_inside(tag: u32) -> bool {
    /// Reads of each marker before a thread counts as staying inside:
    /// 4096, several microseconds, many times a section's length (a kind
    /// table update takes a few hundred nanoseconds).
    const WATCH: u32 = 4096;
    let inside = |s: &AtomicU64| -> Option<(usize, u32)> {
        let v = s.load(Ordering::Acquire);
        if v == 0 || (v >> 32) as u32 == tag {
            return None;
        }
        let at = v as u32 as usize;
        // SAFETY: a listed thread's marker is wasm memory, readable at any
        // time; see above for what a stale read costs.
        let m = unsafe { critical::marker(at) };
        critical::is_inside(m).then_some((at, m))
    };
    let mut stuck: Vec<(usize, u32)> = DIRECTORY.iter().filter_map(inside).collect();
    for _ in 0..WATCH {
        if stuck.is_empty() {
            return false;
        }
        // SAFETY: as above.
        stuck.retain(|&(at, m)| unsafe { critical::marker(at) } == m);
        core::hint::spin_loop();
    }
    !stuck.is_empty()
}

/// The address of the poison word (`parklot::critical`): two u32s, the
/// dead thread's tag, then its section (bits 0–7) and how it died (8–15);
/// all zero while the runtime is healthy.
#[wasm_bindgen]
pub fn poison_address() -> u32 {
    critical::poison_address() as u32
}

/// Called by the JS glue after a trap on this thread (registered as `tag`):
/// if the trap came inside one of the runtime's sections, which it cannot
/// roll back, poisons the runtime. Returns whether the runtime is poisoned.
#[wasm_bindgen]
pub fn thread_trapped(tag: u32) -> bool {
    if let Some(section) = critical::current() {
        critical::poison(section, tag, critical::TRAPPED);
    } else if crate::threads::stepping() {
        critical::poison(LOCK_STEP, tag, critical::TRAPPED);
    }
    critical::poisoned().is_some()
}

/// For the JS glue's test of poisoning only: enters one of the module's
/// sections and traps inside it, as a bug there would.
#[wasm_bindgen]
pub fn trap_in_section_for_test() {
    critical::enter(TABLES);
    core::arch::wasm32::unreachable()
}
