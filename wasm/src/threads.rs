//! The threads attached to the memory, as the other threads see them: what a
//! thread must leave behind when it is gone (its waits, the locks it holds
//! through the JS API, its stack and TLS block), so that a thread that learns
//! of its death (a Node `Worker`'s `'exit'`, a Web Lock the thread held for
//! its life) can reap it.
//!
//! What a gone thread held is released: a `Lock`, marked owner-died; a
//! reader-writer lock's write lock, marked owner-died too (`owner_died.rs`:
//! its next writer is told); its reads and upgradable read (with an upgrade
//! it was waiting for), silently: a reader changed nothing. A `Once` it was
//! running is poisoned. Semaphore permits are not tracked: they have no
//! owner (any thread may release what another acquired), so nobody can say
//! which permits a gone thread would have given back.
//!
//! Each attached thread has one [`Entry`] in the registry, made by
//! [`thread_register`] and removed by [`thread_unregister`] (its own
//! `close()`) or [`thread_reap`] (another thread, once it is gone). The
//! entry's lists are written only by its own thread; a reaper reads them only
//! after that thread is gone, and the death signal (a JS event that follows
//! the thread's end) orders the reaper after the thread's last write.

use crate::sections;
use core::cell::{Cell, UnsafeCell};
use parklot::critical;
use parklot::parking_lot::{self, AsyncWaiter, ThreadRecord};
use parklot::{Lock, Once, RawRwLock, WordLock};
use std::sync::atomic::{compiler_fence, AtomicI32, Ordering};
use wasm_bindgen::prelude::*;

/// One attached thread.
struct Entry {
    /// The tag the embedder identifies the thread by (Node's `threadId`, or
    /// the name of the thread's life lock in a browser).
    tag: u32,
    /// The thread's ParkingLot record (its blocking waits).
    parking: ThreadRecord,
    /// Its wasm-bindgen TLS block and stack, freed when it is reaped.
    tls_base: u32,
    stack_alloc: u32,
    /// Its async waiter records (`waiter_new`), not yet freed.
    waiters: Vec<*const AsyncWaiter>,
    /// The locks it holds, taken through the exports below.
    held: HeldLocks,
    /// The rest of what it holds (reader-writer locks, a `Once` it runs),
    /// kept apart so that a `Lock`'s acquisitions scan only `held`.
    holds: Vec<Hold>,
    /// Whether the thread is between the two halves of a change to one of
    /// `holds`, its record and its lock's word ([`begin_step`]): a reaper that
    /// finds it set cannot tell which half happened, and poisons the
    /// runtime. Plain, as the rest: only the thread writes it, and others
    /// read it once the thread is gone.
    stepping: bool,
    /// The [`StepPoint`] at which this thread traps next, once, or with
    /// [`HANG_AT_POINT`] spins there until it is terminated (0: none), for
    /// the tests only ([`arm_step_trap_for_test`]).
    armed_step: u32,
}

impl Entry {
    /// Every hold of the toolkit's: the one JS recorded, then `holds`.
    fn all_holds(&self) -> impl Iterator<Item = Hold> + '_ {
        JsRwHold::hold(self.held.rw)
            .into_iter()
            .chain(self.holds.iter().copied())
    }
}

/// The `Lock`s a thread holds, by address: the one taken last in a field of
/// its own, the others in a list. Most threads hold one lock at a time, so
/// a lock's acquisition and release each read and write that one field.
/// Measured from JS, one worker, lock + unlock in a loop (about 15 ns in
/// all): keeping the holds cost 1.2 ns a pair when every lock went into
/// the list (its capacity, length and a scan on each call), 0.7 ns now.
///
/// JS writes `last` too: Lock's uncontended `lock()`/`unlock()` take and
/// release the lock's byte in JS (js/src/lock.ts) and record the hold here,
/// through a view of these words ([`thread_held_address`]), when no
/// other lock is held (`last` is [`HeldLocks::NONE`] to take, the lock's
/// address and `others` 0 to release). So do RwLock's uncontended reads and
/// writes (js/src/rwlock.ts), in `rw`, while it is free. Only the thread
/// itself writes them; a reaper reads them after the thread is gone, as for
/// the rest.
#[repr(C)]
struct HeldLocks {
    /// One held lock, or [`HeldLocks::NONE`]: the one taken last, until a
    /// release of it moves one from `rest` here. Offset 0 (JS reads it).
    last: u32,
    /// `rest.len()`, where JS can read it. Offset 4.
    others: u32,
    /// One reader-writer lock hold JS took, [`JsRwHold`]'s form of it (0:
    /// none). Offset 8. The others are in the thread's `holds`; every
    /// question about holds asks both ([`has`], [`holds_any`], [`remove`],
    /// and the reaper).
    rw: u32,
    /// The others, in no particular order.
    rest: Vec<u32>,
}

