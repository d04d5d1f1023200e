//! Threads for the unit tests: what each `tests.rs` that contends from
//! several threads uses. Not part of the library.

/// Runs `body(t)` on `threads` threads (`t`: the thread's index) while this
/// thread runs `meanwhile`, then joins them; returns what `meanwhile`
/// returned. A panic in any of the threads fails the caller.
pub fn with_threads<R>(
    threads: usize,
    body: impl Fn(usize) + Sync,
    meanwhile: impl FnOnce() -> R,
) -> R {
    std::thread::scope(|s| {
        for t in 0..threads {
            let body = &body;
            s.spawn(move || body(t));
        }
        meanwhile()
    })
}

/// Runs `body(t, i)` for `i` in `0..per` on each of `threads` threads at
/// once (`t`: the thread's index) and joins them all.
pub fn contend(threads: usize, per: usize, body: impl Fn(usize, usize) + Sync) {
    with_threads(threads, |t| (0..per).for_each(|i| body(t, i)), || ());
}

/// Runs `waiter` on a thread that may not block, while this thread holds
/// what it waits for, then after 20 ms runs `release` and joins it.
pub fn waits_awake(waiter: impl FnOnce() + Send, release: impl FnOnce()) {
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            crate::set_thread_may_block(false);
            waiter();
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        release();
        waiter.join().unwrap();
    });
}
