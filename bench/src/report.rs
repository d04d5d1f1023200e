//! `native.md` (a header, the goals, one table per experiment) and the short
//! summary the binary prints.

use crate::locks::BASELINE;
use crate::stats::{Cell, Spread, Sweep};
use crate::suite::Run;
use crate::summary::{short, si, Summary};
use std::fmt::Write as _;

/// The whole markdown report.
pub fn markdown(run: &Run, summary: &Summary) -> String {
    let p = &run.params;
    let m = &run.machine;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "# parklot native suite{}\n",
        if p.quick { " (quick)" } else { "" }
    );
    let _ = writeln!(w, "- date: {}", run.date);
    let _ = writeln!(
        w,
        "- machine: {}, {} cores, {}-{}{}",
        m.cpu,
        m.cores,
        m.os,
        m.arch,
        m.rustc.as_ref().map_or(String::new(), |v| format!(", {v}"))
    );
    let _ = writeln!(
        w,
        "- rounds: {} per lock and point, {} ms each, interleaved across peers (A B C, A B C, ...); \
         every lock round checks its guarded counter, every queue round delivery exactly once",
        p.rounds,
        p.round_time.as_millis()
    );
    let _ = writeln!(
        w,
        "- cells: median over rounds, `x` its ratio to {BASELINE} (or to the first row) at the same point, \
         (min-max) the range over rounds; rates per second"
    );
    let _ = writeln!(
        w,
        "- floor: uncontended CAS + store {} ns; two-thread cache-line round trip {} ns",
        ns(summary.cas_store_ns),
        ns(summary.ping_pong_ns)
    );

    let _ = writeln!(w, "\n## Goals\n");
    let _ = writeln!(w, "| goal | verdict | measured |\n|---|---|---|");
    for g in summary.goals() {
        let _ = writeln!(w, "| {} | {} | {} |", g.goal, g.verdict(), g.detail);
    }

    let _ = writeln!(w, "\n## (f) Floor: uncontended lock + unlock, one thread\n");
    let _ = writeln!(
        w,
        "| lock | ns | x {} | x CAS + store |\n|---|---|---|---|",
        short(BASELINE)
    );
    let base = summary.uncontended(BASELINE);
    for (name, s) in &summary.uncontended_ns {
        let _ = writeln!(
            w,
            "| {name} | {} | {} | {:.2} |",
            ns(*s),
            base.map_or("-".to_string(), |b| format!("{:.2}", s.median / b)),
            s.median / summary.cas_store_ns.median
        );
    }

    let _ = writeln!(
        w,
        "\n## (a) Microcontention: acquisitions/s, critical section of 1 add+multiply\n"
    );
    sweep_tables(w, &summary.microcontention, "threads");

    let _ = writeln!(
        w,
        "\n## (b) Spin limit: BargingLock<N> (Lock's algorithm) at {} threads, acquisitions/s\n",
        p.sweep_threads
    );
    sweep_tables(w, &summary.spin_limit, "spin limit");

    let _ = writeln!(
        w,
        "\n## (c) Critical-section length at {} threads: acquisitions/s\n",
        p.sweep_threads
    );
    sweep_tables(w, &summary.critical_section, "iterations");

    let _ = writeln!(
        w,
        "\n## (d) Fairness: {} threads start while the lock is held, then run {} ms\n",
        p.fairness_threads,
        p.fairness_time.as_millis()
    );
    let _ = writeln!(
        w,
        "| lock | acq/s, all threads | least lucky / luckiest | worst round | \
         acquisitions per thread, luckiest first (median) |\n|---|---|---|---|---|"
    );
    let base = summary.fairness.first().map(|f| f.rate.median);
    for f in &summary.fairness {
        let ranked: Vec<String> = f.ranked.iter().map(|s| si(s.median)).collect();
        let _ = writeln!(
            w,
            "| {} | {} | {:.2} | {:.2} | {} |",
            f.lock,
            rate(f.rate, base.map(|b| f.rate.median / b)),
            f.balance,
            f.worst_balance,
            ranked.join(" ")
        );
    }

    for (notify, sweep) in &summary.condition {
        let _ = writeln!(
            w,
            "\n## (e) Condition, {}: items/s through a queue of {}\n",
            notify.name(),
            p.queue_capacity
        );
        sweep_tables(w, sweep, "producers = consumers");
    }
    out
}

