//! What the JS API made where: the kind of every object in the memory that
//! `rt.lock()`, `rt.rwLock()`, ... and `rt.alloc()` allocated, that
//! `rt.place()` declared inside a block, and that the runtime allocated for
//! itself, so that no address is trusted for its kind (DESIGN.md, "Death
//! and lifetime"). One table for the whole memory: any thread may ask about
//! an address another thread made.
//!
//! The table is consulted when an object is made from an address
//! (`rt.lockAt()`, `revive()`), freed, placed, or viewed (`rt.int32()`,
//! `rt.atomics`), never on a lock or unlock: those trust the object they
//! are called on, which was checked when it was made.
//!
//! Two maps of address to [`Object`]:
//! - `made`: allocations (blocks of bytes, primitives, the runtime's own
//!   memory) and freed ones. Entries never overlap. A freed object's entry
//!   stays, marked [`kind::FREED`], and says "was freed" until an allocation
//!   through the table overlaps it: the allocation takes it over in place
//!   (a lock made and freed in a loop keeps reusing one entry), or carves
//!   it away. So the table holds the live objects and at most one entry per
//!   freed one whose bytes were not handed out again through it.
//! - `placed`: primitives declared inside blocks of bytes, and freed ones;
//!   they go when their block is freed.
//!
//! The table is kept twice ([`Shared`]), so that a worker terminated while
//! it edits one copy leaves the other whole, and its reaper repairs the
//! table instead of poisoning the runtime.

use crate::sections::KIND_TABLE;
use crate::threads::{test_point, StepPoint};
use core::cell::UnsafeCell;
use parklot::critical;
use parklot::{Barrier, Condition, Lock, Once, OnceState, RawRwLock, Semaphore, TakeoverLock};
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{compiler_fence, AtomicI32, AtomicU32, AtomicU8, Ordering};
use wasm_bindgen::prelude::*;

/// What an address holds (js/src/kinds.ts, `Kind`).
pub mod kind {
    /// Something that was freed (and not allocated again through the JS API).
    pub const FREED: u32 = 0;
    /// A block from `rt.alloc()`.
    pub const BYTES: u32 = 1;
    /// The runtime's own: its header, a waiter record, a thread's bookkeeping.
    pub const INTERNAL: u32 = 2;
    pub const LOCK: u32 = 3;
    pub const CONDITION: u32 = 4;
    pub const RWLOCK: u32 = 5;
    pub const SEMAPHORE: u32 = 6;
    pub const BARRIER: u32 = 7;
    pub const ONCE: u32 = 8;
}

/// What the exports below report (js/src/kinds.ts, `Checked`).
pub mod checked {
    /// Done (or allowed).
    pub const OK: u32 = 0;
    /// The address does not hold what was asked for: ask [`kind_describe`](super::kind_describe).
    pub const NOT_THERE: u32 = 1;
    /// Held or waited for: not freed.
    pub const BUSY: u32 = 2;
    /// A block freed with another size or alignment than it was allocated with.
    pub const WRONG_LAYOUT: u32 = 3;
    /// It would overlap a primitive placed in the block.
    pub const OVERLAP: u32 = 4;
    /// Not aligned for the kind.
    pub const MISALIGNED: u32 = 5;
    /// It runs past the end of its block.
    pub const PAST_END: u32 = 6;
    /// No such kind.
    pub const UNKNOWN_KIND: u32 = 7;
}

/// One entry: the size asked for (0 for a zero-byte block, which still
/// takes its first byte) and the alignment, as log2.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Object {
    size: u32,
    kind: u32,
    align_log2: u32,
}

impl Object {
    /// The bytes it takes from its start: at least one.
    fn extent(self) -> u32 {
        self.size.max(1)
    }

    fn is_primitive(self) -> bool {
        is_primitive(self.kind)
    }
}

fn is_primitive(kind: u32) -> bool {
    (kind::LOCK..=kind::ONCE).contains(&kind)
}

/// The layout of a primitive of `kind`, from the core's own types (so a
/// change of a type's size is followed here); `None` for any other kind.
fn primitive_layout(kind: u32) -> Option<Layout> {
    Some(match kind {
        kind::LOCK => Layout::new::<Lock>(),
        kind::CONDITION => Layout::new::<Condition>(),
        kind::RWLOCK => Layout::new::<RawRwLock>(),
        kind::SEMAPHORE => Layout::new::<Semaphore>(),
        kind::BARRIER => Layout::new::<Barrier>(),
        kind::ONCE => Layout::new::<Once>(),
        _ => return None,
    })
}

