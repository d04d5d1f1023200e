//! From rounds to what tables and charts show: the median and range of each
//! series at each point, and, for locks, how the work split between threads.

use crate::runner::Round;

/// The median and the range of a few rounds' values.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Spread {
    /// The middle value (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` if there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let mid = values.len() / 2;
        let median = if values.len() % 2 == 1 {
            values[mid]
        } else {
            (values[mid - 1] + values[mid]) / 2.0
        };
        Some(Spread {
            median,
            min: values[0],
            max: values[values.len() - 1],
        })
    }
}

/// One series at one point, over its rounds.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Cell {
    /// Operations per second (acquisitions, or items through a queue).
    pub rate: Spread,
    /// For locks, the median over rounds of the least lucky and the luckiest
    /// thread's acquisitions per second.
    pub threads: Option<(f64, f64)>,
}

impl Cell {
    /// The cell of a few lock rounds; `None` if there are none.
    pub fn of_rounds<'a>(rounds: impl IntoIterator<Item = &'a Round>) -> Option<Cell> {
        let rounds: Vec<&Round> = rounds.into_iter().collect();
        let per_second = |f: fn(&Round) -> u64| {
            Spread::of(rounds.iter().map(|r| f(r) as f64 / r.elapsed.as_secs_f64()))
                .map(|s| s.median)
        };
        Some(Cell {
            rate: Spread::of(rounds.iter().map(|r| r.rate()))?,
            threads: Some((
                per_second(Round::thread_min)?,
                per_second(Round::thread_max)?,
            )),
        })
    }
}

/// One series (a lock, a condition variable) across an experiment's points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Its name in tables and charts.
    pub name: String,
    /// Its cell at each of the sweep's points (`None`: not measured there).
    pub cells: Vec<Option<Cell>>,
}

/// An experiment's results: series side by side over the swept values.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The swept values (threads, spin limits, iterations, queue pairs).
    pub xs: Vec<u32>,
    /// The series, the baseline (ratios are taken against it) first.
    pub series: Vec<Series>,
}

impl Sweep {
    /// Groups lock rounds into a sweep: series `names`, points `xs`, each
    /// round placed by `x_of` (`None`: not in this sweep) and `name_of`.
    pub fn of_rounds(
        rounds: &[Round],
        names: &[&str],
        xs: &[u32],
        x_of: impl Fn(&Round) -> Option<u32>,
        name_of: impl Fn(&Round) -> &str,
    ) -> Sweep {
        let series = names
            .iter()
            .map(|&name| Series {
                name: name.to_string(),
                cells: xs
                    .iter()
                    .map(|&x| {
                        Cell::of_rounds(
                            rounds
                                .iter()
                                .filter(|r| name_of(r) == name && x_of(r) == Some(x)),
                        )
                    })
                    .collect(),
            })
            .collect();
        Sweep {
            xs: xs.to_vec(),
            series,
        }
    }

    /// Series `s`'s median over the first series' median at point `i`.
    pub fn ratio(&self, s: usize, i: usize) -> Option<f64> {
        let base = self.series.first()?.cells[i]?.rate.median;
        let this = self.series[s].cells[i]?.rate.median;
        (base > 0.0).then(|| this / base)
    }

    /// `(x, median)` wherever the series named `name` was measured.
    pub fn medians(&self, name: &str) -> Vec<(u32, f64)> {
        let Some(series) = self.series.iter().find(|s| s.name == name) else {
            return Vec::new();
        };
        self.xs
            .iter()
            .zip(&series.cells)
            .filter_map(|(&x, cell)| Some((x, cell.as_ref()?.rate.median)))
            .collect()
    }

    /// The cell of the series named `name` at value `x`.
    pub fn cell(&self, name: &str, x: u32) -> Option<Cell> {
        let i = self.xs.iter().position(|&v| v == x)?;
        self.series.iter().find(|s| s.name == name)?.cells[i]
    }
}

