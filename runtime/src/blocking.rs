//! Threads that may not block.
//!
//! A browser page's main thread traps on `memory.atomic.wait32`. On such a
//! thread the core never sleeps: bucket and word locks spin instead (their
//! critical sections are a few instructions), and a call that has to wait (a
//! held `Lock`, `RwLock`, a `Semaphore` without permits, a `Once` another
//! thread runs, a `Condition` or `Barrier` wait, `futex::wait`) queues its
//! record in the ParkingLot like any sleeper and then stays awake watching it
//! (the parkers in `sys`), so it is served in the same order, with the same
//! fairness and hand-offs, and its timeouts hold. Where the caller can
//! await, the async forms are the better choice: they leave the thread free
//! meanwhile. (The JS package refuses blocking calls on such threads itself,
//! since its callers have the async forms.)
//!
//! Which threads those are: with the `wasm-bindgen` feature, on wasm32 with
//! atomics, each thread asks the engine the first time it needs to know
//! (`detect.rs`); otherwise every thread may block. Either way the embedder
//! can say so itself with [`set_thread_may_block`], which always wins.
//!
//! The thread-local's states:
//!
//! | value     | meaning                                                  |
//! |-----------|----------------------------------------------------------|
//! | `NO`      | may not block (told, or detected)                        |
//! | `YES`     | may block (told, detected, or the default)               |
//! | `UNKNOWN` | not asked yet: only where detection is compiled in       |
//!
//! `UNKNOWN` → `NO`/`YES` once, on the first [`thread_may_block`]; any state →
//! `NO`/`YES` by [`set_thread_may_block`].

use core::cell::Cell;

#[cfg(all(
    feature = "wasm-bindgen",
    target_arch = "wasm32",
    target_feature = "atomics"
))]
mod detect;

/// Everywhere else nobody is asked: every thread may block until told.
#[cfg(not(all(
    feature = "wasm-bindgen",
    target_arch = "wasm32",
    target_feature = "atomics"
)))]
mod detect {
    pub(super) const ASKS: bool = false;

    pub(super) fn current_thread_may_block() -> bool {
        true
    }
}

const NO: u8 = 0;
const YES: u8 = 1;
const UNKNOWN: u8 = 2;

/// Where the engine can be asked, a thread starts out not knowing.
const INITIAL: u8 = if detect::ASKS { UNKNOWN } else { YES };

std::thread_local! {
    static MAY_BLOCK: Cell<u8> = const { Cell::new(INITIAL) };
}

/// Declares whether the current thread may sleep. Threads may by default;
/// with the `wasm-bindgen` feature (wasm32 with atomics) the default is what
/// the engine answers, and this overrides it.
pub fn set_thread_may_block(may_block: bool) {
    MAY_BLOCK.with(|m| m.set(if may_block { YES } else { NO }));
}

/// Whether the current thread may sleep (see [`set_thread_may_block`]).
/// With the `wasm-bindgen` feature (wasm32 with atomics) the first call on
/// a thread not told asks the engine (one `Atomics.wait` with a zero
/// timeout). During thread teardown, when thread-locals are gone, threads
/// may block.
#[inline]
pub fn thread_may_block() -> bool {
    match MAY_BLOCK.try_with(Cell::get) {
        Ok(NO) => false,
        Ok(UNKNOWN) => detect_and_remember(),
        Ok(_) | Err(_) => true,
    }
}

/// Asks the engine once per thread, and remembers the answer.
#[cold]
fn detect_and_remember() -> bool {
    let may_block = detect::current_thread_may_block();
    // Err: the thread is being torn down; the next call asks again.
    let _ = MAY_BLOCK.try_with(|m| m.set(if may_block { YES } else { NO }));
    may_block
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

    #[test]
    fn without_detection_a_thread_starts_out_knowing() {
        // Natively (and on wasm without the feature) nobody is asked: every
        // thread starts as YES, so the first call does no detection.
        std::thread::spawn(|| assert_eq!(MAY_BLOCK.with(Cell::get), YES))
            .join()
            .unwrap();
    }
}
