//! Portable parker on a mutex and condition variable: std's on targets without
//! a futex (or with `--cfg parklot_portable_parker`, so that Linux can test
//! what macOS and Windows run), loom's in model checking (where the clock
//! stands still, so that every explored execution is deterministic).
//!
//! State word, one per waiter record:
//!
//! | value            | meaning                                                |
//! |------------------|--------------------------------------------------------|
//! | IDLE             | not parked, or woken: the owner may return             |
//! | PARKED           | queued and waiting to be claimed                       |
//! | CLAIMED          | a waker ran `unpark_lock` but has not yet signalled    |
//! | + SLEEPER (bit)  | the owner waits on the condition variable              |
//!
//! PARKED → CLAIMED happens under the queue lock and keeps SLEEPER. SLEEPER is
//! set by a blocking owner under this parker's mutex. The waker's last step
//! is CLAIMED → IDLE by compare-and-swap when no owner sleeps: an async record
//! never sleeps, so its owner may drop it as soon as it reads IDLE, and the
//! waker touches nothing after. With SLEEPER set, the waker stores IDLE and
//! signals under the mutex; that owner returns only after seeing IDLE under
//! the mutex, so the waker is done with the record by then (apart from
//! unlocking the mutex, which std and loom allow to race with the mutex being
//! dropped).

use super::spin::{watch_awake, SpinBudget};
use crate::blocking::thread_may_block;
use crate::sync::{AtomicU32, Condvar, Mutex, Ordering};

const IDLE: u32 = 0;
const PARKED: u32 = 1;
const CLAIMED: u32 = 2;
const SLEEPER: u32 = 4;

/// How many looks at the state a thread that stays awake takes between two
/// looks at the clock (and yields).
const AWAKE_LOOKS_PER_CHECK: u32 = 64;

pub(crate) struct Parker {
    state: AtomicU32,
    mutex: Mutex<()>,
    condvar: Condvar,
    spin: SpinBudget,
}

impl Parker {
    parker_protocol!(mutex: Mutex::new(()), condvar: Condvar::new());

    /// Spins while nobody claims the record (a waker that comes meanwhile
    /// finds no SLEEPER and finishes with one compare-and-swap): `true` if
    /// claimed.
    #[inline]
    fn spin_first(&self) -> bool {
        self.spin.spin(|| !self.is_unparked())
    }

    /// Sleeps on the condvar until claimed (`true`) or until the deadline
    /// passes (`false`).
    fn sleep(&self, deadline_ns: Option<u64>) -> bool {
        let mut guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        while self.announce_sleeper() {
            let Some(deadline_ns) = deadline_ns else {
                guard = self.condvar.wait(guard).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            let now = now_ns();
            if now >= deadline_ns {
                return false;
            }
            let wait = core::time::Duration::from_nanos(deadline_ns - now);
            guard = self
                .condvar
                .wait_timeout(guard, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Under the mutex: sets SLEEPER unless the state is IDLE; returns whether
    /// the owner must (go on) waiting.
    fn announce_sleeper(&self) -> bool {
        let mut state = self.state.load(Ordering::Acquire);
        while state != IDLE && state & SLEEPER == 0 {
            match self.state.compare_exchange_weak(
                state,
                state | SLEEPER,
                Ordering::Relaxed,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
        state != IDLE
    }

    /// For a thread that may not sleep: watches the state, never announcing
    /// SLEEPER (so the waker finishes with its compare-and-swap), until it
    /// is IDLE (`true`) or the deadline passes (`false`, as a timed-out
    /// sleep returns). Its queue position, and so its turn, are a sleeper's.
    fn stay_awake(&self, deadline_ns: Option<u64>) -> bool {
        watch_awake(deadline_ns, AWAKE_LOOKS_PER_CHECK, now_ns, || {
            self.is_unparked()
        })
    }


    #[inline]
    pub(crate) fn timed_out(&self) -> bool {
        self.state.load(Ordering::Relaxed) & !SLEEPER == PARKED
    }

    #[inline]
    pub(crate) fn unpark_lock(&self) -> UnparkHandle {
        // PARKED → CLAIMED, keeping SLEEPER (the owner may have set it).
        self.state.fetch_add(CLAIMED - PARKED, Ordering::Relaxed);
        UnparkHandle { parker: self }
    }
}

pub(crate) struct UnparkHandle {
    parker: *const Parker,
}

impl UnparkHandle {
    /// Wakes the owner.
    pub(crate) fn unpark(self) {
        // SAFETY: the state is CLAIMED, so the owner does not return (nor
        // drop an async record) before it reads IDLE, which only we store.
        let parker = unsafe { &*self.parker };
        // Release: the waker's token must be visible once the owner sees IDLE.
        if parker
            .state
            .compare_exchange(CLAIMED, IDLE, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return; // nobody sleeps: the record may already be gone
        }
        // CLAIMED | SLEEPER: the owner waits (or is about to) on the condvar
        // and returns only after reading IDLE under the mutex we now take.
        let _guard = parker.mutex.lock().unwrap_or_else(|e| e.into_inner());
        parker.state.store(IDLE, Ordering::Release);
        parker.condvar.notify_one();
    }
}

/// Nanoseconds since the first call, on `std::time::Instant`.
#[cfg(not(loom))]
pub(crate) fn now_ns() -> u64 {
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(std::time::Instant::now);
    // Start at 1 s so that "now" is never 0, the value of a fresh fairness timer.
    1_000_000_000 + base.elapsed().as_nanos() as u64
}

/// Loom explores executions by replaying them: time must not move.
#[cfg(loom)]
pub(crate) fn now_ns() -> u64 {
    0
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A record pointer that a test hands to the waking thread.
    struct Shared(*const Parker);
    // SAFETY (test): the parker is Sync; the owner keeps it alive as the
    // parker's contract says (until it reads IDLE).
    unsafe impl Send for Shared {}

    #[test]
    fn a_settled_async_record_may_be_dropped_at_once() {
        // An async record never sleeps: its owner polls `is_unparked` and may
        // drop the record as soon as that says yes, while the waker is still
        // returning from `unpark`. Miri reports any access after that.
        for _ in 0..20 {
            let record = Box::new(Parker::new());
            record.prepare_park();
            let shared = Shared(&*record);
            let waker = std::thread::spawn(move || {
                let shared = shared;
                // SAFETY (test): the record is alive until it reads IDLE.
                let handle = unsafe { &*shared.0 }.unpark_lock();
                handle.unpark()
            });
            while !record.is_unparked() {
                std::hint::spin_loop();
            }
            drop(record);
            waker.join().unwrap();
        }
    }

    #[test]
    fn a_sleeping_owner_is_woken_and_a_late_timeout_sees_the_claim() {
        let record = std::sync::Arc::new(Parker::new());
        record.prepare_park();
        let owner = {
            let record = record.clone();
            std::thread::spawn(move || record.park(true))
        };
        while record.state.load(Ordering::Acquire) & SLEEPER == 0 {
            std::thread::yield_now();
        }
        record.unpark_lock().unpark();
        owner.join().unwrap();
        assert!(record.is_unparked());
        // Timed out, then claimed: SLEEPER stays set and the wake completes.
        record.prepare_park();
        assert!(!record.park_until(0, true));
        assert!(record.timed_out());
        record.unpark_lock().unpark();
        assert!(!record.timed_out());
        record.park(false);
    }
}
