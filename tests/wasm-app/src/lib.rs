//! A small wasm-bindgen app, parklot's test as a Rust developer ships it:
//! Rayon (through wasm-bindgen-rayon) counts the primes below a limit in Web
//! Workers, while the page's main thread, between frames, updates the same
//! ledger under a `Mutex` and reads the workers' progress under an `RwLock`.
//! The workers hold both locks for a while (they test numbers inside them),
//! so the main thread's acquisitions are contended on purpose.
//!
//! Built with parklot (its `wasm-bindgen` feature: the main thread finds out
//! by itself that it may not block, and waits by spinning on its queued
//! record) the page completes; built with the `std-mutex` feature the locks
//! are std's, and the main thread traps with "Atomics.wait cannot be called
//! in this context" the first time one is contended. So does parklot built
//! without its `wasm-bindgen` feature (`--no-default-features` here), which
//! then takes every thread for one that may sleep, as no one said otherwise.
//!
//! In the async mode (`tickAsync` in place of `tick`, the page's
//! `?lock=parklot-async`) the main thread awaits `lock_async()` and
//! `read_async()` instead (driven by wasm-bindgen-futures): it queues in the
//! same FIFO queues as the blocked workers and never spins.
//!
//! Each block of `BLOCK` numbers of a chunk is tested in two halves: the
//! first inside the ledger's `Mutex` (its primes go to the ledger), the
//! second inside the progress `RwLock`'s write lock (its primes go to the
//! chunk's entry). The count and the sum of all primes below the limit are
//! the ledger's plus the chunks': exact, or a lock lost an update.

use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use rayon::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

// wasm-bindgen-rayon's `initThreadPool(n)`: starts n Web Workers for Rayon.
pub use wasm_bindgen_rayon::init_thread_pool;

#[cfg(not(feature = "std-mutex"))]
mod imp {
    //! parklot's locks, which never sleep on a thread that may not block.
    pub use parklot::{const_mutex as mutex, const_rwlock as rwlock};
    pub use parklot::{Mutex, MutexGuard, RwLock};
    pub use parklot::{RwLockReadGuard as ReadGuard, RwLockWriteGuard as WriteGuard};
    pub const NAME: &str = "parklot";

    /// Their calls return the guard itself...
    pub fn got<G>(guard: G) -> G {
        guard
    }
    /// ...or, for a try, an `Option` of it.
    pub fn maybe<G>(guard: Option<G>) -> Option<G> {
        guard
    }
}

#[cfg(feature = "std-mutex")]
mod imp {
    //! std's locks, which wait with `memory.atomic.wait32` on every thread.
    pub use std::sync::{Mutex, MutexGuard, RwLock};
    pub use std::sync::{RwLockReadGuard as ReadGuard, RwLockWriteGuard as WriteGuard};
    pub const NAME: &str = "std";

    pub const fn mutex<T>(value: T) -> Mutex<T> {
        Mutex::new(value)
    }
    pub const fn rwlock<T>(value: T) -> RwLock<T> {
        RwLock::new(value)
    }
    /// Their calls return a `Result` (poisoned or, for a try, would block).
    pub fn got<G, E: core::fmt::Debug>(result: Result<G, E>) -> G {
        result.unwrap()
    }
    pub fn maybe<G, E>(result: Result<G, E>) -> Option<G> {
        result.ok()
    }
}

mod locks {
    //! The app's locks, parklot's or std's (the `std-mutex` feature), with
    //! one set of calls.
    use super::imp::{got, maybe};
    pub use super::imp::{mutex, rwlock, Mutex, RwLock, NAME};
    use super::imp::{MutexGuard, ReadGuard, WriteGuard};

    pub fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
        maybe(m.try_lock())
    }
    pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        got(m.lock())
    }
    pub fn try_read<T>(l: &RwLock<T>) -> Option<ReadGuard<'_, T>> {
        maybe(l.try_read())
    }
    pub fn read<T>(l: &RwLock<T>) -> ReadGuard<'_, T> {
        got(l.read())
    }
    pub fn write<T>(l: &RwLock<T>) -> WriteGuard<'_, T> {
        got(l.write())
    }
}

use locks::{lock, read, try_lock, try_read, write};

#[cfg(feature = "peers")]
mod peers;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["globalThis", "performance"], js_name = now)]
    fn performance_now() -> f64;

    /// Each thread (page, worker) has its own origin; origin + now is shared.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["globalThis", "performance"], js_name = timeOrigin)]
    static TIME_ORIGIN_MS: f64;
}

/// Numbers per block: the workers hold a lock while they test half a block
/// (1000 numbers near 10^6: about 100-200 µs in Chromium on this kind of machine).
const BLOCK: u64 = 2000;

/// What the workers and the main thread both update.
struct Ledger {
    /// Primes found in the first halves of blocks (tested under this lock).
    primes: u64,
    sum: u64,
    blocks: u64,
    /// Times the page's main thread took this lock.
    main_updates: u64,
}