/// Whether the primitive of `kind` at `addr` is held or waited for (a
/// snapshot of its word; a waiter woken but not yet run is not seen for
/// every kind: the docs ask that other threads be done with it first).
///
/// # Safety
/// `addr` holds a live primitive of `kind` (the table says so).
unsafe fn busy(addr: u32, kind: u32) -> bool {
    // SAFETY (each arm): the caller's contract; each type is valid at its address.
    unsafe {
        match kind {
            kind::LOCK => {
                let l = &*(addr as *const Lock);
                l.is_locked() || l.has_parked() || l.has_woken_waiter()
            }
            // A Condition is one byte, non-zero while someone may wait on it.
            kind::CONDITION => (*(addr as *const AtomicU8)).load(Ordering::Relaxed) != 0,
            kind::RWLOCK => {
                let l = &*(addr as *const RawRwLock);
                l.is_locked() || l.has_parked()
            }
            kind::SEMAPHORE => (*(addr as *const Semaphore)).has_parked(),
            kind::BARRIER => (*(addr as *const Barrier)).waiting() != 0,
            kind::ONCE => (*(addr as *const Once)).state() == OnceState::InProgress,
            _ => false,
        }
    }
}

#[derive(Clone)]
struct Table {
    made: BTreeMap<u32, Object>,
    placed: BTreeMap<u32, Object>,
}

/// The entry of `map` whose extent holds `addr`.
fn containing(map: &BTreeMap<u32, Object>, addr: u32) -> Option<(u32, Object)> {
    let (&start, &o) = map.range(..=addr).next_back()?;
    (addr - start < o.extent()).then_some((start, o))
}

/// The entries of `map` that overlap `[start, end)`, in address order (no
/// allocation: this runs on every `rt.alloc()`).
fn overlapping(
    map: &BTreeMap<u32, Object>,
    start: u32,
    end: u32,
) -> impl Iterator<Item = (u32, Object)> + '_ {
    let before = containing(map, start).filter(|&(s, _)| s < start);
    before
        .into_iter()
        .chain(map.range(start..end.max(start)).map(|(&s, &o)| (s, o)))
}

impl Table {
    const fn new() -> Table {
        Table {
            made: BTreeMap::new(),
            placed: BTreeMap::new(),
        }
    }

    /// Records a fresh allocation. Whatever the table said of its bytes is
    /// stale (the allocator handed them out): freed entries give way to it.
    /// Most often one search finds where it goes: the allocator hands out
    /// again what was just freed, of the same size (the freed entry becomes
    /// the new one in place), or memory no entry covers. Each BTreeMap
    /// search or insert costs about 100 ns in wasm (V8, measured through
    /// `kind_alloc`): the general path below takes four.
    fn record(&mut self, addr: u32, o: Object) {
        let end = addr + o.extent();
        if !self.placed.is_empty() {
            carve(&mut self.placed, addr, end);
        }
        let mut gap = self.made.upper_bound_mut(Bound::Included(&addr));
        let next_overlaps = gap.peek_next().is_some_and(|(&n, _)| n < end);
        let in_gap = match gap.peek_prev() {
            Some((&s, old))
                if s == addr && old.kind == kind::FREED && old.extent() == o.extent() =>
            {
                *old = o;
                return;
            }
            Some((&s, old)) if addr - s < old.extent() => false, // overlaps: carve
            _ => !next_overlaps,
        };
        if in_gap {
            // Ordered (the entries before and after do not reach `addr`), so this succeeds.
            let _ = gap.insert_before(addr, o);
            return;
        }
        carve(&mut self.made, addr, end);
        self.made.insert(addr, o);
    }

    /// What is at `addr`: a placed entry first (it lies inside a block).
    fn find(&self, addr: u32) -> Option<(u32, Object, bool)> {
        if let Some((s, o)) = containing(&self.placed, addr) {
            return Some((s, o, true));
        }
        containing(&self.made, addr).map(|(s, o)| (s, o, false))
    }

    /// The block of bytes whose extent holds `addr`.
    fn block(&self, addr: u32) -> Option<(u32, Object)> {
        containing(&self.made, addr).filter(|(_, o)| o.kind == kind::BYTES)
    }

    /// The first live primitive placed in `[start, end)`.
    fn placed_in(&self, start: u32, end: u32) -> Option<(u32, Object)> {
        overlapping(&self.placed, start, end).find(|(_, o)| o.is_primitive())
    }
}

