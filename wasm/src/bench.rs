//! Benchmark-only exports: the lock peers that bench/wasm and the browser
//! demo drive through one set of calls, and loops over parklot's wait/notify
//! next to the engine's own `memory.atomic.wait32`/`notify`, so that a
//! comparison runs entirely inside wasm (from JS, a call's overhead would
//! swamp a 10 ns notify).
//!
//! Addresses are byte offsets into the shared memory that the benchmark got
//! from [`alloc`](super::alloc); it keeps them alive while any thread uses
//! them, which is what each `// SAFETY:` below relies on.

use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};
use std::alloc::Layout;
use std::sync::atomic::{AtomicI32, Ordering};

use parklot::futex;
use parklot::toy_locks::{
    BargingLock, CascadeLock, HandoffLock, PauseSpinLock, RawLock, ThunderLock, YieldSpinLock,
};
use parklot::{Lock, WordLock};
use wasm_bindgen::prelude::*;

use super::{alloc, free, performance_now};

/// The locks a benchmark can compare inside this one module, by index: the
/// same calls ([`peer_new`], [`peer_count_loop`], [`peer_free`]) drive each.
const PEERS: [&str; 9] = [
    Lock::NAME,
    WordLock::NAME,
    "std::sync::Mutex",
    YieldSpinLock::NAME,
    PauseSpinLock::NAME,
    ThunderLock::NAME,
    CascadeLock::NAME,
    HandoffLock::NAME,
    <BargingLock<40>>::NAME,
];

/// The benchmark peers' names, comma-separated, in index order.
#[wasm_bindgen]
pub fn peer_names() -> String {
    PEERS.join(",")
}

/// The size and alignment of peer `kind`'s lock object; `None` for a kind
/// that is not in [`peer_names`].
fn peer_layout(kind: u32) -> Option<Layout> {
    match kind {
        0 | 3..=8 => Some(Layout::new::<u8>()),
        1 => Some(Layout::new::<WordLock>()),
        2 => Some(Layout::new::<std::sync::Mutex<()>>()),
        _ => None,
    }
}

/// A new, unlocked lock of peer `kind`; its address, or 0 if there is no
/// such peer (`peer_names()` lists them) or the memory is full.
#[wasm_bindgen]
pub fn peer_new(kind: u32) -> u32 {
    let Some(layout) = peer_layout(kind) else {
        return 0;
    };
    if kind == 0 {
        // Known to the kind table as a Lock: a page joins it with rt.lockAt()
        // (the demo's arena, its main thread taking part).
        return crate::kinds::kind_alloc(crate::kinds::kind::LOCK, 0, 0);
    }
    let addr = alloc(layout.size() as u32, layout.align() as u32);
    if kind == 2 && addr != 0 {
        // SAFETY: freshly allocated with Mutex's layout; all other peers are
        // valid when zeroed (their unlocked state is all zero bits).
        unsafe { (addr as *mut std::sync::Mutex<()>).write(std::sync::Mutex::new(())) };
    }
    addr
}

/// Frees a lock from [`peer_new`] that nobody holds or waits on.
#[wasm_bindgen]
pub fn peer_free(kind: u32, addr: u32) {
    let Some(layout) = peer_layout(kind) else {
        return;
    };
    if kind == 0 {
        crate::kinds::kind_free(addr, crate::kinds::kind::LOCK, 0, 0);
        return;
    }
    if kind == 2 {
        // SAFETY: `peer_new` wrote a Mutex there; nobody uses it any more.
        unsafe { core::ptr::drop_in_place(addr as *mut std::sync::Mutex<()>) };
    }
    free(addr, layout.size() as u32, layout.align() as u32);
}

/// The data a peer's lock guards, at `counter_addr` (16 bytes, 8-aligned):
/// the lost-update counter, then the value seed 000's critical section works on.
#[repr(C)]
struct Guarded {
    count: u64,
    value: f64,
}

/// Seed 000's critical section: `work` iterations of a double add and
/// multiply, then one more on the counter (a lost update shows there).
#[inline(always)]
fn critical_section(data: &mut Guarded, work: u32) {
    for _ in 0..work {
        // black_box: keep the compiler from folding iterations together.
        data.value = core::hint::black_box((data.value + 1.0) * 0.75);
    }
    data.count += 1;
}

