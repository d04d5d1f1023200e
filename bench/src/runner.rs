//! One round of microcontention (seed 000's experiment 1): N threads start
//! together at a barrier, each repeatedly locks, runs a tiny critical
//! section, and unlocks, until the main thread raises a stop flag.
//!
//! The critical section updates a shared `f64` (an add and a multiply per
//! iteration) and a plain, non-atomic `u64` counter. After the round the
//! counter must equal the sum of every thread's acquisitions: any lost
//! update means the lock let two threads in at once.

use crate::locks::RawLock;
use std::cell::UnsafeCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// What one round runs.
#[derive(Clone, Debug)]
pub struct RoundConfig {
    /// Threads contending for the lock.
    pub threads: usize,
    /// How long they run.
    pub duration: Duration,
    /// Iterations of the add-and-multiply per critical section (seed 000: 1).
    pub work: u32,
    /// Which round of the run this is (0-based), carried into [`Round`].
    pub round: usize,
}

/// What one round measured.
#[derive(Clone, Debug)]
pub struct Round {
    /// The lock's name ([`RawLock::NAME`]).
    pub lock: &'static str,
    /// Threads that contended.
    pub threads: usize,
    /// Which round of the run this was (0-based).
    pub round: usize,
    /// From the barrier's release to the stop flag.
    pub elapsed: Duration,
    /// Acquisitions made by each thread.
    pub per_thread: Vec<u64>,
    /// The protected counter's final value; equals [`Round::total`] if the
    /// lock excluded.
    pub counter: u64,
}

/// The lost-update check failed: the lock let threads in together.
#[derive(Clone, Debug)]
pub struct CounterMismatch {
    /// The lock's name.
    pub lock: &'static str,
    /// Threads in the round.
    pub threads: usize,
    /// The protected counter.
    pub counter: u64,
    /// The sum of the threads' acquisitions.
    pub acquisitions: u64,
}

impl std::fmt::Display for CounterMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is broken: with {} threads the counter guarded by the lock is {} but there were {} acquisitions \
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
        self.per_second(self.total())
    }

    /// The slowest thread's acquisitions per second.
    pub fn thread_min_rate(&self) -> f64 {
        self.per_second(self.per_thread.iter().copied().min().unwrap_or(0))
    }

    /// The fastest thread's acquisitions per second.
    pub fn thread_max_rate(&self) -> f64 {
        self.per_second(self.per_thread.iter().copied().max().unwrap_or(0))
    }

    /// Slowest over fastest thread: 1 is perfectly fair, 0 is starvation.
    pub fn fairness(&self) -> f64 {
        let max = self.per_thread.iter().copied().max().unwrap_or(0);
        let min = self.per_thread.iter().copied().min().unwrap_or(0);
        if max == 0 {
            0.0
        } else {
            min as f64 / max as f64
        }
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

    fn per_second(&self, count: u64) -> f64 {
        count as f64 / self.elapsed.as_secs_f64()
    }
}

/// The data the lock guards.
struct Protected {
    value: f64,
    count: u64,
}

/// A lock and its data, on cache lines of their own.
#[repr(align(128))]
struct Contended<L> {
    lock: L,
    data: UnsafeCell<Protected>,
}

// SAFETY: `data` is only touched while holding `lock` (or after every thread
// has been joined).
unsafe impl<L: RawLock> Sync for Contended<L> {}

/// The stop flag, kept off the lock's cache line.
#[repr(align(128))]
struct StopFlag(AtomicBool);

/// Seed 000's critical section: `work` iterations of a double add and
/// multiply, then the lost-update counter.
#[inline(always)]
fn critical_section(data: &mut Protected, work: u32) {
    for _ in 0..work {
        // black_box: keep the compiler from folding iterations together.
        data.value = black_box((data.value + 1.0) * 0.75);
    }
    data.count += 1;
}

/// Runs one round on a fresh `L`: `config.threads` threads lock, work and
/// unlock for `config.duration`. Does not check the counter: see
/// [`Round::check`].
pub fn run_round<L: RawLock>(config: &RoundConfig) -> Round {
    assert!(config.threads > 0, "a round needs at least one thread");
    let shared = Contended {
        lock: L::new(),
        data: UnsafeCell::new(Protected {
            value: 0.0,
            count: 0,
        }),
    };
    let stop = StopFlag(AtomicBool::new(false));
    let start_line = Barrier::new(config.threads + 1);

    let (elapsed, per_thread) = thread::scope(|scope| {
        // Capture the whole `Contended` (which is Sync), not its fields.
        let shared = &shared;
        let workers: Vec<_> = (0..config.threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut acquisitions = 0u64;
                    start_line.wait();
                    while !stop.0.load(Ordering::Relaxed) {
                        let guard = shared.lock.lock();
                        // SAFETY: we hold the lock.
                        critical_section(unsafe { &mut *shared.data.get() }, config.work);
                        // SAFETY: `guard` is this thread's, from this lock.
                        unsafe { shared.lock.unlock(guard) };
                        acquisitions += 1;
                    }
                    acquisitions
                })
            })
            .collect();

        start_line.wait();
        let start = Instant::now();
        thread::sleep(config.duration);
        stop.0.store(true, Ordering::Relaxed);
        let elapsed = start.elapsed();
        let per_thread = workers
            .into_iter()
            .map(|w| w.join().expect("benchmark thread panicked"))
            .collect();
        (elapsed, per_thread)
    });

    let data = shared.data.into_inner();
    black_box(data.value);
    Round {
        lock: L::NAME,
        threads: config.threads,
        round: config.round,
        elapsed,
        per_thread,
        counter: data.count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::PEERS;

    #[test]
    fn every_peer_excludes_and_counts() {
        for peer in PEERS {
            let config = RoundConfig {
                threads: 3,
                duration: Duration::from_millis(20),
                work: 1,
                round: 0,
            };
            let round = (peer.run)(&config);
            assert_eq!(round.lock, peer.name);
            assert_eq!(round.per_thread.len(), 3);
            assert!(round.total() > 0, "{} made no progress", peer.name);
            round.check().unwrap();
        }
    }

    #[test]
    fn lost_updates_are_reported() {
        let round = Round {
            lock: "toy",
            threads: 2,
            round: 0,
            elapsed: Duration::from_secs(1),
            per_thread: vec![5, 5],
            counter: 9,
        };
        let err = round.check().unwrap_err();
        assert_eq!((err.counter, err.acquisitions), (9, 10));
        assert!(err.to_string().contains("toy is broken"), "{err}");
    }
}
