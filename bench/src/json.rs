//! `native.json`: the machine, the parameters, every round's raw data, and one
//! chart spec per seed figure for the project's SVG renderer.
//!
//! A chart spec is exactly
//! `{ id, title, kind: "line" | "bar", x: { label, log }, y: { label, log },
//! series: [ { name, points: [ { x, y, min, max } ] } ] }`, with `y` the
//! median over rounds and `min`/`max` its range; a bar chart's `x` may be a
//! category (a string).

use crate::condition::CondRound;
use crate::locks::spin_limit_of;
use crate::locks::BASELINE;
use crate::runner::Round;
use crate::stats::{Spread, Sweep};
use crate::suite::Run;
use crate::summary::{Summary, SPIN_SERIES};
use serde_json::{json, Value};

/// The whole document.
pub fn document(run: &Run, summary: &Summary) -> Value {
    let p = &run.params;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    json!({
        "suite": "native",
        "date": run.date,
        "quick": p.quick,
        "machine": run.machine.to_json(),
        "params": {
            "rounds": p.rounds,
            "round_ms": ms(p.round_time),
            "baseline": BASELINE,
            "locks": p.locks.iter().map(|peer| peer.name).collect::<Vec<_>>(),
            "microcontention": { "threads": p.micro_threads, "work": 1 },
            "spin_limit": { "threads": p.sweep_threads, "limits": p.spin_limits, "work": 1 },
            "critical_section": { "threads": p.sweep_threads, "work": p.cs_lengths },
            "fairness": {
                "threads": p.fairness_threads,
                "run_ms": ms(p.fairness_time),
                "settle_ms": ms(p.fairness_settle),
                "work": 1,
            },
            "condition": { "pairs": p.queue_pairs, "capacity": p.queue_capacity },
            "floor": { "pairs": p.floor_pairs, "ping_pong_ms": ms(p.ping_pong_time) },
        },
        "experiments": {
            "floor": {
                "cas_store_ns": run.floor.cas_store_ns,
                "ping_pong_round_trip_ns": run.floor.ping_pong_ns,
                "uncontended_ns": run
                    .floor
                    .uncontended_ns
                    .iter()
                    .map(|(name, values)| json!({ "lock": name, "ns": values }))
                    .collect::<Vec<_>>(),
            },
            "microcontention": { "rounds": run.microcontention.iter().map(round).collect::<Vec<_>>() },
            "spin_limit": { "rounds": run.spin_limit.iter().map(round).collect::<Vec<_>>() },
            "critical_section": { "rounds": run.critical_section.iter().map(round).collect::<Vec<_>>() },
            "fairness": { "rounds": run.fairness.iter().map(round).collect::<Vec<_>>() },
            "condition": { "rounds": run.condition.iter().map(queue_round).collect::<Vec<_>>() },
        },
        "charts": charts(run, summary),
    })
}

/// `value` as text for people as well as programs: an object or array that
/// holds only scalars and arrays of scalars goes on one line (a round, a chart
/// point, a list of per-thread counts); anything deeper, one entry a line.
pub fn to_text(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    let flat = |v: &Value| match v {
        Value::Array(items) => items.iter().all(|i| !i.is_array() && !i.is_object()),
        Value::Object(_) => false,
        _ => true,
    };
    let inline = match value {
        Value::Array(items) => items.iter().all(flat),
        Value::Object(map) => map.values().all(flat),
        _ => true,
    };
    if inline {
        // serde_json's compact form, with a space after each comma and colon.
        let text = serde_json::to_string(value).expect("a JSON value always serializes");
        out.push_str(&spaced(&text));
        return;
    }
    let (open, close) = if value.is_array() {
        ('[', ']')
    } else {
        ('{', '}')
    };
    let pad = "  ".repeat(depth + 1);
    out.push(open);
    let entries: Vec<(Option<&String>, &Value)> = match value {
        Value::Array(items) => items.iter().map(|v| (None, v)).collect(),
        Value::Object(map) => map.iter().map(|(k, v)| (Some(k), v)).collect(),
        _ => unreachable!("scalars are inline"),
    };
    for (i, (key, item)) in entries.into_iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&pad);
        if let Some(key) = key {
            out.push_str(&Value::String(key.clone()).to_string());
            out.push_str(": ");
        }
        write_value(out, item, depth + 1);
    }
    out.push('\n');
    out.push_str(&"  ".repeat(depth));
    out.push(close);
}

/// Compact JSON with a space after every `,` and `:` outside strings.
fn spaced(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 5 / 4);
    let (mut in_string, mut escaped) = (false, false);
    for c in compact.chars() {
        out.push(c);
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ',' | ':' if !in_string => out.push(' '),
            _ => {}
        }
    }
    out
}