/// `iterations` times: lock peer `kind`'s lock at `addr`, run the critical
/// section on the 16 bytes at `counter_addr` (a u64 counter, then an f64)
/// with `work` add-and-multiply steps, unlock: the seed's benchmark loop,
/// with every lock behind the same call. Returns `iterations`, or 0 (having
/// done nothing) for a kind that is not in [`peer_names`].
#[wasm_bindgen]
pub fn peer_count_loop(kind: u32, addr: u32, counter_addr: u32, iterations: u32, work: u32) -> u32 {
    fn run<L: RawLock>(addr: u32, data: *mut Guarded, n: u32, work: u32) {
        // SAFETY: `addr` came from `peer_new` for this kind, so it is an L.
        let lock = unsafe { &*(addr as *const L) };
        for _ in 0..n {
            lock.lock();
            // SAFETY: the guarded data is only touched under this lock.
            unsafe {
                critical_section(&mut *data, work);
                lock.unlock();
            }
        }
    }
    let data = counter_addr as *mut Guarded;
    match kind {
        0 => run::<Lock>(addr, data, iterations, work),
        1 => run::<WordLock>(addr, data, iterations, work),
        2 => {
            // SAFETY: `peer_new(2)` wrote a Mutex at `addr`.
            let mutex = unsafe { &*(addr as *const std::sync::Mutex<()>) };
            for _ in 0..iterations {
                let _guard = mutex.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: the guarded data is only touched under this mutex.
                critical_section(unsafe { &mut *data }, work);
            }
        }
        3 => run::<YieldSpinLock>(addr, data, iterations, work),
        4 => run::<PauseSpinLock>(addr, data, iterations, work),
        5 => run::<ThunderLock>(addr, data, iterations, work),
        6 => run::<CascadeLock>(addr, data, iterations, work),
        7 => run::<HandoffLock>(addr, data, iterations, work),
        8 => run::<BargingLock<40>>(addr, data, iterations, work),
        _ => return 0,
    }
    iterations
}

/// One side of a wait/notify comparison: parklot's futex (the ParkingLot's
/// queues) or the engine's (`memory.atomic.*`, V8's waiter lists). Both
/// report a wait as 0 woken, 1 not-equal, 2 timed out.
trait Waits {
    fn notify_one(word: &AtomicI32) -> u32;
    /// Sleeps while `*word == expected`, with no timeout.
    fn wait(word: &AtomicI32, expected: i32) -> u32;
}

struct Parklot;
struct Engine;

impl Waits for Parklot {
    #[inline(always)]
    fn notify_one(word: &AtomicI32) -> u32 {
        futex::notify(word, 1) as u32
    }

    #[inline(always)]
    fn wait(word: &AtomicI32, expected: i32) -> u32 {
        futex::wait32(word, expected, None) as u32
    }
}

// Both engine calls stay out of line. V8 11.3's baseline compiler (Liftoff,
// Node 20) loses a loop's locals across a memory.atomic.wait32 in that loop
// (a count of 10 not-equal waits came out as 1, a store after the wait went
// to a stale address); alone in a function of its own the wait has no loop
// around it. parklot's futex calls are out of line too, so both sides pay
// one call. (bench/wasm/run.mjs runs V8 with --no-liftoff for the same bug.)
impl Waits for Engine {
    #[inline(never)]
    fn notify_one(word: &AtomicI32) -> u32 {
        // SAFETY: `word` is a live, aligned i32 in the shared memory; the
        // engine only uses its address as a key into its waiter lists.
        unsafe { memory_atomic_notify(word.as_ptr(), 1) }
    }

    #[inline(never)]
    fn wait(word: &AtomicI32, expected: i32) -> u32 {
        // SAFETY: as for notify_one; a negative timeout means none.
        unsafe { memory_atomic_wait32(word.as_ptr(), expected, -1) as u32 }
    }
}

/// # Safety
/// `addr` is a 4-aligned address of memory from [`alloc`] that stays allocated.
unsafe fn word_at<'a>(addr: u32) -> &'a AtomicI32 {
    // SAFETY: aligned and allocated per the caller; the memory is shared, so
    // any i32 in it is a valid AtomicI32.
    unsafe { &*(addr as *const AtomicI32) }
}

fn notify_loop<W: Waits>(word: &AtomicI32, n: u32) -> u32 {
    (0..n).map(|_| W::notify_one(word)).sum()
}