/// A reader-writer lock hold as JS records it in [`HeldLocks::rw`]: the
/// lock's address (4-aligned, never 0) plus 1 for a read, 2 for a write.
struct JsRwHold;

impl JsRwHold {
    const READ: u32 = 1;
    const WRITE: u32 = 2;

    /// The slot's form of `hold`; `None` for the holds JS does not take.
    #[inline]
    fn of(hold: Hold) -> Option<u32> {
        match hold {
            Hold::Read(a) => Some(a | Self::READ),
            Hold::Write(a) => Some(a | Self::WRITE),
            Hold::Upgradable(_) | Hold::OnceRun(_) => None,
        }
    }

    /// The hold in the slot, if any.
    #[inline]
    fn hold(slot: u32) -> Option<Hold> {
        match slot & 3 {
            Self::READ => Some(Hold::Read(slot & !3)),
            Self::WRITE => Some(Hold::Write(slot & !3)),
            _ => None,
        }
    }
}

impl HeldLocks {
    /// No lock: not a byte address (the memory is at most 1 GiB); -1 as JS
    /// reads it through an `Int32Array`.
    const NONE: u32 = u32::MAX;

    const fn new() -> Self {
        HeldLocks {
            last: Self::NONE,
            others: 0,
            rw: 0,
            rest: Vec::new(),
        }
    }

    #[inline]
    fn contains(&self, addr: u32) -> bool {
        self.last == addr || self.rest.contains(&addr)
    }

    #[inline(always)]
    fn push(&mut self, addr: u32) {
        if self.last != Self::NONE {
            self.rest.push(self.last);
            self.others = self.rest.len() as u32;
        }
        self.last = addr;
    }

    /// Forgets one hold of `addr`; whether there was one.
    #[inline(always)]
    fn remove(&mut self, addr: u32) -> bool {
        if self.last == addr {
            self.last = match self.rest.pop() {
                Some(other) => {
                    self.others = self.rest.len() as u32;
                    other
                }
                None => Self::NONE,
            };
            return true;
        }
        let found = forget_last(&mut self.rest, addr);
        self.others = self.rest.len() as u32;
        found
    }

    /// Every lock held.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (self.last != Self::NONE)
            .then_some(self.last)
            .into_iter()
            .chain(self.rest.iter().copied())
    }
}

/// The address of this thread's [`HeldLocks`] (its `last` and `others`
/// words, which JS's fast paths read and write; see there), or 0 if the
/// thread never registered. Valid until it unregisters.
#[wasm_bindgen]
pub fn thread_held_address() -> u32 {
    with_me(|me| &me.held as *const HeldLocks as u32).unwrap_or(0)
}

/// A hold of the toolkit's, by its object's address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// A read of a reader-writer lock (a thread may hold several).
    Read(u32),
    /// An upgradable read (and, while it waits, an upgrade).
    Upgradable(u32),
    /// A reader-writer lock's write lock.
    Write(u32),
    /// A `Once` whose closure the thread is running.
    OnceRun(u32),
}

/// Every entry, behind a WordLock (it spins instead of sleeping on a thread
/// that may not block, so the page's thread can take it too).
struct Registry {
    lock: WordLock,
    entries: UnsafeCell<Vec<*mut Entry>>,
}

// SAFETY: `entries` is only touched with `lock` held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry {
    lock: WordLock::new(),
    entries: UnsafeCell::new(Vec::new()),
};

/// Bumped (and notified) whenever a thread registers, so that a watcher can
/// `Atomics.waitAsync` on it for new threads to watch.
static GENERATION: AtomicI32 = AtomicI32::new(0);

std::thread_local! {
    /// This thread's entry, or null if it never registered (the benchmark
    /// harness calls the exports without the JS runtime).
    static ME: Cell<*mut Entry> = const { Cell::new(core::ptr::null_mut()) };
}

/// Runs `f` on the registry's list, under its lock.
fn with_registry<T>(f: impl FnOnce(&mut Vec<*mut Entry>) -> T) -> T {
    // SAFETY: the registry lock is held for the whole call.
    sections::locked_in(sections::REGISTRY, &REGISTRY.lock, || {
        f(unsafe { &mut *REGISTRY.entries.get() })
    })
}

