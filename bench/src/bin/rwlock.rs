//! Experiment 6 of BENCHMARKS.md, after seed 003: reader-writer locks with
//! half the threads reading and half writing, short critical sections, 2 to
//! 16 threads, in a reader-preferring and a writer-preferring mode, and the
//! rate of every thread: a peer that starves a side shows 0 for its slowest
//! thread. Peers: parklot's `RawRwLock` (both policies), glibc's
//! `pthread_rwlock_t` (both preferences), `std::sync::RwLock` and
//! `parking_lot::RwLock`.
//!
//! `cargo run --release -p parklot-bench --bin rwlock -- [--quick] [--out DIR]`
//! writes `native-rwlock.md` and `native-rwlock.json` (the "native-rwlock"
//! suite of bench/run.mjs: every round, and chart specs) to DIR (default
//! `bench/results`). Rounds interleave across peers (A B C ..., A B C ...);
//! cells are medians over rounds. bench/run.mjs puts these rows beside the
//! wasm and JS ones in `rwlock.md`.

use parklot::{RawRwLock, RwLockPolicy};
use parklot_bench::side::{row, threads_chart, Plan, Suite, Timed};
use parklot_bench::stats::Spread;
use serde_json::{json, Value};
use std::time::Duration;

/// The suite, as its full run measures it.
const SUITE: Suite = Suite {
    name: "native-rwlock",
    experiment: "rwlock half readers half writers",
    round_ms: 400,
    threads: &[2, 4, 8, 16],
};

/// A reader-writer lock as this experiment drives it.
trait Rw: Send + Sync + 'static {
    fn read(&self, f: impl FnOnce());
    fn write(&self, f: impl FnOnce());
}

struct Parklot(RawRwLock);

impl Rw for Parklot {
    fn read(&self, f: impl FnOnce()) {
        self.0.lock_shared();
        f();
        // SAFETY: read just above.
        unsafe { self.0.unlock_shared() };
    }
    fn write(&self, f: impl FnOnce()) {
        self.0.lock_exclusive();
        f();
        // SAFETY: locked just above.
        unsafe { self.0.unlock_exclusive() };
    }
}

struct Std(std::sync::RwLock<()>);

impl Rw for Std {
    fn read(&self, f: impl FnOnce()) {
        let _g = self.0.read().unwrap();
        f();
    }
    fn write(&self, f: impl FnOnce()) {
        let _g = self.0.write().unwrap();
        f();
    }
}

struct ParkingLot(parking_lot::RwLock<()>);

impl Rw for ParkingLot {
    fn read(&self, f: impl FnOnce()) {
        let _g = self.0.read();
        f();
    }
    fn write(&self, f: impl FnOnce()) {
        let _g = self.0.write();
        f();
    }
}

/// glibc's rwlock, boxed so that it never moves once initialised.
struct Pthread(Box<core::cell::UnsafeCell<libc::pthread_rwlock_t>>);

// SAFETY: a pthread_rwlock_t is made to be shared between threads.
unsafe impl Send for Pthread {}
// SAFETY: as above.
unsafe impl Sync for Pthread {}

impl Pthread {
    /// `kind`: PTHREAD_RWLOCK_PREFER_READER_NP (0, the default) or
    /// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP (2).
    fn new(kind: i32) -> Pthread {
        let lock = Box::new(core::cell::UnsafeCell::new(
            libc::PTHREAD_RWLOCK_INITIALIZER,
        ));
        // SAFETY: attr is initialised before use and destroyed after; the
        // lock is boxed, so it stays where it was initialised.
        unsafe {
            let mut attr: libc::pthread_rwlockattr_t = core::mem::zeroed();
            assert_eq!(libc::pthread_rwlockattr_init(&mut attr), 0);
            assert_eq!(libc::pthread_rwlockattr_setkind_np(&mut attr, kind), 0);
            assert_eq!(libc::pthread_rwlock_init(lock.get(), &attr), 0);
            libc::pthread_rwlockattr_destroy(&mut attr);
        }
        Pthread(lock)
    }
}

