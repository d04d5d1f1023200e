//! What the side suites (`--bin async_locks`, `--bin rwlock`) share: their
//! command line and the run it asks for, the head of their JSON document,
//! and where they write.

use crate::json::to_text;
use crate::machine::{now_iso8601, Machine};
use crate::stats::Spread;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// A side suite, as its full run measures it.
pub struct Suite {
    /// Its name (`native-async`, `native-rwlock`): its files' too.
    pub name: &'static str,
    /// What it measures, in a few words.
    pub experiment: &'static str,
    /// Length of each round.
    pub round_ms: u64,
    /// The thread counts swept.
    pub threads: &'static [usize],
}

/// A side suite's run, from its command line `[--quick] [--out DIR]`.
pub struct Plan {
    /// The suite.
    pub suite: Suite,
    /// `--quick`: a smoke run (one round of 50 ms at 2 and 4 threads), not a
    /// measurement.
    pub quick: bool,
    /// `--out DIR` (default `bench/results`).
    pub out: String,
    /// ISO 8601, UTC, when the run started.
    pub date: String,
}

impl Plan {
    /// `suite`'s run, from this process's arguments.
    pub fn from_env(suite: Suite) -> Plan {
        let args: Vec<String> = std::env::args().collect();
        Plan {
            suite,
            quick: args.iter().any(|a| a == "--quick"),
            out: args
                .iter()
                .position(|a| a == "--out")
                .and_then(|i| args.get(i + 1).cloned())
                .unwrap_or_else(|| "bench/results".into()),
            date: now_iso8601(),
        }
    }

    /// Rounds per lock and point (interleaved across locks): 5, 1 if quick.
    pub fn rounds(&self) -> usize {
        if self.quick {
            1
        } else {
            5
        }
    }

    /// Length of each round.
    pub fn round_time(&self) -> Duration {
        Duration::from_millis(if self.quick { 50 } else { self.suite.round_ms })
    }

    /// The thread counts swept.
    pub fn threads(&self) -> &'static [usize] {
        if self.quick {
            &[2, 4]
        } else {
            self.suite.threads
        }
    }

    /// The Markdown's head: `# title`, a paragraph (the date, marked if this
    /// is a smoke run; `what` was measured, each the median over the plan's
    /// rounds; `how`), and the table's header, `columns` as (name,
    /// right-aligned).
    pub fn markdown(&self, title: &str, what: &str, how: &str, columns: &[(&str, bool)]) -> String {
        let smoke = if self.quick {
            " (--quick: a smoke run, not a measurement)"
        } else {
            ""
        };
        let names: String = columns
            .iter()
            .map(|(name, _)| format!(" {name} |"))
            .collect();
        let rule: String = columns
            .iter()
            .map(|&(_, right)| if right { "---:|" } else { "---|" })
            .collect();
        format!(
            "# {title}\n\n{}{smoke}. {what}, each the median over {} rounds of {} ms \
             interleaved across locks {how}\n\n|{names}\n|{rule}\n",
            self.date,
            self.rounds(),
            self.round_time().as_millis(),
        )
    }

    /// The document: `suite`, `date`, `quick`, `machine`, `params` (the
    /// plan and the peers' names), `rounds` (each round's `round` and `lock`,
    /// then its `rest`'s keys in their order) and `charts`.
    pub fn document<'a>(
        &self,
        locks: &[&str],
        rounds: impl IntoIterator<Item = (usize, &'a str, Value)>,
        charts: Vec<Value>,
    ) -> Value {
        let rounds: Vec<Value> = rounds
            .into_iter()
            .map(|(round, lock, rest)| {
                let mut row = Map::new();
                row.insert("round".into(), json!(round));
                row.insert("lock".into(), json!(lock));
                if let Value::Object(rest) = rest {
                    row.extend(rest);
                }
                Value::Object(row)
            })
            .collect();
        json!({
            "suite": self.suite.name,
            "date": self.date,
            "quick": self.quick,
            "machine": Machine::this().to_json(),
            "params": {
                "experiment": self.suite.experiment,
                "rounds": self.rounds(),
                "round_ms": self.round_time().as_millis() as u64,
                "threads": self.threads(),
                "locks": locks,
            },
            "rounds": rounds,
            "charts": charts,
        })
    }

    /// The suite's `.md` and `.json` files, written into `--out`.
    pub fn write(&self, md: &str, doc: &Value) {
        let (out, suite) = (&self.out, self.suite.name);
        std::fs::create_dir_all(out).unwrap();
        std::fs::write(format!("{out}/{suite}.md"), md).unwrap();
        std::fs::write(format!("{out}/{suite}.json"), to_text(doc)).unwrap();
    }
}

/// A line chart (bench/chart.mjs's ChartSpec) over `threads`, both axes
/// logarithmic: a series per lock, a point wherever `at(lock, threads)` has
/// rounds.
pub fn threads_chart(
    id: &str,
    title: String,
    y: String,
    locks: &[&str],
    threads: &[usize],
    at: impl Fn(&str, usize) -> Option<Spread>,
) -> Value {
    let mut threads = threads.to_vec();
    threads.sort_unstable();
    threads.dedup();
    let series: Vec<Value> = locks
        .iter()
        .map(|&lock| {
            let points: Vec<Value> = threads
                .iter()
                .filter_map(|&n| at(lock, n).map(|s| (n, s)))
                .map(|(n, s)| json!({ "x": n, "y": s.median, "min": s.min, "max": s.max }))
                .collect();
            json!({ "name": lock, "points": points })
        })
        .collect();
    json!({
        "id": id,
        "title": title,
        "kind": "line",
        "x": { "label": "threads", "log": true },
        "y": { "label": y, "log": true },
        "series": series,
    })
}

/// Prints a row of the table and adds it to the Markdown.
pub fn row(md: &mut String, line: String) {
    print!("{line}");
    md.push_str(&line);
}

/// One timed round: what each thread did and for how long.
pub struct Timed {
    /// Operations per thread, in thread order.
    pub counts: Vec<u64>,
    /// Seconds from the threads' release to their last join.
    pub secs: f64,
}

impl Timed {
    /// `threads` threads, released together, each calling `step(t)` (`t`:
    /// its index; `step` returns how many operations it did) until
    /// `duration` has passed.
    pub fn run(threads: usize, duration: Duration, step: impl Fn(usize) -> u64 + Sync) -> Timed {
        let stop = AtomicBool::new(false);
        let start = Barrier::new(threads + 1);
        let counts: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
        let secs = std::thread::scope(|s| {
            for (t, count) in counts.iter().enumerate() {
                let (stop, start, step) = (&stop, &start, &step);
                s.spawn(move || {
                    start.wait();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        n += step(t);
                    }
                    count.store(n, Ordering::Relaxed);
                });
            }
            start.wait();
            let began = Instant::now();
            std::thread::sleep(duration);
            stop.store(true, Ordering::Relaxed);
            // The scope joins every thread before it returns.
            began
        })
        .elapsed()
        .as_secs_f64();
        Timed {
            counts: counts.into_iter().map(AtomicU64::into_inner).collect(),
            secs,
        }
    }

    /// Each thread's operations per second.
    pub fn rates(&self) -> Vec<f64> {
        self.counts.iter().map(|&n| n as f64 / self.secs).collect()
    }
}
