//! A waiter's record: what a queue links together. Each thread has one (a
//! thread-local, reused by every park, so parking allocates nothing), and so
//! does each [`super::AsyncWaiter`].

use super::table::{globals, grow_table};
use super::UnparkToken;
use crate::diagnostics::Kind;
use crate::sync::{thread_local, AtomicBool, AtomicUsize, LockedCell, Ordering};
use crate::sys::Parker;
use core::ptr;

/// What a primitive owes the other waiters when a waiter's owner turns out
/// to be gone for good (a terminated worker, reaped with
/// [`super::abandon_thread`] or [`super::abandon_async`]). Plain functions of
/// the primitive (the `object` of [`Owed`]): the owner's own callbacks died
/// with it.
#[derive(Debug)]
pub struct Abandon {
    /// Runs under the queue lock after a record that was still queued was
    /// taken out, exactly as a wait's `timed_out(key, was_last)` does.
    /// It must not panic and must not call into the ParkingLot.
    pub dequeued: fn(object: *const (), was_last: bool),
    /// Runs with no lock held right after `dequeued`: what a waiter that
    /// timed out does next on its own thread, such as waking the waiters its
    /// wait was keeping out. May call into the ParkingLot; must not panic.
    pub settle: fn(object: *const ()),
    /// Runs with no lock held for a record that an unpark had already
    /// claimed, handing it `token`, before its owner could act on it: passes
    /// on what the owner was handed (a lock hand-off, a notify-one).
    pub claimed: fn(object: *const (), token: UnparkToken),
}

/// What one wait owes if its owner is reaped: `abandon`'s functions, applied
/// to `object` (the primitive waited on, which outlives its waiters); and
/// what it waits with, for the next waiter to check ([`super::queued_with`]).
#[derive(Copy, Clone, Debug)]
pub struct Owed {
    /// What to do.
    pub abandon: &'static Abandon,
    /// The primitive to do it to.
    pub object: *const (),
    /// What the wait goes with (a condition waiter's lock), or null.
    pub with: *const (),
    /// What the wait is for, as the diagnostics' snapshot shows it.
    pub kind: Kind,
}

impl Owed {
    /// Nothing (the futex-style waits: the spec's notify counts a waiter when
    /// it removes it from the list, whatever the waiter does next).
    pub const NOTHING: Owed = Owed {
        abandon: &Abandon {
            dequeued: |_, _| {},
            settle: |_| {},
            claimed: |_, _| {},
        },
        object: ptr::null(),
        with: ptr::null(),
        kind: Kind::Unknown,
    };

    /// Nothing owed, for a wait of `kind`.
    pub const fn nothing(kind: Kind) -> Owed {
        Owed {
            kind,
            ..Owed::NOTHING
        }
    }
}

/// Who waits on a record: what an unpark tells its caller about the woken
/// ([`super::UnparkResult::woken_settles_later`]) and what a requeue may move
/// ([`super::unpark_requeue`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Waits {
    /// A blocked thread ([`super::park_owing`] and the others).
    Thread,
    /// A blocked thread that settles its token later
    /// ([`super::park_owing_until_settled`]).
    ThreadSettlingLater,
    /// Nobody blocks: an [`super::AsyncWaiter`] or a [`super::WakerWait`]'s
    /// record, whose owner resumes by its primitive's own protocol, under the
    /// address it queued on.
    Async,
}