fn wait_not_equal_loop<W: Waits>(word: &AtomicI32, n: u32) -> u32 {
    let differs = word.load(Ordering::Relaxed).wrapping_add(1);
    (0..n).filter(|_| W::wait(word, differs) == 1).count() as u32
}

/// Runs `loops[engine]` (parklot's loop, then the engine's) `n` times on the
/// word at `addr`.
fn on_word(engine: bool, addr: u32, n: u32, loops: [fn(&AtomicI32, u32) -> u32; 2]) -> u32 {
    // SAFETY: an i32 the benchmark allocated (module docs).
    let word = unsafe { word_at(addr) };
    loops[engine as usize](word, n)
}

/// `n` notifies of one waiter on the word at `addr`, where nobody waits;
/// `engine` picks `memory.atomic.notify` over parklot's. Returns how many
/// were woken (0 when nobody waited).
#[wasm_bindgen]
pub fn bench_notify_loop(engine: bool, addr: u32, n: u32) -> u32 {
    on_word(
        engine,
        addr,
        n,
        [notify_loop::<Parklot>, notify_loop::<Engine>],
    )
}

/// `n` waits on the word at `addr` for a value it does not hold, each of
/// which returns "not-equal" at once. Returns how many did (`n` if right).
#[wasm_bindgen]
pub fn bench_wait_not_equal_loop(engine: bool, addr: u32, n: u32) -> u32 {
    on_word(
        engine,
        addr,
        n,
        [
            wait_not_equal_loop::<Parklot>,
            wait_not_equal_loop::<Engine>,
        ],
    )
}

/// Neither sleeps nor wakes: waiting is re-reading the word until it
/// changes. Bouncing a word this way between two threads is the floor for
/// any handoff, a cache line crossing between two cores and back.
struct Spin;

impl Waits for Spin {
    #[inline(always)]
    fn notify_one(_: &AtomicI32) -> u32 {
        0
    }

    #[inline(always)]
    fn wait(word: &AtomicI32, expected: i32) -> u32 {
        while word.load(Ordering::SeqCst) == expected {}
        0
    }
}

/// [`bench_ping_pong`]'s ways to wait and wake.
const PING_PONG_PARKLOT: u32 = 0;
const PING_PONG_ENGINE: u32 = 1;
const PING_PONG_SPIN: u32 = 2;

/// Two threads bounce the word at `addr` (0 at the start) `round_trips`
/// times: the pinger stores 1 and notifies, then waits while it reads 1; the
/// ponger waits while it reads 0, stores 0 and notifies. With `how` 0
/// (parklot's futex) or 1 (the engine's memory.atomic.*), each round trip is
/// two wakeups of a sleeping thread; with 2 both spin (the floor). The
/// pinger writes each round trip's nanoseconds, as f64, to the
/// `round_trips` slots at `samples_addr` (8-aligned). Returns `round_trips`,
/// or 0 (having done nothing) for any other `how`.
#[wasm_bindgen]
pub fn bench_ping_pong(
    how: u32,
    addr: u32,
    pinger: bool,
    round_trips: u32,
    samples_addr: u32,
) -> u32 {
    fn run<W: Waits>(word: &AtomicI32, pinger: bool, samples: *mut f64, n: u32) {
        if !pinger {
            for _ in 0..n {
                while word.load(Ordering::SeqCst) == 0 {
                    W::wait(word, 0);
                }
                word.store(0, Ordering::SeqCst);
                W::notify_one(word);
            }
            return;
        }
        // One clock read per round trip: its end is the next one's start.
        let mut t0 = performance_now();
        for i in 0..n as usize {
            word.store(1, Ordering::SeqCst);
            W::notify_one(word);
            while word.load(Ordering::SeqCst) == 1 {
                W::wait(word, 1);
            }
            let t1 = performance_now();
            // SAFETY: the caller allocated `round_trips` f64 slots there,
            // which only this thread writes.
            unsafe { samples.add(i).write((t1 - t0) * 1e6) };
            t0 = t1;
        }
    }
    // SAFETY: an i32 the benchmark allocated (module docs).
    let word = unsafe { word_at(addr) };
    let samples = samples_addr as *mut f64;
    match how {
        PING_PONG_PARKLOT => run::<Parklot>(word, pinger, samples, round_trips),
        PING_PONG_ENGINE => run::<Engine>(word, pinger, samples, round_trips),
        PING_PONG_SPIN => run::<Spin>(word, pinger, samples, round_trips),
        _ => return 0,
    }
    round_trips
}
