//! Futures for async Rust: [`Lock::lock_async`], [`MutexAsync::lock_async`],
//! [`RwLockAsync::read_async`] and [`RwLockAsync::write_async`],
//! [`Semaphore::acquire_async`], [`CondvarAsync::wait_async`] and
//! [`Once::call_once_async`].
//!
//! Each is one [`Acquire`] over the primitive's asynchronous steps (the
//! `*_async_begin`, `*_async_resume` and `*_async_cancel` the JS package's
//! `lockAsync` uses), with a [`TaskWaiter`] as the record: an async waiter
//! queues in the same FIFO queue as the blocked threads, is handed the lock
//! by the same fair unlock, and wakes its task when its turn comes. Any
//! executor serves (tokio, `wasm-bindgen-futures` on a page's main thread,
//! `futures::executor`); none is a dependency.
//!
//! Dropping a pending future gives the attempt up: its record leaves the
//! queue, and what was handed to it meanwhile is passed on (a lock is
//! released; the waiters it kept out are woken).
//!
//! ```
//! use parklot::{Mutex, MutexAsync};
//! # fn block_on<F: core::future::Future>(f: F) -> F::Output {
//! #     let waker = std::task::Waker::noop();
//! #     let mut cx = std::task::Context::from_waker(&waker);
//! #     let mut f = core::pin::pin!(f);
//! #     loop {
//! #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
//! #         std::thread::yield_now();
//! #     }
//! # }
//! let m = Mutex::new(1);
//! block_on(async {
//!     *m.lock_async().await += 1;
//! });
//! assert_eq!(*m.lock(), 2);
//! ```

use crate::condition::{Condition, Condvar};
use crate::lock::{Lock, Mutex, MutexGuard};
use crate::once::{Once, OnceBegin};
use crate::parking_lot::{AsyncWaiter, TaskWaiter};
use crate::rwlock::{RawRwLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use crate::semaphore::Semaphore;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

mod sealed {
    pub trait Sealed {}
}

/// A primitive's asynchronous acquisition in steps: what [`Acquire`] drives.
/// Implemented by a handle on the primitive (`&Lock`, `&Mutex<T>`, a read
/// or a write of an `RwLock`, permits of a `Semaphore`); sealed.
pub trait Acquirable: Copy + sealed::Sealed {
    /// What the future resolves to: a guard, or `()`.
    type Acquired;

    /// Acquires without waiting, if it can.
    fn try_acquire(self) -> bool;

    /// Acquires, or queues `waiter` and returns `false`.
    ///
    /// # Safety
    /// The primitive's `*_async_begin` contract.
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool;

    /// After `waiter`'s wait was settled: acquires, or queues it again and
    /// returns `false`.
    ///
    /// # Safety
    /// The primitive's `*_async_resume` contract.
    unsafe fn resume(self, waiter: &AsyncWaiter) -> bool;

    /// Gives up `waiter`'s attempt; `true` if it was acquired after all.
    ///
    /// # Safety
    /// The primitive's `*_async_cancel` contract.
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool;

    /// Undoes an acquisition.
    ///
    /// # Safety
    /// The caller acquired it and gives it back once.
    unsafe fn release(self);

    /// Wraps an acquisition as the future's output.
    ///
    /// # Safety
    /// The caller acquired it and hands it to the output.
    unsafe fn acquired(self) -> Self::Acquired;
}

/// A pending asynchronous acquisition of `P`, resolving to `P::Acquired`.
/// Fair and FIFO with the blocked threads of the same primitive (it waits in
/// their queue); dropping it before it resolves gives the attempt up.
#[must_use = "a future does nothing unless awaited"]
pub struct Acquire<P: Acquirable> {
    primitive: P,
    /// The record, once the attempt had to wait; `None` before (the fast
    /// path allocates nothing) and after it resolved.
    waiter: Option<TaskWaiter>,
    done: bool,
}

impl<P: Acquirable> Acquire<P> {
    fn new(primitive: P) -> Acquire<P> {
        Acquire {
            primitive,
            waiter: None,
            done: false,
        }
    }

    /// An attempt whose first step the caller took: `waiter` is queued by
    /// `primitive`'s begin (through [`TaskWaiter::queue`]).
    fn queued(primitive: P, waiter: TaskWaiter) -> Acquire<P> {
        Acquire {
            primitive,
            waiter: Some(waiter),
            done: false,
        }
    }
}

// Nothing in it is pinned: the record is on the heap.
impl<P: Acquirable> Unpin for Acquire<P> {}

impl<P: Acquirable> Future for Acquire<P> {
    type Output = P::Acquired;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<P::Acquired> {
        assert!(
            !self.done,
            "parklot: an Acquire future polled after it resolved"
        );
        let p = self.primitive;
        loop {
            let acquired = match &self.waiter {
                None if p.try_acquire() => true,
                None => {
                    let waiter = TaskWaiter::new();
                    // SAFETY: a new record, kept (in `self.waiter`) until the
                    // attempt ends; the primitive's begin.
                    let acquired = unsafe { waiter.queue(|w| p.begin(w)) };
                    match acquired {
                        Ok(acquired) => {
                            self.waiter = Some(waiter);
                            acquired
                        }
                        Err(refused) => {
                            self.done = true;
                            panic!("{refused}");
                        }
                    }
                }
                Some(waiter) => {
                    // Registers the task, or finds the wait settled already.
                    if !waiter.settled(cx) {
                        return Poll::Pending;
                    }
                    // SAFETY: settled, so it may be queued again; queued by
                    // this primitive's begin (or resume) before.
                    match unsafe { waiter.queue(|w| p.resume(w)) } {
                        Ok(acquired) => acquired,
                        Err(refused) => {
                            // Not queued: nothing for the drop to cancel.
                            self.waiter = None;
                            self.done = true;
                            panic!("{refused}");
                        }
                    }
                }
            };
            if acquired {
                self.waiter = None;
                self.done = true;
                // SAFETY: acquired just above, handed to the output.
                return Poll::Ready(unsafe { p.acquired() });
            }
        }
    }
}

impl<P: Acquirable> Drop for Acquire<P> {
    fn drop(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            // SAFETY: queued by this attempt, which has not ended.
            if unsafe { self.primitive.cancel(waiter.waiter()) } {
                // SAFETY: handed over after all; nobody will use it.
                unsafe { self.primitive.release() };
            }
        }
    }
}

