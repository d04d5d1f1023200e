//! One contended round, the unit of experiments (a)–(d): N threads share one
//! lock and, until the main thread raises a stop flag, lock it, run seed 000's
//! critical section, and unlock it.
//!
//! Like the seed's `LockSpeedTest`, the lock and the data it guards sit on
//! cache lines of their own, the same for every lock (a boxed pthread mutex
//! pays no extra miss that an inline byte lock would not). After the round the
//! guarded counter must equal the sum of every thread's acquisitions: any lost
//! update means the lock let two threads in at once.

use parklot::toy_locks::RawLock;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// What one round runs.
#[derive(Clone, Debug)]
pub struct RoundConfig {
    /// Threads contending for the lock.
    pub threads: usize,
    /// How long they run, from the start (or the release) to the stop flag.
    pub duration: Duration,
    /// Iterations of the add-and-multiply per critical section (seed 000: 1).
    pub work: u32,
    /// How the threads start.
    pub start: Start,
    /// Which round of its point this is (0-based), carried into [`Round`].
    pub round: usize,
}

/// How a round's threads start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// All at once, from a barrier (experiments a–c).
    Together,
    /// Seed 000's fairness protocol (d): the main thread holds the lock while
    /// they start, waits this long so that they pile up on it, then releases.
    WhileHeld(Duration),
}

/// What one round measured.
#[derive(Clone, Debug)]
pub struct Round {
    /// The lock's name ([`RawLock::NAME`]).
    pub lock: &'static str,
    /// Threads that contended.
    pub threads: usize,
    /// Add-and-multiply iterations per critical section.
    pub work: u32,
    /// Which round of its point this was (0-based).
    pub round: usize,
    /// From the start (or release) to the stop flag.
    pub elapsed: Duration,
    /// Acquisitions made by each thread, in spawn order.
    pub per_thread: Vec<u64>,
    /// The guarded counter's final value; equals [`Round::total`] if the lock
    /// excluded.
    pub counter: u64,
}

/// The lost-update check failed: the lock let threads in together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterMismatch {
    /// The lock's name.
    pub lock: &'static str,
    /// Threads in the round.
    pub threads: usize,
    /// The guarded counter.
    pub counter: u64,
    /// The sum of the threads' acquisitions.
    pub acquisitions: u64,
}

impl std::fmt::Display for CounterMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is broken: with {} threads the counter it guards reads {} after {} acquisitions \
             ({} updates lost: two threads were inside the lock at once)",
            self.lock,
            self.threads,
            self.counter,
            self.acquisitions,
            self.acquisitions.abs_diff(self.counter)
        )
    }
}

impl std::error::Error for CounterMismatch {}

impl Round {
    /// All threads' acquisitions.
    pub fn total(&self) -> u64 {
        self.per_thread.iter().sum()
    }

    /// Acquisitions per second, all threads together.
    pub fn rate(&self) -> f64 {
        self.total() as f64 / self.elapsed.as_secs_f64()
    }

    /// The least lucky thread's acquisitions.
    pub fn thread_min(&self) -> u64 {
        self.per_thread.iter().copied().min().unwrap_or(0)
    }

    /// The luckiest thread's acquisitions.
    pub fn thread_max(&self) -> u64 {
        self.per_thread.iter().copied().max().unwrap_or(0)
    }

    /// The lost-update check: the counter equals the acquisitions.
    pub fn check(&self) -> Result<(), CounterMismatch> {
        if self.counter == self.total() {
            Ok(())
        } else {
            Err(CounterMismatch {
                lock: self.lock,
                threads: self.threads,
                counter: self.counter,
                acquisitions: self.total(),
            })
        }
    }
}

/// A value alone on its cache line(s): 128 bytes covers the adjacent-line
/// prefetcher of x86 and the 128-byte lines of some ARM64 cores.
#[repr(align(128))]
pub(crate) struct Line<T>(pub(crate) T);

/// The data a lock guards. Atomics used as plain memory (a Relaxed load, then
/// a Relaxed store, never an atomic read-modify-write): on x86-64 and ARM64
/// these are ordinary moves, and a broken lock loses updates, which the check
/// reports, instead of being undefined behaviour.
#[derive(Default)]
struct Guarded {
    /// Seed 000's double, as bits.
    value: AtomicU64,
    /// Acquisitions, counted inside the lock.
    count: AtomicU64,
}

