//! The whole native suite: seed 000's experiments in one run, each peer
//! measured side by side with rounds interleaved (A B C, A B C, ...), and
//! every round checked for correctness before the next one starts.
//!
//! | experiment           | swept                     | peers                                |
//! |----------------------|---------------------------|--------------------------------------|
//! | (f) floor            | -                         | CAS+store, every lock, ping-pong     |
//! | (a) microcontention  | threads                   | every lock                           |
//! | (b) spin limit       | spin limit, at 4 threads  | `BargingLock<limit>`                 |
//! | (c) critical section | iterations, at 4 threads  | every lock                           |
//! | (d) fairness         | - (10 threads, 100 ms)    | every lock                           |
//! | (e) condition        | producer/consumer pairs   | parklot, std, parking_lot conditions |

use crate::condition::{CondConfig, CondPeer, CondRound, Notify, CONDITIONS};
use crate::locks::{barging_lock, Peer, LOCKS, SPIN_SWEEP};
use crate::machine::{now_iso8601, Machine};
use crate::runner::{Round, RoundConfig, Start};
use std::time::{Duration, Instant};

/// Everything a run is asked to do.
#[derive(Clone)]
pub struct Params {
    /// `--quick`: few points, short rounds.
    pub quick: bool,
    /// Rounds per lock and point (interleaved across locks).
    pub rounds: usize,
    /// Length of each contended or queue round (the fairness run has its own).
    pub round_time: Duration,
    /// The locks of experiments (a), (c), (d) and the floor, baseline first.
    pub locks: Vec<Peer>,
    /// (a): thread counts.
    pub micro_threads: Vec<usize>,
    /// (b): spin limits, each one of [`SPIN_SWEEP`]'s.
    pub spin_limits: Vec<u32>,
    /// (b) and (c): threads (seed 000: 4, "for fewer threads the spin limit
    /// doesn't matter much").
    pub sweep_threads: usize,
    /// (c): add-and-multiply iterations per critical section.
    pub cs_lengths: Vec<u32>,
    /// (d): threads (seed 000: 10).
    pub fairness_threads: usize,
    /// (d): how long they run once released (seed 000: 100 ms).
    pub fairness_time: Duration,
    /// (d): how long the main thread holds the lock while they pile up.
    pub fairness_settle: Duration,
    /// (e): producers (= consumers) per round.
    pub queue_pairs: Vec<usize>,
    /// (e): items the queue holds at most.
    pub queue_capacity: usize,
    /// (f): lock + unlock (and CAS + store) pairs per uncontended round.
    pub floor_pairs: u64,
    /// (f): length of each ping-pong round.
    pub ping_pong_time: Duration,
}

impl Params {
    /// The full run: about 3 minutes on 2 cores. 5 rounds of 150 ms: on a
    /// shared 2-core machine a median of 5 settles to a few percent.
    pub fn full() -> Params {
        Params {
            quick: false,
            rounds: 5,
            round_time: Duration::from_millis(150),
            locks: LOCKS.to_vec(),
            micro_threads: vec![1, 2, 3, 4, 6, 8, 12, 16],
            spin_limits: SPIN_SWEEP.iter().map(|&(limit, _)| limit).collect(),
            sweep_threads: 4,
            cs_lengths: vec![1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
            fairness_threads: 10,
            fairness_time: Duration::from_millis(100),
            fairness_settle: Duration::from_millis(10),
            queue_pairs: vec![1, 2, 4],
            queue_capacity: 8,
            floor_pairs: 2_000_000,
            ping_pong_time: Duration::from_millis(100),
        }
    }

    /// `--quick`: every experiment and every check, about 10 seconds.
    pub fn quick() -> Params {
        Params {
            quick: true,
            rounds: 3,
            round_time: Duration::from_millis(30),
            micro_threads: vec![1, 4, 16],
            spin_limits: vec![0, 10, 40, 100],
            cs_lengths: vec![1, 100, 1000],
            fairness_time: Duration::from_millis(50),
            queue_pairs: vec![2],
            floor_pairs: 300_000,
            ping_pong_time: Duration::from_millis(20),
            ..Params::full()
        }
    }

    fn lock_round(&self, threads: usize, work: u32) -> RoundConfig {
        RoundConfig {
            threads,
            duration: self.round_time,
            work,
            start: Start::Together,
            round: 0,
        }
    }
}

/// Experiment (f), every round of it.
#[derive(Clone, Debug, Default)]
pub struct Floor {
    /// Nanoseconds per uncontended CAS + store, one value per round.
    pub cas_store_ns: Vec<f64>,
    /// Nanoseconds per uncontended lock + unlock: each lock, one value per round.
    pub uncontended_ns: Vec<(&'static str, Vec<f64>)>,
    /// Nanoseconds per two-thread cache-line round trip, one value per round.
    pub ping_pong_ns: Vec<f64>,
}

/// A whole run: when, where, what was asked, and every round measured.
pub struct Run {
    /// ISO 8601, UTC, when the run started.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// What was run.
    pub params: Params,
    /// (f).
    pub floor: Floor,
    /// (a), every round in the order run.
    pub microcontention: Vec<Round>,
    /// (b), every round in the order run.
    pub spin_limit: Vec<Round>,
    /// (c), every round in the order run.
    pub critical_section: Vec<Round>,
    /// (d), every round in the order run.
    pub fairness: Vec<Round>,
    /// (e), every round in the order run.
    pub condition: Vec<CondRound>,
}

/// A correctness check failed; the run stops at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The experiment that caught it.
    pub experiment: &'static str,
    /// What went wrong, in a sentence.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.experiment, self.message)
    }
}

