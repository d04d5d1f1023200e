//! Spin, then sleep: a parked thread watches its own record for a short while
//! before it sleeps, so that a wakeup that comes soon costs neither side a
//! system call (futex, `memory.atomic.wait32`/`notify`) nor the scheduler's
//! latency. Seed 002: never sleep a fixed time; spin only while it can help.
//!
//! When spinning cannot help, nobody spins:
//! - on one CPU (the waker cannot run while we spin): [`cpus`] says 1;
//! - when every other CPU already has a spinner: at most `cpus - 1` threads
//!   spin at once (`SPINNERS`), so one CPU is always left to whoever is
//!   going to wake them, and oversubscription turns spinning off;
//! - when this thread's wakeups come late: the budget adapts per parker
//!   ([`SpinBudget`]): a spin that ended in a wakeup restores it to the
//!   ceiling, one that ended in sleep cuts it by a quarter, down to a floor
//!   from which every [`PROBE_EVERY`]th park spins the whole ceiling again to
//!   find out whether wakeups have become quick (every 32nd after a probe
//!   that failed, and so on up to every [`PROBE_EVERY_MAX`]th).
//!
//! The ceiling is counted in iterations of a loop that reads one word and
//! issues the spin hint ([`DEFAULT_PARK_SPIN_LIMIT`], chosen by a measured
//! sweep): about what a sleeping thread's wakeup costs through the kernel,
//! beyond which spinning only burns the CPU.

use core::sync::atomic::{AtomicU32, Ordering};

/// Spin iterations after which a parked thread goes to sleep, by default
/// ([`set_park_spin_limit`] changes it).
///
/// One iteration is a load and the spin hint: natively `pause` (x86-64) or
/// `isb` (ARM64), tens of cycles; in wasm the hint is a no-op and an
/// iteration is a load and a branch. The spin must outlast what a sleeping
/// thread takes to wake (tens of µs across CPUs in a VM), or two threads that
/// wake each other settle into both sleeping: each spins out before the
/// other, asleep, can answer. On the 2-CPU AMD EPYC VM we measure on, a
/// futex wake across CPUs took about 23 µs and 2048 pauses take about 54 µs
/// (a `pause` is about 26 ns there; on other x86 CPUs from 3 to 40 ns). A
/// later sweep there, with wakes grown to about 60 µs, still found 2048 on
/// the plateau (two threads bouncing a futex word: 0.40 µs a round trip,
/// against 61.6 µs with no spin and 4.3 µs at 512).
#[cfg(not(target_family = "wasm"))]
pub const DEFAULT_PARK_SPIN_LIMIT: u32 = 1 << 11;
/// Spin iterations after which a parked thread goes to sleep, by default
/// ([`set_park_spin_limit`] changes it). In wasm an iteration is a load and a
/// branch (the spin hint is a no-op), under a nanosecond. The wasm-node
/// benchmark's sweep (two workers bouncing a word, `bench/wasm/ping-pong.mjs`)
/// once found the full gain from 32768 on; when the same VM's wakes had grown
/// to about 60 µs, 65536 fell back to sleeping (61 µs a round trip, as with no
/// spin) and 131072 was the edge of the plateau (1.36 µs; 262144: 1.22 µs,
/// 524288: 1.20 µs, each about 3 CPU µs a round trip). Twice the edge, so
/// that a slower wake does not tip both sides into sleeping. On an Intel Xeon
/// host, whose wakes are faster (the engine's round trip 12 µs), every limit
/// from 8192 up was on the plateau (1.45-1.54 µs, 3.2-3.6 CPU µs a round
/// trip; 0: 15.6 µs), so the default costs nothing there.
#[cfg(target_family = "wasm")]
pub const DEFAULT_PARK_SPIN_LIMIT: u32 = 1 << 18;

/// The ceiling of every spin before sleep; 0 turns spinning off.
static MAX_SPINS: AtomicU32 = AtomicU32::new(DEFAULT_PARK_SPIN_LIMIT);

/// Sets how many iterations a parked thread may spin before it sleeps
/// (process-wide; 0: sleep at once, as before parklot spun). For
/// benchmarks and for hosts that know better; the default is measured.
pub fn set_park_spin_limit(spins: u32) {
    MAX_SPINS.store(spins, Ordering::Relaxed);
}

/// The current ceiling of a spin before sleep ([`set_park_spin_limit`]).
pub fn park_spin_limit() -> u32 {
    MAX_SPINS.load(Ordering::Relaxed)
}

/// The floor of an adapted budget: a wakeup this quick is a race with the
/// waker that was about to happen anyway.
const MIN_SPINS: u32 = 1 << 4;

/// At the floor, every this-many parks spin the whole ceiling once, at first;
/// each probe that fails doubles the interval, up to [`PROBE_EVERY_MAX`].
const PROBE_EVERY: u32 = 16;
const PROBE_EVERY_MAX: u32 = 1024;

/// Iterations a parker waits for a spinner's place before it sleeps: about a
/// microsecond, time for a spinner that was just claimed to see it and leave
/// (in a ping-pong, the other side). An iteration in wasm is shorter.
#[cfg(not(target_family = "wasm"))]
const SLOT_TRIES: u32 = 1 << 6;
#[cfg(target_family = "wasm")]
const SLOT_TRIES: u32 = 1 << 9;

/// CPUs that can run threads at once; 0 until known. Natively read once from
/// the OS; in wasm set by the embedder ([`set_cpu_count`]) and 1 until then.
static CPUS: AtomicU32 = AtomicU32::new(0);