/// Runs `f` on this thread's entry, if it registered. Inlined, as the
/// callers below are: a `Lock`'s byte and its record change with no call in
/// between (lib.rs, `release`).
#[inline(always)]
fn with_me<T>(f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
    let me = ME.with(Cell::get);
    // SAFETY: only this thread mutates its entry, and it stays allocated
    // until this thread unregisters (or is reaped, after which it never runs).
    (!me.is_null()).then(|| f(unsafe { &mut *me }))
}

/// Registers the calling thread under `tag`, with the TLS block and stack
/// that `__wbindgen_thread_destroy` frees for it (0: the module's own, never
/// freed). Call once per thread, after `thread_init`.
#[wasm_bindgen]
pub fn thread_register(tag: u32, tls_base: u32, stack_alloc: u32) {
    // First, so that a reaper finds it even if it dies in what follows.
    sections::claim(tag);
    let parking =
        ThreadRecord::current().expect("thread_register: thread-locals are being torn down");
    let entry = Box::into_raw(Box::new(Entry {
        tag,
        parking,
        tls_base,
        stack_alloc,
        waiters: Vec::new(),
        held: HeldLocks::new(),
        holds: Vec::new(),
        stepping: false,
        armed_step: 0,
    }));
    ME.with(|me| me.set(entry));
    with_registry(|entries| entries.push(entry));
    GENERATION.fetch_add(1, Ordering::SeqCst);
    // SAFETY: notify only uses the address as a key.
    unsafe { core::arch::wasm32::memory_atomic_notify(GENERATION.as_ptr(), u32::MAX) };
}

/// The address of the registration counter (an i32), for `Atomics.waitAsync`.
#[wasm_bindgen]
pub fn thread_generation_address() -> u32 {
    GENERATION.as_ptr() as u32
}

/// The tags of every registered thread, for a watcher.
#[wasm_bindgen]
pub fn thread_tags() -> Vec<u32> {
    // SAFETY: registered entries stay allocated until removed under the lock.
    with_registry(|entries| entries.iter().map(|&e| unsafe { (*e).tag }).collect())
}

/// Removes the calling thread's entry (its `close()`, after its async waits
/// were cancelled and their records freed). Locks it still holds are
/// released, marked as their owner having died: nobody else could ever
/// release them. Returns how many there were.
#[wasm_bindgen]
pub fn thread_unregister() -> u32 {
    let me = ME.with(|me| me.replace(core::ptr::null_mut()));
    if me.is_null() {
        return 0;
    }
    with_registry(|entries| entries.retain(|&e| e != me));
    // SAFETY: removed from the registry, so this thread owns it alone.
    let entry = unsafe { Box::from_raw(me) };
    sections::release(entry.tag);
    // SAFETY: this thread is not waiting (it is here), and its record is
    // not used again: its runtime is closed. This stops counting it.
    unsafe { parking_lot::abandon_thread(entry.parking, |lock| entry.held.contains(lock as u32)) };
    // SAFETY: the thread is closing: it will not use these holds again.
    unsafe { release_holds(entry.all_holds()) };
    release_held(&entry.held)
}

