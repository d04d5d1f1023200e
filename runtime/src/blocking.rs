//! Threads that may not block.
//!
//! A browser page's main thread traps on `memory.atomic.wait32`. The embedder
//! marks such a thread with [`set_thread_may_block(false)`]; from then on the
//! core never sleeps on it: bucket and word locks spin instead (their critical
//! sections are a few instructions), and a call that would have to park
//! panics with a message naming the async alternative instead of trapping.

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

/// Panics with a message an app developer can act on.
#[cold]
#[track_caller]
pub(crate) fn refuse_to_block(what: &str) -> ! {
    panic!(
        "parklot: {what} would block, and this thread may not block (a browser page's main thread); \
         use the async form of the call (lockAsync/waitAsync) on this thread"
    )
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
