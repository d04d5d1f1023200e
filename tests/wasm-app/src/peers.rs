//! The peer benchmark's side in the module (feature `peers`), driven by
//! bench/browser/wasm-peers.mjs through the page www/peers.html: one lock at
//! a time, `workers` Rayon workers take it in a loop for a while, and the
//! page's main thread, if asked, takes it between turns of its event loop
//! and times each acquisition. The locks: parklot's `Mutex`, `wasm_sync`'s
//! and `wasm_safe_mutex`'s (both spin on a thread that may not block), and
//! std's (workers only: it traps on the main thread). The critical section
//! is one add-and-multiply and a plain counter, which must equal the
//! acquisitions counted outside the lock.

use crate::{distribution, now_ms, performance_now};
use core::sync::atomic::{AtomicBool, Ordering};
use rayon::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// What every lock guards.
struct Shared {
    count: u64,
    x: f64,
}

const ZERO: Shared = Shared { count: 0, x: 1.0 };

/// The critical section: seed 000's one step of a double add and multiply,
/// then the counter that checks the lock.
#[inline]
fn critical(s: &mut Shared) {
    s.x = s.x * 1.000_000_1 + 1.0;
    s.count += 1;
}

/// A lock under test: takes it, runs `f` inside, releases it.
trait Peer: Sync {
    fn with(&self, f: impl FnOnce(&mut Shared));
}

impl Peer for parklot::Mutex<Shared> {
    #[inline]
    fn with(&self, f: impl FnOnce(&mut Shared)) {
        f(&mut self.lock())
    }
}

impl Peer for std::sync::Mutex<Shared> {
    #[inline]
    fn with(&self, f: impl FnOnce(&mut Shared)) {
        f(&mut self.lock().unwrap())
    }
}

impl Peer for wasm_sync::Mutex<Shared> {
    #[inline]
    fn with(&self, f: impl FnOnce(&mut Shared)) {
        f(&mut self.lock().unwrap())
    }
}

impl Peer for wasm_safe_mutex::Mutex<Shared> {
    #[inline]
    fn with(&self, f: impl FnOnce(&mut Shared)) {
        // Blocks (Atomics.wait) in a worker, spins on the main thread.
        f(&mut self.lock_sync())
    }
}

static PARKLOT: parklot::Mutex<Shared> = parklot::const_mutex(ZERO);
static STD: std::sync::Mutex<Shared> = std::sync::Mutex::new(ZERO);
static WASM_SYNC: wasm_sync::Mutex<Shared> = wasm_sync::Mutex::new(ZERO);
static WASM_SAFE_MUTEX: wasm_safe_mutex::Mutex<Shared> = wasm_safe_mutex::Mutex::new(ZERO);

/// Calls `$body` with `$peer` bound to the lock named `$name` (its generic
/// code monomorphized per lock), or throws for an unknown name.
macro_rules! with_peer {
    ($name:expr, |$peer:ident| $body:expr) => {
        with_peer!($name, |$peer| $body, {
            "parklot" => PARKLOT,
            "std" => STD,
            "wasm_sync" => WASM_SYNC,
            "wasm_safe_mutex" => WASM_SAFE_MUTEX,
        })
    };
    ($name:expr, |$peer:ident| $body:expr, { $($key:literal => $lock:ident,)* }) => {
        match $name {
            $($key => {
                let $peer = &$lock;
                $body
            })*
            other => wasm_bindgen::throw_str(&format!("peers: no lock {other:?}")),
        }
    };
}

/// One worker's share of a run.
#[derive(Clone, Copy)]
struct WorkerRun {
    acquisitions: u64,
    start_ms: f64,
    end_ms: f64,
}

static DONE: AtomicBool = AtomicBool::new(true);
/// The workers' shares of the last run, written once they are all done.
static RESULTS: parklot::Mutex<Vec<WorkerRun>> = parklot::const_mutex(Vec::new());

