//! The runtime's internal critical sections, which cannot be rolled back if
//! a thread stops inside one for good (a wasm worker terminated mid-call):
//! the ParkingLot's bucket locks, and the embedder's own (the wasm module's
//! thread registry and kind table). This module knows which section each
//! thread is inside, so that the thread that reaps a dead one can tell, and
//! keeps the memory-wide **poison** that such a death (or a trap inside a
//! section) sets. The allocator needs none of this: it takes no lock
//! (`heap.rs`).
//!
//! **Marker**, one word per thread (a thread-local), written only by its
//! thread, and read by a reaper only once that thread is known to be gone
//! (the death signal orders the read after the thread's last write):
//!
//! | bits  | meaning                                                        |
//! |-------|----------------------------------------------------------------|
//! | 0–15  | depth: sections entered and not yet left (a table's growth locks every bucket) |
//! | 16–23 | the outermost section entered, a [`Section`]                   |
//! | 24–31 | entries: +1 (wrapping) at each outermost entry, kept when it leaves |
//!
//! Depth 0 is "inside none". The entry count tells a thread that is still
//! inside from one that left and came back ([`marker`]). A thread enters before it asks for the section's
//! lock and leaves after releasing it, so a thread that died waiting for a
//! section (queued in its lock, which a later unlock would wake) counts as
//! inside it too; so does one that died in the few instructions between
//! entering and taking the lock, or releasing and leaving (a false alarm,
//! which poisons a runtime that was still whole). Uncontended lock and
//! unlock of the primitives never enter a section: only their slow paths
//! (parking, waking) take a bucket lock.
//!
//! **Poison**, one word for the whole memory ([`poison_address`]):
//!
//! | bits  | meaning                                                |
//! |-------|--------------------------------------------------------|
//! | 0–31  | the tag of the thread that died (the embedder's name for it) |
//! | 32–39 | the section it died in, a [`Section`]                  |
//! | 40–47 | how it died: [`TERMINATED`] or [`TRAPPED`]             |
//!
//! 0 is "healthy". Set once (the first cause stays) and never cleared.
//! Once it is set, every call that enters a section, waits for an internal
//! lock, or sleeps in the platform's wait leaves at once, or within
//! [`POISON_POLL_NS`] for a thread already asleep, through
//! [`abandon_if_poisoned`]: in wasm a trap, which the JS glue turns into
//! the poisoned error; natively a panic (nothing native sets the poison).
//!
//! **What is left.** A waiter comes out only once the death is *reaped*,
//! and reaping needs a thread whose event loop delivers the death signal.
//! So a thread that waits for a dead thread's section and is itself the
//! only one that would learn of that death waits for ever, and so does a
//! reaper that needs a section in which another thread dies while it reaps
//! (the wasm module's reaper backs off while any thread is inside a
//! section, which leaves only that window of microseconds). Locks outside
//! parklot's code, such as wasm-bindgen's temporary-stack lock of its
//! thread start, are not covered. The README's "Workers that end" lists
//! these with what the tests measured.

use crate::word_lock::WordLock;
use core::sync::atomic::{compiler_fence, AtomicU32, AtomicU64, Ordering};

/// Which internal section a thread is inside: [`WAIT_QUEUES`], or one of
/// the embedder's from [`EMBEDDER_SECTIONS`] on.
pub type Section = u8;

/// The ParkingLot's bucket locks (and its table's growth, which takes them all).
pub const WAIT_QUEUES: Section = 1;
/// The diagnostics' wait-for graph (`diagnostics`), while diagnostics are on.
pub const DIAGNOSTICS: Section = 2;
/// The first section number an embedder may give its own sections.
pub const EMBEDDER_SECTIONS: Section = 16;

/// A poisoning thread died and was reaped.
pub const TERMINATED: u8 = 1;
/// A poisoning thread trapped (a bug) while inside a section.
pub const TRAPPED: u8 = 2;

/// How long a thread asleep in the platform's wait goes between looks at
/// the poison: 100 ms. Sleepers wake this often only to look (a few
/// microseconds each), and a thread stuck behind a dead one's section comes
/// out within this long once the death is reaped.
pub const POISON_POLL_NS: u64 = 100_000_000;