/// A sweep as a table (series by row, points by column) and, for locks, a
/// second table of the least lucky and luckiest thread's rates.
fn sweep_tables(w: &mut String, sweep: &Sweep, x_label: &str) {
    let header = |w: &mut String, first: &str| {
        let xs: Vec<String> = sweep.xs.iter().map(|x| format!("{x_label} {x}")).collect();
        let _ = writeln!(w, "| {first} | {} |", xs.join(" | "));
        let _ = writeln!(w, "|---|{}", "---|".repeat(sweep.xs.len()));
    };
    let compare = sweep.series.len() > 1;
    header(w, "");
    for (s, series) in sweep.series.iter().enumerate() {
        let cells: Vec<String> = (0..sweep.xs.len())
            .map(|i| {
                let ratio = if compare && s > 0 {
                    sweep.ratio(s, i)
                } else {
                    None
                };
                series.cells[i].map_or("-".to_string(), |c| rate(c.rate, ratio))
            })
            .collect();
        let _ = writeln!(w, "| {} | {} |", series.name, cells.join(" | "));
    }
    if !sweep
        .series
        .iter()
        .any(|s| s.cells.iter().flatten().any(|c| c.threads.is_some()))
    {
        return;
    }
    let _ = writeln!(
        w,
        "\nLeast lucky / luckiest thread, acquisitions/s (median over rounds):\n"
    );
    header(w, "");
    for series in &sweep.series {
        let cells: Vec<String> = series
            .cells
            .iter()
            .map(|c| match c {
                Some(Cell {
                    threads: Some((min, max)),
                    ..
                }) => format!("{} / {}", si(*min), si(*max)),
                _ => "-".to_string(),
            })
            .collect();
        let _ = writeln!(w, "| {} | {} |", series.name, cells.join(" | "));
    }
}

/// A rate cell: `12.3M x0.85 (11.9M-12.8M)`.
fn rate(s: Spread, ratio: Option<f64>) -> String {
    let ratio = ratio.map_or(String::new(), |r| format!(" x{r:.2}"));
    format!("{}{ratio} ({}-{})", si(s.median), si(s.min), si(s.max))
}

/// A time cell in nanoseconds: `4.12 (4.05-4.30)`.
fn ns(s: Spread) -> String {
    format!("{:.2} ({:.2}-{:.2})", s.median, s.min, s.max)
}

/// The few lines the binary prints to stdout.
pub fn brief(run: &Run, summary: &Summary, seconds: f64) -> String {
    let p = &run.params;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "parklot native suite{}: {} locks, {} rounds per point, {seconds:.0} s on {} ({} cores)",
        if p.quick { " (quick)" } else { "" },
        p.locks.len(),
        p.rounds,
        run.machine.cpu,
        run.machine.cores
    );
    let _ = writeln!(
        out,
        "floor: CAS+store {:.2} ns, cache-line round trip {:.0} ns; every counter and delivery check passed",
        summary.cas_store_ns.median, summary.ping_pong_ns.median
    );
    for g in summary.goals() {
        let _ = writeln!(out, "[{}] {}: {}", g.verdict(), g.goal, g.detail);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{run, tests::tiny};

    #[test]
    fn the_report_has_a_table_per_experiment() {
        let run = run(&tiny(), &mut |_| {}).unwrap();
        let summary = Summary::of(&run);
        let md = markdown(&run, &summary);
        for heading in [
            "## Goals",
            "## (f) Floor",
            "## (a) Microcontention",
            "## (b) Spin limit",
            "## (c) Critical-section length",
            "## (d) Fairness",
            "## (e) Condition, notify_one",
            "## (e) Condition, notify_all",
        ] {
            assert!(md.contains(heading), "no {heading} in\n{md}");
        }
        assert!(md.contains("| threads 1 | threads 3 |"), "{md}");
        assert!(md.contains("| std::sync::Mutex | "), "{md}");
        assert!(md.contains("Least lucky / luckiest thread"), "{md}");
        let brief = brief(&run, &summary, 1.0);
        assert!(
            brief.contains("every counter and delivery check passed"),
            "{brief}"
        );
    }

    #[test]
    fn rate_cells() {
        let s = Spread {
            median: 12_300_000.0,
            min: 11_900_000.0,
            max: 12_800_000.0,
        };
        assert_eq!(rate(s, Some(0.854)), "12.3M x0.85 (11.9M-12.8M)");
        assert_eq!(rate(s, None), "12.3M (11.9M-12.8M)");
    }
}
