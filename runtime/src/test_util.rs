//! Helpers the crate's unit tests share.

/// Runs `f(i)` on `n` threads at once (`i` in `0..n`) and waits for them
/// all; a panic in any of them fails the caller.
pub(crate) fn on_threads(n: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for i in 0..n {
            let f = &f;
            s.spawn(move || f(i));
        }
    });
}
