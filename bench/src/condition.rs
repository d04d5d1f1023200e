//! Experiment (e): producers and consumers through a bounded queue, after
//! WebKit's `ConditionSpeedTest`: one mutex guards the queue, one condition
//! says "not empty" (consumers wait on it), one says "not full" (producers
//! wait on it). Each push and each pop notifies the other side, one waiter
//! or all of them.
//!
//! Producer `p` pushes `p << 40 | seq` for `seq` = 0, 1, 2, ...; after the
//! round, every item produced must have been consumed exactly once.

use parking_lot::lock_api;
use std::collections::VecDeque;
use std::ops::DerefMut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How many waiters each push or pop wakes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Notify {
    /// `notify_one`.
    One,
    /// `notify_all`.
    All,
}

impl Notify {
    /// `"notify_one"` or `"notify_all"`.
    pub fn name(self) -> &'static str {
        match self {
            Notify::One => "notify_one",
            Notify::All => "notify_all",
        }
    }
}

/// Which condition of the queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// Something to pop: consumers wait for it.
    NotEmpty,
    /// Room to push: producers wait for it.
    NotFull,
}

/// The state the mutex guards.
pub struct Queue {
    items: VecDeque<u64>,
    capacity: usize,
    /// Producers still producing; consumers finish once it is 0 and `items`
    /// is empty.
    producers_left: usize,
}

/// A mutex with two conditions over a [`Queue`], as each implementation
/// spells it.
pub trait Monitor: Sync {
    /// The mutex's guard.
    type Guard<'a>: DerefMut<Target = Queue>
    where
        Self: 'a;
    /// A monitor over `queue`.
    fn new(queue: Queue) -> Self;
    /// Locks the queue.
    fn lock(&self) -> Self::Guard<'_>;
    /// Waits on `side`'s condition, releasing and retaking the lock.
    fn wait<'a>(&'a self, side: Side, guard: Self::Guard<'a>) -> Self::Guard<'a>;
    /// Wakes one or all waiters of `side`'s condition.
    fn notify(&self, side: Side, notify: Notify);
}

/// The same struct shape for each implementation: a mutex and two conditions.
pub struct Pair<M, C> {
    queue: M,
    not_empty: C,
    not_full: C,
}

impl<M, C> Pair<M, C> {
    fn condition(&self, side: Side) -> &C {
        match side {
            Side::NotEmpty => &self.not_empty,
            Side::NotFull => &self.not_full,
        }
    }
}

/// parklot's one-byte `Condition` with its one-byte `Lock`, through lock_api.
pub type ParklotMonitor = Pair<parklot::Mutex<Queue>, parklot::Condvar>;
/// parking_lot's `Condvar` with parking_lot's `Mutex`.
pub type ParkingLotMonitor = Pair<parking_lot::Mutex<Queue>, parking_lot::Condvar>;
/// std's `Condvar` with std's `Mutex`.
pub type StdMonitor = Pair<std::sync::Mutex<Queue>, std::sync::Condvar>;

// parklot and parking_lot both spell a condition variable as lock_api's
// `Condvar` over their own raw condition, so one impl serves both.
impl<C> Monitor for Pair<lock_api::Mutex<C::RawMutex, Queue>, lock_api::Condvar<C>>
where
    C: lock_api::RawCondvar + Sync,
    C::RawMutex: Sync,
{
    type Guard<'a>
        = lock_api::MutexGuard<'a, C::RawMutex, Queue>
    where
        Self: 'a;

    fn new(queue: Queue) -> Self {
        Pair {
            queue: lock_api::Mutex::new(queue),
            not_empty: lock_api::Condvar::new(),
            not_full: lock_api::Condvar::new(),
        }
    }
    fn lock(&self) -> Self::Guard<'_> {
        self.queue.lock()
    }
    fn wait<'a>(&'a self, side: Side, mut guard: Self::Guard<'a>) -> Self::Guard<'a> {
        self.condition(side).wait(&mut guard);
        guard
    }
    fn notify(&self, side: Side, notify: Notify) {
        let _woken = match notify {
            Notify::One => self.condition(side).notify_one() as usize,
            Notify::All => self.condition(side).notify_all(),
        };
    }
}

impl Monitor for StdMonitor {
    type Guard<'a> = std::sync::MutexGuard<'a, Queue>;

    fn new(queue: Queue) -> Self {
        Pair {
            queue: std::sync::Mutex::new(queue),
            not_empty: std::sync::Condvar::new(),
            not_full: std::sync::Condvar::new(),
        }
    }
    fn lock(&self) -> Self::Guard<'_> {
        // Nothing panics while holding it, so it is never poisoned.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn wait<'a>(&'a self, side: Side, guard: Self::Guard<'a>) -> Self::Guard<'a> {
        self.condition(side)
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
    fn notify(&self, side: Side, notify: Notify) {
        match notify {
            Notify::One => self.condition(side).notify_one(),
            Notify::All => self.condition(side).notify_all(),
        }
    }
}

