//! Presenting a run: the header and aligned table printed to stdout, and the
//! JSON file (hand-written, to keep dependencies few).

use crate::results::{Results, Summary};
use std::fmt::Write as _;

/// The lines above the table: what ran, on what, with which settings, and the
/// floor.
pub fn header(results: &Results, title: &str) -> String {
    let s = &results.settings;
    let threads: Vec<String> = s.threads.iter().map(usize::to_string).collect();
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ = writeln!(
        out,
        "machine:  {} cores (available_parallelism), {}-{}",
        results.cores,
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    let _ = writeln!(
        out,
        "settings: threads {} | {} ms per round | {} rounds, interleaved across locks | \
         critical section {} add+multiply + counter | parklot spin limit {}",
        threads.join(","),
        s.duration.as_millis(),
        s.rounds,
        s.work,
        s.spin_limit
    );
    let _ = writeln!(
        out,
        "floor:    uncontended AtomicU8 compare_exchange + store: {:.2} ns",
        results.floor_ns
    );
    out
}

/// The aligned table of summaries, one block per thread count, then a legend.
pub fn table(summaries: &[Summary], baseline: &str) -> String {
    let vs = format!("vs {}", baseline.rsplit("::").next().unwrap_or(baseline));
    let headers = [
        "threads",
        "lock",
        "acq/s median",
        "min-max",
        &vs,
        "thread min/s",
        "thread max/s",
        "fair",
        "worst",
    ];
    // Which columns are text (left-aligned); the rest are numbers.
    let left = [false, true, false, false, false, false, false, false, false];

    let mut rows: Vec<Option<Vec<String>>> = Vec::new();
    for (i, s) in summaries.iter().enumerate() {
        if i > 0 && summaries[i - 1].threads != s.threads {
            rows.push(None); // a blank line between thread counts
        }
        rows.push(Some(vec![
            s.threads.to_string(),
            s.lock.to_string(),
            si(s.median),
            format!("{}-{}", si(s.min), si(s.max)),
            s.vs_baseline
                .map_or("-".to_string(), |r| format!("{r:.2}x")),
            si(s.thread_min),
            si(s.thread_max),
            format!("{:.2}", s.fairness),
            format!("{:.2}", s.worst_fairness),
        ]));
    }

    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows.iter().flatten() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &[String]| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .zip(left)
            .map(|((c, &w), l)| {
                if l {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };

    let mut out = String::new();
    let header_cells: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let header_line = line(&header_cells);
    let _ = writeln!(out, "{header_line}");
    let _ = writeln!(out, "{}", "-".repeat(header_line.len()));
    for row in &rows {
        match row {
            Some(cells) => {
                let _ = writeln!(out, "{}", line(cells));
            }
            None => out.push('\n'),
        }
    }
    let _ = writeln!(
        out,
        "\nacq/s: lock acquisitions per second, all threads together; median and min-max over rounds.\n\
         {vs}: median over {baseline}'s median at the same thread count.\n\
         thread min/max: the slowest and fastest single thread's acquisitions per second (median over rounds).\n\
         fair: slowest / fastest thread (median over rounds; 1 = fair, 0 = starved); worst: its lowest round."
    );
    out
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

/// The whole run as JSON: machine, date, parameters, floor, every round and
/// the summaries.
pub fn json(results: &Results, summaries: &[Summary], baseline: &str) -> String {
    let s = &results.settings;
    let mut out = String::new();
    out.push_str("{\n");
    let _ = writeln!(out, "  \"benchmark\": \"contend\",");
    let _ = writeln!(
        out,
        "  \"machine\": {{\"cores\": {}, \"os\": {}, \"arch\": {}}},",
        results.cores,
        string(std::env::consts::OS),
        string(std::env::consts::ARCH)
    );
    let _ = writeln!(out, "  \"unix_time\": {},", results.unix_time);
    let threads: Vec<String> = s.threads.iter().map(usize::to_string).collect();
    let _ = writeln!(
        out,
        "  \"parameters\": {{\"threads\": [{}], \"ms\": {}, \"rounds\": {}, \"work\": {}, \"spin_limit\": {}, \"baseline\": {}}},",
        threads.join(", "),
        s.duration.as_millis(),
        s.rounds,
        s.work,
        s.spin_limit,
        string(baseline)
    );
    let _ = writeln!(
        out,
        "  \"floor\": {{\"cas_store_ns\": {}}},",
        number(results.floor_ns)
    );

    out.push_str("  \"rounds\": [\n");
    let rounds: Vec<String> = results
        .rounds
        .iter()
        .map(|r| {
            let per_thread: Vec<String> = r.per_thread.iter().map(u64::to_string).collect();
            format!(
                "    {{\"lock\": {}, \"threads\": {}, \"round\": {}, \"elapsed_ns\": {}, \"acquisitions\": {}, \
                 \"counter\": {}, \"acq_per_sec\": {}, \"fairness\": {}, \"per_thread\": [{}]}}",
                string(r.lock),
                r.threads,
                r.round,
                r.elapsed.as_nanos(),
                r.total(),
                r.counter,
                number(r.rate()),
                number(r.fairness()),
                per_thread.join(", ")
            )
        })
        .collect();
    out.push_str(&rounds.join(",\n"));
    out.push_str("\n  ],\n");

    out.push_str("  \"summary\": [\n");
    let rows: Vec<String> = summaries
        .iter()
        .map(|m| {
            format!(
                "    {{\"lock\": {}, \"threads\": {}, \"rounds\": {}, \"median\": {}, \"min\": {}, \"max\": {}, \
                 \"vs_baseline\": {}, \"thread_min\": {}, \"thread_max\": {}, \"fairness\": {}, \"worst_fairness\": {}}}",
                string(m.lock),
                m.threads,
                m.rounds,
                number(m.median),
                number(m.min),
                number(m.max),
                m.vs_baseline.map_or("null".to_string(), number),
                number(m.thread_min),
                number(m.thread_max),
                number(m.fairness),
                number(m.worst_fairness)
            )
        })
        .collect();
    out.push_str(&rows.join(",\n"));
    out.push_str("\n  ]\n}\n");
    out
}

/// A JSON string literal.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number (`null` for NaN and infinities, which JSON lacks).
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes() {
        assert_eq!(si(48_123_456.0), "48.1M");
        assert_eq!(si(912_300.0), "912k");
        assert_eq!(si(1_234.0), "1.23k");
        assert_eq!(si(37.2), "37");
        assert_eq!(si(2.5e9), "2.50G");
    }

    #[test]
    fn json_strings_and_numbers() {
        assert_eq!(string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(f64::NAN), "null");
    }
}
