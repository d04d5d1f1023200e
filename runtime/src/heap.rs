//! A heap that takes no lock, so that a thread may stop for good at any of
//! its instructions (a wasm worker terminated mid-call) and leave it
//! consistent: at worst the block that thread was taking or giving back, or
//! the pages it had just grown, are lost to everyone. It is the wasm
//! module's global allocator: std's (dlmalloc behind one global spin lock)
//! left its lock held when a worker died inside it, and every thread that
//! allocated afterwards spun forever (issue 29).
//!
//! **Blocks.** A request of `size` bytes aligned to `align` takes a block of
//! class `k`, the smallest power of two `2^k ≥ max(size, align, 8)`,
//! aligned to `min(2^k, PAGE)`: every alignment up to a page (64 KiB in
//! wasm, the largest `rt.alloc()` accepts) is honoured. Each class has a
//! free list, a Treiber stack threaded through the free blocks' first four
//! bytes. A class whose list is empty carves a block from the **bump
//! region**, a span of fresh pages shared by every class; when that is too
//! small, the thread grows the memory by a chunk of its own and makes the
//! rest of the chunk the new bump region. Memory comes from a [`Pages`]
//! source (`memory.grow` in wasm; a fixed arena in tests) and is never given
//! back, and blocks never merge or split once made: a freed block serves
//! its own class again, so a program that frees what it allocates reaches
//! a steady size.
//!
//! **State words**, all in the [`Heap`]:
//!
//! | word            | bits 0–31                              | bits 32–63                                |
//! |-----------------|----------------------------------------|-------------------------------------------|
//! | `free[k - 3]`   | offset of the top free block (0: empty) | ABA count, +1 on every push and pop      |
//! | `bump`          | cursor: the first byte not carved yet  | end: one past the region's last byte      |
//!
//! Transitions, each one compare-and-swap, so each either happened or not:
//! - *pop* `(top, n) → (link(top), n + 1)`: the count makes a pop that read
//!   a stale link fail (the top was popped and pushed back meanwhile);
//! - *push* `link(b) = top`, then `(top, n) → (b, n + 1)`;
//! - *carve* `(c, e) → (a + 2^k, e)` with `a` = `c` aligned up; the gap
//!   `[c, a)` is then *scattered*: cut into aligned power-of-two blocks
//!   pushed on their classes' lists;
//! - *refill*: grow a chunk (the caller's alone, as `memory.grow`'s pages
//!   are), keep its first `2^k` bytes, and install the rest as the region,
//!   `(c, e) → (chunk + 2^k, chunk end)`, only if it is larger than what the
//!   region has left; whichever remainder loses is scattered.
//!
//! **A thread that stops** between two instructions leaves every word as
//! some completed transition made it. Lost to everyone, at worst: the block
//! it popped or carved and had not returned (an allocation in flight), the
//! block it was pushing (a free in flight), the pages it grew but had not
//! installed, or a remainder it had taken out of the region but not
//! scattered yet. Nobody waits for it: nothing here waits.
//!
//! **A stale read.** A pop reads the link of the top block before its
//! compare-and-swap, and another thread may have popped that block and be
//! writing its own data there meanwhile; the read is atomic, its value is
//! thrown away when the swap fails, and in wasm's shared memory such a race
//! is defined. In Rust's memory model a plain write racing with that atomic
//! read is still a data race, as with every Treiber stack that reuses its
//! nodes without deferred reclamation: the native tests write blocks past
//! their first four bytes, or atomically.

use crate::sync::{AtomicU64, Ordering};
use core::alloc::{GlobalAlloc, Layout};
use core::ptr;

/// The word a free block keeps its successor's offset in.
pub type Link = crate::sync::AtomicU32;

