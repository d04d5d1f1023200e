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
//! writes `native-diagnostics.md` to DIR (default `bench/results`). Rounds
//! interleave across rows; cells are medians over rounds, with the range.

use parklot::toy_locks::{CascadeLock, RawLock, ThunderLock};
use parklot::{deadlock, diagnostics, lock_order, Lock};
use parklot_bench::machine::{now_iso8601, Machine};
use parklot_bench::runner::{run_round, RoundConfig, Start};
use parklot_bench::stats::Spread;
use std::fmt::Write as _;
use std::time::Duration;

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

fn main() {
    let mut quick = false;
    let mut out = String::from("bench/results");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--quick" {
            quick = true;
        } else if arg == "--out" {
            out = args.next().expect("--out needs a directory");
        } else {
            panic!("usage: diagnostics [--quick] [--out DIR]; got {arg:?}");
        }
    }
    let (rounds, ms, threads): (usize, u64, &[usize]) = if quick {
        (2, 30, &[1, 4])
    } else {
        (5, 150, &[1, 2, 4, 8])
    };
    let rows = rows();
    // rates[row][point] = one rate per round
    let mut rates = vec![vec![Vec::new(); threads.len()]; rows.len()];
    for round in 0..rounds {
        for (p, &n) in threads.iter().enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let config = RoundConfig {
                    threads: n,
                    duration: Duration::from_millis(ms),
                    work: 1,
                    start: Start::Together,
                    round,
                };
                (row.mode)(true);
                rates[r][p].push((row.run)(&config));
                (row.mode)(false);
            }
        }
        eprintln!("diagnostics: round {} of {rounds}", round + 1);
    }
    let base = 2; // "diagnostics off"
    let mut md = String::new();
    let machine = Machine::this();
    writeln!(md, "# What the diagnostics cost a Lock\n").unwrap();
    writeln!(md, "- date: {}", now_iso8601()).unwrap();
    writeln!(
        md,
        "- machine: {}, {} cores, {}-{}, {}",
        machine.cpu,
        machine.cores,
        machine.os,
        machine.arch,
        machine.rustc.as_deref().unwrap_or("rustc unknown")
    )
    .unwrap();
    writeln!(md, "- rounds: {rounds} per row and point, {ms} ms each, interleaved across rows; seed 000's critical section (1 add+multiply)").unwrap();
    writeln!(md, "- cells: acquisitions/s, median over rounds (min-max), and its ratio to `Lock` with diagnostics off; one thread: ns per lock + unlock in brackets\n").unwrap();
    write!(md, "| lock |").unwrap();
    for n in threads {
        write!(md, " threads {n} |").unwrap();
    }
    writeln!(md).unwrap();
    writeln!(md, "|---|{}", "---|".repeat(threads.len())).unwrap();
    let spread = |r: usize, p: usize| Spread::of(rates[r][p].iter().copied()).expect("rounds ran");
    for (r, row) in rows.iter().enumerate() {
        write!(md, "| {} |", row.name).unwrap();
        for (p, &n) in threads.iter().enumerate() {
            let s = spread(r, p);
            let x = s.median / spread(base, p).median;
            let ns = if n == 1 {
                format!(" [{:.2} ns]", 1e9 / s.median)
            } else {
                String::new()
            };
            write!(
                md,
                " {} x{x:.2}{ns} ({}-{}) |",
                si(s.median),
                si(s.min),
                si(s.max)
            )
            .unwrap();
        }
        writeln!(md).unwrap();
    }
    print!("{md}");
    std::fs::create_dir_all(&out).expect("the output directory");
    std::fs::write(format!("{out}/native-diagnostics.md"), md).expect("writing the table");
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