/// Seed 000's critical section: `work` iterations of a double add and
/// multiply, and one increment of the lost-update counter around them (read
/// first, written last, so that two threads inside at once overwrite each
/// other's increments for as long as the work lasts).
#[inline(always)]
fn critical_section(data: &Guarded, work: u32) {
    let count = data.count.load(Ordering::Relaxed);
    let mut value = f64::from_bits(data.value.load(Ordering::Relaxed));
    for _ in 0..work {
        // black_box: keep the compiler from folding iterations together.
        value = black_box((value + 1.0) * 0.75);
    }
    data.value.store(value.to_bits(), Ordering::Relaxed);
    data.count.store(count + 1, Ordering::Relaxed);
}

/// Runs one round on a fresh `L` and returns what it measured. Does not check
/// the counter: see [`Round::check`].
pub fn run_round<L: RawLock>(config: &RoundConfig) -> Round {
    assert!(config.threads > 0, "a round needs at least one thread");
    let lock = Line(L::new());
    let data = Line(Guarded::default());
    // The stop flag: false while the round runs; the main thread stores true
    // once, and workers poll it (Relaxed: it publishes nothing) between
    // acquisitions. Its own line, so polling never disturbs the lock's.
    let stop = Line(AtomicBool::new(false));
    let start_line = Barrier::new(config.threads + 1);

    let (elapsed, per_thread) = thread::scope(|scope| {
        let (lock, data, stop, start_line) = (&lock.0, &data.0, &stop.0, &start_line);
        if let Start::WhileHeld(_) = config.start {
            lock.lock();
        }
        let workers: Vec<_> = (0..config.threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut acquisitions = 0u64;
                    start_line.wait();
                    while !stop.load(Ordering::Relaxed) {
                        lock.lock();
                        critical_section(data, config.work);
                        // SAFETY: this thread locked it just above.
                        unsafe { lock.unlock() };
                        acquisitions += 1;
                    }
                    acquisitions
                })
            })
            .collect();

        start_line.wait();
        if let Start::WhileHeld(settle) = config.start {
            thread::sleep(settle);
        }
        let start = Instant::now();
        if let Start::WhileHeld(_) = config.start {
            // SAFETY: the main thread locked it before spawning the workers.
            unsafe { lock.unlock() };
        }
        thread::sleep(config.duration);
        stop.store(true, Ordering::Relaxed);
        let elapsed = start.elapsed();
        let per_thread: Vec<u64> = workers
            .into_iter()
            .map(|w| w.join().expect("a benchmark thread panicked"))
            .collect();
        (elapsed, per_thread)
    });

    black_box(data.0.value.load(Ordering::Relaxed));
    Round {
        lock: L::NAME,
        threads: config.threads,
        work: config.work,
        round: config.round,
        elapsed,
        per_thread,
        counter: data.0.count.load(Ordering::Relaxed),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::locks::LOCKS;

    /// A "lock" that excludes nobody: the counter check must catch it.
    pub(crate) struct BrokenLock;

    // SAFETY: NOT sound, on purpose: this lock excludes nobody. It exists only
    // to prove the lost-update check fires, and the data the runner guards
    // with it are atomics, so the races it lets through are not UB.
    unsafe impl RawLock for BrokenLock {
        const NAME: &'static str = "BrokenLock";

        fn new() -> Self {
            BrokenLock
        }

        fn lock(&self) {}

        unsafe fn unlock(&self) {}
    }

    /// A round of `BrokenLock` that lost updates: with 1000 iterations a
    /// critical section lasts microseconds, so two threads on two cores
    /// overlap in nearly every one; a few tries cover a machine busy elsewhere.
    pub(crate) fn broken_round() -> Round {
        let config = RoundConfig {
            threads: 4,
            duration: Duration::from_millis(20),
            work: 1000,
            start: Start::Together,
            round: 0,
        };
        (0..20)
            .map(|_| run_round::<BrokenLock>(&config))
            .find(|r| r.check().is_err())
            .expect("4 threads with no lock never lost an update in 20 tries")
    }

    #[test]
    fn every_lock_excludes_and_counts_in_both_start_modes() {
        for start in [Start::Together, Start::WhileHeld(Duration::from_millis(2))] {
            for peer in LOCKS {
                let config = RoundConfig {
                    threads: 3,
                    duration: Duration::from_millis(10),
                    work: 2,
                    start,
                    round: 0,
                };
                let round = (peer.contend)(&config);
                assert_eq!(
                    (round.lock, round.per_thread.len(), round.work),
                    (peer.name, 3, 2)
                );
                assert!(round.total() > 0, "{} made no progress", peer.name);
                round.check().unwrap();
            }
        }
    }

    #[test]
    fn a_broken_lock_fails_the_counter_check() {
        let err = broken_round().check().unwrap_err();
        assert!(err.counter < err.acquisitions);
        assert!(err.to_string().contains("BrokenLock is broken"), "{err}");
    }
}