/// The smallest class, 2^3 = 8 bytes: a block must hold its 4-byte link,
/// and 8 keeps every block aligned for wasm32's widest scalar (`u64`/`f64`).
pub const MIN_CLASS: u32 = 3;
/// The largest class, 2^30 = 1 GiB: the wasm module's whole memory.
pub const MAX_CLASS: u32 = 30;
const CLASSES: usize = (MAX_CLASS - MIN_CLASS + 1) as usize;

/// Pages grown at least at a time: 4, 256 KiB of 64 KiB pages. A fresh
/// runtime's own allocations (its header, the ParkingLot's table, the
/// registry, the kind table) fit in the first chunk (measured:
/// `Runtime.create()` grows the memory by exactly one chunk); a worker's
/// 2 MiB stack is a class of its own and grows exactly its pages; and a
/// program that allocates little holds at most one chunk it does not use.
pub const CHUNK_PAGES: u32 = 4;

/// Where a [`Heap`]'s memory comes from: pages added at the end of one
/// region of offsets, as `memory.grow` adds them to a wasm memory.
///
/// # Safety
/// - Pages returned by one call of `grow` belong to its caller alone: no
///   other call returns any of them, and nobody else uses them. Offset 0 is
///   never in a grown page (0 means "none" in the heap's words).
/// - `at(o)` points to byte `o` of the region, with provenance for every
///   byte grown so far (and later), and `offset_of(at(o)) == o`.
/// - Grown pages stay readable and writable forever.
/// - `link(b)` is a word that only the heap uses while `b` is a free block
///   (by default `b`'s own first four bytes), the same word on every call.
pub unsafe trait Pages {
    /// The page size in bytes, a power of two: pages are grown aligned to
    /// it, and it is the largest alignment the heap honours.
    const PAGE: u32;
    /// Whether grown pages read as zero until written (wasm's do).
    const GROWN_ZEROED: bool;

    /// Adds `pages` pages; returns the offset of the first, or `None` if
    /// the region cannot grow that much.
    fn grow(&self, pages: u32) -> Option<u32>;

    /// A pointer to byte `offset`.
    fn at(&self, offset: u32) -> *mut u8;

    /// The offset of a pointer from [`at`](Self::at).
    fn offset_of(&self, ptr: *mut u8) -> u32;

    /// The link word of the free block at `block`.
    ///
    /// # Safety
    /// `block` is a block of the heap (allocated or free), so its first
    /// four bytes are grown, 8-aligned memory.
    #[cfg(not(loom))]
    unsafe fn link(&self, block: u32) -> &Link {
        // SAFETY: the block is grown memory, 8-aligned (caller's contract),
        // and lives forever; an AtomicU32 may alias plain bytes.
        unsafe { &*self.at(block).cast::<Link>() }
    }

    /// The link word of the free block at `block`: under loom, a word the
    /// model can see (loom's atomics cannot live in plain memory).
    ///
    /// # Safety
    /// `block` is a block of the heap.
    #[cfg(loom)]
    unsafe fn link(&self, block: u32) -> &Link;
}

/// The lock-free heap over `P` (see the module docs).
pub struct Heap<P: Pages> {
    pages: P,
    /// The bump region: cursor (low half), end (high half).
    bump: AtomicU64,
    /// Per class `MIN_CLASS..=MAX_CLASS`: top block (low half), ABA count (high half).
    free: [AtomicU64; CLASSES],
}

#[inline]
fn pack(low: u32, high: u32) -> u64 {
    u64::from(low) | (u64::from(high) << 32)
}

#[inline]
fn low(word: u64) -> u32 {
    word as u32
}

#[inline]
fn high(word: u64) -> u32 {
    (word >> 32) as u32
}

impl<P: Pages> Heap<P> {
    /// An empty heap that takes its pages from `pages`.
    #[cfg(not(loom))]
    pub const fn new(pages: P) -> Self {
        Heap {
            pages,
            bump: AtomicU64::new(0),
            free: [const { AtomicU64::new(0) }; CLASSES],
        }
    }

