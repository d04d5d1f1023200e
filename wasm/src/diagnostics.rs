//! The core's diagnostics exported to JS (js/src/diagnostics.ts): the
//! snapshot of queues, threads and holds, deadlock detection, lock-order
//! checking with the JS stack of each acquisition, thread names and waiter
//! counts. Reports cross as JSON text (addresses as numbers, times in
//! milliseconds): they are read at a person's pace, never on a fast path.
//!
//! A refused acquisition (deadlock detection: waiting would close a cycle)
//! returns `acquired::DEADLOCK` from its export, holding nothing new and
//! queueing nothing; the cycle is kept here for [`diag_last_deadlock`], per
//! thread, until the next refusal.

use crate::acquired;
use core::cell::RefCell;
use core::fmt::Write;
use core::mem::ManuallyDrop;
use parklot::deadlock::{self, Cycle, DeadlockError};
use parklot::diagnostics;
use parklot::lock_order::{self, LockOrderViolation};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The global `Error` constructor, for the stack of the JS code that called in.
    type Error;
    #[wasm_bindgen(constructor)]
    fn new() -> Error;
    #[wasm_bindgen(method, getter)]
    fn stack(this: &Error) -> Option<String>;
    /// V8's and JavaScriptCore's limit on a stack's frames (undefined
    /// elsewhere).
    #[wasm_bindgen(static_method_of = Error, getter = stackTraceLimit)]
    fn stack_trace_limit() -> JsValue;
    #[wasm_bindgen(static_method_of = Error, setter = stackTraceLimit)]
    fn set_stack_trace_limit(limit: &JsValue);
}

/// Frames a site's stack may have: the module's own frames between the
/// export and the capture (a dozen, left out of the site) count against
/// an engine's limit (V8's is 10), so it is raised while the site is taken.
const SITE_FRAMES: f64 = 64.0;

std::thread_local! {
    /// The deadlock this thread's last refused acquisition would have closed.
    /// Without a destructor: std never runs one in wasm, and registering it
    /// would allocate from std's dlmalloc, behind a global lock that a
    /// worker terminated meanwhile would leave held.
    static LAST: ManuallyDrop<RefCell<Option<DeadlockError>>> =
        const { ManuallyDrop::new(RefCell::new(None)) };
}

/// Where the calling thread is, for lock-order reports: the JS stack that
/// called into the module. The core asks only when it records a new pair
/// or an inversion, so acquisitions pay nothing for it.
fn js_site() -> Option<String> {
    let limit = Error::stack_trace_limit();
    let raise = limit.as_f64().is_some_and(|l| l < SITE_FRAMES);
    if raise {
        Error::set_stack_trace_limit(&JsValue::from_f64(SITE_FRAMES));
    }
    let stack = Error::new().stack();
    if raise {
        Error::set_stack_trace_limit(&limit);
    }
    stack.map(|s| js_frames(&s))
}

