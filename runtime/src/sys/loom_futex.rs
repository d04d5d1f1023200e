//! A futex for loom models of the word parker (`word_parker.rs`), which
//! loom cannot run on the real one: `wait` compares the word and sleeps under
//! one lock, `wake` wakes every sleeper under the same lock, as the kernel's
//! hash bucket lock does. A wake that the protocol loses leaves a sleeper
//! nobody wakes, which loom reports as a deadlock.

use crate::sync::{AtomicU32, Condvar, Mutex, Ordering};

loom::lazy_static! {
    static ref FUTEX: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
}

/// Sleeps once if `*word == expected`; callers re-check, as with the real one.
pub(super) fn wait(word: &AtomicU32, expected: u32, _timeout_ns: Option<u64>) {
    let guard = FUTEX.0.lock().unwrap();
    if word.load(Ordering::SeqCst) == expected {
        drop(FUTEX.1.wait(guard).unwrap());
    }
}

/// Wakes the sleepers; the word is only a key and may be dead.
pub(super) fn wake(_word: *const AtomicU32) {
    let _guard = FUTEX.0.lock().unwrap();
    FUTEX.1.notify_all();
}

/// As `wake`, which wakes every sleeper already.
pub(super) fn wake_all(word: *const AtomicU32) {
    wake(word)
}

/// Loom replays executions: time does not move.
pub(super) fn now_ns() -> u64 {
    0
}