    /// An empty heap that takes its pages from `pages`.
    #[cfg(loom)]
    pub fn new(pages: P) -> Self {
        Heap {
            pages,
            bump: AtomicU64::new(0),
            free: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The page source.
    pub fn pages(&self) -> &P {
        &self.pages
    }

    /// The class of a block for `size` bytes aligned to `align` (a power of
    /// two), or `None` if the heap cannot serve it.
    #[inline]
    pub fn class_of(size: usize, align: usize) -> Option<u32> {
        if align > P::PAGE as usize {
            return None;
        }
        let need = size.max(align).max(1 << MIN_CLASS);
        if need > 1 << MAX_CLASS {
            return None;
        }
        Some(need.next_power_of_two().trailing_zeros())
    }

    /// The alignment of class `class`'s blocks.
    #[inline]
    fn block_align(class: u32) -> u32 {
        (1u32 << class).min(P::PAGE)
    }

    #[inline]
    fn list(&self, class: u32) -> &AtomicU64 {
        &self.free[(class - MIN_CLASS) as usize]
    }

    /// A block of `class`, and whether it is fresh from `grow` (so zero if
    /// `P::GROWN_ZEROED`); `None` if the memory cannot grow.
    pub fn take(&self, class: u32) -> Option<(u32, bool)> {
        debug_assert!((MIN_CLASS..=MAX_CLASS).contains(&class));
        match self.pop(class) {
            Some(block) => Some((block, false)),
            None => self.carve(class),
        }
    }

    /// Gives back a block of `class`.
    ///
    /// # Safety
    /// `block` came from [`take`](Self::take) (or `alloc`) for `class`, is
    /// not in use, and is given back once.
    pub unsafe fn give(&self, class: u32, block: u32) {
        // SAFETY: a block of ours (caller's contract).
        unsafe { self.push(class, block) }
    }

    fn pop(&self, class: u32) -> Option<u32> {
        let list = self.list(class);
        // Acquire: the pusher's link write, and its use of the block, come first.
        let mut top = list.load(Ordering::Acquire);
        loop {
            let block = low(top);
            if block == 0 {
                return None;
            }
            // SAFETY: `block` was pushed on this list, so it is a block of
            // the heap, and blocks are never unmapped; if another thread
            // popped it meanwhile this read is stale and the swap below
            // fails, since every pop and push changes the count.
            let next = unsafe { self.pages.link(block) }.load(Ordering::Relaxed);
            match list.compare_exchange_weak(
                top,
                pack(next, high(top).wrapping_add(1)),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(block),
                Err(now) => top = now,
            }
        }
    }

    /// # Safety
    /// `block` is a block of `class` that nobody uses and no list holds.
    unsafe fn push(&self, class: u32, block: u32) {
        let list = self.list(class);
        let mut top = list.load(Ordering::Relaxed);
        loop {
            // SAFETY: the block is ours alone until the swap publishes it.
            unsafe { self.pages.link(block) }.store(low(top), Ordering::Relaxed);
            // Release: the link and the last owner's writes reach the next popper.
            match list.compare_exchange_weak(
                top,
                pack(block, high(top).wrapping_add(1)),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => top = now,
            }
        }
    }

    /// Takes a block of `class` from the bump region, refilling it if needed.
    fn carve(&self, class: u32) -> Option<(u32, bool)> {
        let size = 1u64 << class;
        let align = u64::from(Self::block_align(class));
        // Acquire: the pages the region's installer grew are visible to us.
        let mut region = self.bump.load(Ordering::Acquire);
        loop {
            let (cursor, end) = (u64::from(low(region)), u64::from(high(region)));
            let start = (cursor + align - 1) & !(align - 1);
            if start + size > end {
                return self.refill(class);
            }
            match self.bump.compare_exchange_weak(
                region,
                pack((start + size) as u32, end as u32),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.scatter(cursor as u32, start as u32);
                    return Some((start as u32, true));
                }
                Err(now) => region = now,
            }
        }
    }

    /// Grows a chunk, keeps its first block of `class`, and keeps the larger
    /// of the chunk's rest and the region's rest as the region.
    #[cold]
    fn refill(&self, class: u32) -> Option<(u32, bool)> {
        let size = 1u64 << class;
        let page = u64::from(P::PAGE);
        let needed = size.div_ceil(page);
        let chunk = needed.max(u64::from(CHUNK_PAGES));
        let (base, pages) = match self.pages.grow(chunk as u32) {
            Some(base) => (base, chunk),
            // Short of a whole chunk: exactly the block's pages may still fit.
            None if chunk > needed => (self.pages.grow(needed as u32)?, needed),
            None => return None,
        };
        let rest = (u64::from(base) + size, u64::from(base) + pages * page);
        if rest.0 < rest.1 {
            self.install(rest.0 as u32, rest.1 as u32);
        }
        Some((base, true))
    }

    /// Makes `[start, end)`, fresh pages of the caller's, the bump region
    /// if it is larger than what the region has left; scatters the smaller.
    fn install(&self, start: u32, end: u32) {
        let mut region = self.bump.load(Ordering::Relaxed);
        loop {
            let left = high(region) - low(region);
            if left >= end - start {
                self.scatter(start, end);
                return;
            }
            // Release: our grown pages are visible to whoever carves them.
            match self.bump.compare_exchange_weak(
                region,
                pack(start, end),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.scatter(low(region), high(region));
                    return;
                }
                Err(now) => region = now,
            }
        }
    }

