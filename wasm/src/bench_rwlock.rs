//! Benchmark-only exports for experiment 6 of BENCHMARKS.md (seed 003's
//! protocol): reader-writer locks driven from inside wasm, parklot's
//! `RawRwLock` in both policies beside `std::sync::RwLock` compiled into this
//! same module. bench/wasm/rwlock.mjs gives each worker a side (reader or
//! writer) and calls [`rw_peer_loop`] in chunks.
//!
//! Addresses are byte offsets into the shared memory from [`alloc`]; the
//! benchmark keeps them alive while any thread uses them (what each
//! `// SAFETY:` below relies on).

use parklot::{RawRwLock, RwLockPolicy};
use std::alloc::Layout;
use std::sync::RwLock;
use wasm_bindgen::prelude::*;

use super::{alloc, free};

/// The reader-writer locks compared inside this module, by index.
const RW_PEERS: [&str; 3] = [
    "parklot RwLock, writer-preferring",
    "parklot RwLock, reader-preferring",
    "std::sync::RwLock",
];
const STD: u32 = 2;

/// The peers' names, separated by semicolons (the names hold commas), in index order.
#[wasm_bindgen]
pub fn rw_peer_names() -> String {
    RW_PEERS.join(";")
}

fn rw_layout(kind: u32) -> Option<Layout> {
    match kind {
        0 | 1 => Some(Layout::new::<RawRwLock>()),
        STD => Some(Layout::new::<RwLock<()>>()),
        _ => None,
    }
}

/// A new, unlocked reader-writer lock of peer `kind`; its address, or 0 for
/// no such peer (`rw_peer_names()` lists them) or a full memory.
#[wasm_bindgen]
pub fn rw_peer_new(kind: u32) -> u32 {
    let Some(layout) = rw_layout(kind) else {
        return 0;
    };
    let addr = alloc(layout.size() as u32, layout.align() as u32);
    if addr == 0 {
        return 0;
    }
    if kind == STD {
        // SAFETY: freshly allocated with RwLock's layout, used by nobody yet.
        unsafe { (addr as *mut RwLock<()>).write(RwLock::new(())) };
        return addr;
    }
    let policy = if kind == 0 {
        RwLockPolicy::PreferWriters
    } else {
        RwLockPolicy::PreferReaders
    };
    // SAFETY: freshly allocated with RawRwLock's layout, used by nobody yet.
    unsafe { (addr as *mut RawRwLock).write(RawRwLock::with_policy(policy)) };
    addr
}

/// Frees a lock from [`rw_peer_new`] that nobody holds or waits on.
#[wasm_bindgen]
pub fn rw_peer_free(kind: u32, addr: u32) {
    let Some(layout) = rw_layout(kind) else {
        return;
    };
    if kind == STD {
        // SAFETY: `rw_peer_new` wrote an RwLock there; nobody uses it any more.
        unsafe { core::ptr::drop_in_place(addr as *mut RwLock<()>) };
    }
    free(addr, layout.size() as u32, layout.align() as u32);
}

/// What the lock guards: a version that a write moves by 2 in two plain
/// steps (odd in between). A reader that sees it odd overlapped a writer; a
/// final value other than twice the writes is a lost update (two writers).
#[repr(C)]
struct Versioned {
    version: u64,
}

/// The write critical section: two plain stores a reader must never see apart.
///
/// # Safety
/// `data` is live and the caller holds the write lock.
#[inline(always)]
unsafe fn write_section(data: *mut Versioned) {
    // SAFETY: the caller's contract; volatile keeps both stores (and their order).
    unsafe {
        let v = core::ptr::addr_of_mut!((*data).version);
        let now = v.read_volatile();
        v.write_volatile(now + 1);
        v.write_volatile(now + 2);
    }
}

/// The read critical section: 1 if it caught a writer inside, else 0.
///
/// # Safety
/// `data` is live and the caller holds a read lock.
#[inline(always)]
unsafe fn read_section(data: *const Versioned) -> u32 {
    // SAFETY: the caller's contract.
    (unsafe { core::ptr::addr_of!((*data).version).read_volatile() } & 1) as u32
}

/// `iterations` times: take peer `kind`'s lock at `addr` for reading, or for
/// writing if `write`, run that side's critical section on the [`Versioned`]
/// at `data_addr` (8 bytes, 8-aligned), release. Returns how many reads saw
/// a writer inside (0 unless the lock is broken), or `u32::MAX` (having done
/// nothing) for a kind that is not in [`rw_peer_names`].
#[wasm_bindgen]
pub fn rw_peer_loop(kind: u32, addr: u32, data_addr: u32, write: bool, iterations: u32) -> u32 {
    let data = data_addr as *mut Versioned;
    let mut torn = 0;
    match kind {
        0 | 1 => {
            // SAFETY: `rw_peer_new` wrote a RawRwLock there for these kinds.
            let lock = unsafe { &*(addr as *const RawRwLock) };
            for _ in 0..iterations {
                if write {
                    lock.lock_exclusive();
                    // SAFETY: written under the write lock, released just after.
                    unsafe {
                        write_section(data);
                        lock.unlock_exclusive();
                    }
                } else {
                    lock.lock_shared();
                    // SAFETY: read under the read lock, released just after.
                    unsafe {
                        torn += read_section(data);
                        lock.unlock_shared();
                    }
                }
            }
        }
        STD => {
            // SAFETY: `rw_peer_new(STD)` wrote an RwLock there.
            let lock = unsafe { &*(addr as *const RwLock<()>) };
            for _ in 0..iterations {
                if write {
                    let _g = lock.write().unwrap_or_else(|e| e.into_inner());
                    // SAFETY: written under the write lock.
                    unsafe { write_section(data) };
                } else {
                    let _g = lock.read().unwrap_or_else(|e| e.into_inner());
                    // SAFETY: read under the read lock.
                    torn += unsafe { read_section(data) };
                }
            }
        }
        _ => return u32::MAX,
    }
    torn
}