pub(crate) struct ThreadData {
    pub(super) parker: Parker,
    /// The address this record is queued on. Guarded by the bucket lock.
    pub(super) key: LockedCell<usize>,
    /// `key` again, for the record's owner and its reaper to find the bucket
    /// to lock without holding one ([`super::table::lock_bucket_of`]): a
    /// requeue moves a record to another address while its owner sleeps.
    /// Stored with `key`, under the bucket lock of every bucket the record
    /// is in or moves to; Relaxed, since whoever reads it re-reads it under
    /// the lock it chose.
    pub(super) queued_on: AtomicUsize,
    /// Next-newer waiter in the bucket's queue. Guarded by the bucket lock.
    pub(super) next: LockedCell<*const ThreadData>,
    /// Set by the unparker under the bucket lock before it claims the parker;
    /// read by the owner after it sees the claim.
    pub(super) token: LockedCell<UnparkToken>,
    /// What the owner's wait owes others if the owner is gone. Set when the
    /// record is queued; guarded by the bucket lock.
    pub(super) owed: LockedCell<Owed>,
    /// An unpark claimed this record and its owner has not taken the token
    /// yet: set by the unparker (under the bucket lock) before the claim,
    /// cleared by the owner when it takes the token, or, for a wait that
    /// settles later ([`super::park_owing_until_settled`]), once it has acted
    /// on it. Read by a reaper only after the owner is known to be gone.
    pub(super) token_pending: AtomicBool,
    /// Null, or the [`super::WakerWait`] record this one is part of (its
    /// address from `Arc::into_raw`): an unpark that claims it calls its
    /// waker once the bucket lock is released. Set before it is first queued,
    /// never changed after.
    pub(super) waker_record: LockedCell<*const ()>,
    /// Who waits on the record's current wait. Set when the record is
    /// queued; guarded by the bucket lock.
    pub(super) waits: LockedCell<Waits>,
    /// The thread that made the record ([`crate::diagnostics::thread_id`]):
    /// the waiting thread, or the async record's owner. Never changed.
    pub(super) thread: u64,
    /// When the record was queued and when its wait gives up (`u64::MAX`:
    /// never), in the runtime clock's nanoseconds, for the diagnostics'
    /// snapshot. Set when the record is queued; guarded by the bucket lock.
    pub(super) since_ns: LockedCell<u64>,
    pub(super) deadline_ns: LockedCell<u64>,
}

impl ThreadData {
    pub(super) fn new() -> ThreadData {
        let threads = globals().threads.fetch_add(1, Ordering::Relaxed) + 1;
        grow_table(threads);
        ThreadData {
            parker: Parker::new(),
            key: LockedCell::new(0),
            queued_on: AtomicUsize::new(0),
            next: LockedCell::new(ptr::null()),
            token: LockedCell::new(super::DEFAULT_UNPARK_TOKEN),
            owed: LockedCell::new(Owed::NOTHING),
            token_pending: AtomicBool::new(false),
            waker_record: LockedCell::new(ptr::null()),
            waits: LockedCell::new(Waits::Thread),
            thread: crate::diagnostics::thread_id(),
            since_ns: LockedCell::new(0),
            deadline_ns: LockedCell::new(u64::MAX),
        }
    }

    /// Takes the token of the unpark that claimed this record. With
    /// `settle_later` the debt stays on record (a reaper still passes the
    /// token on) until the owner calls [`super::settled`], once it has acted on it.
    ///
    /// # Safety
    /// The claim was observed (Acquire on the parker's word, or under the
    /// bucket lock taken after the unparker's).
    #[inline]
    pub(super) unsafe fn take_token(&self, settle_later: bool) -> UnparkToken {
        if !settle_later {
            self.token_pending.store(false, Ordering::Relaxed);
        }
        // SAFETY: the unparker wrote it before the claim the caller observed.
        unsafe { self.token.get() }
    }
}

// Under loom, thread-locals are dropped after the model's statics, so the
// decrement would touch a dead static; the count only sizes the table, and
// each model execution starts from zero anyway. In wasm, std never runs
// thread-local destructors (a thread's end is its reaping, which stops
// counting it), and registering one allocates from std's own dlmalloc,
// behind a global lock that a worker terminated meanwhile would leave held
// (`heap.rs`): no destructor there means no such allocation.
#[cfg(not(any(loom, target_family = "wasm")))]
impl Drop for ThreadData {
    fn drop(&mut self) {
        globals().threads.fetch_sub(1, Ordering::Relaxed);
    }
}

thread_local! {
    pub(super) static THREAD_DATA: ThreadData = ThreadData::new();
}

/// Runs `f` with this thread's record: the thread-local one, or a fresh one on
/// the stack while the thread-locals are being torn down.
pub(super) fn with_thread_data<T>(f: impl FnOnce(&ThreadData) -> T) -> T {
    let mut fallback = None;
    let data = THREAD_DATA
        .try_with(|d| d as *const ThreadData)
        .unwrap_or_else(|_| fallback.insert(ThreadData::new()) as *const ThreadData);
    // SAFETY: the thread-local lives until the thread exits, and `fallback`
    // until this function returns; both outlast `f`.
    f(unsafe { &*data })
}