    /// Cuts `[from, to)`, memory of the caller's alone, into the largest
    /// aligned blocks that fit, and pushes each on its class's list.
    /// `from` and `to` are multiples of 8 (every block size and cursor is).
    fn scatter(&self, mut from: u32, to: u32) {
        while from < to {
            let fit = (to - from).ilog2().min(MAX_CLASS);
            let aligned = from.trailing_zeros().min(P::PAGE.trailing_zeros());
            // `from` aligned to 2^aligned fits a block of that class
            // (classes below the page need their size as alignment).
            let class = if aligned >= P::PAGE.trailing_zeros() {
                fit
            } else {
                fit.min(aligned)
            };
            debug_assert!(class >= MIN_CLASS, "a gap not a multiple of 8 bytes");
            // SAFETY: `[from, from + 2^class)` is the caller's, unused, and
            // aligned for its class.
            unsafe { self.push(class, from) };
            from += 1 << class;
        }
    }

    /// Zeroes `bytes` bytes of `block` (its link word with an atomic store:
    /// a stale pop may be reading it, see the module docs).
    ///
    /// # Safety
    /// `block` is a block of the caller's of at least `bytes` bytes.
    unsafe fn zero(&self, block: u32, bytes: usize) {
        // SAFETY: the block is the caller's and at least 8 bytes long.
        unsafe {
            self.pages.link(block).store(0, Ordering::Relaxed);
            if bytes > 4 {
                ptr::write_bytes(self.pages.at(block + 4), 0, bytes - 4);
            }
        }
    }
}