impl std::error::Error for Failure {}

/// Runs every experiment of `params`, calling `progress` with a line per
/// point. Stops at the first correctness failure.
pub fn run(params: &Params, progress: &mut dyn FnMut(String)) -> Result<Run, Failure> {
    let mut run = Run {
        date: now_iso8601(),
        machine: Machine::this(),
        params: params.clone(),
        floor: Floor::default(),
        microcontention: Vec::new(),
        spin_limit: Vec::new(),
        critical_section: Vec::new(),
        fairness: Vec::new(),
        condition: Vec::new(),
    };
    let p = params;
    let locks = p.locks.len();

    timed(
        progress,
        "floor",
        "CAS+store, each lock uncontended, ping-pong",
        p,
        || {
            run.floor = floor(p);
            Ok(())
        },
    )?;

    for &threads in &p.micro_threads {
        let what = format!("{threads} threads x {locks} locks");
        timed(progress, "microcontention", &what, p, || {
            let config = p.lock_round(threads, 1);
            interleave(
                "microcontention",
                &p.locks,
                &config,
                p.rounds,
                &mut run.microcontention,
            )
        })?;
    }

    let what = format!(
        "{} threads x {} limits",
        p.sweep_threads,
        p.spin_limits.len()
    );
    timed(progress, "spin limit", &what, p, || {
        let sweep: Vec<Peer> = p
            .spin_limits
            .iter()
            .map(|&limit| {
                barging_lock(limit)
                    .unwrap_or_else(|| panic!("spin limit {limit} is not in SPIN_SWEEP"))
            })
            .collect();
        let config = p.lock_round(p.sweep_threads, 1);
        interleave("spin limit", &sweep, &config, p.rounds, &mut run.spin_limit)
    })?;

    for &work in &p.cs_lengths {
        let what = format!(
            "{work} iterations, {} threads x {locks} locks",
            p.sweep_threads
        );
        timed(progress, "critical section", &what, p, || {
            let config = p.lock_round(p.sweep_threads, work);
            interleave(
                "critical section",
                &p.locks,
                &config,
                p.rounds,
                &mut run.critical_section,
            )
        })?;
    }

    let what = format!(
        "{} threads for {} ms x {locks} locks",
        p.fairness_threads,
        p.fairness_time.as_millis()
    );
    timed(progress, "fairness", &what, p, || {
        let config = RoundConfig {
            threads: p.fairness_threads,
            duration: p.fairness_time,
            work: 1,
            start: Start::WhileHeld(p.fairness_settle),
            round: 0,
        };
        interleave("fairness", &p.locks, &config, p.rounds, &mut run.fairness)
    })?;

    for &pairs in &p.queue_pairs {
        for notify in [Notify::One, Notify::All] {
            let what = format!(
                "{pairs} producers + {pairs} consumers, {} x {} conditions",
                notify.name(),
                CONDITIONS.len()
            );
            timed(progress, "condition", &what, p, || {
                let config = CondConfig {
                    producers: pairs,
                    consumers: pairs,
                    capacity: p.queue_capacity,
                    duration: p.round_time,
                    notify,
                    round: 0,
                };
                queue_rounds(CONDITIONS, &config, p.rounds, &mut run.condition)
            })?;
        }
    }
    Ok(run)
}

