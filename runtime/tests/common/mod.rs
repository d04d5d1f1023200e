//! Helpers the integration tests share (each test file that needs them
//! declares `mod common;`).
#![allow(dead_code)]

use std::time::Duration;

/// A fair lock lets the asker in after about a millisecond (measured: at most
/// 0.14 ms over 20 rounds); this leaves room for a busy machine. The locks
/// without fairness waited the whole 250 ms.
pub const STARVED: Duration = Duration::from_millis(250);

/// Rounds for the locks that must fail. One starved round is enough, but a
/// round can let the asker in by luck (it runs when the holder is preempted
/// right after an unlock, most often on the way back from the syscall that
/// woke it). Natively the first round starves; under qemu-user, whose
/// syscalls are slow, the first starved round came as late as the sixteenth,
/// so 60 leave a lucky lock no real chance. Rounds that end early are short.
pub const NEGATIVE_ROUNDS: usize = 60;

/// `PARKLOT_STRESS_SCALE` (default 1.0): how much of their iteration counts
/// the stress tests run (the ARM64 run under qemu uses less).
pub fn stress_scale() -> f64 {
    std::env::var("PARKLOT_STRESS_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

/// `n` iterations, scaled by [`stress_scale`] (at least one).
pub fn scaled(n: usize) -> usize {
    ((n as f64 * stress_scale()) as usize).max(1)
}

/// Pins the calling thread to the first CPU it may run on.
#[cfg(target_os = "linux")]
pub fn pin_to_one_cpu() {
    // SAFETY (test): cpu_set_t is plain data, filled in by sched_getaffinity;
    // the CPU_* macros stay inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
        let cpu = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .unwrap();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
    }
}

/// Makes the calling thread SCHED_BATCH: it keeps its share of the CPU, but
/// waking it never preempts the running thread.
#[cfg(target_os = "linux")]
pub fn never_preempt_on_wakeup() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY (test): pid 0 is the calling thread; param is a valid struct.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    assert_eq!(r, 0, "sched_setscheduler(SCHED_BATCH)");
}

/// A lock as [`starvation_check`] contends for it: a holder that takes it
/// almost all the time, and an asker that takes it once.
#[cfg(target_os = "linux")]
pub trait Contested: Sync {
    /// Takes the lock, on the holder's thread.
    fn hold(&self);
    /// Lets go of what [`Contested::hold`] took (called only after it).
    fn let_go(&self);
    /// Takes the lock, on the asker's thread.
    fn ask(&self);
    /// Lets go of what [`Contested::ask`] took (called only after it).
    fn leave(&self);
    /// Waits, once the asker has asked, for it to spin and park.
    fn settle(&self);
}

/// Eventual fairness, checked so that a lock without it fails (fairness.rs
/// says how). Two threads share one CPU: this one holds `lock` almost all
/// the time (a short critical section, then it lets go and takes it again
/// at once), the other, SCHED_BATCH, asks for it once. Returns the longest
/// of `rounds` waits, or `Err` with the first round whose wait passed
/// `limit`.
#[cfg(target_os = "linux")]
pub fn starvation_check(
    lock: &impl Contested,
    rounds: usize,
    limit: Duration,
) -> Result<Duration, usize> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut longest = Duration::ZERO;
    pin_to_one_cpu(); // this test's thread: the holder
    for round in 0..rounds {
        let asking = AtomicBool::new(false);
        let got = AtomicBool::new(false);
        lock.hold();
        let waited = std::thread::scope(|s| {
            let asker = s.spawn(|| {
                pin_to_one_cpu();
                never_preempt_on_wakeup();
                asking.store(true, Ordering::SeqCst);
                lock.ask();
                got.store(true, Ordering::SeqCst);
                lock.leave();
            });
            while !asking.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            lock.settle();
            let asked = parklot::Instant::now();
            let mut x = 1.0f64;
            let mut waited = Duration::ZERO;
            while !got.load(Ordering::Relaxed) && waited <= limit {
                for _ in 0..64 {
                    lock.let_go();
                    lock.hold();
                    for _ in 0..100 {
                        x = std::hint::black_box(x * 1.000001 + 0.5); // the critical section
                    }
                }
                waited = parklot::Instant::now().saturating_duration_since(asked);
            }
            lock.let_go();
            asker.join().unwrap();
            waited
        });
        if waited > limit {
            return Err(round);
        }
        longest = longest.max(waited);
    }
    Ok(longest)
}

/// Runs a loom model with at most 2 preemptions unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise (`loom.rs`, `loom_deadlock.rs`).
#[cfg(loom)]
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(f);
}