// SAFETY: every block handed out is the caller's alone until given back (a
// pop's or carve's successful compare-and-swap excludes every other taker),
// lies in grown memory that is never unmapped, is at least `size` bytes and
// aligned to `min(class size, PAGE)` ≥ the layout's alignment (`class_of`
// refuses larger alignments); see the module docs for why the lists and the
// region stay consistent.
unsafe impl<P: Pages> GlobalAlloc for Heap<P> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::class_of(layout.size(), layout.align()).and_then(|c| self.take(c)) {
            Some((block, _)) => self.pages.at(block),
            None => ptr::null_mut(),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some((block, fresh)) =
            Self::class_of(layout.size(), layout.align()).and_then(|c| self.take(c))
        else {
            return ptr::null_mut();
        };
        if !(fresh && P::GROWN_ZEROED) {
            // SAFETY: just taken, and its class holds `layout.size()` bytes.
            unsafe { self.zero(block, layout.size()) };
        }
        self.pages.at(block)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A layout `alloc` served always has a class.
        if let Some(class) = Self::class_of(layout.size(), layout.align()) {
            // SAFETY: `ptr` came from `alloc` with this layout (GlobalAlloc's contract).
            unsafe { self.push(class, self.pages.offset_of(ptr)) };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = Self::class_of(layout.size(), layout.align());
        if old.is_some() && old == Self::class_of(new_size, layout.align()) {
            return ptr; // still fits its block, and the block no smaller class
        }
        // SAFETY: `new_size`, rounded up to the layout's alignment, does not
        // overflow (GlobalAlloc's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a non-zero size (GlobalAlloc's contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct, and at least this long.
            unsafe {
                ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::AtomicU32;

    /// A fixed region of `pages` pages of 64 KiB from std's allocator, page 0
    /// never handed out (offset 0 means "none").
    struct Arena {
        base: *mut u8,
        pages: u32,
        grown: AtomicU32,
    }

    // SAFETY: the arena's bytes are shared as the heap shares them.
    unsafe impl Send for Arena {}
    // SAFETY: as for Send.
    unsafe impl Sync for Arena {}

    const PAGE: u32 = 65536;

    impl Arena {
        fn new(pages: u32) -> Arena {
            let layout = Layout::from_size_align((pages * PAGE) as usize, PAGE as usize).unwrap();
            // SAFETY: a non-zero size.
            let base = unsafe { std::alloc::alloc_zeroed(layout) };
            assert!(!base.is_null());
            Arena {
                base,
                pages,
                grown: AtomicU32::new(1),
            }
        }

        fn grown_pages(&self) -> u32 {
            self.grown.load(Ordering::Relaxed)
        }
    }

    impl Drop for Arena {
        fn drop(&mut self) {
            let layout =
                Layout::from_size_align((self.pages * PAGE) as usize, PAGE as usize).unwrap();
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.base, layout) };
        }
    }

    // SAFETY: each grow's pages are its own (the count moves by a CAS), page
    // 0 is never grown, and the arena lives as long as the heap.
    unsafe impl Pages for Arena {
        const PAGE: u32 = PAGE;
        const GROWN_ZEROED: bool = true;

        fn grow(&self, pages: u32) -> Option<u32> {
            let mut now = self.grown.load(Ordering::Relaxed);
            loop {
                if now + pages > self.pages {
                    return None;
                }
                match self.grown.compare_exchange_weak(
                    now,
                    now + pages,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(now * PAGE),
                    Err(n) => now = n,
                }
            }
        }

        fn at(&self, offset: u32) -> *mut u8 {
            self.base.wrapping_add(offset as usize)
        }

        fn offset_of(&self, ptr: *mut u8) -> u32 {
            (ptr.addr() - self.base.addr()) as u32
        }
    }