/// One condition implementation under test: its name and its instantiation
/// of [`run_condition`].
#[derive(Copy, Clone)]
pub struct CondPeer {
    /// The name in tables: the condition variable (its mutex is its own kind's).
    pub name: &'static str,
    /// One round on a fresh monitor.
    pub run: fn(&'static str, &CondConfig) -> CondRound,
}

impl CondPeer {
    const fn of<M: Monitor>(name: &'static str) -> CondPeer {
        CondPeer {
            name,
            run: run_condition::<M>,
        }
    }
}

/// The condition variables of experiment (e), parklot's first (the baseline).
pub const CONDITIONS: &[CondPeer] = &[
    CondPeer::of::<ParklotMonitor>("parklot Condition"),
    CondPeer::of::<StdMonitor>("std Condvar"),
    CondPeer::of::<ParkingLotMonitor>("parking_lot Condvar"),
];

/// What one round runs.
#[derive(Clone, Debug)]
pub struct CondConfig {
    /// Producer threads.
    pub producers: usize,
    /// Consumer threads.
    pub consumers: usize,
    /// Items the queue holds at most.
    pub capacity: usize,
    /// How long producers produce.
    pub duration: Duration,
    /// One waiter or all per push and pop.
    pub notify: Notify,
    /// Which round of its point this is (0-based).
    pub round: usize,
}

/// What one round measured.
#[derive(Clone, Debug)]
pub struct CondRound {
    /// The [`CondPeer`]'s name.
    pub monitor: &'static str,
    /// The round's configuration.
    pub config: CondConfig,
    /// From the start to the stop flag.
    pub elapsed: Duration,
    /// Items each producer pushed.
    pub produced: Vec<u64>,
    /// Items each consumer popped.
    pub consumed: Vec<u64>,
    /// Items produced but never consumed.
    pub lost: u64,
    /// Items consumed more than once (each extra time counts).
    pub duplicated: u64,
    /// Items consumed that no producer made.
    pub unknown: u64,
}

/// The exactly-once check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryMismatch {
    /// The monitor's name.
    pub monitor: &'static str,
    /// `"notify_one"` or `"notify_all"`.
    pub notify: &'static str,
    /// Items produced but never consumed.
    pub lost: u64,
    /// Extra consumptions.
    pub duplicated: u64,
    /// Items nobody produced.
    pub unknown: u64,
}

impl std::fmt::Display for DeliveryMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) is broken: {} items lost, {} consumed twice, {} consumed that were never produced",
            self.monitor, self.notify, self.lost, self.duplicated, self.unknown
        )
    }
}

impl std::error::Error for DeliveryMismatch {}

impl CondRound {
    /// Items consumed per second.
    pub fn rate(&self) -> f64 {
        self.consumed.iter().sum::<u64>() as f64 / self.elapsed.as_secs_f64()
    }

    /// The exactly-once check.
    pub fn check(&self) -> Result<(), DeliveryMismatch> {
        if self.lost == 0 && self.duplicated == 0 && self.unknown == 0 {
            Ok(())
        } else {
            Err(DeliveryMismatch {
                monitor: self.monitor,
                notify: self.config.notify.name(),
                lost: self.lost,
                duplicated: self.duplicated,
                unknown: self.unknown,
            })
        }
    }
}

/// Bits of an item that hold its sequence number; the producer is above.
const SEQ_BITS: u32 = 40;

/// Runs one round on a fresh `M`, named `name`. Does not judge it: see
/// [`CondRound::check`].
pub fn run_condition<M: Monitor>(name: &'static str, config: &CondConfig) -> CondRound {
    assert!(config.producers > 0 && config.consumers > 0 && config.capacity > 0);
    let monitor = M::new(Queue {
        items: VecDeque::with_capacity(config.capacity),
        capacity: config.capacity,
        producers_left: config.producers,
    });
    // false while producers should go on; the main thread stores true once.
    let stop = AtomicBool::new(false);
    let start_line = Barrier::new(config.producers + config.consumers + 1);
    let notify = config.notify;

    let (elapsed, produced, received) = thread::scope(|scope| {
        let (monitor, stop, start_line) = (&monitor, &stop, &start_line);
        let producers: Vec<_> = (0..config.producers as u64)
            .map(|p| scope.spawn(move || produce(monitor, p, notify, stop, start_line)))
            .collect();
        let consumers: Vec<_> = (0..config.consumers)
            .map(|_| scope.spawn(move || consume(monitor, notify, start_line)))
            .collect();
        start_line.wait();
        let start = Instant::now();
        thread::sleep(config.duration);
        stop.store(true, Ordering::Relaxed);
        let elapsed = start.elapsed();
        let produced: Vec<u64> = producers.into_iter().map(join).collect();
        let received: Vec<Vec<u64>> = consumers.into_iter().map(join).collect();
        (elapsed, produced, received)
    });

    let (lost, duplicated, unknown) = tally(&produced, received.iter().flatten().copied());
    CondRound {
        monitor: name,
        config: config.clone(),
        elapsed,
        produced,
        consumed: received.iter().map(|items| items.len() as u64).collect(),
        lost,
        duplicated,
        unknown,
    }
}