const DEPTH: u32 = 0xFFFF;
const SECTION_SHIFT: u32 = 16;
// (The entry count is not kept under loom, which models no sections.)
#[cfg_attr(loom, allow(dead_code))]
const ENTRIES_SHIFT: u32 = 24;
#[cfg_attr(loom, allow(dead_code))]
const ENTRIES: u32 = 0xFF << ENTRIES_SHIFT;

std::thread_local! {
    /// This thread's marker (see the module docs).
    static MARKER: AtomicU32 = const { AtomicU32::new(0) };
}

/// See the module docs.
static POISON: AtomicU64 = AtomicU64::new(0);

/// The calling thread enters `section`: call before taking its lock. Leaves
/// the call instead if the runtime is poisoned.
#[inline]
pub fn enter(section: Section) {
    abandon_if_poisoned();
    #[cfg(not(loom))]
    MARKER.with(|m| {
        let was = m.load(Ordering::Relaxed);
        let now = if was & DEPTH == 0 {
            let entries = (was & ENTRIES).wrapping_add(1 << ENTRIES_SHIFT);
            entries | (u32::from(section) << SECTION_SHIFT) | 1
        } else {
            was + 1
        };
        m.store(now, Ordering::Relaxed);
    });
    // Stores are not moved past the lock's acquisition: a thread stopped
    // right after taking the lock has its marker already set.
    compiler_fence(Ordering::SeqCst);
    let _ = section;
}

/// The calling thread leaves the section it entered last: call after
/// releasing its lock.
#[inline]
pub fn leave() {
    compiler_fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    MARKER.with(|m| {
        let was = m.load(Ordering::Relaxed);
        debug_assert!(was & DEPTH != 0, "leave() outside any section");
        let now = if was & DEPTH == 1 {
            was & ENTRIES
        } else {
            was - 1
        };
        m.store(now, Ordering::Relaxed);
    });
}

/// The section the calling thread is inside (its outermost), if any.
pub fn current() -> Option<Section> {
    section_of(MARKER.with(|m| m.load(Ordering::Relaxed)))
}

fn section_of(marker: u32) -> Option<Section> {
    (marker & DEPTH != 0).then_some((marker >> SECTION_SHIFT) as Section)
}

/// The address of the calling thread's marker, for a directory that lets a
/// reaper find it by the thread's tag ([`inside`]). Valid while the
/// thread's thread-local storage is.
pub fn marker_address() -> usize {
    MARKER.with(|m| (m as *const AtomicU32).expose_provenance())
}

/// The section the thread whose marker is at `marker` was inside, if any.
///
/// # Safety
/// `marker` came from that thread's [`marker_address`], its thread-local
/// storage is still allocated, and the thread is gone (or is the caller).
pub unsafe fn inside(marker: usize) -> Option<Section> {
    // SAFETY: the caller's contract.
    section_of(unsafe { self::marker(marker) })
}

/// The whole marker word at `marker` (see the module docs), for a reaper
/// that watches whether a thread it cannot know to be alive stays inside:
/// a live one leaves (or comes back, with a new entry count) within
/// microseconds.
///
/// # Safety
/// `marker` came from a thread's [`marker_address`], and its thread-local
/// storage is still allocated.
pub unsafe fn marker(marker: usize) -> u32 {
    let marker = core::ptr::with_exposed_provenance::<AtomicU32>(marker);
    // SAFETY: a live marker word (caller's contract), its provenance
    // exposed by `marker_address`.
    unsafe { &*marker }.load(Ordering::Acquire)
}

/// Whether a [`marker`] word says its thread is inside a section.
pub fn is_inside(marker: u32) -> bool {
    marker & DEPTH != 0
}

/// How many sections a [`marker`] word says its thread is inside (0: none).
pub fn depth(marker: u32) -> u32 {
    marker & DEPTH
}