/// Reaps one thread registered under `tag` that is gone: takes its waits out
/// of their queues as if they had timed out (passing on a wakeup or a lock
/// hand-off it had been given), releases the locks it held, marked as
/// owner-died, and frees its async records. Writes its TLS block and stack
/// addresses to `out[0]` and `out[1]` (u32s) for `__wbindgen_thread_destroy`.
/// Returns a [`reaped`] code.
///
/// A thread that died inside one of the runtime's critical sections (the
/// registry's, a table's, the ParkingLot's) or inside a step between a
/// hold's record and its lock's word ([`begin_step`]) is not reaped: that
/// cannot be rolled back, so the runtime is poisoned instead (`sections.rs`). While
/// another thread is inside a section, nothing is done (`reaped::BUSY`):
/// that thread may be dead too, not yet reaped, and a reaper that waited
/// for its section would wait for ever; call again a little later.
///
/// Call only once the thread is known to be gone: it must never run again.
#[wasm_bindgen]
pub fn thread_reap(tag: u32, out: u32) -> u32 {
    if let Some(section) = sections::inside(tag) {
        // Inside the kind table's section, holding its lock: repaired from
        // the table's other copy, and reaped as any other thread.
        if !(section == sections::KIND_TABLE && sections::recover_kind_table(tag)) {
            critical::poison(section, tag, critical::TERMINATED);
            return reaped::NONE;
        }
    }
    if sections::others_inside(tag) {
        return reaped::BUSY;
    }
    let found = with_registry(|entries| {
        // SAFETY: registered entries stay allocated until removed under the lock.
        let i = entries.iter().position(|&e| unsafe { (*e).tag } == tag)?;
        // SAFETY: as above; the thread is gone, so nothing writes it.
        if unsafe { (*entries[i]).stepping } {
            return Some(Err(()));
        }
        Some(Ok(entries.swap_remove(i)))
    });
    let e = match found {
        None => return reaped::NONE,
        Some(Err(())) => {
            critical::poison(sections::LOCK_STEP, tag, critical::TERMINATED);
            return reaped::NONE;
        }
        Some(Ok(e)) => e,
    };
    // SAFETY: removed from the registry and its thread is gone (the caller's
    // contract), so nobody else touches the entry or its records.
    let entry = unsafe { Box::from_raw(e) };
    // A wait's debt the thread had not settled is not passed on if it had
    // recorded taking the lock it waited for (it died between its record and
    // `settled`, lib.rs): `release_held` below releases that hold.
    let took = |lock: *const ()| entry.held.contains(lock as u32);
    unsafe {
        parking_lot::abandon_thread(entry.parking, took);
        for &w in &entry.waiters {
            parking_lot::abandon_async_holding(&*w, took);
            crate::kinds::forget_internal(w as u32);
            drop(Box::from_raw(w as *mut AsyncWaiter));
        }
    }
    // SAFETY: the thread is gone, and its waits have left their queues above.
    unsafe { release_holds(entry.all_holds()) };
    release_held(&entry.held);
    sections::release(tag);
    let out = out as *mut u32;
    // SAFETY: `out` is an 8-byte, 4-aligned scratch cell the caller owns.
    unsafe {
        out.write(entry.tls_base);
        out.add(1).write(entry.stack_alloc);
    }
    reaped::REAPED
}

/// What [`thread_reap`] returns.
pub mod reaped {
    /// No such thread (or it poisoned the runtime).
    pub const NONE: u32 = 0;
    /// One reaped: call again (a thread that attached twice has two entries).
    pub const REAPED: u32 = 1;
    /// Nothing done: another thread is inside a section; call again later.
    pub const BUSY: u32 = 2;
}

/// Releases `held` locks of a thread that will not release them, marking each
/// owner-died. Returns how many.
fn release_held(held: &HeldLocks) -> u32 {
    let mut n = 0;
    for addr in held.iter() {
        // SAFETY: an address the thread's exports took the lock at, and the
        // thread holds it and will never run again.
        let _ = unsafe { (*(addr as *const Lock)).unlock_owner_died() };
        n += 1;
    }
    n
}

/// Releases the toolkit's `holds` of a thread that will not release them
/// (see the module docs for what each one becomes).
///
/// # Safety
/// The thread will never use them again, and none of its waits is queued.
unsafe fn release_holds(holds: impl Iterator<Item = Hold>) {
    for hold in holds {
        // SAFETY (each arm): the thread's exports took this hold at an
        // address the JS wrapper checked, and it is still held.
        unsafe {
            match hold {
                Hold::Read(a) => {
                    let _ = (*(a as *const RawRwLock)).checked_unlock_shared();
                }
                Hold::Upgradable(a) => {
                    (*(a as *const RawRwLock)).unlock_upgradable_of_gone_holder()
                }
                Hold::Write(a) => {
                    crate::owner_died::mark(a);
                    let _ = (*(a as *const RawRwLock)).checked_unlock_exclusive();
                }
                Hold::OnceRun(a) => (*(a as *const Once)).finish(false),
            }
        }
    }
}

/// Whether this thread holds `hold`; `None` if it never registered.
pub(crate) fn has(hold: Hold) -> Option<bool> {
    // The list first: where JS takes no holds (V8), the hold is there.
    with_me(|me| me.holds.contains(&hold) || JsRwHold::of(hold) == Some(me.held.rw))
}

/// Whether this thread holds anything of the reader-writer lock at `addr`
/// for which `conflicts` says yes; `None` if it never registered.
pub(crate) fn holds_any(conflicts: impl Fn(Hold) -> bool) -> Option<bool> {
    // The list first, as in `has`.
    with_me(|me| {
        me.holds.iter().any(|&h| conflicts(h)) || JsRwHold::hold(me.held.rw).is_some_and(&conflicts)
    })
}

