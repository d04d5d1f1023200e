//! The wait-for graph: which thread holds each tracked primitive, which
//! thread waits for which, the names threads were given, and the order in
//! which each thread took its locks. One process-wide table behind one lock
//! (a section of its own: a worker that dies holding it poisons the
//! runtime like one dying in a queue), touched only while diagnostics are on.
//!
//! A cycle is looked for when a waiter is about to queue, under the same
//! lock that records its edge, so of the threads that close a cycle
//! together exactly the last to record its edge finds it (each records its
//! holds before it waits, and the others' edges are all in by then).

// The thread-locals are loom's under loom, whose macro takes no `const`
// block.
#![allow(clippy::missing_const_for_thread_local)]

use super::{detecting, thread_id, Hold, Kind, ThreadInfo};
use crate::critical::{SectionLock, DIAGNOSTICS};
use crate::sync::thread_local;
use crate::sys::{no_destructor, NoDestructor};
use core::cell::{RefCell, UnsafeCell};
use core::fmt;

/// One waiting edge: `thread` waits for `resource` (with `record`: 0 for a
/// blocked thread's one wait, else the async record's address).
struct Wait {
    thread: u64,
    record: usize,
    resource: usize,
    kind: Kind,
}

/// A map kept as a list: small in code (std's hash maps would add several
/// KB to the wasm module for a debugging mode) and quick for the few
/// entries a graph holds (locks held now, threads, pairs of locks).
struct ListMap<K, V>(Vec<(K, V)>);

impl<K: PartialEq, V> Default for ListMap<K, V> {
    fn default() -> Self {
        ListMap(Vec::new())
    }
}