impl<P: Acquirable> core::fmt::Debug for Acquire<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Acquire")
            .field("queued", &self.waiter.is_some())
            .field("done", &self.done)
            .finish()
    }
}

// ---- Lock and Mutex ----

impl sealed::Sealed for &Lock {}

impl Acquirable for &Lock {
    type Acquired = ();

    fn try_acquire(self) -> bool {
        self.try_lock()
    }
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.lock_async_begin(waiter) }
    }
    unsafe fn resume(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.lock_async_resume(waiter) }
    }
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.lock_async_cancel(waiter) }
    }
    unsafe fn release(self) {
        self.unlock();
    }
    unsafe fn acquired(self) {}
}

impl Lock {
    /// Takes the lock asynchronously: the future resolves once it holds the
    /// lock (release it with [`unlock`](Self::unlock)). It waits in the same
    /// queue as the blocked threads, and never blocks or spins.
    pub fn lock_async(&self) -> Acquire<&Lock> {
        Acquire::new(self)
    }
}

impl<T: ?Sized> sealed::Sealed for &Mutex<T> {}

impl<'a, T: ?Sized> Acquirable for &'a Mutex<T> {
    type Acquired = MutexGuard<'a, T>;

    fn try_acquire(self) -> bool {
        // SAFETY: the raw lock is only locked here and released by a guard.
        unsafe { self.raw() }.try_acquire()
    }
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.raw().begin(waiter) }
    }
    unsafe fn resume(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.raw().resume(waiter) }
    }
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.raw().cancel(waiter) }
    }
    unsafe fn release(self) {
        // SAFETY: forwarded.
        unsafe { self.force_unlock(lock_api::GuardSend::new()) }
    }
    unsafe fn acquired(self) -> MutexGuard<'a, T> {
        // SAFETY: the caller holds the lock and hands it to the guard.
        unsafe { self.make_guard_unchecked(lock_api::GuardSend::new()) }
    }
}

/// [`Mutex`]'s asynchronous lock (an extension trait: `Mutex` is
/// `lock_api`'s type).
pub trait MutexAsync<T: ?Sized> {
    /// Locks the mutex asynchronously; the future resolves to its guard. It
    /// waits in the same queue as the blocked threads.
    fn lock_async(&self) -> Acquire<&Mutex<T>>;
}

impl<T: ?Sized> MutexAsync<T> for Mutex<T> {
    fn lock_async(&self) -> Acquire<&Mutex<T>> {
        Acquire::new(self)
    }
}

// ---- RwLock ----

/// A read of an [`RwLock`], as [`Acquire`] takes it.
pub struct Read<'a, T: ?Sized>(&'a RwLock<T>);
/// A write of an [`RwLock`], as [`Acquire`] takes it.
pub struct Write<'a, T: ?Sized>(&'a RwLock<T>);

/// The raw lock under an `RwLock`.
fn raw<T: ?Sized>(lock: &RwLock<T>) -> &RawRwLock {
    // SAFETY: only the steps below lock it, each released by a guard or by
    // `release`.
    unsafe { lock.raw() }
}

