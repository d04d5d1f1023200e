//! Exact wake semantics on the paths that mix waiter kinds: a notify that
//! reports `n` wakes exactly `n` waiters, and each of them, and only they,
//! report "ok"/notified (issue: exact wait/notify and Condition semantics).
#![cfg(not(loom))]

use parklot::futex::{self, wait32, wait32_async_begin, WaitResult};
use parklot::parking_lot::{self, AsyncWaiter};
use parklot::{Condition, Lock};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn wait_until_parked(key: usize, n: usize) {
    while parking_lot::parked_count(key) != n {
        std::thread::yield_now();
    }
}

/// After a wake of one: the oldest waiter, the async `record`, was chosen,
/// and the blocking waiter behind it does not report woken (`woke`) 50 ms on.
fn only_the_record_was_chosen(record: &AsyncWaiter, woke: &AtomicBool, what: &str) {
    assert!(
        record.poll().is_some(),
        "the oldest waiter, the async record, was chosen"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert!(!woke.load(Ordering::SeqCst), "{what}");
}

#[test]
fn notify_one_with_an_async_record_first_wakes_only_that_record() {
    let word = Arc::new(AtomicI32::new(0));
    let key = Arc::as_ptr(&word) as usize;
    let record = AsyncWaiter::new();
    // SAFETY: the record outlives the wait, which is settled below.
    assert!(unsafe { wait32_async_begin(&word, 0, &record) });
    let w = word.clone();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let blocking = std::thread::spawn(move || {
        let r = wait32(&w, 0, None);
        d.store(true, Ordering::SeqCst);
        r
    });
    wait_until_parked(key, 2);
    assert_eq!(futex::notify(&*word, 1), 1);
    only_the_record_was_chosen(
        &record,
        &done,
        "notify(1) returned 1 but the blocking waiter behind the async record woke too",
    );
    assert_eq!(
        parking_lot::parked_count(key),
        1,
        "the blocking waiter stays queued"
    );
    assert_eq!(futex::notify(&*word, 1), 1);
    assert_eq!(blocking.join().unwrap(), WaitResult::Ok);
}

#[test]
fn condition_notify_one_with_an_async_waiter_first_notifies_only_it() {
    let pair = Arc::new((Lock::new(), Condition::new()));
    let key = &pair.1 as *const Condition as usize;
    let record = AsyncWaiter::new();
    pair.0.lock();
    // SAFETY: the lock is held; the record outlives the wait.
    unsafe { pair.1.wait_async_begin(&pair.0, &record) }.unwrap();
    let p = pair.clone();
    let notified = Arc::new(AtomicBool::new(false));
    let n = notified.clone();
    let blocking = std::thread::spawn(move || {
        p.0.lock();
        // SAFETY: the lock is held.
        let r = unsafe { p.1.wait_raw(&p.0, None) };
        n.store(true, Ordering::SeqCst);
        p.0.unlock();
        r
    });
    wait_until_parked(key, 2);
    assert!(pair.1.notify_one());
    only_the_record_was_chosen(
        &record,
        &notified,
        "one notify_one made two waiters report notified",
    );
    assert!(pair.1.notify_one());
    assert!(blocking.join().unwrap());
}

#[test]
fn unpark_one_hands_its_token_to_an_async_record_when_it_is_time_to_be_fair() {
    let word = AtomicI32::new(0);
    let key = &word as *const AtomicI32 as usize;
    let record = AsyncWaiter::new();
    // The bucket's fairness timer re-arms at most 1 ms ahead: after 2 ms the
    // first unpark on it is told to be fair.
    std::thread::sleep(Duration::from_millis(2));
    // SAFETY: the record outlives the wait.
    assert!(unsafe { wait32_async_begin(&word, 0, &record) });
    let mut fair = false;
    // SAFETY: the callback only records what it saw.
    let r = unsafe {
        parking_lot::unpark_one(key, |r| {
            fair = r.time_to_be_fair;
            if r.did_unpark {
                42
            } else {
                0
            }
        })
    };
    assert!(r.did_unpark && fair, "{r:?}");
    assert_eq!(
        record.poll(),
        Some(42),
        "the woken record must receive the callback's token"
    );
}

#[test]
fn reaping_a_record_whose_wait_already_timed_out_changes_nothing() {
    // A record that left its queue on a timeout is not queued any more:
    // reaping it must neither walk a queue for it nor wake anyone.
    let word = AtomicI32::new(0);
    let key = &word as *const AtomicI32 as usize;
    let record = AsyncWaiter::new();
    // SAFETY: the record outlives the wait, settled by the cancel.
    assert!(unsafe { wait32_async_begin(&word, 0, &record) });
    assert_eq!(
        unsafe { futex::wait_async_cancel(key, &record) },
        WaitResult::TimedOut
    );
    // SAFETY: nobody uses the record again.
    unsafe { parking_lot::abandon_async(&record) };
    assert_eq!(parking_lot::parked_count(key), 0);
    assert_eq!(futex::notify(&word, futex::NOTIFY_ALL), 0);
}

/// Waits that call back, mixed with blocking waiters in one queue, while
/// other threads expire and cancel some of them: every wait ends exactly
/// once, and the notifies' counts add up to the waits they ended.
#[test]
fn waker_waits_racing_notify_expire_and_cancel_end_once_and_are_counted_once() {
    use parklot::futex::wait32_with_waker;
    use parklot::parking_lot::WaitOutcome;
    use std::sync::atomic::AtomicUsize;

    let word = Arc::new(AtomicI32::new(0));
    let key = Arc::as_ptr(&word) as usize;
    let rounds = 200;
    for round in 0..rounds {
        let woken_by_waker = Arc::new(AtomicUsize::new(0));
        let given_up = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let waits: Vec<_> = (0..4)
            .map(|_| {
                let (w, c) = (woken_by_waker.clone(), calls.clone());
                wait32_with_waker(
                    &word,
                    0,
                    Box::new(move |outcome| {
                        c.fetch_add(1, Ordering::SeqCst);
                        if matches!(outcome, WaitOutcome::Woken(_)) {
                            w.fetch_add(1, Ordering::SeqCst);
                        }
                    }),
                )
                .expect("queued")
            })
            .collect();
        let w2 = word.clone();
        let blocking = std::thread::spawn(move || wait32(&w2, 0, Some(Duration::from_secs(30))));
        wait_until_parked(key, 5);
        let waits = Arc::new(waits);
        let (ws, g) = (waits.clone(), given_up.clone());
        let giver = std::thread::spawn(move || {
            for (i, w) in ws.iter().enumerate() {
                let ended = if i % 2 == 0 { w.expire() } else { w.cancel() };
                g.fetch_add(ended as usize, Ordering::SeqCst);
            }
        });
        let mut counted = futex::notify(&*word, 2);
        giver.join().unwrap();
        counted += futex::notify(&*word, futex::NOTIFY_ALL);
        assert_eq!(blocking.join().unwrap(), WaitResult::Ok, "round {round}");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            4,
            "round {round}: each waker once"
        );
        assert_eq!(
            counted,
            woken_by_waker.load(Ordering::SeqCst) + 1,
            "round {round}: notifies count the waits they ended (and the thread)"
        );
        assert_eq!(
            given_up.load(Ordering::SeqCst) + woken_by_waker.load(Ordering::SeqCst),
            4,
            "round {round}"
        );
        assert_eq!(parking_lot::parked_count(key), 0);
    }
}