/// Seed 000's fairness charts for one lock: each thread's acquisitions during
/// the run, sorted from the luckiest thread to the least lucky.
#[derive(Clone, Debug)]
pub struct Fairness {
    /// The lock.
    pub lock: String,
    /// Acquisitions per second, all threads together.
    pub rate: Spread,
    /// At rank `i` (0 = luckiest), the spread over rounds of the `i`-th
    /// largest per-thread count.
    pub ranked: Vec<Spread>,
    /// Median over rounds of least lucky / luckiest (1: even, 0: starved).
    pub balance: f64,
    /// The lowest least lucky / luckiest of any round.
    pub worst_balance: f64,
}

impl Fairness {
    /// The fairness of `lock` over its rounds in `rounds`.
    pub fn of(rounds: &[Round], lock: &str) -> Option<Fairness> {
        let rounds: Vec<&Round> = rounds.iter().filter(|r| r.lock == lock).collect();
        let ranks = rounds.iter().map(|r| r.per_thread.len()).max()?;
        let sorted: Vec<Vec<u64>> = rounds
            .iter()
            .map(|r| {
                let mut counts = r.per_thread.clone();
                counts.sort_unstable_by(|a, b| b.cmp(a));
                counts
            })
            .collect();
        let balance = |r: &&Round| match r.thread_max() {
            0 => 0.0,
            max => r.thread_min() as f64 / max as f64,
        };
        Some(Fairness {
            lock: lock.to_string(),
            rate: Spread::of(rounds.iter().map(|r| r.rate()))?,
            ranked: (0..ranks)
                .map(|i| Spread::of(sorted.iter().filter_map(|c| c.get(i).map(|&n| n as f64))))
                .collect::<Option<_>>()?,
            balance: Spread::of(rounds.iter().map(balance))?.median,
            worst_balance: rounds.iter().map(balance).fold(f64::INFINITY, f64::min),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn round(lock: &'static str, threads: usize, per_thread: Vec<u64>) -> Round {
        Round {
            lock,
            threads,
            work: 1,
            round: 0,
            elapsed: Duration::from_secs(1),
            counter: per_thread.iter().sum(),
            per_thread,
        }
    }

    #[test]
    fn spread_median_odd_and_even() {
        let s = Spread::of([3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of([4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of([]), None);
    }

    #[test]
    fn sweep_cells_ratios_and_threads() {
        let rounds = [
            round("A", 2, vec![50, 50]),
            round("B", 2, vec![10, 90]),
            round("A", 2, vec![60, 40]),
            round("B", 2, vec![30, 90]),
            round("A", 4, vec![1, 1, 1, 1]),
        ];
        let sweep = Sweep::of_rounds(
            &rounds,
            &["A", "B"],
            &[2, 4],
            |r| Some(r.threads as u32),
            |r| r.lock,
        );
        let b2 = sweep.cell("B", 2).unwrap();
        assert_eq!(
            (b2.rate.median, b2.rate.min, b2.rate.max),
            (110.0, 100.0, 120.0)
        );
        assert_eq!(b2.threads, Some((20.0, 90.0)));
        assert_eq!(sweep.ratio(1, 0), Some(1.1));
        assert_eq!(sweep.cell("B", 4), None);
        assert_eq!(sweep.ratio(1, 1), None);
        assert_eq!(sweep.medians("A"), [(2, 100.0), (4, 4.0)]);
        assert_eq!(sweep.medians("C"), []);
    }

    #[test]
    fn fairness_ranks_and_balance() {
        let rounds = [
            round("A", 3, vec![10, 30, 20]),
            round("A", 3, vec![40, 20, 30]),
            round("B", 3, vec![1, 1, 1]),
        ];
        let f = Fairness::of(&rounds, "A").unwrap();
        let medians: Vec<f64> = f.ranked.iter().map(|s| s.median).collect();
        assert_eq!(medians, [35.0, 25.0, 15.0]);
        assert_eq!((f.ranked[0].min, f.ranked[0].max), (30.0, 40.0));
        assert_eq!(f.worst_balance, 10.0 / 30.0);
        assert!(Fairness::of(&rounds, "C").is_none());
    }
}