/// One chunk's progress, written by the worker that owns the chunk.
#[derive(Clone, Copy)]
struct Chunk {
    checked: u64,
    /// Primes found in the second halves of its blocks (tested under the write lock).
    primes: u64,
    sum: u64,
}

struct Progress {
    limit: u64,
    chunks: Vec<Chunk>,
}

impl Progress {
    fn fraction_checked(&self) -> f64 {
        let checked: u64 = self.chunks.iter().map(|c| c.checked).sum();
        checked as f64 / self.limit.max(1) as f64
    }
}

static LEDGER: locks::Mutex<Ledger> = locks::mutex(Ledger {
    primes: 0,
    sum: 0,
    blocks: 0,
    main_updates: 0,
});
static PROGRESS: locks::RwLock<Progress> = locks::rwlock(Progress {
    limit: 0,
    chunks: Vec::new(),
});
static DONE: AtomicBool = AtomicBool::new(false);
/// What a worker's `parklot::thread_may_block()` answered: 0 not asked yet, 1 no, 2 yes.
static WORKER_MAY_BLOCK: AtomicU8 = AtomicU8::new(0);

/// The main thread's own record of its acquisitions (it is the only writer).
#[derive(Default)]
struct Timings {
    /// Time spent in each acquisition (`try_lock`, then `lock` if that failed), in ms.
    all: Vec<f64>,
    /// The same, for the acquisitions whose `try_lock` failed (contended).
    contended: Vec<f64>,
    mutex_contended: u64,
    read_contended: u64,
}

std::thread_local! {
    static TIMINGS: RefCell<Timings> = RefCell::new(Timings::default());
}

/// Milliseconds on a clock all threads share (parklot's fairness timer).
fn now_ms() -> f64 {
    TIME_ORIGIN_MS.with(|origin| *origin) + performance_now()
}

fn now_ns() -> u64 {
    (now_ms() * 1e6) as u64
}

fn is_prime(n: u64) -> bool {
    if n < 4 {
        return n >= 2;
    }
    if n % 2 == 0 || n % 3 == 0 {
        return false;
    }
    let mut d = 5;
    while d * d <= n {
        if n % d == 0 || n % (d + 2) == 0 {
            return false;
        }
        d += 6;
    }
    true
}

/// The count and the sum of the primes in `lo..hi`.
fn primes_in(lo: u64, hi: u64) -> (u64, u64) {
    (lo..hi)
        .filter(|&n| is_prime(n))
        .fold((0, 0), |(c, s), p| (c + 1, s + p))
}

/// Tests chunk `index` of `chunks` below `limit`, block by block, under the locks.
fn run_chunk(index: u64, chunks: u64, limit: u64) {
    let (start, end) = (index * limit / chunks, (index + 1) * limit / chunks);
    let mut lo = start;
    while lo < end {
        let hi = (lo + BLOCK).min(end);
        let mid = lo + (hi - lo) / 2;
        {
            let mut ledger = lock(&LEDGER);
            let (count, sum) = primes_in(lo, mid);
            ledger.primes += count;
            ledger.sum += sum;
            ledger.blocks += 1;
        }
        {
            let mut progress = write(&PROGRESS);
            let (count, sum) = primes_in(mid, hi);
            let chunk = &mut progress.chunks[index as usize];
            chunk.primes += count;
            chunk.sum += sum;
            chunk.checked = hi - start;
        }
        lo = hi;
    }
}

/// Sets the app up on the page's main thread: parklot's clock and CPU count
/// (memory-wide). Nothing says which thread may block: parklot finds out.
#[wasm_bindgen]
pub fn setup(cpus: u32) {
    parklot::clock::install_time_source(now_ns);
    parklot::set_cpu_count(cpus);
}

/// Starts counting the primes below `limit` in `chunks` chunks on Rayon's
/// workers, and returns at once.
#[wasm_bindgen]
pub fn start(limit: u64, chunks: u32) {
    {
        let mut progress = write(&PROGRESS);
        progress.limit = limit;
        progress.chunks = vec![
            Chunk {
                checked: 0,
                primes: 0,
                sum: 0
            };
            chunks as usize
        ];
    }
    rayon::spawn(move || {
        let may_block = parklot::thread_may_block();
        WORKER_MAY_BLOCK.store(if may_block { 2 } else { 1 }, Ordering::Relaxed);
        (0..u64::from(chunks))
            .into_par_iter()
            .for_each(|i| run_chunk(i, u64::from(chunks), limit));
        DONE.store(true, Ordering::Release);
    });
}

/// Records one acquisition by the main thread that took `dt` ms (`waited`:
/// its `try` form failed, so it was contended).
fn record(dt: f64, waited: bool, contended: impl FnOnce(&mut Timings)) {
    TIMINGS.with(|t| {
        let mut t = t.borrow_mut();
        t.all.push(dt);
        if waited {
            t.contended.push(dt);
            contended(&mut t);
        }
    });
}