/// Begins a change to one of this thread's `holds` and to its lock's word
/// (a reader-writer lock's acquisition, release or downgrade) made as one
/// step, until [`end_step`]: a thread stopped inside it (terminated in a
/// call's prologue, or trapped) poisons the runtime when reaped
/// (`thread_reap`, `sections::thread_trapped`), so that its reaper never
/// releases, by a record the word no longer matches, a lock another thread
/// holds by then, and never leaves a hold unrecorded that no reaper would
/// release. Two plain stores to the thread's entry, where a section's marker
/// (`sections::lock_step`) costs two atomic stores, each a fence in the
/// engines: 4 ns a read + release pair in Node 20, 18 in Bun. Not a
/// closure: one that captured the step's locals was compiled out of line,
/// with a shadow-stack frame, and cost as much. Returns this thread's entry
/// (null if it never registered: no reaper reads its holds) as a [`Step`].
#[inline(always)]
pub(crate) fn begin_step() -> Step {
    let me = ME.with(Cell::get);
    if !me.is_null() {
        // SAFETY: only this thread mutates its entry, which stays allocated
        // while it runs (`with_me`); no reference to it is kept.
        unsafe { (*me).stepping = true };
    }
    // The flag is set before the step's first store.
    compiler_fence(Ordering::SeqCst);
    Step(me)
}

/// A step [`begin_step`] began: the thread's entry, or null.
pub(crate) struct Step(*mut Entry);

/// A point inside a step where a test may stop a thread, as a termination
/// there would ([`arm_step_trap_for_test`]).
#[derive(Clone, Copy)]
#[repr(u32)]
pub(crate) enum StepPoint {
    /// A reader-writer lock's release, between its record and its word.
    RwRelease = 1,
    /// A reader-writer lock's acquisition, between its word and its record.
    RwAcquire = 2,
    /// A condition wait, between releasing its lock's byte and forgetting
    /// the hold (`condition_wait`).
    ConditionWait = 3,
    /// An edit of the kind table, while it changes the first of the table's
    /// two copies (kinds.rs, `with_table`).
    KindTableFirstCopy = 4,
    /// An edit of the kind table, while it changes the second copy.
    KindTableSecondCopy = 5,
    /// A `Lock`'s release that must wake a waiter, its hold still on
    /// record and its byte still held (lib.rs, `release`).
    LockRelease = 6,
}

/// Traps, or spins for ever, if this thread armed `point` (for the JS
/// tests: [`arm_step_trap_for_test`]), outside any step of its own.
#[inline(always)]
pub(crate) fn test_point(point: StepPoint) {
    Step(ME.with(Cell::get)).fault_point(point)
}

/// Added to a [`StepPoint`] armed by [`arm_step_trap_for_test`]: the thread
/// spins at the point instead of trapping, so that a test can terminate it
/// there (a real termination, which the reaper learns of from the thread's
/// liveness signal, not the trap handler).
const HANG_AT_POINT: u32 = 0x100;

impl Step {
    /// Traps, or spins for ever, if this thread armed `point`: one load
    /// from the thread's entry where nothing is armed (a load of a shared
    /// word instead cost Bun about 1 ns a call).
    #[inline(always)]
    pub(crate) fn fault_point(&self, point: StepPoint) {
        let me = self.0;
        // SAFETY: as in `begin_step`: this thread's own entry, or null.
        if !me.is_null() && unsafe { (*me).armed_step } & !HANG_AT_POINT == point as u32 {
            stop_at_point(me)
        }
    }
}

/// [`Step::fault_point`] where the point was armed: disarms it, then traps,
/// or spins until the engine terminates the thread (a wasm loop checks for
/// termination at its back edge in the engines).
#[cold]
#[inline(never)]
fn stop_at_point(me: *mut Entry) -> ! {
    // SAFETY: this thread's own entry (`Step::fault_point`).
    let armed = unsafe { core::mem::replace(&mut (*me).armed_step, 0) };
    if armed & HANG_AT_POINT == 0 {
        core::arch::wasm32::unreachable()
    }
    loop {
        core::hint::spin_loop();
    }
}

/// For the JS tests only: the calling thread traps at the next
/// [`StepPoint`] `point` it passes, as a thread terminated there would stop;
/// with `point + 0x100` ([`HANG_AT_POINT`]) it spins there instead, until
/// it is terminated.
#[wasm_bindgen]
pub fn arm_step_trap_for_test(point: u32) {
    with_me(|me| me.armed_step = point);
}