/// Marks the gone thread whose marker is at `marker` as inside no section:
/// its reaper repaired what it left there (the embedder knows how, for a
/// section whose state it keeps twice), so that it is reaped, not poisoned.
///
/// # Safety
/// As for [`inside`]: the thread is gone for good, and its storage is
/// still allocated.
pub unsafe fn forget_gone(marker: usize) {
    let marker = core::ptr::with_exposed_provenance::<AtomicU32>(marker);
    // SAFETY: a live marker word (caller's contract), its provenance
    // exposed by `marker_address`; its thread writes it no more.
    let m = unsafe { &*marker };
    m.store(m.load(Ordering::Relaxed) & ENTRIES, Ordering::Release);
}

/// Poisons the runtime: thread `tag` died (`how`) inside `section`. Returns
/// false if it was already poisoned (the first cause stays).
pub fn poison(section: Section, tag: u32, how: u8) -> bool {
    let word = u64::from(tag) | (u64::from(section) << 32) | (u64::from(how) << 40);
    POISON
        .compare_exchange(0, word, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Why the runtime is poisoned: `(section, tag, how)`, or `None` if it is not.
pub fn poisoned() -> Option<(Section, u32, u8)> {
    let word = POISON.load(Ordering::SeqCst);
    (word != 0).then_some(((word >> 32) as Section, word as u32, (word >> 40) as u8))
}

/// The address of the poison word (see the module docs), for a host that
/// reads it without calling in.
pub fn poison_address() -> usize {
    &POISON as *const AtomicU64 as usize
}

/// Leaves the current call if the runtime is poisoned: a trap in wasm, a
/// panic natively. Costs one load.
#[inline]
pub fn abandon_if_poisoned() {
    if POISON.load(Ordering::Relaxed) != 0 {
        crate::sys::abandon_call();
    }
}

/// A [`WordLock`] that guards an internal section: its holder, and a thread
/// waiting for it, count as inside `SECTION`.
pub(crate) struct SectionLock<const SECTION: Section>(WordLock);

impl<const SECTION: Section> SectionLock<SECTION> {
    /// An unlocked lock.
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        SectionLock(WordLock::new())
    }

    /// An unlocked lock.
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        SectionLock(WordLock::new())
    }

    /// Enters the section and takes the lock.
    #[inline]
    pub(crate) fn lock(&self) {
        enter(SECTION);
        self.0.lock();
    }

    /// Releases the lock and leaves the section.
    ///
    /// # Safety
    /// As for [`WordLock::unlock`]: the lock is held, by this thread.
    #[inline]
    pub(crate) unsafe fn unlock(&self) {
        // SAFETY: held (caller's contract).
        unsafe { self.0.unlock() };
        leave();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_marker_counts_nesting_and_names_the_outermost_section() {
        std::thread::spawn(|| {
            assert_eq!(current(), None);
            enter(WAIT_QUEUES);
            enter(EMBEDDER_SECTIONS);
            assert_eq!(current(), Some(WAIT_QUEUES));
            // SAFETY: our own marker. (An address back to a pointer: not
            // under Miri's strict provenance.)
            #[cfg(not(miri))]
            assert_eq!(unsafe { inside(marker_address()) }, Some(WAIT_QUEUES));
            leave();
            assert_eq!(current(), Some(WAIT_QUEUES));
            leave();
            assert_eq!(current(), None);
            let before = MARKER.with(|m| m.load(Ordering::Relaxed));
            enter(WAIT_QUEUES);
            leave();
            let after = MARKER.with(|m| m.load(Ordering::Relaxed));
            assert!(
                !is_inside(after) && after != before,
                "each entry is counted"
            );
            let lock = SectionLock::<EMBEDDER_SECTIONS>::new();
            lock.lock();
            assert_eq!(current(), Some(EMBEDDER_SECTIONS));
            // SAFETY: locked just above.
            unsafe { lock.unlock() };
            assert_eq!(current(), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_poison_word_packs_its_cause() {
        // The word is process-wide and never cleared: check the packing only.
        let word = 7u64 | (u64::from(EMBEDDER_SECTIONS) << 32) | (u64::from(TERMINATED) << 40);
        assert_eq!(
            ((word >> 32) as Section, word as u32, (word >> 40) as u8),
            (EMBEDDER_SECTIONS, 7, TERMINATED)
        );
        assert_eq!(poisoned(), None, "nothing native poisons");
    }
}