/// Removes what `map` says of `[start, end)`: freed ranges keep their parts
/// outside it; anything else there is stale and goes.
fn carve(map: &mut BTreeMap<u32, Object>, start: u32, end: u32) {
    // One at a time: what is put back lies outside `[start, end)`.
    loop {
        let Some((s, o)) = overlapping(map, start, end).next() else {
            break;
        };
        map.remove(&s);
        if o.kind != kind::FREED {
            continue;
        }
        let o_end = s + o.extent();
        for (a, b) in [(s, start), (end, o_end)] {
            if a < b {
                let rest = Object { size: b - a, ..o };
                map.insert(a, rest);
            }
        }
    }
}

/// The first primitive placed in `[start, end)` that is held or waited for.
fn busy_placed(placed: &BTreeMap<u32, Object>, start: u32, end: u32) -> Option<u32> {
    overlapping(placed, start, end)
        // SAFETY: a live primitive of its kind is placed there (the table says so).
        .find(|&(p, o)| o.is_primitive() && unsafe { busy(p, o.kind) })
        .map(|(p, _)| p)
}

/// One change to the table, decided on the first copy and then made to
/// each copy in turn ([`with_table`]): the same change to the same state,
/// so the copies stay equal. (Deciding once matters: the decision may read
/// a primitive's word, which can change between two looks.)
#[derive(Clone, Copy)]
enum Edit {
    /// [`Table::record`].
    Record(u32, Object),
    /// The entry of `made` at this address goes.
    Forget(u32),
    /// The entry at this address, in `placed` (true) or `made`, is marked freed.
    MarkFreed(u32, bool),
    /// What `placed` says of `[start, end)` goes ([`carve`]).
    CarvePlaced(u32, u32),
    /// A primitive placed at this address.
    Place(u32, Object),
}

impl Edit {
    fn apply(self, t: &mut Table) {
        match self {
            Edit::Record(addr, o) => t.record(addr, o),
            Edit::Forget(addr) => {
                t.made.remove(&addr);
            }
            Edit::MarkFreed(addr, placed) => {
                let map = if placed { &mut t.placed } else { &mut t.made };
                if let Some(o) = map.get_mut(&addr) {
                    o.kind = kind::FREED;
                }
            }
            Edit::CarvePlaced(start, end) => {
                if !t.placed.is_empty() {
                    carve(&mut t.placed, start, end);
                }
            }
            Edit::Place(addr, o) => {
                t.placed.insert(addr, o);
            }
        }
    }
}

/// The edits of one call: at most two.
type Edits = [Option<Edit>; 2];

/// A call that reads the table only.
const NO_EDITS: Edits = [None, None];

/// The table, kept twice behind a lock that names its holder
/// ([`TakeoverLock`]). A thread stopped for good inside a BTreeMap's insert or
/// removal (a worker terminated: an engine stops it at any call) leaves
/// that map in pieces nobody can put together, and before, any death
/// inside the table's section poisoned the runtime. So each edit is made
/// to the first copy, then to the second: a thread that dies holding the
/// lock leaves at least one copy whole, which its reaper copies over the
/// other ([`recover_from`]) before it releases the lock for it and reaps it
/// as any other thread. A thread that dies waiting for the lock leaves
/// nothing behind. Reads use the first copy.
///
/// `editing`, written only by the lock's holder and read by a reaper once
/// the holder is gone (the death signal orders the read after the holder's
/// writes; compiler fences keep each write where it is): 0, the copies are
/// equal; 1, the first is being edited (the second is whole, as before the
/// edit); 2, the second is (the first is whole, as after it).
struct Shared {
    lock: TakeoverLock,
    copies: UnsafeCell<[Table; 2]>,
    editing: AtomicU32,
}

// SAFETY: `copies` is only touched with `lock` held (`with_table`,
// `recover_from`).
unsafe impl Sync for Shared {}

static SHARED: Shared = Shared {
    lock: TakeoverLock::new(),
    copies: UnsafeCell::new([Table::new(), Table::new()]),
    editing: AtomicU32::new(0),
};

/// Bumped by every free and placement: a view checked before then is
/// checked again (js/src/atomics.ts keeps the views it checked).
static GENERATION: AtomicI32 = AtomicI32::new(0);

/// A Lock's byte that is locked for ever and never unlocked: a freed `Lock`
/// object calls with this address instead of its own (js/src/lock.ts), so
/// that its calls reach no freed memory and its fast paths stay unchanged:
/// its acquisitions fail (the exports say `acquired::FREED` where they
/// would wait) and its releases are refused.
static TOMBSTONE: AtomicU8 = AtomicU8::new(1);