/// Runs one point of an experiment, then reports it with its time.
fn timed(
    progress: &mut dyn FnMut(String),
    experiment: &str,
    what: &str,
    p: &Params,
    point: impl FnOnce() -> Result<(), Failure>,
) -> Result<(), Failure> {
    let started = Instant::now();
    point()?;
    progress(format!(
        "[{experiment}] {what}: {} rounds, {:.1} s",
        p.rounds,
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// `rounds` rounds of `config` for each of `peers`, interleaved, each checked.
fn interleave(
    experiment: &'static str,
    peers: &[Peer],
    config: &RoundConfig,
    rounds: usize,
    out: &mut Vec<Round>,
) -> Result<(), Failure> {
    for round in 0..rounds {
        for peer in peers {
            let r = (peer.contend)(&RoundConfig {
                round,
                ..config.clone()
            });
            r.check().map_err(|mismatch| Failure {
                experiment,
                message: mismatch.to_string(),
            })?;
            out.push(r);
        }
    }
    Ok(())
}

/// `rounds` rounds of `config` for each condition, interleaved, each checked.
fn queue_rounds(
    peers: &[CondPeer],
    config: &CondConfig,
    rounds: usize,
    out: &mut Vec<CondRound>,
) -> Result<(), Failure> {
    for round in 0..rounds {
        for peer in peers {
            let r = (peer.run)(
                peer.name,
                &CondConfig {
                    round,
                    ..config.clone()
                },
            );
            r.check().map_err(|mismatch| Failure {
                experiment: "condition",
                message: mismatch.to_string(),
            })?;
            out.push(r);
        }
    }
    Ok(())
}

/// Experiment (f), rounds interleaved: CAS+store, each lock, ping-pong.
fn floor(p: &Params) -> Floor {
    let mut floor = Floor {
        uncontended_ns: p.locks.iter().map(|peer| (peer.name, Vec::new())).collect(),
        ..Floor::default()
    };
    for _ in 0..p.rounds {
        floor
            .cas_store_ns
            .push(crate::floor::cas_store_ns(p.floor_pairs));
        for (peer, (_, values)) in p.locks.iter().zip(&mut floor.uncontended_ns) {
            values.push((peer.uncontended_ns)(p.floor_pairs));
        }
        floor
            .ping_pong_ns
            .push(crate::floor::ping_pong_ns(p.ping_pong_time));
    }
    floor
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::locks::lock_named;
    use crate::runner::tests::BrokenLock;

    /// A suite small enough for a unit test: every experiment, every check,
    /// two locks, two rounds of a few milliseconds.
    pub(crate) fn tiny() -> Params {
        Params {
            rounds: 2,
            round_time: Duration::from_millis(5),
            locks: vec![LOCKS[0], lock_named("std::sync::Mutex").unwrap()],
            micro_threads: vec![1, 3],
            spin_limits: vec![0, 40],
            sweep_threads: 3,
            cs_lengths: vec![1, 50],
            fairness_threads: 4,
            fairness_time: Duration::from_millis(5),
            fairness_settle: Duration::from_millis(1),
            queue_pairs: vec![1],
            floor_pairs: 1000,
            ping_pong_time: Duration::from_millis(2),
            ..Params::quick()
        }
    }

    #[test]
    fn a_tiny_suite_runs_every_experiment() {
        let mut lines = Vec::new();
        let run = run(&tiny(), &mut |line| lines.push(line)).unwrap();
        assert_eq!(run.microcontention.len(), 2 * 2 * 2);
        assert_eq!(run.spin_limit.len(), 2 * 2);
        assert_eq!(run.spin_limit[1].lock, "BargingLock<40>");
        assert_eq!(run.critical_section.len(), 2 * 2 * 2);
        assert_eq!(run.fairness.len(), 2 * 2);
        assert_eq!(run.condition.len(), 2 * 3 * 2);
        assert_eq!(run.floor.uncontended_ns.len(), 2);
        assert_eq!(run.floor.ping_pong_ns.len(), 2);
        // Rounds interleave: A B A B.
        let order: Vec<&str> = run.fairness.iter().map(|r| r.lock).collect();
        assert_eq!(order, [LOCKS[0].name, "std::sync::Mutex"].repeat(2));
        // One progress line per point.
        assert_eq!(lines.len(), 1 + 2 + 1 + 2 + 1 + 2);
        assert!(
            lines[1].starts_with("[microcontention] 1 threads"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn a_broken_lock_aborts_the_run() {
        let params = Params {
            locks: vec![LOCKS[0], Peer::of::<BrokenLock>()],
            // Straight to long critical sections, where unexcluded threads
            // overlap in nearly every one (see `broken_round`).
            micro_threads: vec![],
            spin_limits: vec![],
            cs_lengths: vec![1000],
            sweep_threads: 4,
            round_time: Duration::from_millis(20),
            rounds: 20,
            ..tiny()
        };
        let failure = run(&params, &mut |_| {})
            .err()
            .expect("the broken lock went unnoticed");
        assert_eq!(failure.experiment, "critical section");
        assert!(
            failure.message.contains("BrokenLock is broken"),
            "{failure}"
        );
    }
}