/// One side of an [`RwLock`] ([`Read`], [`Write`]) as [`Acquirable`], over
/// the `RawRwLock` methods of that side's hold and the `RwLock` method that
/// wraps a hold in its guard.
macro_rules! rw_side {
    ($side:ident => $guard:ident: $try:ident, $begin:ident, $resume:ident, $cancel:ident,
     $unlock:ident, $make_guard:ident) => {
        impl<T: ?Sized> Clone for $side<'_, T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T: ?Sized> Copy for $side<'_, T> {}
        impl<T: ?Sized> sealed::Sealed for $side<'_, T> {}

        impl<'a, T: ?Sized> Acquirable for $side<'a, T> {
            type Acquired = $guard<'a, T>;

            fn try_acquire(self) -> bool {
                raw(self.0).$try()
            }
            unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
                // SAFETY: forwarded.
                unsafe { raw(self.0).$begin(waiter) }
            }
            unsafe fn resume(self, waiter: &AsyncWaiter) -> bool {
                // SAFETY: forwarded.
                unsafe { raw(self.0).$resume(waiter) }
            }
            unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
                // SAFETY: forwarded.
                unsafe { raw(self.0).$cancel(waiter) }
            }
            unsafe fn release(self) {
                // SAFETY: forwarded.
                unsafe { raw(self.0).$unlock() }
            }
            unsafe fn acquired(self) -> $guard<'a, T> {
                // SAFETY: the caller holds this side's hold and hands it to the guard.
                unsafe { self.0.$make_guard(lock_api::GuardSend::new()) }
            }
        }
    };
}

rw_side!(Read => RwLockReadGuard: try_lock_shared, lock_shared_async_begin,
    lock_shared_async_resume, lock_shared_async_cancel, unlock_shared, make_read_guard_unchecked);
rw_side!(Write => RwLockWriteGuard: try_lock_exclusive, lock_exclusive_async_begin,
    lock_exclusive_async_resume, lock_exclusive_async_cancel, unlock_exclusive,
    make_write_guard_unchecked);

/// [`RwLock`]'s asynchronous read and write (an extension trait: `RwLock`
/// is `lock_api`'s type).
pub trait RwLockAsync<T: ?Sized> {
    /// Takes a read asynchronously; resolves to its guard.
    fn read_async(&self) -> Acquire<Read<'_, T>>;
    /// Takes the write lock asynchronously; resolves to its guard.
    fn write_async(&self) -> Acquire<Write<'_, T>>;
}

impl<T: ?Sized> RwLockAsync<T> for RwLock<T> {
    fn read_async(&self) -> Acquire<Read<'_, T>> {
        Acquire::new(Read(self))
    }
    fn write_async(&self) -> Acquire<Write<'_, T>> {
        Acquire::new(Write(self))
    }
}

// ---- Semaphore ----

/// `n` permits of a [`Semaphore`], as [`Acquire`] takes them.
#[derive(Copy, Clone)]
pub struct Permits<'a> {
    semaphore: &'a Semaphore,
    n: u32,
}

impl sealed::Sealed for Permits<'_> {}

impl Acquirable for Permits<'_> {
    type Acquired = ();

    fn try_acquire(self) -> bool {
        self.semaphore.try_acquire(self.n)
    }
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.semaphore.acquire_async_begin(self.n, waiter) }
    }
    unsafe fn resume(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.semaphore.acquire_async_resume(self.n, waiter) }
    }
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        unsafe { self.semaphore.acquire_async_cancel(self.n, waiter) }
    }
    unsafe fn release(self) {
        self.semaphore.release(self.n);
    }
    unsafe fn acquired(self) {}
}

impl Semaphore {
    /// Takes `n` permits asynchronously: the future resolves once they are
    /// taken (give them back with [`release`](Self::release)). It waits in
    /// the same FIFO queue as the blocked threads.
    ///
    /// # Panics
    /// If `n` exceeds [`MAX_PERMITS`](crate::MAX_PERMITS) (it could never be satisfied).
    pub fn acquire_async(&self, n: u32) -> Acquire<Permits<'_>> {
        assert!(n <= crate::MAX_PERMITS, "Semaphore: too many permits");
        Acquire::new(Permits { semaphore: self, n })
    }
}

// ---- Condvar ----

/// A wait on a [`Condition`] with `lock`, queued and the lock released: it
/// resolves when a notify claims it (then the lock is taken back).
#[derive(Copy, Clone)]
struct Notified<'a> {
    condition: &'a Condition,
    lock: &'a Lock,
}

impl sealed::Sealed for Notified<'_> {}