/// Whether `addr` is a freed Lock's stand-in (see [`TOMBSTONE`]).
#[inline]
pub(crate) fn is_tombstone(addr: u32) -> bool {
    addr == TOMBSTONE.as_ptr() as u32
}

/// Runs `decide` on the table under its lock, then makes the edits it
/// returns to each copy in turn (see [`Shared`]); returns what it decided.
fn with_table<T>(decide: impl FnOnce(&Table) -> (T, Edits)) -> T {
    // Inside the section from before the lock is asked for until after it
    // was released: a reaper then knows to look at the lock's holder.
    critical::enter(KIND_TABLE);
    SHARED.lock.lock(critical::marker_address() as u32);
    let r = {
        // SAFETY: the lock is held for the whole call, and `decide` cannot
        // reach `with_table` again (nothing in this module calls out).
        let copies = unsafe { &mut *SHARED.copies.get() };
        let (r, edits) = decide(&copies[0]);
        if edits[0].is_some() {
            for (i, copy) in copies.iter_mut().enumerate() {
                SHARED.editing.store(i as u32 + 1, Ordering::Relaxed);
                compiler_fence(Ordering::SeqCst);
                for e in edits.into_iter().flatten() {
                    e.apply(copy);
                }
                test_point(if i == 0 {
                    StepPoint::KindTableFirstCopy
                } else {
                    StepPoint::KindTableSecondCopy
                });
                compiler_fence(Ordering::SeqCst);
            }
            SHARED.editing.store(0, Ordering::Relaxed);
        }
        r
    };
    compiler_fence(Ordering::SeqCst);
    SHARED.lock.unlock();
    critical::leave();
    r
}

/// [`with_table`] for a call that only reads.
fn read_table<T>(read: impl FnOnce(&Table) -> T) -> T {
    with_table(|t| (read(t), NO_EDITS))
}

/// For the reaper of a thread that is gone inside the table's section,
/// whose marker is at `marker`. If it held the table's lock, the reaper
/// takes the lock over, copies the copy it left whole over the one it may
/// have left in pieces, and releases the lock. If not, it died waiting for
/// the lock, or after its release: it left nothing but perhaps sleepers
/// that its release did not wake, which are woken. Either way the dead
/// thread may be reaped. A reaper that dies in here holds the lock, so its
/// own reaper repairs again.
pub(crate) fn recover_from(marker: u32) {
    critical::enter(KIND_TABLE);
    let me = critical::marker_address() as u32;
    if !SHARED.lock.take_over(marker, me) {
        SHARED.lock.wake_all();
        critical::leave();
        return;
    }
    // SAFETY: this thread holds the lock now: nobody else touches the
    // copies until it releases it.
    let copies = unsafe { &mut *SHARED.copies.get() };
    let editing = SHARED.editing.load(Ordering::Relaxed) as usize;
    if editing == 1 || editing == 2 {
        let (torn, whole) = (editing - 1, 2 - editing);
        let repaired = copies[whole].clone();
        // SAFETY: `copies[torn]` is valid memory for a Table; its old value
        // is left as it is (leaked): dropping a map stopped mid-edit could
        // free what it does not own.
        unsafe { core::ptr::write(&mut copies[torn], repaired) };
        compiler_fence(Ordering::SeqCst);
        SHARED.editing.store(0, Ordering::Relaxed);
    }
    compiler_fence(Ordering::SeqCst);
    SHARED.lock.unlock();
    critical::leave();
}

fn bump() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Records memory the module allocated for itself (a waiter record).
pub(crate) fn record_internal(addr: u32, layout: Layout) {
    let o = Object {
        size: layout.size() as u32,
        kind: kind::INTERNAL,
        align_log2: layout.align().trailing_zeros(),
    };
    with_table(|_| ((), [Some(Edit::Record(addr, o)), None]));
}

/// Forgets memory the module allocated for itself, about to be freed.
pub(crate) fn forget_internal(addr: u32) {
    with_table(|t| {
        let internal = t.made.get(&addr).is_some_and(|o| o.kind == kind::INTERNAL);
        ((), [internal.then_some(Edit::Forget(addr)), None])
    });
}