    fn heap(pages: u32) -> Heap<Arena> {
        Heap::new(Arena::new(pages))
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn classes_are_powers_of_two_of_at_least_eight_bytes() {
        assert_eq!(Heap::<Arena>::class_of(1, 1), Some(3));
        assert_eq!(Heap::<Arena>::class_of(8, 8), Some(3));
        assert_eq!(Heap::<Arena>::class_of(9, 1), Some(4));
        assert_eq!(Heap::<Arena>::class_of(24, 4096), Some(12));
        assert_eq!(Heap::<Arena>::class_of(1 << 30, 8), Some(30));
        assert_eq!(Heap::<Arena>::class_of((1 << 30) + 1, 8), None);
        assert_eq!(Heap::<Arena>::class_of(8, 1 << 17), None, "past a page");
    }

    #[test]
    fn blocks_are_aligned_distinct_and_zeroed() {
        let h = heap(if cfg!(miri) { 12 } else { 64 });
        let mut seen: Vec<(usize, usize)> = Vec::new();
        for align in [1usize, 2, 4, 8, 16, 64, 4096, 65536] {
            for size in [1usize, 7, 24, 100, 5000] {
                let l = layout(size, align);
                // SAFETY (test): non-zero sizes.
                let p = unsafe { h.alloc_zeroed(l) };
                assert!(!p.is_null());
                assert_eq!(p.addr() % align, 0, "{size} bytes aligned to {align}");
                // SAFETY (test): `size` bytes are ours.
                let bytes = unsafe { core::slice::from_raw_parts_mut(p, size) };
                assert!(bytes.iter().all(|&b| b == 0));
                bytes.fill(0xAB);
                let range = (p.addr(), p.addr() + size);
                assert!(
                    seen.iter().all(|&(a, b)| range.1 <= a || b <= range.0),
                    "overlap"
                );
                seen.push(range);
            }
        }
    }

    #[test]
    fn a_freed_block_is_reused_and_zeroed_again() {
        let h = heap(4);
        let l = layout(256, 8);
        // SAFETY (test): each block is freed once, with its layout.
        unsafe {
            let a = h.alloc_zeroed(l);
            a.write_bytes(0xFF, 256);
            h.dealloc(a, l);
            let b = h.alloc_zeroed(l);
            assert_eq!(a, b, "the freed block is the next one taken");
            assert!(core::slice::from_raw_parts(b, 256).iter().all(|&x| x == 0));
            h.dealloc(b, l);
        }
    }

    #[test]
    fn alloc_free_cycles_do_not_grow_the_heap() {
        // The check: a million rt.lock() + free (one byte each) in
        // wasm; here as many cycles of mixed small sizes as Miri can afford.
        let h = heap(8);
        let cycles = if cfg!(miri) { 2_000 } else { 1_000_000 };
        for i in 0..cycles {
            let l = layout(1 + i % 300, 1 << (i % 4));
            // SAFETY (test): freed at once with its layout.
            unsafe { h.dealloc(h.alloc(l), l) };
            if i == 1000 {
                assert_eq!(h.pages().grown_pages(), 1 + CHUNK_PAGES);
            }
        }
        assert_eq!(h.pages().grown_pages(), 1 + CHUNK_PAGES, "the heap grew");
    }

    #[test]
    fn alignment_gaps_are_scattered_not_lost() {
        // A 16-byte block, then a 4 KiB one aligned to itself: the gap
        // between them is cut into blocks of 16, 32, ..., 2048 bytes, which
        // serve the next requests of those sizes.
        let h = heap(8);
        // SAFETY (test): non-zero sizes; nothing is freed.
        unsafe {
            let a = h.pages().offset_of(h.alloc(layout(16, 16)));
            let b = h.pages().offset_of(h.alloc(layout(4096, 4096)));
            assert_eq!(b % 4096, 0);
            assert_eq!(b - a, 4096, "the gap is 4080 bytes");
            for class in 4..=11 {
                let s = h.pages().offset_of(h.alloc(layout(1 << class, 1)));
                assert!(
                    a < s && s < b,
                    "the gap's {}-byte block was lost",
                    1 << class
                );
            }
        }
        assert_eq!(h.pages().grown_pages(), 1 + CHUNK_PAGES);
    }

    #[test]
    fn a_large_block_grows_exactly_its_pages_and_keeps_the_region() {
        let h = heap(40);
        // SAFETY (test): non-zero sizes.
        unsafe {
            let small = h.alloc(layout(8, 8));
            assert_eq!(h.pages().grown_pages(), 1 + CHUNK_PAGES);
            let big = h.alloc(layout(2 << 20, 16)); // a worker's stack
            assert_eq!(big.addr() % PAGE as usize, 0);
            assert_eq!(h.pages().grown_pages(), 1 + CHUNK_PAGES + 32);
            let next = h.alloc(layout(8, 8));
            assert_eq!(next.addr(), small.addr() + 8, "the region survived");
        }
    }

    #[test]
    fn a_full_memory_returns_null_and_the_heap_stays_usable() {
        let h = heap(1 + CHUNK_PAGES + 2);
        // SAFETY (test): non-zero sizes.
        unsafe {
            assert!(!h.alloc(layout(8, 8)).is_null());
            let big = layout(4 * PAGE as usize, 8);
            assert!(h.alloc(big).is_null(), "4 pages do not fit in 2");
            assert!(
                !h.alloc(layout(2 * PAGE as usize, 8)).is_null(),
                "the region still fits 2"
            );
            assert!(!h.alloc(layout(8, 8)).is_null());
        }
    }

    #[test]
    fn realloc_keeps_the_block_within_its_class_and_moves_it_past() {
        let h = heap(4);
        // SAFETY (test): each pointer is used with its current layout.
        unsafe {
            let l = layout(20, 4);
            let p = h.alloc(l);
            p.write_bytes(7, 20);
            let same = h.realloc(p, l, 32);
            assert_eq!(same, p, "20 and 32 bytes share the 32-byte class");
            let moved = h.realloc(same, layout(32, 4), 33);
            assert_ne!(moved, p);
            assert!(core::slice::from_raw_parts(moved, 20)
                .iter()
                .all(|&x| x == 7));
            h.dealloc(moved, layout(33, 4));
        }
    }

    #[test]
    fn a_thread_that_stops_mid_pop_leaves_the_list_whole() {
        // A popper that read the top and its link, then never swapped (it
        // died there): the list is as it was, and a stale swap later fails.
        let h = heap(4);
        let c = 4;
        // SAFETY (test): blocks of class 4, each given back once.
        unsafe {
            let (a, _) = h.take(c).unwrap();
            let (b, _) = h.take(c).unwrap();
            h.give(c, a);
            h.give(c, b);
            let seen = h.list(c).load(Ordering::Acquire);
            let next = h.pages().link(low(seen)).load(Ordering::Relaxed);
            // Others pop both and push b back: same top, newer count.
            let (x, _) = h.take(c).unwrap();
            let (y, _) = h.take(c).unwrap();
            h.give(c, x);
            assert!(h
                .list(c)
                .compare_exchange(
                    seen,
                    pack(next, high(seen) + 1),
                    Ordering::AcqRel,
                    Ordering::Acquire
                )
                .is_err());
            assert_eq!(h.take(c).unwrap().0, x);
            h.give(c, y);
        }
    }

    #[test]
    fn threads_allocating_and_freeing_never_share_a_block() {
        let h = heap(if cfg!(miri) { 12 } else { 64 });
        let threads = if cfg!(miri) { 3 } else { 4 };
        let rounds = if cfg!(miri) { 60 } else { 20_000 };
        crate::test_util::on_threads(threads, |t| {
            let mut held = Vec::new();
            for i in 0..rounds {
                let l = layout(8 << ((i + t) % 5), 8);
                // SAFETY (test): the block is ours until freed below.
                unsafe {
                    let p = h.alloc(l);
                    assert!(!p.is_null());
                    // Past the link word: a stale pop may read that (module docs).
                    p.add(4)
                        .cast::<u32>()
                        .write(t as u32 * 1_000_000 + i as u32);
                    held.push((p, l, t as u32 * 1_000_000 + i as u32));
                }
                if held.len() > 8 || i % 3 == 0 {
                    let (p, l, stamp) = held.swap_remove(i % held.len());
                    // SAFETY (test): ours, with its layout.
                    unsafe {
                        assert_eq!(p.add(4).cast::<u32>().read(), stamp, "shared block");
                        h.dealloc(p, l);
                    }
                }
            }
            for (p, l, stamp) in held {
                // SAFETY (test): ours, with its layout.
                unsafe {
                    assert_eq!(p.add(4).cast::<u32>().read(), stamp, "shared block");
                    h.dealloc(p, l);
                }
            }
        });
    }
}
