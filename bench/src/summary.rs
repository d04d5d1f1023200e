//! A run's rounds summarized once, for the markdown tables and the JSON
//! charts alike, and the project's goals judged against them.

use crate::condition::{Notify, CONDITIONS};
use crate::locks::spin_limit_of;
use crate::locks::BASELINE;
use crate::stats::{Cell, Fairness, Series, Spread, Sweep};
use crate::suite::Run;

/// Every experiment's summary.
pub struct Summary {
    /// (f): nanoseconds per uncontended CAS + store.
    pub cas_store_ns: Spread,
    /// (f): nanoseconds per two-thread cache-line round trip.
    pub ping_pong_ns: Spread,
    /// (f): nanoseconds per uncontended lock + unlock, per lock.
    pub uncontended_ns: Vec<(&'static str, Spread)>,
    /// (a): locks over thread counts.
    pub microcontention: Sweep,
    /// (b): the one `BargingLock` series over spin limits.
    pub spin_limit: Sweep,
    /// (c): locks over critical-section lengths.
    pub critical_section: Sweep,
    /// (d): per lock.
    pub fairness: Vec<Fairness>,
    /// (e): conditions over producer/consumer pairs, for notify_one then
    /// notify_all.
    pub condition: Vec<(Notify, Sweep)>,
}

/// The name of experiment (b)'s one series.
pub const SPIN_SERIES: &str = "BargingLock<N>";

impl Summary {
    /// Summarizes `run`.
    pub fn of(run: &Run) -> Summary {
        let p = &run.params;
        let locks: Vec<&str> = p.locks.iter().map(|peer| peer.name).collect();
        let floor = &run.floor;
        let spread = |values: &[f64]| Spread::of(values.iter().copied()).expect("no floor rounds");
        Summary {
            cas_store_ns: spread(&floor.cas_store_ns),
            ping_pong_ns: spread(&floor.ping_pong_ns),
            uncontended_ns: floor
                .uncontended_ns
                .iter()
                .map(|(name, values)| (*name, spread(values)))
                .collect(),
            microcontention: Sweep::of_rounds(
                &run.microcontention,
                &locks,
                &p.micro_threads
                    .iter()
                    .map(|&t| t as u32)
                    .collect::<Vec<_>>(),
                |r| Some(r.threads as u32),
                |r| r.lock,
            ),
            spin_limit: Sweep::of_rounds(
                &run.spin_limit,
                &[SPIN_SERIES],
                &p.spin_limits,
                |r| spin_limit_of(r.lock),
                |_| SPIN_SERIES,
            ),
            critical_section: Sweep::of_rounds(
                &run.critical_section,
                &locks,
                &p.cs_lengths,
                |r| Some(r.work),
                |r| r.lock,
            ),
            fairness: locks
                .iter()
                .filter_map(|lock| Fairness::of(&run.fairness, lock))
                .collect(),
            condition: [Notify::One, Notify::All]
                .into_iter()
                .map(|notify| {
                    let series = CONDITIONS
                        .iter()
                        .map(|peer| Series {
                            name: peer.name.to_string(),
                            cells: p
                                .queue_pairs
                                .iter()
                                .map(|&pairs| {
                                    let rates = run.condition.iter().filter(|r| {
                                        r.monitor == peer.name
                                            && r.config.notify == notify
                                            && r.config.producers == pairs
                                    });
                                    Some(Cell {
                                        rate: Spread::of(rates.map(|r| r.rate()))?,
                                        threads: None,
                                    })
                                })
                                .collect(),
                        })
                        .collect();
                    let xs = p.queue_pairs.iter().map(|&n| n as u32).collect();
                    (notify, Sweep { xs, series })
                })
                .collect(),
        }
    }

    /// The median uncontended lock + unlock of `lock`, in nanoseconds.
    pub fn uncontended(&self, lock: &str) -> Option<f64> {
        self.uncontended_ns
            .iter()
            .find(|(name, _)| *name == lock)
            .map(|(_, s)| s.median)
    }