/// Allocates and records a zeroed object of `kind`: a primitive (its own
/// layout; `bytes` and `align` are ignored), or `bytes` bytes aligned to
/// `align` for a block or the runtime's own memory. Returns its address, or
/// 0 (nothing done) for a bad alignment or kind, or a full memory.
#[wasm_bindgen]
pub fn kind_alloc(kind: u32, bytes: u32, align: u32) -> u32 {
    let (layout, size) = match kind {
        kind::BYTES | kind::INTERNAL => match crate::layout(bytes, align) {
            Some(l) => (l, bytes),
            None => return 0,
        },
        _ => match primitive_layout(kind) {
            Some(l) => (l, l.size() as u32),
            None => return 0,
        },
    };
    // SAFETY: `layout` has a non-zero size (`crate::layout` rounds 0 up to 1;
    // the primitives are not zero-sized).
    let addr = unsafe { std::alloc::alloc_zeroed(layout) } as u32;
    if addr != 0 {
        let o = Object {
            size,
            kind,
            align_log2: layout.align().trailing_zeros(),
        };
        with_table(|_| ((), [Some(Edit::Record(addr, o)), None]));
    }
    addr
}

/// Frees the object of `kind` at `addr` (a block: with the `bytes` and
/// `align` it was allocated with): `checked::OK`, or, with nothing done,
/// `NOT_THERE` (it does not hold that: ask [`kind_describe`]), `BUSY` (it,
/// or a primitive placed in the block, is held or waited for: ask
/// [`kind_busy_in`]) or `WRONG_LAYOUT`. A placed primitive is only
/// forgotten: its bytes belong to its block. The allocator's metadata and
/// the runtime's memory are out of reach: only what the table says was
/// allocated as `kind` is freed.
#[wasm_bindgen]
pub fn kind_free(addr: u32, kind: u32, bytes: u32, align: u32) -> u32 {
    let r = with_table(|t| match decide_free(t, addr, kind, bytes, align) {
        Ok((layout, edits)) => {
            bump();
            (Ok(layout), edits)
        }
        Err(code) => (Err(code), NO_EDITS),
    });
    match r {
        Ok(layout) => {
            if kind == kind::RWLOCK {
                // A lock freed with its writer dead leaves no mark for the next one here.
                crate::owner_died::take(addr);
            }
            if let Some(layout) = layout {
                // SAFETY: allocated by `kind_alloc` with this layout (the table
                // said so), and no longer in the table: freed once.
                unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
            }
            checked::OK
        }
        Err(code) => code,
    }
}

/// What [`kind_free`] does to the table: the layout to free (none for a
/// placed primitive) and the edits that mark it freed, or why not.
fn decide_free(
    t: &Table,
    addr: u32,
    kind: u32,
    bytes: u32,
    align: u32,
) -> Result<(Option<Layout>, Edits), u32> {
    if let Some(o) = t.placed.get(&addr).filter(|_| is_primitive(kind)) {
        if o.kind != kind {
            return Err(checked::NOT_THERE);
        }
        // SAFETY: the table says a live primitive of `kind` is there.
        if unsafe { busy(addr, kind) } {
            return Err(checked::BUSY);
        }
        return Ok((None, [Some(Edit::MarkFreed(addr, true)), None]));
    }
    // One lookup; the entry is marked freed in place.
    let Some(&o) = t.made.get(&addr).filter(|o| o.kind == kind) else {
        return Err(checked::NOT_THERE);
    };
    let freed = Some(Edit::MarkFreed(addr, false));
    match kind {
        kind::BYTES => {
            if o.size != bytes || 1u64 << o.align_log2 != u64::from(align) {
                return Err(checked::WRONG_LAYOUT);
            }
            let end = addr + o.extent();
            if busy_placed(&t.placed, addr, end).is_some() {
                return Err(checked::BUSY);
            }
            Ok((
                crate::layout(bytes, align),
                [Some(Edit::CarvePlaced(addr, end)), freed],
            ))
        }
        kind::INTERNAL => Ok((crate::layout(o.size, 1 << o.align_log2), [freed, None])),
        _ => {
            // SAFETY: the table says a live primitive of `kind` is there.
            if unsafe { busy(addr, kind) } {
                return Err(checked::BUSY);
            }
            Ok((primitive_layout(kind), [freed, None]))
        }
    }
}

/// The first primitive placed in `[addr, addr + bytes)` that is held or
/// waited for, or 0: what a refused free of a block was refused for.
#[wasm_bindgen]
pub fn kind_busy_in(addr: u32, bytes: u32) -> u32 {
    let end = addr.saturating_add(bytes.max(1));
    read_table(|t| busy_placed(&t.placed, addr, end).unwrap_or(0))
}

