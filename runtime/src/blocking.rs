//! Threads that may not block.
//!
//! A browser page's main thread traps on `memory.atomic.wait32`. The embedder
//! marks such a thread with [`set_thread_may_block(false)`]; from then on the
//! core never sleeps on it: bucket and word locks spin instead (their critical
//! sections are a few instructions), and a call that has to wait (a held
//! `Lock`, `RwLock`, a `Semaphore` without permits, a `Once` another thread
//! runs, a `Condition` or `Barrier` wait, `futex::wait`) queues its record in
//! the ParkingLot like any sleeper and then stays awake watching it (the
//! parkers in `sys`), so it is served in the same order, with the same
//! fairness and hand-offs, and its timeouts hold. Where the caller can
//! await, the async forms are the better choice: they leave the thread free
//! meanwhile. (The JS package refuses blocking calls on such threads itself,
//! since its callers have the async forms.)

use core::cell::Cell;

std::thread_local! {
    static MAY_BLOCK: Cell<bool> = const { Cell::new(true) };
}

/// Declares whether the current thread may sleep. Threads may by default.
pub fn set_thread_may_block(may_block: bool) {
    MAY_BLOCK.with(|m| m.set(may_block));
}

/// Whether the current thread may sleep (see [`set_thread_may_block`]).
/// During thread teardown, when thread-locals are gone, threads may block.
#[inline]
pub fn thread_may_block() -> bool {
    MAY_BLOCK.try_with(|m| m.get()).unwrap_or(true)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn threads_may_block_until_told_otherwise() {
        std::thread::spawn(|| {
            assert!(thread_may_block());
            set_thread_may_block(false);
            assert!(!thread_may_block());
            set_thread_may_block(true);
            assert!(thread_may_block());
        })
        .join()
        .unwrap();
    }
}