    /// The project's performance goals (issue: native benchmark suite), each
    /// judged where the run measured what it needs. Benchmarks are not tests:
    /// these are reported, never asserted.
    pub fn goals(&self) -> Vec<Goal> {
        vec![
            self.uncontended_goal(),
            self.contended_goal(),
            self.toy_goal(),
            self.fairness_goal(),
            self.spin_goal(),
            self.handoff_goal(),
        ]
    }

    fn uncontended_goal(&self) -> Goal {
        let goal = "uncontended parklot::Lock within 10% of the best of std and parking_lot";
        let measured = (
            self.uncontended(BASELINE),
            self.uncontended("std::sync::Mutex"),
            self.uncontended("parking_lot::Mutex"),
        );
        let (Some(lock), Some(std), Some(pl)) = measured else {
            return Goal::unmeasured(goal);
        };
        let best = std.min(pl);
        Goal {
            goal,
            met: Some(lock <= best * 1.10),
            noise: false,
            detail: format!(
                "Lock {lock:.2} ns, std {std:.2} ns, parking_lot {pl:.2} ns: {:.2}x the best",
                lock / best
            ),
        }
    }

    fn contended_goal(&self) -> Goal {
        let goal = "at 4, 8, 16 threads parklot::Lock >= parking_lot and >= 1.5x std and pthread";
        let sweep = &self.microcontention;
        let mut met = true;
        let mut details = Vec::new();
        for threads in [4, 8, 16] {
            let Some(lock) = sweep.cell(BASELINE, threads) else {
                continue;
            };
            let mut parts = Vec::new();
            for (peer, need) in [
                ("parking_lot::Mutex", 1.0),
                ("std::sync::Mutex", 1.5),
                ("pthread_mutex_t", 1.5),
            ] {
                if let Some(cell) = sweep.cell(peer, threads) {
                    let ratio = lock.rate.median / cell.rate.median;
                    met &= ratio >= need;
                    parts.push(format!("{ratio:.2}x {}", short(peer)));
                }
            }
            details.push(format!("{threads} threads: {}", parts.join(", ")));
        }
        if details.is_empty() {
            return Goal::unmeasured(goal);
        }
        Goal {
            goal,
            met: Some(met),
            noise: false,
            detail: format!("Lock is {}", details.join("; ")),
        }
    }

    /// Seed 000's open question (take the best of ThunderLock and
    /// CascadeLock into WTF::Lock), answered by measuring: the Lock against
    /// the better of the two at each contended point. A shortfall whose
    /// rounds overlap (Lock's best round reaches their worst) is noise.
    fn toy_goal(&self) -> Goal {
        let goal = "contended parklot::Lock >= the best of seed 000's ThunderLock and CascadeLock, 2 to 16 threads";
        let sweep = &self.microcontention;
        let mut parts = Vec::new();
        let (mut met, mut noise) = (true, true);
        for &threads in sweep.xs.iter().filter(|&&t| t >= 2) {
            let Some(lock) = sweep.cell(BASELINE, threads) else {
                continue;
            };
            let best = ["ThunderLock", "CascadeLock"]
                .into_iter()
                .filter_map(|toy| Some((toy, sweep.cell(toy, threads)?)))
                .max_by(|a, b| a.1.rate.median.total_cmp(&b.1.rate.median));
            let Some((toy, cell)) = best else {
                continue;
            };
            let ratio = lock.rate.median / cell.rate.median;
            let overlap = lock.rate.max >= cell.rate.min;
            met &= ratio >= 1.0;
            noise &= ratio >= 1.0 || overlap;
            let mark = if ratio < 1.0 && overlap {
                " (noise)"
            } else {
                ""
            };
            parts.push(format!("{threads}: {ratio:.2}x {toy}{mark}"));
        }
        if parts.is_empty() {
            return Goal::unmeasured(goal);
        }
        Goal {
            goal,
            met: Some(met),
            noise: !met && noise,
            detail: format!(
                "Lock against the better toy, by threads: {}",
                parts.join(", ")
            ),
        }
    }

    fn fairness_goal(&self) -> Goal {
        let goal = "fairness: parklot::Lock's least lucky thread >= half its luckiest";
        match self.fairness.iter().find(|f| f.lock == BASELINE) {
            None => Goal::unmeasured(goal),
            Some(f) => Goal {
                goal,
                met: Some(f.balance >= 0.5),
                noise: false,
                detail: format!(
                    "least lucky / luckiest {:.2} (median over rounds), worst round {:.2}",
                    f.balance, f.worst_balance
                ),
            },
        }
    }