std::thread_local! {
    /// The main thread's acquisition times in this run (ms).
    static MAIN_SAMPLES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Takes `peer` in a loop until `end_ms` on the shared clock.
fn worker_loop(peer: &impl Peer, end_ms: f64) -> WorkerRun {
    let start_ms = now_ms();
    let mut acquisitions = 0u64;
    loop {
        // The clock is a call into JS: look at it every 64 acquisitions.
        for _ in 0..64 {
            peer.with(critical);
        }
        acquisitions += 64;
        let now = now_ms();
        if now >= end_ms {
            return WorkerRun {
                acquisitions,
                start_ms,
                end_ms: now,
            };
        }
    }
}

/// Starts a run of `lock` on `workers` Rayon workers for `ms` and returns
/// at once; `peersDone()` says when it is over.
#[wasm_bindgen(js_name = peersStart)]
pub fn peers_start(lock: &str, workers: u32, ms: f64) {
    assert!(DONE.load(Ordering::Acquire), "peers: a run is still going");
    with_peer!(lock, |peer| peer.with(|s| *s = ZERO));
    MAIN_SAMPLES.with(|m| m.borrow_mut().clear());
    DONE.store(false, Ordering::Release);
    let lock = lock.to_owned();
    rayon::spawn(move || {
        let end_ms = now_ms() + ms;
        let runs: Vec<WorkerRun> = with_peer!(lock.as_str(), |peer| (0..workers)
            .into_par_iter()
            .with_max_len(1) // one worker each
            .map(|_| worker_loop(peer, end_ms))
            .collect());
        *RESULTS.lock() = runs;
        DONE.store(true, Ordering::Release);
    });
}

/// Whether the run is over.
#[wasm_bindgen(js_name = peersDone)]
pub fn peers_done() -> bool {
    DONE.load(Ordering::Acquire)
}

/// On the page's main thread: takes `lock` `n` times with its blocking form
/// (parklot's and the peers' spin here), timing each. Returns `peersDone()`.
#[wasm_bindgen(js_name = peersMain)]
pub fn peers_main(lock: &str, n: u32) -> bool {
    with_peer!(lock, |peer| {
        for _ in 0..n {
            let t0 = performance_now();
            peer.with(critical);
            let dt = performance_now() - t0;
            MAIN_SAMPLES.with(|m| m.borrow_mut().push(dt));
        }
    });
    peers_done()
}

/// `peersMain("parklot", n)` with `lock_async().await`: the main thread waits
/// without spinning, each acquisition timed from the call to its resolution.
#[wasm_bindgen(js_name = peersMainAsync)]
pub async fn peers_main_async(n: u32) -> bool {
    use parklot::MutexAsync;
    for _ in 0..n {
        let t0 = performance_now();
        critical(&mut *PARKLOT.lock_async().await);
        let dt = performance_now() - t0;
        MAIN_SAMPLES.with(|m| m.borrow_mut().push(dt));
    }
    peers_done()
}

/// The last run's results as JSON: each worker's acquisitions, the window,
/// the main thread's acquisitions and their times (µs), and the counter
/// under the lock, which the caller checks against the acquisitions.
#[wasm_bindgen(js_name = peersFinish)]
pub fn peers_finish(lock: &str) -> String {
    assert!(DONE.load(Ordering::Acquire), "peers: the run is not over");
    let runs = RESULTS.lock();
    let mut counter = 0;
    with_peer!(lock, |peer| peer.with(|s| counter = s.count));
    let workers: Vec<String> = runs.iter().map(|r| r.acquisitions.to_string()).collect();
    let start = runs
        .iter()
        .map(|r| r.start_ms)
        .fold(f64::INFINITY, f64::min);
    let end = runs
        .iter()
        .map(|r| r.end_ms)
        .fold(f64::NEG_INFINITY, f64::max);
    MAIN_SAMPLES.with(|m| {
        let mut samples = m.borrow_mut();
        format!(
            r#"{{"lock":"{}","workers":[{}],"windowMs":{},"main":{},"counter":{},"mainAcquire":{}}}"#,
            lock,
            workers.join(","),
            end - start,
            samples.len(),
            counter,
            distribution(&mut samples)
        )
    })
}
