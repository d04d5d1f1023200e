//! Async mutexes: parklot's `lock_async()` against tokio's `Mutex` and
//! `async-lock`'s, with every thread awaiting ("async") and with half the
//! threads blocking in the same lock ("mixed": parklot's `lock()`, tokio's
//! `blocking_lock()`, async-lock's `lock_blocking()`). parklot queues both
//! kinds in one FIFO queue; async-lock keeps them in separate wait lists;
//! tokio's blocking form waits on its async one through a thread park.
//!
//! Each thread drives its own futures with the same minimal executor (poll,
//! and park the thread until the task's waker runs), so the locks, not the
//! executors, are compared. Critical section: bump a plain counter, checked
//! against the acquisitions every round.
//!
//! `cargo run --release -p parklot-bench --bin async_locks -- [--quick] [--out DIR]`
//! writes `native-async.md` and `native-async.json` (the "native-async" suite
//! of bench/run.mjs) to DIR (default `bench/results`). Rounds interleave
//! across peers; cells are medians over rounds, with the range.

use parklot::MutexAsync;
use parklot_bench::json::to_text;
use parklot_bench::machine::{now_iso8601, Machine};
use parklot_bench::stats::Spread;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

/// Wakes the thread blocked in [`block_on`].
struct Unpark(thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `f` to completion on this thread, parking between polls.
fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

/// A mutex over a counter, taken asynchronously or by blocking.
trait AsyncMutex: Send + Sync + 'static {
    fn new() -> Self;
    /// Takes the lock asynchronously and bumps the counter `n` times in a loop.
    fn bump_async(&self, n: u64) -> impl Future<Output = ()>;
    /// Takes the lock by blocking and bumps the counter once.
    fn bump_blocking(&self);
    fn count(&self) -> u64;
}

struct Parklot(parklot::Mutex<u64>);

impl AsyncMutex for Parklot {
    fn new() -> Self {
        Parklot(parklot::Mutex::new(0))
    }
    async fn bump_async(&self, n: u64) {
        for _ in 0..n {
            *self.0.lock_async().await += 1;
        }
    }
    fn bump_blocking(&self) {
        *self.0.lock() += 1;
    }
    fn count(&self) -> u64 {
        *self.0.lock()
    }
}

struct Tokio(tokio::sync::Mutex<u64>);

impl AsyncMutex for Tokio {
    fn new() -> Self {
        Tokio(tokio::sync::Mutex::new(0))
    }
    async fn bump_async(&self, n: u64) {
        for _ in 0..n {
            *self.0.lock().await += 1;
        }
    }
    fn bump_blocking(&self) {
        *self.0.blocking_lock() += 1;
    }
    fn count(&self) -> u64 {
        *self.0.blocking_lock()
    }
}

struct AsyncLock(async_lock::Mutex<u64>);

impl AsyncMutex for AsyncLock {
    fn new() -> Self {
        AsyncLock(async_lock::Mutex::new(0))
    }
    async fn bump_async(&self, n: u64) {
        for _ in 0..n {
            *self.0.lock().await += 1;
        }
    }
    fn bump_blocking(&self) {
        *self.0.lock_blocking() += 1;
    }
    fn count(&self) -> u64 {
        *self.0.lock_blocking()
    }
}

/// How the threads of a round take the lock.
#[derive(Copy, Clone, PartialEq)]
enum Mode {
    /// Every thread awaits.
    Async,
    /// Even threads await, odd ones block.
    Mixed,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Async => "every thread awaits",
            Mode::Mixed => "half await, half block",
        }
    }
    fn id(self) -> &'static str {
        match self {
            Mode::Async => "async",
            Mode::Mixed => "mixed",
        }
    }
}

/// Acquisitions per batch between two looks at the stop flag.
const BATCH: u64 = 64;