/// Threads spinning in [`SpinBudget::spin`] right now.
static SPINNERS: AtomicU32 = AtomicU32::new(0);

/// Tells parklot how many CPUs may run its threads at once (in wasm the
/// module cannot ask: the embedder passes `navigator.hardwareConcurrency` or
/// `os.availableParallelism()`). 1 turns spinning before sleep off.
pub fn set_cpu_count(n: u32) {
    CPUS.store(n.max(1), Ordering::Relaxed);
}

/// CPUs that can run threads at once.
pub(crate) fn cpus() -> u32 {
    let n = CPUS.load(Ordering::Relaxed);
    if n != 0 {
        return n;
    }
    #[cfg(not(target_family = "wasm"))]
    let n =
        std::thread::available_parallelism().map_or(1, |n| n.get().min(u32::MAX as usize) as u32);
    #[cfg(target_family = "wasm")]
    let n = 1;
    CPUS.store(n, Ordering::Relaxed);
    n
}

/// Watches a queued record for a thread that may not sleep (a page's main
/// thread), until `claimed()` (`true`) or until the deadline passes (`false`,
/// as a timed-out sleep returns). Every `looks_per_check` looks it reads the
/// clock (`now_ns`) and yields; in between it only spins.
#[inline]
pub(crate) fn watch_awake(
    deadline_ns: Option<u64>,
    looks_per_check: u32,
    now_ns: impl Fn() -> u64,
    claimed: impl Fn() -> bool,
) -> bool {
    let mut looks: u32 = 0;
    loop {
        if claimed() {
            return true;
        }
        looks = looks.wrapping_add(1);
        if looks.is_multiple_of(looks_per_check) {
            if deadline_ns.is_some_and(|d| now_ns() >= d) {
                return false;
            }
            crate::sync::yield_now();
        } else {
            crate::sync::spin_loop();
        }
    }
}

/// One parker's adaptive spin budget. Only its owner reads and writes it
/// (Relaxed: atomics only so that the parker stays `Sync`).
pub(crate) struct SpinBudget {
    /// Iterations the next spin may run, in `MIN_SPINS..=park_spin_limit()`.
    spins: AtomicU32,
    /// Parks since the last probe at the floor.
    parks: AtomicU32,
    /// Parks between probes at the floor: `PROBE_EVERY..=PROBE_EVERY_MAX`.
    probe_every: AtomicU32,
}

impl SpinBudget {
    pub(crate) const fn new() -> Self {
        SpinBudget {
            spins: AtomicU32::new(u32::MAX),
            parks: AtomicU32::new(0),
            probe_every: AtomicU32::new(PROBE_EVERY),
        }
    }

    /// Spins while `waiting()` says so, within the budget and only if a CPU
    /// is free for it. Returns `true` if `waiting()` turned false.
    #[inline]
    pub(crate) fn spin(&self, mut waiting: impl FnMut() -> bool) -> bool {
        if cfg!(loom) {
            // Loom explores every interleaving of every load: no loops.
            return !waiting();
        }
        let ceiling = park_spin_limit();
        if ceiling == 0 {
            return !waiting();
        }
        let budget = self.spins.load(Ordering::Relaxed).min(ceiling);
        let mut probing = false;
        let limit = if budget > MIN_SPINS {
            budget
        } else {
            let parks = self.parks.load(Ordering::Relaxed) + 1;
            probing = parks >= self.probe_every.load(Ordering::Relaxed);
            self.parks
                .store(if probing { 0 } else { parks }, Ordering::Relaxed);
            if probing {
                ceiling
            } else {
                budget
            }
        };
        // A full house is often one spinner on its way out (a ping-pong's
        // other side, claimed a moment ago): wait a little for its place.
        let mut tries = 0;
        let _slot = loop {
            if let Some(slot) = SpinSlot::take() {
                break slot;
            }
            if !waiting() {
                return true;
            }
            if tries == SLOT_TRIES {
                return false;
            }
            tries += 1;
            core::hint::spin_loop();
        };
        let mut spun = 0;
        let woken = loop {
            if !waiting() {
                break true;
            }
            if spun >= limit {
                break false;
            }
            core::hint::spin_loop();
            spun += 1;
        };
        let next = if woken {
            // Spin while it works: a spin that wins costs only the wait it
            // won, whatever the budget, while a budget cut below what a
            // sleeping partner needs to wake would lock both sides into
            // sleeping (each spins out before the other, asleep, can answer).
            ceiling
        } else {
            // Down by a quarter: one preempted waker is not a trend.
            (budget - budget / 4).max(MIN_SPINS).min(ceiling)
        };
        self.spins.store(next, Ordering::Relaxed);
        if woken {
            self.probe_every.store(PROBE_EVERY, Ordering::Relaxed);
        } else if probing {
            let every = self.probe_every.load(Ordering::Relaxed);
            self.probe_every
                .store((every * 2).min(PROBE_EVERY_MAX), Ordering::Relaxed);
        }
        woken
    }
}

/// A place among the `cpus() - 1` spinners, given back on drop.
struct SpinSlot;

impl SpinSlot {
    fn take() -> Option<SpinSlot> {
        let allowed = cpus() - 1;
        let mut now = SPINNERS.load(Ordering::Relaxed);
        loop {
            if now >= allowed {
                return None;
            }
            match SPINNERS.compare_exchange_weak(now, now + 1, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(SpinSlot),
                Err(seen) => now = seen,
            }
        }
    }
}

impl Drop for SpinSlot {
    fn drop(&mut self) {
        SPINNERS.fetch_sub(1, Ordering::Relaxed);
    }
}
