//! What the diagnostics cost a `Lock`: the same rounds with everything off,
//! with hold tracking, with deadlock detection, and with detection and
//! lock-order checking, side by side with seed 000's ThunderLock and
//! CascadeLock (the same one-byte fast path, no hooks) in one run.
//!
//! Off, `Lock` must match the toys as it did before diagnostics existed
//! (bench/results/native.md: 1.00x at every point); on, the table says what
//! a debugging session pays.
//!
//! `cargo run --release -p parklot-bench --bin diagnostics -- [--quick] [--out DIR]`
//! writes `native-diagnostics.md` and `.json` to DIR (default
//! `bench/results`). Rounds interleave across rows; cells are medians over
//! rounds, with the range.

use parklot::toy_locks::{CascadeLock, RawLock, ThunderLock};
use parklot::{deadlock, diagnostics, lock_order, Lock};
use parklot_bench::runner::{run_round, RoundConfig, Start};
use parklot_bench::side::{self, Plan, Suite};
use parklot_bench::stats::Spread;
use serde_json::json;

/// A row: a lock and the diagnostics switched on while it runs.
struct Row {
    name: &'static str,
    mode: fn(bool),
    run: fn(&RoundConfig) -> f64,
}

fn rate<L: RawLock>(config: &RoundConfig) -> f64 {
    let round = run_round::<L>(config);
    round.check().expect("the lock excluded");
    round.rate()
}

fn off(_: bool) {}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "ThunderLock (no hooks)",
            mode: off,
            run: rate::<ThunderLock>,
        },
        Row {
            name: "CascadeLock (no hooks)",
            mode: off,
            run: rate::<CascadeLock>,
        },
        Row {
            name: "parklot::Lock, diagnostics off",
            mode: off,
            run: rate::<Lock>,
        },
        Row {
            name: "parklot::Lock, tracking holds",
            mode: diagnostics::set_tracking,
            run: rate::<Lock>,
        },
        Row {
            name: "parklot::Lock, deadlock detection",
            mode: deadlock::set_enabled,
            run: rate::<Lock>,
        },
        Row {
            name: "parklot::Lock, detection + lock order",
            mode: |on| {
                deadlock::set_enabled(on);
                lock_order::set_enabled(on);
            },
            run: rate::<Lock>,
        },
    ]
}

const SUITE: Suite = Suite {
    name: "native-diagnostics",
    experiment: "Lock with diagnostics off, tracking, detecting, and checking lock order, beside seed 000's toys",
    round_ms: 150,
    threads: &[1, 2, 4, 8],
};

fn main() {
    let plan = Plan::from_env(SUITE);
    let (duration, threads) = (plan.round_time(), plan.threads());
    let rows = rows();
    // rates[row][point]: one rate per round.
    let mut rates = vec![vec![Vec::new(); threads.len()]; rows.len()];
    let mut log = Vec::new();
    for round in 0..plan.rounds() {
        for (p, &n) in threads.iter().enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let config = RoundConfig {
                    threads: n,
                    duration,
                    work: 1,
                    start: Start::Together,
                    round,
                };
                (row.mode)(true);
                let rate = (row.run)(&config);
                (row.mode)(false);
                rates[r][p].push(rate);
                log.push((round, row.name, json!({ "threads": n, "rate": rate })));
            }
        }
        eprintln!("diagnostics: round {} of {}", round + 1, plan.rounds());
    }
    let columns: Vec<String> = threads.iter().map(|n| format!("threads {n}")).collect();
    let mut header = vec![("lock", false)];
    header.extend(columns.iter().map(|c| (c.as_str(), true)));
    let mut md = plan.markdown(
        "What the diagnostics cost a Lock",
        "Acquisitions per second of seed 000's critical section (1 add+multiply)",
        "(min-max), and x the ratio to `Lock` with diagnostics off; at one thread, \
         ns per lock + unlock in brackets",
        &header,
    );
    let spread = |r: usize, p: usize| Spread::of(rates[r][p].iter().copied()).expect("rounds ran");
    let off = 2; // "diagnostics off"
    for (r, row) in rows.iter().enumerate() {
        let mut line = format!("| {} |", row.name);
        for (p, &n) in threads.iter().enumerate() {
            let s = spread(r, p);
            let x = s.median / spread(off, p).median;
            let ns = if n == 1 {
                format!(" [{:.2} ns]", 1e9 / s.median)
            } else {
                String::new()
            };
            line += &format!(
                " {} x{x:.2}{ns} ({}-{}) |",
                si(s.median),
                si(s.min),
                si(s.max)
            );
        }
        side::row(&mut md, line + "\n");
    }
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    let chart = side::threads_chart(
        "diagnostics",
        "What the diagnostics cost a Lock".into(),
        "acquisitions/s".into(),
        &names,
        threads,
        |name, n| {
            let r = names.iter().position(|&x| x == name)?;
            let p = threads.iter().position(|&t| t == n)?;
            Spread::of(rates[r][p].iter().copied())
        },
    );
    let doc = plan.document(&names, log, vec![chart]);
    plan.write(&md, &doc);
}

/// 172000000 → "172M".
fn si(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.3}G", v / 1e9),
        v if v >= 1e6 => format!("{:.3}M", v / 1e6),
        v if v >= 1e3 => format!("{:.3}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}