/// Declares a primitive of `kind` at `addr`, inside a block from `rt.alloc()`
/// (zeroing its bytes; the caller then sets it up as for a new one):
/// `checked::OK`, or, with nothing done, `UNKNOWN_KIND`, `MISALIGNED`,
/// `NOT_THERE` (not inside a block), `PAST_END` or `OVERLAP` (a primitive
/// placed there already: ask [`kind_placed_in`]).
#[wasm_bindgen]
pub fn kind_place(addr: u32, kind: u32) -> u32 {
    let Some(layout) = primitive_layout(kind) else {
        return checked::UNKNOWN_KIND;
    };
    if addr as usize % layout.align() != 0 {
        return checked::MISALIGNED;
    }
    let size = layout.size() as u32;
    with_table(|t| {
        let Some((block, o)) = t.block(addr) else {
            return (checked::NOT_THERE, NO_EDITS);
        };
        let end = addr.saturating_add(size);
        if end > block + o.size {
            return (checked::PAST_END, NO_EDITS);
        }
        if t.placed_in(addr, end).is_some() {
            return (checked::OVERLAP, NO_EDITS);
        }
        // SAFETY: `[addr, end)` lies inside a live block of the memory (the
        // table says so); the caller declared it free for this primitive.
        unsafe { core::ptr::write_bytes(addr as *mut u8, 0, size as usize) };
        let placed = Object {
            size,
            kind,
            align_log2: layout.align().trailing_zeros(),
        };
        bump();
        (
            checked::OK,
            [
                Some(Edit::CarvePlaced(addr, end)),
                Some(Edit::Place(addr, placed)),
            ],
        )
    })
}

/// Whether `addr` holds a live primitive of `kind` (made, or placed).
#[wasm_bindgen]
pub fn kind_check(addr: u32, kind: u32) -> bool {
    read_table(|t| {
        t.find(addr)
            .is_some_and(|(s, o, _)| s == addr && o.kind == kind)
    })
}

/// Whether a view may reach `[addr, addr + bytes)`: `checked::OK` inside
/// one block, clear of the primitives placed in it; else `NOT_THERE`
/// (`addr` is not inside a block: ask [`kind_describe`]), `PAST_END` or
/// `OVERLAP` (ask [`kind_placed_in`]).
#[wasm_bindgen]
pub fn kind_view(addr: u32, bytes: u32) -> u32 {
    read_table(|t| {
        let Some((block, o)) = t.block(addr) else {
            return checked::NOT_THERE;
        };
        let end = u64::from(addr) + u64::from(bytes);
        if end > u64::from(block) + u64::from(o.size) {
            return checked::PAST_END;
        }
        if t.placed_in(addr, addr.saturating_add(bytes.max(1)))
            .is_some()
        {
            return checked::OVERLAP;
        }
        checked::OK
    })
}

/// The first live primitive placed in `[addr, addr + bytes)`, or 0.
#[wasm_bindgen]
pub fn kind_placed_in(addr: u32, bytes: u32) -> u32 {
    let end = addr.saturating_add(bytes.max(1));
    read_table(|t| t.placed_in(addr, end).map_or(0, |(p, _)| p))
}

/// What is at `addr`, for error messages: `[where, kind, start, size,
/// align]`, `where` being 0 (nothing the table knows), 1 (an allocation or a
/// freed range) or 2 (a primitive placed in a block, or a freed one).
#[wasm_bindgen]
pub fn kind_describe(addr: u32) -> Vec<u32> {
    read_table(|t| match t.find(addr) {
        None => vec![0; 5],
        Some((s, o, placed)) => vec![
            if placed { 2 } else { 1 },
            o.kind,
            s,
            o.size,
            1 << o.align_log2,
        ],
    })
}

/// A primitive kind's size, and its alignment in the upper 16 bits; 0 for another kind.
#[wasm_bindgen]
pub fn kind_layout(kind: u32) -> u32 {
    primitive_layout(kind).map_or(0, |l| l.size() as u32 | (l.align() as u32) << 16)
}

/// The address of the table's generation (an i32), bumped by every free and placement.
#[wasm_bindgen]
pub fn kind_generation_address() -> u32 {
    GENERATION.as_ptr() as u32
}

/// The address a freed `Lock` object calls with (see [`TOMBSTONE`]).
#[wasm_bindgen]
pub fn kind_tombstone_address() -> u32 {
    TOMBSTONE.as_ptr() as u32
}