/// Ends the step [`begin_step`] began.
#[inline(always)]
pub(crate) fn end_step(Step(me): Step) {
    // The flag is cleared after the step's last store.
    compiler_fence(Ordering::SeqCst);
    if !me.is_null() {
        // SAFETY: as in `begin_step`.
        unsafe { (*me).stepping = false };
    }
}

/// Whether this thread stopped inside a step ([`begin_step`]; after a trap there).
pub(crate) fn stepping() -> bool {
    with_me(|me| me.stepping).unwrap_or(false)
}

/// This thread took `hold`.
pub(crate) fn add(hold: Hold) {
    with_me(|me| me.holds.push(hold));
}

/// This thread lets go of `hold` (one of them: reads may repeat); says
/// whether it held it (`None` if it never registered).
pub(crate) fn remove(hold: Hold) -> Option<bool> {
    // The list first, as in `has`.
    with_me(|me| {
        if forget_last(&mut me.holds, hold) {
            return true;
        }
        let mine = JsRwHold::of(hold) == Some(me.held.rw);
        if mine {
            me.held.rw = 0;
        }
        mine
    })
}

/// Removes the last `item` from `list`; whether there was one.
#[inline]
fn forget_last<T: PartialEq + Copy>(list: &mut Vec<T>, item: T) -> bool {
    match list.iter().rposition(|&x| x == item) {
        Some(i) => {
            list.swap_remove(i);
            true
        }
        None => false,
    }
}

/// Records a new async waiter record of this thread.
pub(crate) fn waiter_made(waiter: *const AsyncWaiter) {
    with_me(|me| me.waiters.push(waiter));
}

/// Forgets an async waiter record this thread frees.
pub(crate) fn waiter_freed(waiter: *const AsyncWaiter) {
    with_me(|me| me.waiters.retain(|&w| w != waiter));
}

/// Whether this thread holds the lock at `addr`; `None` if it never
/// registered (the benchmark harness): nothing is known then, and nothing
/// is refused.
pub(crate) fn holds(addr: u32) -> Option<bool> {
    with_me(|me| me.held.contains(addr))
}

/// This thread took the lock at `addr`.
#[inline(always)]
pub(crate) fn took(addr: u32) {
    with_me(|me| me.held.push(addr));
}

/// This thread forgets its hold of the lock at `addr` (which it releases
/// around it), and says whether it had one (`None` if it never registered).
#[inline(always)]
pub(crate) fn forget(addr: u32) -> Option<bool> {
    with_me(|me| me.held.remove(addr))
}

/// How this thread lets go of the lock at `addr` ([`let_go`]).
pub(crate) enum LetGo {
    /// It holds that Lock and no other: the hold stays on record until the
    /// release gives the byte up, and this forgets it then.
    AtRelease(ForgetOnlyHold),
    /// Anything else, forgotten now: whether it held the lock (`None` if
    /// it never registered).
    Now(Option<bool>),
}

/// Forgets a thread's only Lock hold at the moment its release gives the
/// byte up ([`parklot::OnRelease`]): one store of [`HeldLocks::NONE`]
/// where JS and the reaper read the hold (`HeldLocks::last`, with no
/// others, so nothing else changes).
#[derive(Clone, Copy)]
pub(crate) struct ForgetOnlyHold(*mut u32);

impl parklot::OnRelease for ForgetOnlyHold {
    #[inline(always)]
    fn released(self) {
        // Not moved before the byte's release by the compiler: a thread
        // stopped between them would leave a record of a lock it let go.
        compiler_fence(Ordering::SeqCst);
        // SAFETY: this thread's own entry (`let_go` made it), allocated
        // until the thread unregisters; only this thread writes it, and a
        // reaper reads it only once the thread is gone.
        unsafe { self.0.write(HeldLocks::NONE) };
    }
}

/// This thread lets go of the lock at `addr`. If the lock is the only one it
/// holds, the hold stays on record until the release gives the byte up
/// (`LetGo::AtRelease`); otherwise it is forgotten now (a release of one of
/// several holds then runs inside `sections::lock_step`).
#[inline(always)]
pub(crate) fn let_go(addr: u32) -> LetGo {
    with_me(|me| {
        if me.held.last == addr && me.held.others == 0 {
            LetGo::AtRelease(ForgetOnlyHold(&mut me.held.last))
        } else {
            LetGo::Now(Some(me.held.remove(addr)))
        }
    })
    .unwrap_or(LetGo::Now(None))
}