/// One lock round, raw.
fn round(r: &Round) -> Value {
    let mut value = json!({
        "lock": r.lock,
        "threads": r.threads,
        "work": r.work,
        "round": r.round,
        "elapsed_ns": r.elapsed.as_nanos() as u64,
        "acquisitions": r.total(),
        "counter": r.counter,
        "acq_per_sec": r.rate(),
        "per_thread": r.per_thread,
    });
    if let Some(limit) = spin_limit_of(r.lock) {
        value["spin_limit"] = json!(limit);
    }
    value
}

/// One queue round, raw.
fn queue_round(r: &CondRound) -> Value {
    json!({
        "condition": r.monitor,
        "notify": r.config.notify.name(),
        "producers": r.config.producers,
        "consumers": r.config.consumers,
        "capacity": r.config.capacity,
        "round": r.config.round,
        "elapsed_ns": r.elapsed.as_nanos() as u64,
        "produced": r.produced,
        "consumed": r.consumed,
        "items_per_sec": r.rate(),
        "lost": r.lost,
        "duplicated": r.duplicated,
        "unknown": r.unknown,
    })
}

/// An axis of a chart spec.
fn axis(label: &str, log: bool) -> Value {
    json!({ "label": label, "log": log })
}

/// A point of a chart spec: the median and its range.
fn point(x: Value, spread: Spread) -> Value {
    json!({ "x": x, "y": spread.median, "min": spread.min, "max": spread.max })
}

/// A chart spec.
fn chart(id: &str, title: &str, kind: &str, x: Value, y: Value, series: Vec<Value>) -> Value {
    json!({ "id": id, "title": title, "kind": kind, "x": x, "y": y, "series": series })
}

/// A sweep's series, as chart series named by `name`.
fn sweep_series(sweep: &Sweep, name: impl Fn(&str) -> String) -> Vec<Value> {
    sweep
        .series
        .iter()
        .map(|s| {
            let points: Vec<Value> = sweep
                .xs
                .iter()
                .zip(&s.cells)
                .filter_map(|(&x, cell)| Some(point(json!(x), cell.as_ref()?.rate)))
                .collect();
            json!({ "name": name(&s.name), "points": points })
        })
        .collect()
}

