//! The module's global allocator: parklot's lock-free heap (`parklot::heap`)
//! over the memory's own growth. std's default here is dlmalloc behind one
//! global spin lock, which a worker terminated while allocating left held:
//! every thread that allocated afterwards spun forever (issue 29). This one
//! takes no lock, so a thread may stop at any instruction of it.
//!
//! Everything allocates through it: Rust code, the `alloc`/`free` exports,
//! and wasm-bindgen's `__wbindgen_malloc`/`__wbindgen_free`, with which its
//! thread start allocates each worker's stack (2 MiB) and TLS block and
//! `__wbindgen_thread_destroy` frees them.

use parklot::heap::{Heap, Pages};

/// Pages from `memory.grow`, whose result is the old size: the grown pages
/// are the caller's alone, even with every thread growing at once.
pub struct MemoryGrow;

// SAFETY: `memory.grow` hands each caller pages nobody else got, zeroed;
// they stay mapped for the memory's life; offset 0 is in the module's static
// data, never in a grown page; every address of the memory is exposed (it
// is shared with JS), so an address is a valid pointer to it.
unsafe impl Pages for MemoryGrow {
    const PAGE: u32 = 65536;
    const GROWN_ZEROED: bool = true;

    fn grow(&self, pages: u32) -> Option<u32> {
        let old = core::arch::wasm32::memory_grow::<0>(pages as usize);
        if old == usize::MAX {
            return None;
        }
        u32::try_from(old * Self::PAGE as usize).ok()
    }

    fn at(&self, offset: u32) -> *mut u8 {
        core::ptr::with_exposed_provenance_mut(offset as usize)
    }

    fn offset_of(&self, ptr: *mut u8) -> u32 {
        ptr.addr() as u32
    }
}

#[global_allocator]
static HEAP: Heap<MemoryGrow> = Heap::new(MemoryGrow);