/// A queue thread's result; its panic, passed on.
fn join<T>(thread: thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().expect("a queue thread panicked")
}

/// A producer: pushes until the stop flag, then signs off. Returns how many
/// items it pushed.
fn produce<M: Monitor>(
    monitor: &M,
    producer: u64,
    notify: Notify,
    stop: &AtomicBool,
    start_line: &Barrier,
) -> u64 {
    start_line.wait();
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let mut queue = monitor.lock();
        while queue.items.len() >= queue.capacity {
            queue = monitor.wait(Side::NotFull, queue);
        }
        queue.items.push_back(producer << SEQ_BITS | seq);
        drop(queue);
        monitor.notify(Side::NotEmpty, notify);
        seq += 1;
    }
    let mut queue = monitor.lock();
    queue.producers_left -= 1;
    let last = queue.producers_left == 0;
    drop(queue);
    if last {
        // Every consumer waiting on an empty queue must see the end.
        monitor.notify(Side::NotEmpty, Notify::All);
    }
    seq
}

/// A consumer: pops until the producers are done and the queue is empty.
/// Returns the items it popped.
fn consume<M: Monitor>(monitor: &M, notify: Notify, start_line: &Barrier) -> Vec<u64> {
    start_line.wait();
    let mut received = Vec::new();
    loop {
        let mut queue = monitor.lock();
        let item = loop {
            if let Some(item) = queue.items.pop_front() {
                break item;
            }
            if queue.producers_left == 0 {
                return received;
            }
            queue = monitor.wait(Side::NotEmpty, queue);
        };
        drop(queue);
        monitor.notify(Side::NotFull, notify);
        received.push(item);
    }
}

/// Compares what was consumed with what was produced: `(lost, duplicated,
/// unknown)`, all 0 when every item was consumed exactly once.
fn tally(produced: &[u64], consumed: impl Iterator<Item = u64>) -> (u64, u64, u64) {
    let mut seen: Vec<Vec<bool>> = produced.iter().map(|&n| vec![false; n as usize]).collect();
    let (mut duplicated, mut unknown, mut distinct) = (0, 0, 0);
    for item in consumed {
        let (producer, seq) = ((item >> SEQ_BITS) as usize, item & ((1 << SEQ_BITS) - 1));
        match seen.get_mut(producer).and_then(|s| s.get_mut(seq as usize)) {
            None => unknown += 1,
            Some(true) => duplicated += 1,
            Some(slot) => {
                *slot = true;
                distinct += 1;
            }
        }
    }
    (produced.iter().sum::<u64>() - distinct, duplicated, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(notify: Notify) -> CondConfig {
        CondConfig {
            producers: 2,
            consumers: 3,
            capacity: 2,
            duration: Duration::from_millis(15),
            notify,
            round: 0,
        }
    }

    #[test]
    fn every_monitor_delivers_exactly_once() {
        for notify in [Notify::One, Notify::All] {
            for peer in CONDITIONS {
                let round = (peer.run)(peer.name, &config(notify));
                round.check().unwrap();
                assert!(round.rate() > 0.0, "{} moved nothing", peer.name);
                assert_eq!(
                    round.produced.iter().sum::<u64>(),
                    round.consumed.iter().sum::<u64>()
                );
            }
        }
    }

    #[test]
    fn tally_finds_lost_duplicated_and_unknown_items() {
        let p1 = 1 << SEQ_BITS;
        assert_eq!(tally(&[2, 1], [0, 1, p1].into_iter()), (0, 0, 0));
        assert_eq!(tally(&[2, 1], [0, 0, p1].into_iter()), (1, 1, 0));
        assert_eq!(
            tally(&[2, 1], [0, 1, p1, p1 + 1, 7 << SEQ_BITS].into_iter()),
            (0, 0, 2)
        );
        let round = CondRound {
            monitor: "toy",
            config: config(Notify::One),
            elapsed: Duration::from_secs(1),
            produced: vec![2],
            consumed: vec![1],
            lost: 1,
            duplicated: 0,
            unknown: 0,
        };
        let err = round.check().unwrap_err();
        assert!(
            err.to_string()
                .contains("toy (notify_one) is broken: 1 items lost"),
            "{err}"
        );
    }
}