impl<K: PartialEq, V> ListMap<K, V> {
    fn get(&self, key: &K) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }
    fn insert(&mut self, key: K, value: V) {
        match self.get_mut(&key) {
            Some(v) => *v = value,
            None => self.0.push((key, value)),
        }
    }
    fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.swap_remove(i).1)
    }
    fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let i = match self.0.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.0.push((key, V::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
    fn clear(&mut self) {
        self.0.clear();
    }
}

#[derive(Default)]
struct Graph {
    /// resource → (holder, kind).
    holders: ListMap<usize, (u64, Kind)>,
    waits: Vec<Wait>,
    threads: Vec<ThreadInfo>,
    /// Per thread, the tracked locks it holds in the order it took them.
    taken: ListMap<u64, Vec<usize>>,
    /// (a, b) → the first thread seen taking b while holding a.
    order: ListMap<(usize, usize), u64>,
    /// (a, b) → where the first thread took b holding a, if known.
    sites: ListMap<(usize, usize), Option<String>>,
    violations: Vec<LockOrderViolation>,
}

impl Graph {
    /// The thread `id`'s entry, made if new; the list stays in id order.
    fn thread(&mut self, id: u64) -> &mut ThreadInfo {
        let i = self.threads.partition_point(|t| t.id < id);
        if self.threads.get(i).is_none_or(|t| t.id != id) {
            self.threads.insert(
                i,
                ThreadInfo {
                    id,
                    name: None,
                    reaped: false,
                },
            );
        }
        &mut self.threads[i]
    }

    fn name(&self, id: u64) -> Option<String> {
        self.threads
            .iter()
            .find(|t| t.id == id)
            .and_then(|t| t.name.clone())
    }

    /// The cycle `me`'s wait for `resource` would close, if any: depth
    /// first over the holders and what they wait for.
    fn cycle_from(&self, me: u64, resource: usize, kind: Kind) -> Option<Vec<CycleStep>> {
        let mut path = Vec::new();
        let mut seen = Vec::new();
        self.search(me, me, resource, kind, &mut path, &mut seen)
            .then_some(path)
    }

    fn search(
        &self,
        target: u64,
        thread: u64,
        resource: usize,
        kind: Kind,
        path: &mut Vec<CycleStep>,
        seen: &mut Vec<u64>,
    ) -> bool {
        let Some(&(holder, held_as)) = self.holders.get(&resource) else {
            return false;
        };
        path.push(CycleStep {
            thread,
            thread_name: self.name(thread),
            address: resource,
            kind: if kind == Kind::Unknown { held_as } else { kind },
            holder,
        });
        if holder == target {
            return true;
        }
        if !seen.contains(&holder) {
            seen.push(holder);
            for w in self.waits.iter().filter(|w| w.thread == holder) {
                if self.search(target, holder, w.resource, w.kind, path, seen) {
                    return true;
                }
            }
        }
        path.pop();
        false
    }

    /// Lock order: `me`, holding what `taken` says, takes (or waits for)
    /// `resource`. Records the pairs, and reports a pair seen the other way.
    fn check_order(&mut self, me: u64, resource: usize) {
        let held = self.taken.get(&me).cloned().unwrap_or_default();
        for earlier in held {
            if earlier == resource {
                continue;
            }
            if let Some(&other) = self.order.get(&(resource, earlier)) {
                let reported = self.violations.iter().any(|v| {
                    (v.first, v.second) == (earlier, resource)
                        || (v.first, v.second) == (resource, earlier)
                });
                if !reported {
                    let stack = site();
                    self.violations.push(LockOrderViolation {
                        first: earlier,
                        second: resource,
                        thread: me,
                        thread_name: self.name(me),
                        stack,
                        other_thread: other,
                        other_thread_name: self.name(other),
                        other_stack: self.sites.get(&(resource, earlier)).cloned().flatten(),
                    });
                }
            }
            if !self.order.contains_key(&(earlier, resource)) {
                self.order.insert((earlier, resource), me);
                self.sites.insert((earlier, resource), site());
            }
        }
    }
}

// The two cells that own heap memory have no destructor in wasm (`NoDestructor`).
thread_local! {
    /// Where the calling thread is, as its embedder said it
    /// ([`crate::lock_order::set_site`]): a JS stack.
    static SITE: NoDestructor<RefCell<Option<String>>> = no_destructor(RefCell::new(None));
    /// The deadlock this thread's last acquisition failed with.
    static LAST: NoDestructor<RefCell<Option<DeadlockError>>> = no_destructor(RefCell::new(None));
    /// Whether this thread's waits may be refused now ([`unrefusable`]).
    static REFUSABLE: core::cell::Cell<bool> = core::cell::Cell::new(true);
}

/// Runs `f` with this thread's waits recorded but never refused: for an
/// acquisition that has no way to report a refusal (a condition wait's
/// re-acquisition of its lock, which C callers cannot see fail).
pub(crate) fn unrefusable<T>(f: impl FnOnce() -> T) -> T {
    let was = REFUSABLE.with(|r| r.replace(false));
    let out = f();
    REFUSABLE.with(|r| r.set(was));
    out
}

/// The embedder's way to say where a thread is, asked only when a report or
/// a new pair is recorded ([`set_site_provider`]); null if none.
static PROVIDER: core::sync::atomic::AtomicPtr<()> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

pub(crate) fn set_site_provider(provider: Option<fn() -> Option<String>>) {
    let p = provider.map_or(core::ptr::null_mut(), |f| f as *mut ());
    PROVIDER.store(p, core::sync::atomic::Ordering::Release);
}

/// The calling thread's site: the one it set, else its embedder's
/// provider's, else a Rust backtrace when `RUST_BACKTRACE` asks for them.
fn site() -> Option<String> {
    if let Some(site) = SITE.with(|s| s.borrow().clone()) {
        return Some(site);
    }
    let p = PROVIDER.load(core::sync::atomic::Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: only `set_site_provider` stores here, and only a
        // `fn() -> Option<String>`.
        let provider: fn() -> Option<String> = unsafe { core::mem::transmute(p) };
        return provider();
    }
    rust_backtrace()
}

/// A Rust backtrace, when `RUST_BACKTRACE` asks for them.
#[cfg(not(target_family = "wasm"))]
fn rust_backtrace() -> Option<String> {
    let trace = std::backtrace::Backtrace::capture();
    (trace.status() == std::backtrace::BacktraceStatus::Captured).then(|| trace.to_string())
}

/// None in wasm: its backtraces have no symbols (and std's machinery for
/// them would more than double the module).
#[cfg(target_family = "wasm")]
fn rust_backtrace() -> Option<String> {
    None
}

pub(crate) fn set_site(site: Option<String>) {
    SITE.with(|s| *s.borrow_mut() = site);
}

/// The table and its lock.
struct Shared {
    lock: SectionLock<DIAGNOSTICS>,
    graph: UnsafeCell<Option<Graph>>,
}

// SAFETY: `graph` is touched only with `lock` held (`with_graph`).
unsafe impl Sync for Shared {}

#[cfg(not(loom))]
static SHARED: Shared = Shared {
    lock: SectionLock::new(),
    graph: UnsafeCell::new(None),
};
#[cfg(loom)]
loom::lazy_static! {
    static ref SHARED: Shared = Shared { lock: SectionLock::new(), graph: UnsafeCell::new(None) };
}

fn with_graph<T>(f: impl FnOnce(&mut Graph) -> T) -> T {
    let shared: &Shared = &SHARED;
    shared.lock.lock();
    struct Unlock<'a>(&'a Shared);
    impl Drop for Unlock<'_> {
        fn drop(&mut self) {
            // SAFETY: locked above, by this thread.
            unsafe { self.0.lock.unlock() };
        }
    }
    let _unlock = Unlock(shared);
    // SAFETY: the lock is held until `_unlock` drops, after `f`.
    let graph = unsafe { &mut *shared.graph.get() };
    f(graph.get_or_insert_with(Graph::default))
}