    fn spin_goal(&self) -> Goal {
        let goal = "spin limit: a plateau near 40 (40 within 10% of the best limit)";
        let rates = self.spin_limit.medians(SPIN_SERIES);
        let Some(&(best_x, best)) = rates.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            return Goal::unmeasured(goal);
        };
        let plateau: Vec<String> = rates
            .iter()
            .filter(|(_, rate)| *rate >= 0.9 * best)
            .map(|(x, _)| x.to_string())
            .collect();
        let at_40 = rates.iter().find(|(x, _)| *x == 40).map(|&(_, r)| r);
        Goal {
            goal,
            met: at_40.map(|r| r >= 0.9 * best),
            noise: false,
            detail: format!(
                "best at {best_x} ({}/s); within 10% of it: {}{}",
                si(best),
                plateau.join(", "),
                at_40.map_or(String::new(), |r| format!(
                    "; 40 is {:.2}x the best",
                    r / best
                ))
            ),
        }
    }

    fn handoff_goal(&self) -> Goal {
        let goal = "HandoffLock far below parklot::Lock (<= 0.1x) from 4 threads up";
        let sweep = &self.microcontention;
        let lock = sweep.medians(BASELINE);
        let ratios: Vec<(u32, f64)> = sweep
            .medians("HandoffLock")
            .into_iter()
            .zip(lock)
            .filter(|((t, _), (lock_t, _))| t == lock_t && *t >= 4)
            .map(|((t, handoff), (_, lock))| (t, handoff / lock))
            .collect();
        if ratios.is_empty() {
            return Goal::unmeasured(goal);
        }
        Goal {
            goal,
            met: Some(ratios.iter().all(|&(_, r)| r <= 0.1)),
            noise: false,
            detail: ratios
                .iter()
                .map(|(t, r)| format!("{t} threads: {r:.3}x"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// One goal and where the run stands on it.
#[derive(Clone, Debug)]
pub struct Goal {
    /// The goal, in words.
    pub goal: &'static str,
    /// Met, missed, or `None` when the run did not measure it.
    pub met: Option<bool>,
    /// Missed only within noise: at every point that fell short, the
    /// rounds' ranges overlap.
    pub noise: bool,
    /// The numbers behind the verdict.
    pub detail: String,
}

impl Goal {
    fn unmeasured(goal: &'static str) -> Goal {
        Goal {
            goal,
            met: None,
            noise: false,
            detail: "not measured in this run".to_string(),
        }
    }

    /// `"met"`, `"within noise"`, `"MISSED"` or `"n/a"`.
    pub fn verdict(&self) -> &'static str {
        match self.met {
            Some(true) => "met",
            Some(false) if self.noise => "within noise",
            Some(false) => "MISSED",
            None => "n/a",
        }
    }
}

/// A lock's short name for dense text: the outside peers by their library,
/// parklot's own without the crate path.
pub fn short(name: &str) -> &str {
    match name {
        "std::sync::Mutex" => "std",
        "parking_lot::Mutex" => "parking_lot",
        "pthread_mutex_t" => "pthread",
        other => other.strip_prefix("parklot::").unwrap_or(other),
    }
}

/// `x` with three significant digits and an SI suffix: 48.1M, 912k, 37.
pub fn si(x: f64) -> String {
    let (scaled, suffix) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => return format!("{x:.0}"),
    };
    let decimals = if scaled.abs() >= 100.0 {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.decimals$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes() {
        let cases = [
            (48_123_456.0, "48.1M"),
            (912_300.0, "912k"),
            (1_234.0, "1.23k"),
            (37.2, "37"),
            (2.5e9, "2.50G"),
        ];
        for (rate, text) in cases {
            assert_eq!(si(rate), text);
        }
    }

    #[test]
    fn short_names() {
        for (name, short_name) in [
            ("parklot::Lock", "Lock"),
            ("std::sync::Mutex", "std"),
            ("HandoffLock", "HandoffLock"),
        ] {
            assert_eq!(short(name), short_name);
        }
    }
}
