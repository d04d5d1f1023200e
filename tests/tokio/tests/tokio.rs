//! parklot's futures on tokio's multi-threaded runtime: tasks awaiting
//! `lock_async()` and friends, std threads blocking in the same locks, and
//! futures dropped by `tokio::time::timeout` and `select!` while queued.
// clippy knows lock_api's guards (parking_lot's) only as blocking ones; a
// guard from `lock_async()` may be held across an `.await` as tokio's may,
// so long as no task on the same executor thread blocks in `lock()` for it.
#![allow(clippy::await_holding_lock)]

use parklot::{Condvar, CondvarAsync, Mutex, MutexAsync, Once, RwLock, RwLockAsync, Semaphore};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4) // more than the machine's cores, on purpose
        .enable_time()
        .build()
        .unwrap()
}

/// Runs `n` tasks of `task` on `rt`, each given its own clone of `shared`,
/// and waits for them all.
fn tasks<S, F>(rt: &Runtime, n: usize, shared: &S, task: impl Fn(S) -> F)
where
    S: Clone,
    F: Future<Output = ()> + Send + 'static,
{
    rt.block_on(async {
        let tasks: Vec<_> = (0..n).map(|_| tokio::spawn(task(shared.clone()))).collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn tasks_and_blocking_threads_count_exactly_on_one_mutex() {
    const TASKS: usize = 64;
    const ROUNDS: usize = 500;
    let m = Arc::new(Mutex::new(0usize));
    let blockers: Vec<_> = (0..2)
        .map(|_| {
            let m = m.clone();
            std::thread::spawn(move || {
                for _ in 0..ROUNDS {
                    *m.lock() += 1;
                }
            })
        })
        .collect();
    tasks(&runtime(), TASKS, &m, |m| async move {
        for i in 0..ROUNDS {
            let mut g = m.lock_async().await;
            *g += 1;
            if i % 64 == 0 {
                drop(g);
                tokio::task::yield_now().await;
            }
        }
    });
    for b in blockers {
        b.join().unwrap();
    }
    assert_eq!(*m.lock(), (TASKS + 2) * ROUNDS);
}

#[test]
fn a_timed_out_lock_async_leaves_the_queue_and_the_lock_works_on() {
    runtime().block_on(async {
        let m = Arc::new(Mutex::new(0));
        let held = m.lock();
        // Queued behind the holder; the timeout drops the future.
        let r = tokio::time::timeout(Duration::from_millis(20), m.lock_async()).await;
        assert!(r.is_err(), "the lock is held: the wait must time out");
        assert!(
            !unsafe { m.raw() }.has_parked(),
            "the dropped future left the queue"
        );
        drop(held);
        // select!: one branch wins, the other future is dropped while queued.
        let g = m.lock();
        let other = m.clone();
        let t = tokio::spawn(async move {
            tokio::select! {
                mut g = other.lock_async() => { *g += 1; "locked" }
                _ = tokio::time::sleep(Duration::from_millis(50)) => "slept",
            }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(g);
        assert_eq!(t.await.unwrap(), "slept");
        *m.lock_async().await += 10;
        assert_eq!(*m.lock(), 10);
    });
}

#[test]
fn rwlock_semaphore_condvar_and_once_across_tasks_and_threads() {
    let rt = runtime();
    // RwLock: async writers keep two fields equal; blocking readers check.
    let l = Arc::new(RwLock::new((0u64, 0u64)));
    let reader = {
        let l = l.clone();
        std::thread::spawn(move || {
            for _ in 0..2_000 {
                let r = l.read();
                assert_eq!(r.0, r.1, "a read saw half a write");
            }
        })
    };
    tasks(&rt, 8, &l, |l| async move {
        for _ in 0..200 {
            let mut w = l.write_async().await;
            w.0 += 1;
            w.1 += 1;
            drop(w);
            let r = l.read_async().await;
            assert_eq!(r.0, r.1);
        }
    });
    reader.join().unwrap();
    assert_eq!(*l.read(), (1_600, 1_600));

    // Semaphore: never more than 3 inside.
    let s = Arc::new(Semaphore::new(3));
    let inside = Arc::new(AtomicUsize::new(0));
    tasks(&rt, 16, &(s, inside), |(s, inside)| async move {
        for _ in 0..100 {
            s.acquire_async(1).await;
            assert!(inside.fetch_add(1, Ordering::SeqCst) < 3);
            tokio::task::yield_now().await;
            inside.fetch_sub(1, Ordering::SeqCst);
            s.release(1);
        }
    });

    // Condvar: a task waits, a std thread notifies.
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            *pair.0.lock() = true;
            pair.1.notify_one();
        })
    };
    rt.block_on(async {
        let mut g = pair.0.lock_async().await;
        while !*g {
            g = pair.1.wait_async(g).await;
        }
    });
    notifier.join().unwrap();

    // Once: many tasks, one run.
    let once = Arc::new(Once::new());
    let runs = Arc::new(AtomicUsize::new(0));
    tasks(&rt, 16, &(once, runs.clone()), |(once, runs)| async move {
        once.call_once_async(|| {
            std::thread::sleep(Duration::from_millis(5));
            runs.fetch_add(1, Ordering::SeqCst);
        })
        .await
    });
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