/// The JS frames of a stack captured from inside the module: without its
/// first line ("Error"), the glue's import that made it and the module's
/// own frames, so that it starts at the export's JS caller.
fn js_frames(stack: &str) -> String {
    let mut out = String::new();
    for line in stack.lines().skip(1) {
        // The import that made the Error (`__wbg_new_…`) and the module's frames.
        if ["__wbg_", "wasm://", "wasm-function["]
            .iter()
            .any(|frame| has(line, frame))
        {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    out
}

/// Whether `line` contains `part` (not empty): a plain byte search, as
/// `str::contains` would find, without its Two-Way searcher (2.4 KB of the module).
fn has(line: &str, part: &str) -> bool {
    line.as_bytes()
        .windows(part.len())
        .any(|w| w == part.as_bytes())
}

/// An acquisition export's code for `error`, kept for [`diag_last_deadlock`].
pub(crate) fn refused(error: DeadlockError) -> u32 {
    LAST.with(|l| *l.borrow_mut() = Some(error));
    acquired::DEADLOCK
}

/// After an acquisition step that did not take (nor, for an async step,
/// queue): `acquired::DEADLOCK` if deadlock detection refused it, else
/// `acquired::NO`. Looks only while diagnostics are on.
pub(crate) fn refused_or_no() -> u32 {
    if !diagnostics::is_tracking() {
        return acquired::NO;
    }
    deadlock::take_deadlock().map_or(acquired::NO, refused)
}

/// Forgets a refusal the core may still keep from an earlier step, before a
/// step whose `false` may mean "still queued".
pub(crate) fn forget_refusal() {
    if diagnostics::is_tracking() {
        let _ = deadlock::take_deadlock();
    }
}

/// Switches deadlock detection on or off for every thread of the memory.
#[wasm_bindgen]
pub fn diag_set_detection(on: bool) {
    deadlock::set_enabled(on);
}

/// Switches hold tracking (who holds each tracked lock, in the snapshot)
/// on or off for every thread of the memory.
#[wasm_bindgen]
pub fn diag_set_tracking(on: bool) {
    diagnostics::set_tracking(on);
}

/// Switches lock-order checking on or off for every thread of the memory;
/// switching it on forgets the pairs and inversions seen before.
#[wasm_bindgen]
pub fn diag_set_lock_order(on: bool) {
    if on && !lock_order::is_enabled() {
        lock_order::reset();
    }
    lock_order::set_site_provider(on.then_some(js_site as fn() -> Option<String>));
    lock_order::set_enabled(on);
}

/// Names the calling thread for the snapshot and the reports.
#[wasm_bindgen]
pub fn diag_set_thread_name(name: &str) {
    diagnostics::set_thread_name(name);
}

/// The calling thread's id in the snapshot and the reports.
#[wasm_bindgen]
pub fn diag_thread_id() -> f64 {
    diagnostics::thread_id() as f64
}

/// How many waiters are queued on `addr` now.
#[wasm_bindgen]
pub fn diag_waiter_count(addr: u32) -> u32 {
    diagnostics::waiter_count(addr as usize) as u32
}

/// Whole microseconds from the runtime clock's nanoseconds. Integers: the
/// JS side divides (formatting floats here would cost the module 16 KB).
fn us(ns: u64) -> u64 {
    ns / 1000
}

/// `b - a` nanoseconds, in whole microseconds (negative if `b` is earlier).
fn us_between(a: u64, b: u64) -> i64 {
    if b >= a {
        ((b - a) / 1000) as i64
    } else {
        -(((a - b) / 1000) as i64)
    }
}

/// The kinds table's word on `addr` (js/src/kinds.ts `Kind`) and the start
/// of what holds it, or `(-1, 0)` if it knows nothing there.
fn made_at(addr: usize) -> (i64, u32) {
    let d = crate::kinds::kind_describe(addr as u32);
    if d[0] == 0 {
        (-1, 0)
    } else {
        (i64::from(d[1]), d[2])
    }
}

/// A snapshot of the runtime as JSON: `{ now, me, tracking, detecting,
/// ordering, waiters: [{ a, k, t, b, waited, left, made, start }], threads:
/// [{ id, name, reaped }], holds: [{ a, k, t, made, start }] }`: `now` in
/// the clock's microseconds, `waited` and `left` (null: no timeout) in µs,
/// `made`/`start` the kinds table's kind (-1: unknown) and object start.
#[wasm_bindgen]
pub fn diag_snapshot() -> String {
    let s = diagnostics::snapshot();
    let mut out = String::with_capacity(256 + 96 * (s.waiters.len() + s.holds.len()));
    let _ = write!(
        out,
        "{{\"now\":{},\"me\":{},\"tracking\":{},\"detecting\":{},\"ordering\":{},\"waiters\":[",
        us(s.now_ns),
        diagnostics::thread_id(),
        s.tracking,
        s.detecting,
        lock_order::is_enabled()
    );
    let mut last = (usize::MAX, (-1, 0));
    for (i, w) in s.waiters.iter().enumerate() {
        // Grouped by address: one look in the kinds table per queue.
        if last.0 != w.address {
            last = (w.address, made_at(w.address));
        }
        let (made, start) = last.1;
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"a\":{},\"k\":\"{}\",\"t\":{},\"b\":{},\"waited\":{},\"left\":",
            w.address,
            w.kind.name(),
            w.thread,
            w.blocking,
            if w.since_ns == 0 {
                0
            } else {
                us_between(w.since_ns, s.now_ns).max(0)
            }
        );
        match w.deadline_ns {
            Some(d) => {
                let _ = write!(out, "{}", us_between(s.now_ns, d));
            }
            None => out.push_str("null"),
        }
        let _ = write!(out, ",\"made\":{made},\"start\":{start}}}");
    }
    out.push_str("],\"threads\":[");
    for (i, t) in s.threads.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"id\":{},\"name\":", t.id);
        push_opt_str(&mut out, t.name.as_deref());
        let _ = write!(out, ",\"reaped\":{}}}", t.reaped);
    }
    out.push_str("],\"holds\":[");
    for (i, h) in s.holds.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let (made, start) = made_at(h.address);
        let _ = write!(
            out,
            "{{\"a\":{},\"k\":\"{}\",\"t\":{},\"made\":{made},\"start\":{start}}}",
            h.address,
            h.kind.name(),
            h.thread
        );
    }
    out.push_str("]}");
    out
}