/// `threads` threads on one lock for `duration`; per-thread rates (per second).
fn round<L: AsyncMutex>(threads: usize, mode: Mode, duration: Duration) -> Vec<f64> {
    let lock = Arc::new(L::new());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let counts: Arc<Vec<AtomicU64>> = Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect());
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (lock, stop, start, counts) =
                (lock.clone(), stop.clone(), start.clone(), counts.clone());
            thread::spawn(move || {
                start.wait();
                let mut n = 0u64;
                let blocks = mode == Mode::Mixed && t % 2 == 1;
                while !stop.load(Ordering::Relaxed) {
                    if blocks {
                        for _ in 0..BATCH {
                            lock.bump_blocking();
                        }
                    } else {
                        block_on(lock.bump_async(BATCH));
                    }
                    n += BATCH;
                }
                counts[t].store(n, Ordering::Relaxed);
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let secs = began.elapsed().as_secs_f64();
    let total: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    assert_eq!(lock.count(), total, "a lost update: the lock is broken");
    counts
        .iter()
        .map(|c| c.load(Ordering::Relaxed) as f64 / secs)
        .collect()
}

/// One peer's round at one point.
struct Row {
    lock: &'static str,
    mode: Mode,
    threads: usize,
    round: usize,
    rates: Vec<f64>,
}

fn total(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn slowest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn spread<'a>(rows: impl Iterator<Item = &'a Row>, pick: fn(&[f64]) -> f64) -> Spread {
    Spread::of(rows.map(|r| pick(&r.rates))).expect("a lock without rounds")
}

/// A line chart (bench/chart.mjs's ChartSpec) of total throughput per lock in `mode`.
fn chart(rows: &[Row], locks: &[&str], mode: Mode, rounds: usize) -> Value {
    let series: Vec<Value> = locks
        .iter()
        .map(|&lock| {
            let mut counts: Vec<usize> = rows
                .iter()
                .filter(|r| r.lock == lock && r.mode == mode)
                .map(|r| r.threads)
                .collect();
            counts.sort_unstable();
            counts.dedup();
            let points: Vec<Value> = counts
                .iter()
                .map(|&n| {
                    let s = spread(
                        rows.iter()
                            .filter(|r| r.lock == lock && r.mode == mode && r.threads == n),
                        total,
                    );
                    json!({ "x": n, "y": s.median, "min": s.min, "max": s.max })
                })
                .collect();
            json!({ "name": lock, "points": points })
        })
        .collect();
    json!({
        "id": mode.id(),
        "title": format!("Native async mutexes, {}: acquisitions per second (median, whiskers min-max of {rounds} rounds)", mode.name()),
        "kind": "line",
        "x": { "label": "threads", "log": true },
        "y": { "label": "acquisitions per second, all threads", "log": true },
        "series": series,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| "bench/results".into());
    let duration = Duration::from_millis(if quick { 50 } else { 300 });
    let rounds = if quick { 1 } else { 5 };
    let thread_counts: &[usize] = if quick { &[2, 4] } else { &[1, 2, 4, 8] };
    type Run = fn(usize, Mode, Duration) -> Vec<f64>;
    let peers: [(&str, Run); 3] = [
        ("parklot Mutex lock_async", round::<Parklot>),
        ("tokio::sync::Mutex", round::<Tokio>),
        ("async_lock::Mutex", round::<AsyncLock>),
    ];
    let modes = [Mode::Async, Mode::Mixed];
    let date = now_iso8601();
    let mut rows = Vec::new();
    for r in 0..rounds {
        for &mode in &modes {
            for &threads in thread_counts {
                if mode == Mode::Mixed && threads < 2 {
                    continue;
                }
                // Rotate the order each round, so no peer always runs first.
                for k in 0..peers.len() {
                    let (lock, run) = peers[(k + r) % peers.len()];
                    let rates = run(threads, mode, duration);
                    eprintln!(
                        "round {}/{rounds}, {}, {threads} threads, {lock}: {:.0}/s (slowest thread {:.0}/s)",
                        r + 1,
                        mode.name(),
                        total(&rates),
                        slowest(&rates),
                    );
                    rows.push(Row {
                        lock,
                        mode,
                        threads,
                        round: r,
                        rates,
                    });
                }
            }
        }
    }

    let locks: Vec<&str> = peers.iter().map(|(name, _)| *name).collect();
    let mut md = format!(
        "# Async mutexes: parklot's lock_async, tokio, async-lock\n\n\
         {date}{}. Acquisitions per second of all threads together, and of the slowest thread \
         (a starved thread shows as next to 0), each the median over {rounds} rounds of {} ms \
         interleaved across locks (order rotated each round), with the range (min-max). Every \
         thread drives its futures with the same minimal executor (poll, park until woken). \
         \"mixed\": even threads await, odd ones block in the same lock (parklot `lock()`, tokio \
         `blocking_lock()`, async-lock `lock_blocking()`). Generated by \
         `cargo run --release -p parklot-bench --bin async_locks`.\n\n\
         | mode | threads | lock | all threads | x first row | slowest thread |\n\
         |---|---:|---|---:|---:|---:|\n",
        if quick {
            " (--quick: a smoke run, not a measurement)"
        } else {
            ""
        },
        duration.as_millis(),
    );
    for &mode in &modes {
        for &threads in thread_counts {
            let mut first = None;
            for &lock in &locks {
                let of = || {
                    rows.iter()
                        .filter(|r| r.lock == lock && r.mode == mode && r.threads == threads)
                };
                if of().next().is_none() {
                    continue;
                }
                let all = spread(of(), total);
                let low = spread(of(), slowest);
                let base = *first.get_or_insert(all.median);
                let line = format!(
                    "| {} | {threads} | {lock} | {:.0} ({:.0}-{:.0}) | {:.2} | {:.0} ({:.0}-{:.0}) |\n",
                    mode.id(),
                    all.median,
                    all.min,
                    all.max,
                    all.median / base,
                    low.median,
                    low.min,
                    low.max,
                );
                print!("{line}");
                md.push_str(&line);
            }
        }
    }
    let machine = Machine::this();
    let doc = json!({
        "suite": "native-async",
        "date": date,
        "quick": quick,
        "machine": {
            "cpu": machine.cpu,
            "cores": machine.cores,
            "os": machine.os,
            "arch": machine.arch,
            "rustc": machine.rustc,
        },
        "params": {
            "experiment": "async mutexes, every thread awaiting, and half blocking",
            "rounds": rounds,
            "round_ms": duration.as_millis() as u64,
            "threads": thread_counts,
            "locks": locks,
        },
        "rounds": rows.iter().map(|r| json!({
            "round": r.round,
            "lock": r.lock,
            "mode": r.mode.id(),
            "threads": r.threads,
            "rates": r.rates.iter().map(|x| x.round()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "charts": modes.iter().map(|&m| chart(&rows, &locks, m, rounds)).collect::<Vec<_>>(),
    });
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(format!("{out}/native-async.md"), md).unwrap();
    std::fs::write(format!("{out}/native-async.json"), to_text(&doc)).unwrap();
}
