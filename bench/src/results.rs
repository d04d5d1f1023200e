//! A whole run — machine, settings, floor, every round — and its summary per
//! lock and thread count.

use crate::runner::Round;
use std::time::Duration;

/// What a run was asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Thread counts, in the order run.
    pub threads: Vec<usize>,
    /// Duration of each round.
    pub duration: Duration,
    /// Rounds per lock and thread count, interleaved across locks.
    pub rounds: usize,
    /// Iterations of the critical section's add-and-multiply.
    pub work: u32,
    /// parklot's spin limit during the run.
    pub spin_limit: u32,
}

/// Everything one run measured.
#[derive(Clone, Debug)]
pub struct Results {
    /// `std::thread::available_parallelism`.
    pub cores: usize,
    /// Seconds since the Unix epoch when the run started.
    pub unix_time: u64,
    /// What was run.
    pub settings: Settings,
    /// Nanoseconds per uncontended CAS + store ([`crate::floor`]).
    pub floor_ns: f64,
    /// Every round, in the order run.
    pub rounds: Vec<Round>,
}

/// One lock at one thread count, over all its rounds. Every per-round
/// figure is the median across rounds unless named otherwise.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The lock's name.
    pub lock: &'static str,
    /// Threads that contended.
    pub threads: usize,
    /// Rounds summarized.
    pub rounds: usize,
    /// Median acquisitions per second, all threads together.
    pub median: f64,
    /// The slowest round's acquisitions per second.
    pub min: f64,
    /// The fastest round's acquisitions per second.
    pub max: f64,
    /// `median` over the baseline lock's `median` at the same thread count.
    pub vs_baseline: Option<f64>,
    /// Median over rounds of the slowest thread's acquisitions per second.
    pub thread_min: f64,
    /// Median over rounds of the fastest thread's acquisitions per second.
    pub thread_max: f64,
    /// Median over rounds of slowest / fastest thread (1 = fair, 0 = starved).
    pub fairness: f64,
    /// The lowest slowest / fastest of any round.
    pub worst_fairness: f64,
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty(), "median of nothing");
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

impl Summary {
    /// Summarizes `rounds` (all of one lock at one thread count); the ratio
    /// is filled in by [`Results::summaries`].
    pub fn of(rounds: &[&Round]) -> Summary {
        let first = rounds.first().expect("a summary needs at least one round");
        let each = |f: fn(&Round) -> f64| rounds.iter().map(|r| f(r)).collect::<Vec<f64>>();
        let rates = each(Round::rate);
        Summary {
            lock: first.lock,
            threads: first.threads,
            rounds: rounds.len(),
            median: median(rates.clone()),
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            vs_baseline: None,
            thread_min: median(each(Round::thread_min_rate)),
            thread_max: median(each(Round::thread_max_rate)),
            fairness: median(each(Round::fairness)),
            worst_fairness: each(Round::fairness)
                .into_iter()
                .fold(f64::INFINITY, f64::min),
        }
    }
}

impl Results {
    /// One summary per thread count and lock, in the order first run, with
    /// ratios against `baseline` (a lock name) at the same thread count.
    pub fn summaries(&self, baseline: &str) -> Vec<Summary> {
        let mut keys: Vec<(usize, &'static str)> = Vec::new();
        for r in &self.rounds {
            if !keys.contains(&(r.threads, r.lock)) {
                keys.push((r.threads, r.lock));
            }
        }
        let mut summaries: Vec<Summary> = keys
            .iter()
            .map(|&(threads, lock)| {
                let rounds: Vec<&Round> = self
                    .rounds
                    .iter()
                    .filter(|r| r.threads == threads && r.lock == lock)
                    .collect();
                Summary::of(&rounds)
            })
            .collect();
        let baselines: Vec<(usize, f64)> = summaries
            .iter()
            .filter(|s| s.lock == baseline)
            .map(|s| (s.threads, s.median))
            .collect();
        for s in &mut summaries {
            s.vs_baseline = baselines
                .iter()
                .find(|(t, _)| *t == s.threads)
                .map(|(_, base)| s.median / base);
        }
        summaries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(lock: &'static str, threads: usize, per_thread: Vec<u64>) -> Round {
        let counter = per_thread.iter().sum();
        Round {
            lock,
            threads,
            round: 0,
            elapsed: Duration::from_secs(1),
            per_thread,
            counter,
        }
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn summaries_ratio_and_fairness() {
        let results = Results {
            cores: 2,
            unix_time: 0,
            settings: Settings {
                threads: vec![2],
                duration: Duration::from_secs(1),
                rounds: 2,
                work: 1,
                spin_limit: 40,
            },
            floor_ns: 1.0,
            rounds: vec![
                round("A", 2, vec![50, 50]),
                round("B", 2, vec![10, 90]),
                round("A", 2, vec![60, 40]),
                round("B", 2, vec![30, 90]),
            ],
        };
        let s = results.summaries("A");
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].lock, s[0].median, s[0].vs_baseline),
            ("A", 100.0, Some(1.0))
        );
        assert_eq!(
            (s[1].lock, s[1].median, s[1].min, s[1].max),
            ("B", 110.0, 100.0, 120.0)
        );
        assert_eq!(s[1].vs_baseline, Some(1.1));
        assert_eq!(s[1].thread_min, 20.0);
        assert_eq!(s[1].worst_fairness, 10.0 / 90.0);
    }
}