pub(super) fn name_thread(id: u64, name: &str) {
    with_graph(|g| g.thread(id).name = Some(name.to_owned()));
}

pub(super) fn thread_gone(id: u64, tracking: bool) {
    with_graph(|g| {
        if !tracking && !g.threads.iter().any(|t| t.id == id) {
            // Never named nor seen: nothing to show (and no entry per
            // short-lived worker while diagnostics are off).
            return;
        }
        g.thread(id).reaped = true;
        g.holders.0.retain(|&(_, (holder, _))| holder != id);
        g.waits.retain(|w| w.thread != id);
        g.taken.remove(&id);
    });
}

pub(super) fn forget_holds() {
    with_graph(|g| {
        g.holders.clear();
        g.waits.clear();
        g.taken.clear();
    });
}

pub(super) fn acquired(resource: usize, kind: Kind, ordering: bool) {
    let me = thread_id();
    with_graph(|g| {
        if ordering {
            g.check_order(me, resource);
        }
        g.holders.insert(resource, (me, kind));
        // An upgrade or a downgrade changes a hold's kind, not its place.
        let taken = g.taken.entry_or_default(me);
        if !taken.contains(&resource) {
            taken.push(resource);
        }
    });
}

pub(super) fn released(resource: usize) {
    with_graph(|g| {
        if let Some((holder, _)) = g.holders.remove(&resource) {
            if let Some(list) = g.taken.get_mut(&holder) {
                if let Some(i) = list.iter().rposition(|&r| r == resource) {
                    list.remove(i);
                }
            }
        }
    });
}

pub(super) fn threads_and_holds(seen: impl Iterator<Item = u64>) -> (Vec<ThreadInfo>, Vec<Hold>) {
    with_graph(|g| {
        for id in seen {
            g.thread(id);
        }
        let holders: Vec<(usize, u64, Kind)> =
            g.holders.0.iter().map(|&(a, (t, k))| (a, t, k)).collect();
        for &(_, t, _) in &holders {
            g.thread(t);
        }
        // In id order: `thread` keeps them so.
        let threads = g.threads.clone();
        // In no particular order (no sort: its code would be a few KB of
        // the wasm module).
        let holds: Vec<Hold> = holders
            .into_iter()
            .map(|(address, thread, kind)| Hold {
                address,
                kind,
                thread,
            })
            .collect();
        (threads, holds)
    })
}

/// Before a waiter queues for `resource`: records its edge, or, if the edge
/// would close a cycle and detection is on, records nothing and returns the
/// deadlock (also kept for [`take_deadlock`]). `record` is 0 for a blocked
/// thread, else the async record's address.
pub(crate) fn will_wait(resource: usize, kind: Kind, record: usize) -> Result<(), DeadlockError> {
    let me = thread_id();
    let found = with_graph(|g| {
        if super::ordering() {
            g.check_order(me, resource);
        }
        if detecting() && REFUSABLE.with(|r| r.get()) {
            if let Some(steps) = g.cycle_from(me, resource, kind) {
                return Some(DeadlockError {
                    cycle: Cycle { steps },
                });
            }
        }
        g.waits.push(Wait {
            thread: me,
            record,
            resource,
            kind,
        });
        None
    });
    match found {
        None => Ok(()),
        Some(error) => {
            LAST.with(|l| *l.borrow_mut() = Some(error.clone()));
            Err(error)
        }
    }
}

/// The wait [`will_wait`] recorded has ended (acquired, timed out,
/// cancelled).
pub(crate) fn wait_ended(record: usize) {
    let me = thread_id();
    with_graph(|g| {
        if let Some(i) = g
            .waits
            .iter()
            .position(|w| w.record == record && (record != 0 || w.thread == me))
        {
            g.waits.swap_remove(i);
        }
    });
}

/// Keeps `error` as the calling thread's last refusal, for a caller that
/// returned only a code (the C ABI's `parklot_last_deadlock` takes it).
// Its callers, the C ABI, are built neither under loom nor for wasm32-unknown-unknown.
#[cfg_attr(
    any(loom, all(target_family = "wasm", target_os = "unknown")),
    allow(dead_code)
)]
pub(crate) fn keep_deadlock(error: DeadlockError) {
    LAST.with(|l| *l.borrow_mut() = Some(error));
}

