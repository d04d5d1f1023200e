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
use parklot_bench::side::{row, threads_chart, Plan, Suite, Timed};
use parklot_bench::stats::Spread;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

/// The suite, as its full run measures it.
const SUITE: Suite = Suite {
    name: "native-async",
    experiment: "async mutexes, every thread awaiting, and half blocking",
    round_ms: 300,
    threads: &[1, 2, 4, 8],
};

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

/// A peer: `$name` over `$mutex`, taken asynchronously with `$lock_async`
/// and by blocking with `$lock_blocking`.
macro_rules! async_mutex {
    ($name:ident, $mutex:ty, $lock_async:ident, $lock_blocking:ident) => {
        struct $name($mutex);

        impl AsyncMutex for $name {
            fn new() -> Self {
                $name(<$mutex>::new(0))
            }
            async fn bump_async(&self, n: u64) {
                for _ in 0..n {
                    *self.0.$lock_async().await += 1;
                }
            }
            fn bump_blocking(&self) {
                *self.0.$lock_blocking() += 1;
            }
            fn count(&self) -> u64 {
                *self.0.$lock_blocking()
            }
        }
    };
}

async_mutex!(Parklot, parklot::Mutex<u64>, lock_async, lock);
async_mutex!(Tokio, tokio::sync::Mutex<u64>, lock, blocking_lock);
async_mutex!(AsyncLock, async_lock::Mutex<u64>, lock, lock_blocking);

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
    let lock = L::new();
    let timed = Timed::run(threads, duration, |t| {
        if mode == Mode::Mixed && t % 2 == 1 {
            for _ in 0..BATCH {
                lock.bump_blocking();
            }
        } else {
            block_on(lock.bump_async(BATCH));
        }
        BATCH
    });
    let total: u64 = timed.counts.iter().sum();
    assert_eq!(lock.count(), total, "a lost update: the lock is broken");
    timed.rates()
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

/// A line chart of total throughput per lock in `mode`.
fn chart(rows: &[Row], locks: &[&str], mode: Mode, plan: &Plan) -> Value {
    threads_chart(
        mode.id(),
        format!(
            "Native async mutexes, {}: acquisitions per second (median, whiskers min-max of {} rounds)",
            mode.name(),
            plan.rounds(),
        ),
        "acquisitions per second, all threads".into(),
        locks,
        plan.threads(),
        |lock, n| {
            Spread::of(
                rows.iter()
                    .filter(|r| r.lock == lock && r.mode == mode && r.threads == n)
                    .map(|r| total(&r.rates)),
            )
        },
    )
}

fn main() {
    let plan = Plan::from_env(SUITE);
    let (duration, rounds, thread_counts) = (plan.round_time(), plan.rounds(), plan.threads());
    type Run = fn(usize, Mode, Duration) -> Vec<f64>;
    let peers: [(&str, Run); 3] = [
        ("parklot Mutex lock_async", round::<Parklot>),
        ("tokio::sync::Mutex", round::<Tokio>),
        ("async_lock::Mutex", round::<AsyncLock>),
    ];
    let modes = [Mode::Async, Mode::Mixed];
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
    let mut md = plan.markdown(
        "Async mutexes: parklot's lock_async, tokio, async-lock",
        "Acquisitions per second of all threads together, and of the slowest thread \
         (a starved thread shows as next to 0)",
        "(order rotated each round), with the range (min-max). Every thread drives its futures \
         with the same minimal executor (poll, park until woken). \"mixed\": even threads await, \
         odd ones block in the same lock (parklot `lock()`, tokio `blocking_lock()`, async-lock \
         `lock_blocking()`). Generated by `cargo run --release -p parklot-bench --bin async_locks`.",
        &[
            ("mode", false),
            ("threads", true),
            ("lock", false),
            ("all threads", true),
            ("x first row", true),
            ("slowest thread", true),
        ],
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
                row(
                    &mut md,
                    format!(
                    "| {} | {threads} | {lock} | {:.0} ({:.0}-{:.0}) | {:.2} | {:.0} ({:.0}-{:.0}) |\n",
                    mode.id(),
                    all.median,
                    all.min,
                    all.max,
                    all.median / base,
                    low.median,
                    low.min,
                    low.max,
                ),
                );
            }
        }
    }
    let rounds = rows.iter().map(|r| {
        let rates: Vec<f64> = r.rates.iter().map(|x| x.round()).collect();
        let rest = json!({ "mode": r.mode.id(), "threads": r.threads, "rates": rates });
        (r.round, r.lock, rest)
    });
    let charts = modes.iter().map(|&m| chart(&rows, &locks, m, &plan));
    let doc = plan.document(&locks, rounds, charts.collect());
    plan.write(&md, &doc);
}