impl Acquirable for Notified<'_> {
    type Acquired = ();

    fn try_acquire(self) -> bool {
        false // a wait always waits for a notify
    }
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded (the caller holds the lock).
        match unsafe { self.condition.wait_async_begin(self.lock, waiter) } {
            Ok(()) => false,
            Err(e) => panic!("Condvar::wait_async: {e}"),
        }
    }
    unsafe fn resume(self, _waiter: &AsyncWaiter) -> bool {
        true // settled: a notify (or notify_all) claimed it
    }
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded.
        if unsafe { self.condition.wait_async_cancel(waiter) } {
            // Notified, but nobody will act on it: pass the notify on, as a
            // dropped waiter must not swallow a notify_one.
            self.condition.notify_one();
        }
        false
    }
    unsafe fn release(self) {}
    unsafe fn acquired(self) {}
}

/// [`Condvar`]'s asynchronous wait (an extension trait: `Condvar` is
/// `lock_api`'s type).
pub trait CondvarAsync {
    /// Releases the guard's lock and waits for a notify, then takes the lock
    /// back (asynchronously) and resolves to the guard. Waits queue with
    /// the blocking ones: `notify_one` wakes the oldest of either kind.
    /// No spurious wakeups. Dropped while waiting, it passes on a notify it
    /// was given; the lock is then not held.
    ///
    /// # Panics
    /// If other waiters of this condition variable wait with another mutex
    /// (the lock stays held: the guard is dropped as the panic unwinds).
    fn wait_async<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
    ) -> impl Future<Output = MutexGuard<'a, T>>;
}

impl CondvarAsync for Condvar {
    fn wait_async<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
    ) -> impl Future<Output = MutexGuard<'a, T>> {
        let condition = self.raw();
        async move {
            let mutex = MutexGuard::mutex(&guard);
            // SAFETY: the guard proves the lock is held; the wait releases it.
            let lock = unsafe { mutex.raw() };
            let notified = Notified { condition, lock };
            let waiter = TaskWaiter::new();
            // SAFETY: a new record, kept by the Acquire below until settled.
            // Panics (wrong lock) before anything changed: the guard unlocks.
            unsafe { waiter.queue(|w| notified.begin(w)) }
                .expect("a condition's wait is never refused");
            // Queued, and the lock released by the wait: the guard no longer holds it.
            core::mem::forget(guard);
            Acquire::queued(notified, waiter).await;
            mutex.lock_async().await
        }
    }
}

// ---- Once ----

/// The end of a [`Once`]'s run in progress, as [`Acquire`] waits for it.
#[derive(Copy, Clone)]
struct RunEnded<'a>(&'a Once);

impl sealed::Sealed for RunEnded<'_> {}

impl Acquirable for RunEnded<'_> {
    type Acquired = ();

    fn try_acquire(self) -> bool {
        false // only asked while a run was in progress: begin looks again
    }
    unsafe fn begin(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded; queued only while a run is in progress.
        !unsafe { self.0.wait_async_begin(waiter) }
    }
    unsafe fn resume(self, _waiter: &AsyncWaiter) -> bool {
        true // settled: the run ended (look again)
    }
    unsafe fn cancel(self, waiter: &AsyncWaiter) -> bool {
        // SAFETY: forwarded. Nothing is held either way.
        unsafe { self.0.wait_async_cancel(waiter) };
        false
    }
    unsafe fn release(self) {}
    unsafe fn acquired(self) {}
}

/// Ends a run claimed with [`Once::try_begin`]: done, or poisoned if the
/// closure unwound (the guard drops before `completed` is set).
struct EndRun<'a> {
    once: &'a Once,
    completed: bool,
}

impl Drop for EndRun<'_> {
    fn drop(&mut self) {
        // SAFETY: made only right after a claimed `OnceBegin::Run`.
        unsafe { self.once.finish(self.completed) }
    }
}

impl Once {
    /// [`call_once`](Self::call_once) for async callers: runs `f` if no
    /// closure has completed; while another thread runs one, waits for it
    /// asynchronously (never blocking or spinning), then looks again.
    ///
    /// # Panics
    /// If a closure panicked on this `Once` (it is poisoned); if `f` panics
    /// (which poisons it).
    pub async fn call_once_async(&self, f: impl FnOnce()) {
        loop {
            match self.try_begin(false) {
                OnceBegin::Done => return,
                OnceBegin::Poisoned => panic!("Once instance has previously been poisoned"),
                OnceBegin::Run(_) => {
                    let mut end = EndRun {
                        once: self,
                        completed: false,
                    };
                    f();
                    end.completed = true;
                    return;
                }
                OnceBegin::Running => Acquire::new(RunEnded(self)).await,
            }
        }
    }
}