/// The deadlock the calling thread's last acquisition failed with, once.
pub fn take_deadlock() -> Option<DeadlockError> {
    LAST.with(|l| l.borrow_mut().take())
}

/// Every cycle of waiting threads in the graph now, without touching the
/// threads in them (parking_lot's `check_deadlock`, in shape): each cycle
/// once, starting from its lowest thread id. Needs tracking on
/// ([`super::set_tracking`] or detection): holds taken while it was off are
/// not known.
pub fn check_deadlock() -> Vec<Cycle> {
    with_graph(|g| {
        let mut cycles: Vec<Cycle> = Vec::new();
        for w in &g.waits {
            let me = w.thread;
            let Some(steps) = g.cycle_from(me, w.resource, w.kind) else {
                continue;
            };
            // Once per cycle: from its lowest thread, and not a ring of the
            // same threads already found (through another of its waits).
            let lowest = steps.iter().map(|s| s.thread).min();
            let same = |c: &Cycle| {
                c.steps.len() == steps.len()
                    && steps
                        .iter()
                        .all(|s| c.steps.iter().any(|t| t.thread == s.thread))
            };
            if lowest == Some(me) && !cycles.iter().any(same) {
                cycles.push(Cycle { steps });
            }
        }
        cycles
    })
}

/// The lock-order inversions seen so far, first first.
pub fn lock_order_violations() -> Vec<LockOrderViolation> {
    with_graph(|g| g.violations.clone())
}

pub(crate) fn forget_lock_order() {
    with_graph(|g| {
        g.order.clear();
        g.sites.clear();
        g.violations.clear();
    });
}

/// One edge of a cycle: `thread` waits for the primitive at `address`,
/// which `holder` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleStep {
    /// The waiting thread ([`super::thread_id`]).
    pub thread: u64,
    /// Its name, if it was given one.
    pub thread_name: Option<String>,
    /// What it waits for.
    pub address: usize,
    /// What kind of primitive that is.
    pub kind: Kind,
    /// Who holds it: the next step's thread (the first's, for the last).
    pub holder: u64,
}

/// Threads that wait for each other in a ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// From the thread that closed it (or the lowest id, for
    /// [`check_deadlock`]), around.
    pub steps: Vec<CycleStep>,
}

fn who(f: &mut fmt::Formatter<'_>, id: u64, name: &Option<String>) -> fmt::Result {
    match name {
        Some(n) => write!(f, "thread {id} ({n})"),
        None => write!(f, "thread {id}"),
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(", which ")?;
            }
            who(f, s.thread, &s.thread_name)?;
            write!(f, " waits for {} {:#x} held by ", s.kind.name(), s.address)?;
            let name = self
                .steps
                .iter()
                .find(|t| t.thread == s.holder)
                .and_then(|t| t.thread_name.clone());
            who(f, s.holder, &name)?;
        }
        Ok(())
    }
}

/// An acquisition refused because waiting would never end: its thread and
/// the others in the cycle wait for each other's locks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockError {
    /// The cycle the wait would have closed, starting with the refused
    /// thread's own wait.
    pub cycle: Cycle,
}

impl fmt::Display for DeadlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deadlock: {}", self.cycle)
    }
}

impl std::error::Error for DeadlockError {}

/// Two locks taken in both orders: `first` then `second` by `thread`,
/// `second` then `first` by `other_thread` earlier. Either order alone is
/// fine; both, run at once, can deadlock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockOrderViolation {
    /// The lock held.
    pub first: usize,
    /// The lock taken (or waited for) while holding `first`.
    pub second: usize,
    /// The thread that took them in this order, last.
    pub thread: u64,
    /// Its name.
    pub thread_name: Option<String>,
    /// Where it was (its embedder's stack, or a Rust backtrace), if known.
    pub stack: Option<String>,
    /// The thread that first took them the other way.
    pub other_thread: u64,
    /// Its name.
    pub other_thread_name: Option<String>,
    /// Where it was, if known.
    pub other_stack: Option<String>,
}

impl fmt::Display for LockOrderViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lock order inversion: ")?;
        who(f, self.thread, &self.thread_name)?;
        write!(f, " took {:#x} then {:#x}; ", self.first, self.second)?;
        who(f, self.other_thread, &self.other_thread_name)?;
        write!(f, " took {:#x} then {:#x}", self.second, self.first)
    }
}