impl Rw for Pthread {
    fn read(&self, f: impl FnOnce()) {
        // SAFETY: an initialised lock, released by this same thread below.
        unsafe { assert_eq!(libc::pthread_rwlock_rdlock(self.0.get()), 0) };
        f();
        // SAFETY: read-locked above by this thread.
        unsafe { libc::pthread_rwlock_unlock(self.0.get()) };
    }
    fn write(&self, f: impl FnOnce()) {
        // SAFETY: as in `read`.
        unsafe { assert_eq!(libc::pthread_rwlock_wrlock(self.0.get()), 0) };
        f();
        // SAFETY: write-locked above by this thread.
        unsafe { libc::pthread_rwlock_unlock(self.0.get()) };
    }
}

impl Drop for Pthread {
    fn drop(&mut self) {
        // SAFETY: nobody holds it any more (the round's threads are joined).
        unsafe { libc::pthread_rwlock_destroy(self.0.get()) };
    }
}

/// One round's per-thread rates (operations per second).
struct Rates {
    readers: Vec<f64>,
    writers: Vec<f64>,
}

/// `threads` threads, even ones reading and odd ones writing, for `duration`;
/// a write bumps a plain counter (checked at the end), a read reads it.
fn round<L: Rw>(lock: L, threads: usize, duration: Duration) -> Rates {
    struct Shared<L> {
        lock: L,
        value: core::cell::UnsafeCell<u64>,
    }
    // SAFETY: `value` is written only under the write lock, read under a read.
    unsafe impl<L: Sync> Sync for Shared<L> {}
    let shared = Shared {
        lock,
        value: core::cell::UnsafeCell::new(0),
    };
    let shared = &shared;
    let timed = Timed::run(threads, duration, move |t| {
        if t % 2 == 0 {
            // SAFETY: read under the read lock.
            shared.lock.read(|| {
                std::hint::black_box(unsafe { *shared.value.get() });
            });
        } else {
            // SAFETY: written under the write lock.
            shared.lock.write(|| unsafe { *shared.value.get() += 1 });
        }
        1
    });
    let per = timed.rates();
    let writes: u64 = timed.counts.iter().skip(1).step_by(2).sum();
    // SAFETY: every thread is joined.
    assert_eq!(
        unsafe { *shared.value.get() },
        writes,
        "a lost update: the lock is broken"
    );
    Rates {
        readers: per.iter().step_by(2).copied().collect(),
        writers: per.iter().skip(1).step_by(2).copied().collect(),
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn fastest(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

fn slowest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// One peer's round at one thread count.
struct Row {
    lock: &'static str,
    threads: usize,
    round: usize,
    rates: Rates,
}

/// `pick` (slowest, mean or fastest) of one side over the rows' rounds.
fn over_rounds<'a>(
    rows: impl Iterator<Item = &'a Row>,
    side: fn(&Rates) -> &[f64],
    pick: fn(&[f64]) -> f64,
) -> Spread {
    Spread::of(rows.map(|r| pick(side(&r.rates)))).expect("a lock without rounds")
}

fn readers(r: &Rates) -> &[f64] {
    &r.readers
}

fn writers(r: &Rates) -> &[f64] {
    &r.writers
}

/// A line chart of one side's slowest thread per lock.
fn slowest_chart(
    rows: &[Row],
    locks: &[&str],
    threads: &[usize],
    id: &str,
    (doing, who, ops): (&str, &str, &str),
    side: fn(&Rates) -> &[f64],
) -> Value {
    let rounds = rows.iter().map(|r| r.round).max().map_or(0, |m| m + 1);
    threads_chart(
        id,
        format!("Native reader-writer locks, half the threads {doing}: the slowest {who} (median, whiskers min-max of {rounds} rounds)"),
        format!("slowest {who}, {ops} per second"),
        locks,
        threads,
        |lock, n| {
            Spread::of(
                rows.iter()
                    .filter(|r| r.lock == lock && r.threads == n)
                    .map(|r| slowest(side(&r.rates))),
            )
        },
    )
}

fn main() {
    let plan = Plan::from_env(SUITE);
    let (duration, rounds, thread_counts) = (plan.round_time(), plan.rounds(), plan.threads());
    type Make = fn() -> Box<dyn FnOnce(usize, Duration) -> Rates>;
    let peers: Vec<(&str, Make)> = vec![
        ("parklot RwLock, writer-preferring", || {
            Box::new(|t, d| {
                round(
                    Parklot(RawRwLock::with_policy(RwLockPolicy::PreferWriters)),
                    t,
                    d,
                )
            })
        }),
        ("parklot RwLock, reader-preferring", || {
            Box::new(|t, d| {
                round(
                    Parklot(RawRwLock::with_policy(RwLockPolicy::PreferReaders)),
                    t,
                    d,
                )
            })
        }),
        ("glibc pthread_rwlock, prefer writer", || {
            Box::new(|t, d| round(Pthread::new(2), t, d))
        }),
        ("glibc pthread_rwlock, prefer reader", || {
            Box::new(|t, d| round(Pthread::new(0), t, d))
        }),
        ("std::sync::RwLock", || {
            Box::new(|t, d| round(Std(std::sync::RwLock::new(())), t, d))
        }),
        ("parking_lot::RwLock", || {
            Box::new(|t, d| round(ParkingLot(parking_lot::RwLock::new(())), t, d))
        }),
    ];
    let mut rows = Vec::new();
    for r in 0..rounds {
        for &threads in thread_counts {
            for (lock, make) in &peers {
                let rates = make()(threads, duration);
                eprintln!(
                    "round {}/{rounds}, {threads} threads, {lock}: readers {:.0}-{:.0}/s, writers {:.0}-{:.0}/s",
                    r + 1,
                    slowest(&rates.readers),
                    fastest(&rates.readers),
                    slowest(&rates.writers),
                    fastest(&rates.writers),
                );
                rows.push(Row {
                    lock,
                    threads,
                    round: r,
                    rates,
                });
            }
        }
    }

    let mut md = plan.markdown(
        "Experiment 6: reader-writer locks, half readers, half writers (seed 003's protocol)",
        "Per-thread rates in operations per second: the slowest / mean / fastest reader thread \
         and writer thread",
        "(a starved thread shows as next to 0). Critical section: read or bump one counter \
         (checked against the writes every round). Generated by \
         `cargo run --release -p parklot-bench --bin rwlock`; `rwlock.md` sets these rows beside \
         the wasm and JS ones.",
        &[
            ("lock", false),
            ("threads", true),
            ("readers min", true),
            ("readers mean", true),
            ("readers max", true),
            ("writers min", true),
            ("writers mean", true),
            ("writers max", true),
        ],
    );
    let locks: Vec<&str> = peers.iter().map(|(name, _)| *name).collect();
    for &threads in thread_counts {
        for &lock in &locks {
            let of = || {
                rows.iter()
                    .filter(|r| r.lock == lock && r.threads == threads)
            };
            let cell = |side: fn(&Rates) -> &[f64], pick: fn(&[f64]) -> f64| {
                format!("{:.0}", over_rounds(of(), side, pick).median)
            };
            row(
                &mut md,
                format!(
                    "| {lock} | {threads} | {} | {} | {} | {} | {} | {} |\n",
                    cell(readers, slowest),
                    cell(readers, mean),
                    cell(readers, fastest),
                    cell(writers, slowest),
                    cell(writers, mean),
                    cell(writers, fastest),
                ),
            );
        }
    }
    let rounds = rows.iter().map(|r| {
        let [readers, writers] = [&r.rates.readers, &r.rates.writers]
            .map(|side| side.iter().map(|x| x.round()).collect::<Vec<_>>());
        let rest = json!({ "threads": r.threads, "readers": readers, "writers": writers });
        (r.round, r.lock, rest)
    });
    let charts = vec![
        slowest_chart(
            &rows,
            &locks,
            thread_counts,
            "writers",
            ("writing", "writer", "writes"),
            writers,
        ),
        slowest_chart(
            &rows,
            &locks,
            thread_counts,
            "readers",
            ("reading", "reader", "reads"),
            readers,
        ),
    ];
    let doc = plan.document(&locks, rounds, charts);
    plan.write(&md, &doc);
}