/// Times one acquisition by the main thread: `try` first (it tells whether
/// the lock was contended), then the blocking form.
fn timed<G>(
    try_acquire: impl FnOnce() -> Option<G>,
    acquire: impl FnOnce() -> G,
    contended: impl FnOnce(&mut Timings),
) -> G {
    let t0 = performance_now();
    let (guard, waited) = match try_acquire() {
        Some(g) => (g, false),
        None => (acquire(), true),
    };
    record(performance_now() - t0, waited, contended);
    guard
}

/// One frame's worth of main-thread work: `updates` ledger updates under the
/// Mutex and one read of the progress under the RwLock. Returns the fraction
/// of numbers checked, or 2 once the workers are done.
#[wasm_bindgen]
pub fn tick(updates: u32) -> f64 {
    for _ in 0..updates {
        let mut ledger = timed(
            || try_lock(&LEDGER),
            || lock(&LEDGER),
            |t| t.mutex_contended += 1,
        );
        ledger.main_updates += 1;
    }
    if DONE.load(Ordering::Acquire) {
        return 2.0;
    }
    let progress = timed(
        || try_read(&PROGRESS),
        || read(&PROGRESS),
        |t| t.read_contended += 1,
    );
    progress.fraction_checked()
}

/// `tick` in the async mode (`?lock=parklot-async`): the same work, but the
/// main thread awaits `lock_async()` and `read_async()` where `tick` spins,
/// so the page stays free while the workers hold the locks. Each contended
/// acquisition is timed from the call to its resolution.
#[cfg(not(feature = "std-mutex"))]
#[wasm_bindgen(js_name = tickAsync)]
pub async fn tick_async(updates: u32) -> f64 {
    use parklot::{MutexAsync, RwLockAsync};
    for _ in 0..updates {
        let t0 = performance_now();
        let (mut ledger, waited) = match LEDGER.try_lock() {
            Some(g) => (g, false),
            None => (LEDGER.lock_async().await, true),
        };
        record(performance_now() - t0, waited, |t| t.mutex_contended += 1);
        ledger.main_updates += 1;
    }
    if DONE.load(Ordering::Acquire) {
        return 2.0;
    }
    let t0 = performance_now();
    let (progress, waited) = match PROGRESS.try_read() {
        Some(g) => (g, false),
        None => (PROGRESS.read_async().await, true),
    };
    record(performance_now() - t0, waited, |t| t.read_contended += 1);
    progress.fraction_checked()
}

/// min, p50, p90, p99, p99.9 and max of `samples` (ms), in µs, as a JSON object.
fn distribution(samples: &mut [f64]) -> String {
    if samples.is_empty() {
        return "null".into();
    }
    samples.sort_by(f64::total_cmp);
    // Nearest rank: the smallest sample with at least q of them at or below it.
    let rank =
        |q: f64| samples[((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let us = |ms: f64| (ms * 1000.0 * 10.0).round() / 10.0;
    format!(
        r#"{{"n":{},"min":{},"p50":{},"p90":{},"p99":{},"p999":{},"max":{}}}"#,
        samples.len(),
        us(samples[0]),
        us(rank(0.5)),
        us(rank(0.9)),
        us(rank(0.99)),
        us(rank(0.999)),
        us(samples[samples.len() - 1])
    )
}

/// The results, as JSON, once `tick` has returned 2.
#[wasm_bindgen]
pub fn finish() -> String {
    let ledger = lock(&LEDGER);
    let progress = read(&PROGRESS);
    let primes = ledger.primes + progress.chunks.iter().map(|c| c.primes).sum::<u64>();
    let sum = ledger.sum + progress.chunks.iter().map(|c| c.sum).sum::<u64>();
    let checked: u64 = progress.chunks.iter().map(|c| c.checked).sum();
    TIMINGS.with(|t| {
        let mut t = t.borrow_mut();
        let (mutex_contended, read_contended) = (t.mutex_contended, t.read_contended);
        let all = distribution(&mut t.all);
        let contended = distribution(&mut t.contended);
        format!(
            r#"{{"locks":"{}","limit":{},"block":{},"primes":{},"sum":"{}","checked":{},"blocks":{},"mainUpdates":{},"mainMayBlock":{},"workerMayBlock":{},"mutexContended":{},"readContended":{},"acquire":{},"contendedAcquire":{}}}"#,
            locks::NAME,
            progress.limit,
            BLOCK,
            primes,
            sum,
            checked,
            ledger.blocks,
            ledger.main_updates,
            parklot::thread_may_block(),
            WORKER_MAY_BLOCK.load(Ordering::Relaxed) == 2,
            mutex_contended,
            read_contended,
            all,
            contended
        )
    })
}