/// One chart per seed figure, plus the floor.
fn charts(run: &Run, summary: &Summary) -> Vec<Value> {
    let p = &run.params;
    let same = |name: &str| name.to_string();
    let acq = "acquisitions/s";
    let fairness_ms = p.fairness_time.as_millis();
    let ranks = summary
        .fairness
        .iter()
        .map(|f| f.ranked.len())
        .max()
        .unwrap_or(0);
    let rank_name = |i: usize| match i {
        0 => "thread #1 (luckiest)".to_string(),
        i if i + 1 == ranks => format!("thread #{} (least lucky)", i + 1),
        i => format!("thread #{}", i + 1),
    };
    vec![
        chart(
            "microcontention",
            "Microcontention: one lock, critical section of 1 add+multiply",
            "line",
            axis("threads", false),
            axis(acq, true),
            sweep_series(&summary.microcontention, same),
        ),
        chart(
            "spin_limit",
            &format!("Spin limit of BargingLock at {} threads", p.sweep_threads),
            "line",
            axis("spin limit (yields before parking)", false),
            axis(acq, false),
            sweep_series(&summary.spin_limit, |_| {
                format!("{SPIN_SERIES}, {} threads", p.sweep_threads)
            }),
        ),
        chart(
            "critical_section",
            &format!("Critical-section length at {} threads", p.sweep_threads),
            "line",
            axis("add+multiply iterations per critical section", true),
            axis(acq, true),
            sweep_series(&summary.critical_section, same),
        ),
        chart(
            "fairness",
            &format!(
                "Fairness: {} threads released together, acquisitions in {fairness_ms} ms, \
                 sorted luckiest first",
                p.fairness_threads
            ),
            "bar",
            axis("lock", false),
            axis(
                &format!("acquisitions per thread in {fairness_ms} ms"),
                true,
            ),
            (0..ranks)
                .map(|i| {
                    let points: Vec<Value> = summary
                        .fairness
                        .iter()
                        .filter_map(|f| Some(point(json!(f.lock), *f.ranked.get(i)?)))
                        .collect();
                    json!({ "name": rank_name(i), "points": points })
                })
                .collect(),
        ),
        chart(
            "condition",
            &format!(
                "Condition: producers and consumers through a queue of {}",
                p.queue_capacity
            ),
            "line",
            axis("producers (= consumers)", false),
            axis("items/s", true),
            summary
                .condition
                .iter()
                .flat_map(|(notify, sweep)| {
                    sweep_series(sweep, |name| format!("{name}, {}", notify.name()))
                })
                .collect(),
        ),
        chart(
            "uncontended",
            "Uncontended lock + unlock (floor: one CAS + one store)",
            "bar",
            axis("lock", false),
            axis("ns per lock + unlock", false),
            vec![
                json!({
                    "name": "lock + unlock",
                    "points": summary
                        .uncontended_ns
                        .iter()
                        .map(|(name, s)| point(json!(name), *s))
                        .collect::<Vec<_>>(),
                }),
                json!({
                    "name": "CAS + store (floor)",
                    "points": [point(json!("CAS + store"), summary.cas_store_ns)],
                }),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{run, tests::tiny};

    /// An object's keys, in order.
    fn keys(value: &Value) -> Vec<&str> {
        value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// Every chart matches the spec the renderer reads, exactly.
    fn check_chart(chart: &Value) {
        assert_eq!(
            keys(chart),
            ["id", "title", "kind", "x", "y", "series"],
            "{chart}"
        );
        assert!(["line", "bar"].contains(&chart["kind"].as_str().unwrap()));
        for axis in [&chart["x"], &chart["y"]] {
            assert!(
                axis["label"].is_string() && axis["log"].is_boolean(),
                "{axis}"
            );
        }
        let series = chart["series"].as_array().unwrap();
        assert!(!series.is_empty(), "{} has no series", chart["id"]);
        for s in series {
            assert!(s["name"].is_string());
            let points = s["points"].as_array().unwrap();
            assert!(
                !points.is_empty(),
                "{} / {} is empty",
                chart["id"],
                s["name"]
            );
            for pt in points {
                assert_eq!(keys(pt), ["x", "y", "min", "max"]);
                let x_ok = pt["x"].is_number() || (chart["kind"] == "bar" && pt["x"].is_string());
                assert!(x_ok, "{pt}");
                let (y, min, max) = (pt["y"].as_f64(), pt["min"].as_f64(), pt["max"].as_f64());
                let (y, min, max) = (y.unwrap(), min.unwrap(), max.unwrap());
                assert!(0.0 <= min && min <= y && y <= max, "{pt}");
            }
        }
    }

    #[test]
    fn text_is_indented_with_flat_parts_on_one_line() {
        let value = json!({
            "a": [1, 2],
            "b": { "c": "x, \"y\": z", "d": [true] },
            "e": [{ "f": 1 }, { "f": 2 }],
        });
        let text = to_text(&value);
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2],\n  \"b\": {\"c\": \"x, \\\"y\\\": z\", \"d\": [true]},\n  \"e\": [\n    {\"f\": 1},\n    {\"f\": 2}\n  ]\n}\n"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    fn a_tiny_suite_writes_the_documented_shape() {
        let run = run(&tiny(), &mut |_| {}).unwrap();
        let doc = document(&run, &Summary::of(&run));
        // Written out and read back, as the renderer will.
        // (Compared with serde_json's own text read back: parsing rounds the
        // last digit of some floats, the same way for both.)
        let plain: Value = serde_json::from_str(&doc.to_string()).unwrap();
        let doc: Value = serde_json::from_str(&to_text(&doc)).unwrap();
        assert!(doc == plain, "to_text changed the document");
        assert_eq!(
            keys(&doc),
            [
                "suite",
                "date",
                "quick",
                "machine",
                "params",
                "experiments",
                "charts"
            ]
        );
        assert_eq!(doc["suite"], "native");
        assert!(doc["date"].as_str().unwrap().ends_with('Z'));
        assert!(doc["machine"]["cores"].as_u64().unwrap() >= 1);
        let experiments = doc["experiments"].as_object().unwrap();
        for name in [
            "floor",
            "microcontention",
            "spin_limit",
            "critical_section",
            "fairness",
            "condition",
        ] {
            assert!(experiments.contains_key(name), "no {name}");
        }
        let rounds = doc["experiments"]["microcontention"]["rounds"]
            .as_array()
            .unwrap();
        assert_eq!(rounds.len(), run.microcontention.len());
        assert_eq!(rounds[0]["acquisitions"], rounds[0]["counter"]);
        assert_eq!(
            doc["experiments"]["spin_limit"]["rounds"][1]["spin_limit"],
            40
        );
        let charts = doc["charts"].as_array().unwrap();
        let ids: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [
                "microcontention",
                "spin_limit",
                "critical_section",
                "fairness",
                "condition",
                "uncontended"
            ]
        );
        charts.iter().for_each(check_chart);
        assert_eq!(charts[0]["series"][0]["name"], BASELINE);
        assert_eq!(
            charts[3]["series"].as_array().unwrap().len(),
            4,
            "one series per rank"
        );
        assert_eq!(
            charts[4]["series"].as_array().unwrap().len(),
            6,
            "3 conditions x 2 notifies"
        );
    }
}