/// The cycle the calling thread's last refused acquisition would have
/// closed, as JSON (see [`push_cycle`]), or an empty string if none.
#[wasm_bindgen]
pub fn diag_last_deadlock() -> String {
    LAST.with(|l| match &*l.borrow() {
        Some(e) => {
            let mut out = String::new();
            push_cycle(&mut out, &e.cycle);
            out
        }
        None => String::new(),
    })
}

/// Every cycle of waiting threads now (hold tracking or detection must be
/// on), as a JSON array of cycles.
#[wasm_bindgen]
pub fn diag_check_deadlock() -> String {
    json_array(&deadlock::check_deadlock(), push_cycle)
}

/// The lock-order inversions seen so far, first first, as a JSON array of
/// `{ first, second, thread, threadName, stack, otherThread,
/// otherThreadName, otherStack }`.
#[wasm_bindgen]
pub fn diag_lock_order_violations() -> String {
    json_array(&lock_order::violations(), push_violation)
}

/// `items` as a JSON array, each written by `push`.
fn json_array<T>(items: &[T], push: fn(&mut String, &T)) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push(&mut out, item);
    }
    out.push(']');
    out
}

/// `{ steps: [{ t, n, a, k, h, made }] }`: each step's thread, its
/// name, the lock it waits for, that lock's kind, its holder, and the kinds
/// table's kind of the lock.
fn push_cycle(out: &mut String, cycle: &Cycle) {
    out.push_str("{\"steps\":[");
    for (i, s) in cycle.steps.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"t\":{},\"n\":", s.thread);
        push_opt_str(out, s.thread_name.as_deref());
        let _ = write!(
            out,
            ",\"a\":{},\"k\":\"{}\",\"h\":{},\"made\":{}}}",
            s.address,
            s.kind.name(),
            s.holder,
            made_at(s.address).0
        );
    }
    out.push_str("]}");
}

fn push_violation(out: &mut String, v: &LockOrderViolation) {
    let _ = write!(
        out,
        "{{\"first\":{},\"second\":{},\"thread\":{},\"threadName\":",
        v.first, v.second, v.thread
    );
    push_opt_str(out, v.thread_name.as_deref());
    out.push_str(",\"stack\":");
    push_opt_str(out, v.stack.as_deref());
    let _ = write!(
        out,
        ",\"otherThread\":{},\"otherThreadName\":",
        v.other_thread
    );
    push_opt_str(out, v.other_thread_name.as_deref());
    out.push_str(",\"otherStack\":");
    push_opt_str(out, v.other_stack.as_deref());
    out.push('}');
}

fn push_opt_str(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

/// `s` as a JSON string.
fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
