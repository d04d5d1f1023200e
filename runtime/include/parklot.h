/*
 * parklot.h - C interface to parklot, a WebKit-style ParkingLot runtime.
 *
 * - parklot_lock_t: a one-byte adaptive lock (barging, eventually fair).
 * - parklot_condition_t: a one-byte condition variable with no spurious
 *   wakeups, used together with a parklot_lock_t.
 * - parklot_wait32 / parklot_wait64 / parklot_notify: futex-style waiting on
 *   any aligned integer, with the semantics of JS Atomics.wait/Atomics.notify.
 *
 * Link with libparklot.a (built by `cargo build --release -p parklot`) and
 * -lpthread -ldl -lm.
 *
 * Conventions:
 * - Every pointer is checked: NULL (and, for the wait functions, a misaligned
 *   address) gives PARKLOT_EINVAL and touches nothing.
 * - Timeouts are relative, in nanoseconds, on the monotonic clock; a negative
 *   timeout means "wait forever".
 * - Locks and conditions have no owner: any thread may unlock a lock, but
 *   parklot_condition_wait must be called by a thread holding the lock.
 * - The `state` bytes are the library's: initialise them with the _INIT
 *   macros (or zero the memory) and never read or write them directly.
 */
#ifndef PARKLOT_H
#define PARKLOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (negative, so they never collide with a result). */

/** A bad argument: a NULL or misaligned pointer. */
#define PARKLOT_EINVAL (-1)
/** parklot_unlock* or parklot_condition_wait on a lock that is not locked. */
#define PARKLOT_ENOTLOCKED (-2)
/** parklot_lock_checked took the lock, but its last holder died holding it
 *  (released by parklot_unlock_owner_died): the data it guards may be inconsistent. */
#define PARKLOT_EOWNERDEAD (-3)
/** parklot_once found the once poisoned: a Rust closure sharing it panicked
 *  (C alone never poisons one); the function did not run. */
#define PARKLOT_EPOISONED (-4)
/** A barrier wait failed: the barrier is broken. A party gave up (its timed
 *  wait expired, its async wait was cancelled, its thread was reaped while it
 *  waited), or parklot_barrier_reset ran while this one waited. Every wait
 *  fails with it at once until parklot_barrier_reset. */
#define PARKLOT_BARRIER_BROKEN (-5)
/** A barrier wait gave up (its timeout passed, or it was cancelled) before
 *  the barrier opened, and broke it: the other parties get
 *  PARKLOT_BARRIER_BROKEN. */
#define PARKLOT_BARRIER_TIMED_OUT (-6)
/** Deadlock detection (parklot_set_deadlock_detection) refused a wait that
 *  would have closed a cycle of threads waiting for each other's locks:
 *  nothing was taken. parklot_last_deadlock says which cycle. */
#define PARKLOT_EDEADLK (-7)

/* Results of parklot_wait32 / parklot_wait64 (Atomics.wait's three strings). */

/** "ok": woken by parklot_notify. */
#define PARKLOT_WAIT_OK 0
/** "not-equal": the value differed from `expected`; did not sleep. */
#define PARKLOT_WAIT_NOT_EQUAL 1
/** "timed-out": the timeout passed before any notify. */
#define PARKLOT_WAIT_TIMED_OUT 2
/** Ended by parklot_cancel_range or parklot_thread_interrupt (no JS string:
 *  the embedder decides what its caller sees). */
#define PARKLOT_WAIT_CANCELLED 3

/** parklot_notify's `count` meaning "every waiter". */
#define PARKLOT_NOTIFY_ALL UINT64_MAX

/** A one-byte lock. Initialise with PARKLOT_LOCK_INIT or zeroed memory. */
typedef struct parklot_lock {
    uint8_t state;
} parklot_lock_t;

/** A one-byte condition variable. Initialise with PARKLOT_CONDITION_INIT. */
typedef struct parklot_condition {
    uint8_t state;
} parklot_condition_t;

#define PARKLOT_LOCK_INIT {0}
#define PARKLOT_CONDITION_INIT {0}

/* The library's Lock and Condition are one byte each; so must these be. */
#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(parklot_lock_t) == 1, "parklot_lock_t must be one byte");
static_assert(sizeof(parklot_condition_t) == 1, "parklot_condition_t must be one byte");
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(parklot_lock_t) == 1, "parklot_lock_t must be one byte");
_Static_assert(sizeof(parklot_condition_t) == 1, "parklot_condition_t must be one byte");
#else
/* C99 and C++98: an array of negative size fails to compile. */
typedef char parklot_lock_t_is_one_byte[sizeof(parklot_lock_t) == 1 ? 1 : -1];
typedef char parklot_condition_t_is_one_byte[sizeof(parklot_condition_t) == 1 ? 1 : -1];
#endif

/* ---- Lock ---------------------------------------------------------------- */

/** Acquires the lock, spinning briefly and then sleeping.
 *  Returns 0, PARKLOT_EDEADLK (deadlock detection refused the wait; nothing
 *  taken), or PARKLOT_EINVAL for NULL. */
int32_t parklot_lock(parklot_lock_t *lock);

/** Acquires the lock like parklot_lock, and reports a holder that died
 *  holding it (a robust mutex's EOWNERDEAD): returns 0, PARKLOT_EOWNERDEAD
 *  (the caller holds the lock; check the data it guards), or PARKLOT_EINVAL. */
int32_t parklot_lock_checked(parklot_lock_t *lock);

/** For an embedder that reaps a thread that is gone for good: releases a lock
 *  it held and marks it, so that the next parklot_lock_checked reports
 *  PARKLOT_EOWNERDEAD (once). Never hands the lock over.
 *  Returns 0, PARKLOT_ENOTLOCKED (nothing changed) or PARKLOT_EINVAL. */
int32_t parklot_unlock_owner_died(parklot_lock_t *lock);

/** Acquires the lock if it is free, without waiting.
 *  Returns 1 if taken, 0 if not, PARKLOT_EINVAL for NULL. */
int32_t parklot_try_lock(parklot_lock_t *lock);

/** Acquires the lock, waiting at most timeout_ns (negative: forever).
 *  Returns 1 if taken, 0 on timeout, PARKLOT_EINVAL for NULL. */
int32_t parklot_try_lock_for(parklot_lock_t *lock, int64_t timeout_ns);

/** Releases the lock; a sleeping waiter may be woken to compete for it.
 *  Returns 0, PARKLOT_ENOTLOCKED (nothing changed) or PARKLOT_EINVAL. */
int32_t parklot_unlock(parklot_lock_t *lock);

/** Releases the lock, handing it directly to the oldest waiter if any.
 *  Returns 0, PARKLOT_ENOTLOCKED (nothing changed) or PARKLOT_EINVAL. */
int32_t parklot_unlock_fair(parklot_lock_t *lock);

/** A snapshot of whether the lock is held.
 *  Returns 1 if locked, 0 if not, PARKLOT_EINVAL for NULL. */
int32_t parklot_is_locked(const parklot_lock_t *lock);

/* ---- Condition ----------------------------------------------------------- */

/** Atomically releases `lock` (which the caller holds) and sleeps until
 *  notified or until timeout_ns (negative: forever), then re-takes `lock`.
 *  Returns 1 if notified, 0 on timeout (the lock is held again in both cases),
 *  PARKLOT_ENOTLOCKED if `lock` was not locked, PARKLOT_EINVAL for NULL. */
int32_t parklot_condition_wait(parklot_condition_t *cond, parklot_lock_t *lock, int64_t timeout_ns);

/** Wakes the oldest waiter on `cond`.
 *  Returns 1 if there was one, 0 if not, PARKLOT_EINVAL for NULL. */
int32_t parklot_condition_notify_one(parklot_condition_t *cond);

/** Wakes every waiter on `cond`: blocked ones are moved, asleep, onto the
 *  queue of the lock they wait with (none woken while it is held, one if it
 *  is free), and each release of the lock wakes the next, instead of all
 *  waking at once to fight for it.
 *  Returns how many were released, or PARKLOT_EINVAL for NULL. */
int64_t parklot_condition_notify_all(parklot_condition_t *cond);

/* ---- Atomics.wait / Atomics.notify --------------------------------------- */

/** Sleeps while *addr == expected, until notified or timeout_ns (negative:
 *  forever). `addr` must be 4-byte aligned and otherwise accessed atomically.
 *  Returns PARKLOT_WAIT_OK, PARKLOT_WAIT_NOT_EQUAL, PARKLOT_WAIT_TIMED_OUT or
 *  PARKLOT_EINVAL (NULL or misaligned). */
int32_t parklot_wait32(const int32_t *addr, int32_t expected, int64_t timeout_ns);

/** As parklot_wait32, for a 64-bit word (8-byte aligned). Shares its waiter
 *  list with 32-bit waits on the same address. */
int32_t parklot_wait64(const int64_t *addr, int64_t expected, int64_t timeout_ns);

/** Wakes up to `count` threads waiting on `addr`, oldest first
 *  (PARKLOT_NOTIFY_ALL: all). Any address is accepted.
 *  Returns how many were woken. */
uint64_t parklot_notify(const void *addr, uint64_t count);

/* ---- Atomics.waitAsync: waits that call back ----------------------------- */

/* An engine's Atomics.waitAsync: a wait that queues like a sleeping thread,
 * is counted by parklot_notify like one, and ends by calling the embedder's
 * waker exactly once, with no parklot lock held, on the thread that ended
 * it: the notifier's, or the caller of parklot_async_wait_expire/_cancel.
 * parklot keeps no timer: the embedder's timer (its event loop's) calls
 * parklot_async_wait_expire. Expire, cancel and a notify may race from any
 * threads: exactly one of them ends the wait. */

/** The waker's outcome: woken by parklot_notify ("ok"). */
#define PARKLOT_ASYNC_WOKEN 0
/** The waker's outcome: ended by parklot_async_wait_expire ("timed-out"). */
#define PARKLOT_ASYNC_TIMED_OUT 2
/** The waker's outcome: ended by parklot_async_wait_cancel. */
#define PARKLOT_ASYNC_CANCELLED 3

/** A pending (or ended) wait; free with parklot_async_wait_release. */
typedef struct parklot_async_wait parklot_async_wait_t;

/** Called once with `data` and a PARKLOT_ASYNC_* outcome, on any thread.
 *  It may call parklot functions, but not parklot_async_wait_release on the
 *  handle of the wait it reports (release it after, from the caller). */
typedef void (*parklot_waker_fn)(void *data, int32_t outcome);

/** If *addr == expected, queues a wait that calls waker(data, outcome) once
 *  when it ends, stores its handle in *wait and returns PARKLOT_WAIT_OK.
 *  Otherwise returns PARKLOT_WAIT_NOT_EQUAL with *wait = NULL (the waker is
 *  never called), or PARKLOT_EINVAL (NULL or misaligned `addr`, NULL
 *  `waker` or `wait`). */
int32_t parklot_wait32_async(const int32_t *addr, int32_t expected, parklot_waker_fn waker,
                             void *data, parklot_async_wait_t **wait);

/** As parklot_wait32_async, for a 64-bit word (8-byte aligned). */
int32_t parklot_wait64_async(const int64_t *addr, int64_t expected, parklot_waker_fn waker,
                             void *data, parklot_async_wait_t **wait);

/** The embedder's timer fired: ends the wait as PARKLOT_ASYNC_TIMED_OUT.
 *  Returns 1 if this call ended it (its waker has run on this thread),
 *  0 if it had already ended, PARKLOT_EINVAL for NULL. */
int32_t parklot_async_wait_expire(parklot_async_wait_t *wait);

/** Ends the wait as PARKLOT_ASYNC_CANCELLED; returns as
 *  parklot_async_wait_expire. parklot_notify never counts a cancelled wait. */
int32_t parklot_async_wait_cancel(parklot_async_wait_t *wait);

/** Frees the handle. Does not end the wait (a notify still ends it and
 *  calls its waker). NULL is ignored. */
void parklot_async_wait_release(parklot_async_wait_t *wait);

/* ---- embedding: buffers and threads that go away, waiter counts -------- */

/** Cancels every wait, blocking or async, of any thread, on an address in
 *  [start, start + len): what an engine calls when it frees a buffer or tears
 *  down a realm, so that a later buffer at the same address never meets its
 *  waiters. A blocking wait returns PARKLOT_WAIT_CANCELLED; an async wait's
 *  waker runs with PARKLOT_ASYNC_CANCELLED (on this thread, before this
 *  returns). Races with notify, expire and cancel: each wait ends once. For
 *  memory holding Atomics words only (not parklot locks or conditions).
 *  Memory is never read. Returns how many waits it cancelled. */
size_t parklot_cancel_range(const void *start, size_t len);

/** How many waits (blocking and async) are queued on `addr` right now: a
 *  snapshot, for tests and diagnostics. */
size_t parklot_waiter_count(const void *addr);

/** A thread, for parklot_thread_interrupt. */
typedef struct parklot_thread parklot_thread_t;

/** The calling thread's handle (NULL while its thread-locals are torn down).
 *  A thread that has exited may have its handle reused by a new thread. */
parklot_thread_t *parklot_thread_self(void);

/** Interrupts `thread`'s parklot_wait32/parklot_wait64 if it is queued in
 *  one now (never a lock's or a condition's wait): that call returns
 *  PARKLOT_WAIT_CANCELLED. Returns 1 if it did, 0 if the thread was not
 *  waiting, PARKLOT_EINVAL for NULL. A thread about to wait is not queued
 *  yet: an engine's terminate sets its own stop flag (checked before each
 *  wait), then calls this until the thread has left. */
int32_t parklot_thread_interrupt(parklot_thread_t *thread);

/* ---- reader-writer lock, semaphore, barrier, once --------------------- */

/** A reader-writer lock in one 32-bit word (see the Rust docs of RawRwLock
 *  for the word). Initialise with parklot_rwlock_init, or with
 *  PARKLOT_RWLOCK_INIT_PREFER_WRITERS / PARKLOT_RWLOCK_INIT_PREFER_READERS. */
typedef struct parklot_rwlock {
    uint32_t state;
} parklot_rwlock_t;

#define PARKLOT_RWLOCK_INIT_PREFER_WRITERS {0x80}
#define PARKLOT_RWLOCK_INIT_PREFER_READERS {0}

/** A counting semaphore in one 32-bit word. Initialise with parklot_semaphore_init. */
typedef struct parklot_semaphore {
    uint32_t state;
} parklot_semaphore_t;

/** A reusable barrier. Initialise with parklot_barrier_init. */
typedef struct parklot_barrier {
    uint32_t state;
    uint32_t parties;
} parklot_barrier_t;

/** One-time initialisation in one byte. Initialise with PARKLOT_ONCE_INIT. */
typedef struct parklot_once {
    uint8_t state;
} parklot_once_t;

#define PARKLOT_ONCE_INIT {0}

/** Initialises `lock`: writer-preferring (new readers wait while a writer
 *  waits) if prefer_writers is non-zero, else reader-preferring. Either way
 *  neither side starves: about once a millisecond the other side is handed
 *  the lock. Returns 0 or PARKLOT_EINVAL (NULL or not 4-byte aligned). */
int32_t parklot_rwlock_init(parklot_rwlock_t *lock, int32_t prefer_writers);

/** Takes a read lock (shared with other readers). Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_rwlock_read(parklot_rwlock_t *lock);

/** Takes a read lock, waiting at most timeout_ns (0: do not wait; negative:
 *  forever). Returns 1 if taken, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_rwlock_try_read_for(parklot_rwlock_t *lock, int64_t timeout_ns);

/** Releases a read lock. Returns 0, PARKLOT_ENOTLOCKED (nobody reads; nothing
 *  changed) or PARKLOT_EINVAL. */
int32_t parklot_rwlock_unlock_read(parklot_rwlock_t *lock);

/** Takes the write lock (exclusive). Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_rwlock_write(parklot_rwlock_t *lock);

/** Takes the write lock, waiting at most timeout_ns (0: do not wait;
 *  negative: forever). Returns 1 if taken, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_rwlock_try_write_for(parklot_rwlock_t *lock, int64_t timeout_ns);

/** Releases the write lock. Returns 0, PARKLOT_ENOTLOCKED (no writer holds
 *  it; nothing changed) or PARKLOT_EINVAL. */
int32_t parklot_rwlock_unlock_write(parklot_rwlock_t *lock);

/** Turns the caller's write lock into a read lock, letting waiting readers
 *  in. Returns 0, PARKLOT_ENOTLOCKED or PARKLOT_EINVAL. */
int32_t parklot_rwlock_downgrade(parklot_rwlock_t *lock);

/* Upgradable reads: an upgradable read shares the lock with plain readers
 * but excludes writers and other upgradable readers, so its holder may later
 * upgrade to the write lock without letting go (no writer can slip in). The
 * "unlock", "upgrade" and "downgrade" calls check what the word says is
 * held and return PARKLOT_ENOTLOCKED, changing nothing, if it is not; like
 * the other calls they cannot tell which thread holds it. */

/** Takes an upgradable read. Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgradable_read(parklot_rwlock_t *lock);

/** Takes an upgradable read, waiting at most timeout_ns (0: do not wait;
 *  negative: forever). Returns 1 if taken, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_rwlock_try_upgradable_read_for(parklot_rwlock_t *lock, int64_t timeout_ns);

/** Releases an upgradable read. Returns 0, PARKLOT_ENOTLOCKED (none is held,
 *  or its upgrade is waiting; nothing changed) or PARKLOT_EINVAL. */
int32_t parklot_rwlock_unlock_upgradable(parklot_rwlock_t *lock);

/** Turns the caller's upgradable read into the write lock, waiting for the
 *  other readers to leave; new readers wait meanwhile. Returns 0 (release it
 *  with parklot_rwlock_unlock_write), PARKLOT_ENOTLOCKED (no upgradable read
 *  is held) or PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgrade(parklot_rwlock_t *lock);

/** Upgrades, waiting at most timeout_ns (0: do not wait; negative: forever).
 *  Returns 1 if upgraded, 0 if not (the upgradable read is still held and new
 *  readers may enter again), PARKLOT_ENOTLOCKED or PARKLOT_EINVAL. */
int32_t parklot_rwlock_try_upgrade_for(parklot_rwlock_t *lock, int64_t timeout_ns);

/** Turns the caller's write lock into an upgradable read, letting waiting
 *  readers in. Returns 0, PARKLOT_ENOTLOCKED or PARKLOT_EINVAL. */
int32_t parklot_rwlock_downgrade_to_upgradable(parklot_rwlock_t *lock);

/** Turns the caller's upgradable read into a plain read (release it with
 *  parklot_rwlock_unlock_read), letting another upgradable reader in.
 *  Returns 0, PARKLOT_ENOTLOCKED or PARKLOT_EINVAL. */
int32_t parklot_rwlock_downgrade_upgradable(parklot_rwlock_t *lock);

/** Initialises `sem` with `permits` free permits (at most 2^30 - 1).
 *  Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_semaphore_init(parklot_semaphore_t *sem, uint32_t permits);

/** Takes n permits, waiting at most timeout_ns (0: do not wait; negative:
 *  forever). Returns 1 if taken, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_semaphore_acquire(parklot_semaphore_t *sem, uint32_t n, int64_t timeout_ns);

/** Returns n permits, waking waiters. Returns 0, or PARKLOT_EINVAL (also if
 *  the free permits would pass 2^30 - 1: nothing changed). */
int32_t parklot_semaphore_release(parklot_semaphore_t *sem, uint32_t n);

/** A snapshot of the free permits, or PARKLOT_EINVAL. */
int64_t parklot_semaphore_available(const parklot_semaphore_t *sem);

/** Initialises `barrier` for `parties` threads (at most 65535); it opens
 *  each time that many wait, and can be reused. Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_barrier_init(parklot_barrier_t *barrier, uint32_t parties);

/** Waits until `parties` threads wait. Returns 1 in exactly one of them (the
 *  leader, whose arrival opened it), 0 in the others, PARKLOT_BARRIER_BROKEN
 *  or PARKLOT_EINVAL. A thread that arrives while the barrier opens counts
 *  toward the next opening. The barrier must outlive every wait at it. */
int32_t parklot_barrier_wait(parklot_barrier_t *barrier);

/** parklot_barrier_wait, waiting at most timeout_ns (negative: forever).
 *  Also returns PARKLOT_BARRIER_TIMED_OUT: the timeout passed first, and the
 *  barrier is now broken for the others (as Java's CyclicBarrier). */
int32_t parklot_barrier_wait_for(parklot_barrier_t *barrier, int64_t timeout_ns);

/** Starts the barrier over, not broken and with nobody arrived; threads
 *  waiting at it now get PARKLOT_BARRIER_BROKEN. Returns 0 or PARKLOT_EINVAL. */
int32_t parklot_barrier_reset(parklot_barrier_t *barrier);

/** 1 if the barrier is broken, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_barrier_is_broken(const parklot_barrier_t *barrier);

/** Calls f(context) unless a call through `once` completed; a thread that
 *  finds one running waits for it. f must return normally (a C function
 *  cannot unwind, so C alone never poisons a once). Returns 0,
 *  PARKLOT_EPOISONED (a Rust closure sharing the once panicked, as with
 *  parklot::Once::call_once; f did not run) or PARKLOT_EINVAL. */
int32_t parklot_once(parklot_once_t *once, void (*f)(void *), void *context);

/** 1 if a call through `once` completed, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_once_done(const parklot_once_t *once);

/* ---- asynchronous forms: lock, rwlock, semaphore, barrier, once -------- */

/* For threads that may not block (a browser's main thread, an event loop).
 * Instead of the thread, a record (parklot_async_waiter_t) queues in the
 * same queue as sleeping threads. The protocol: call ..._async_begin; 1
 * means taken now (nothing queued), 0 means the record is queued. Then wait,
 * however the embedder can without blocking a thread that must not block,
 * until the record's word (parklot_async_waiter_word) reads 0: on Linux a
 * FUTEX_WAIT_PRIVATE for the value 1 (the wake is a FUTEX_WAKE_PRIVATE), in
 * wasm memory.atomic.wait32 or Atomics.waitAsync; where parklot runs on its
 * portable parker (not Linux) nothing wakes the word: poll it. (Not
 * parklot_wait32: parklot_notify is not what wakes it.) Then call ..._async_resume with the same arguments: 1 taken, or
 * 0 queued again (wait for the word again). To give up (a timeout, a
 * cancelled task) call ..._async_cancel instead: 1 means it was taken after
 * all and the caller must release it as usual, 0 that nothing is held; the
 * record is out of the queue either way. After 1 from any step, or after a
 * cancel, the attempt is over and the record may be reused or freed. One
 * record serves one attempt at a time and must not be freed while queued.
 * A thread whose record is woken but that never resumes can hold up others
 * (a hand-off may already have made it the holder): resume or cancel soon. */

/** A record that waits instead of a thread. */
typedef struct parklot_async_waiter parklot_async_waiter_t;

/** parklot_barrier_wait_async_begin, _resume: the record is queued. */
#define PARKLOT_BARRIER_QUEUED 0
/** parklot_barrier_wait_async_resume, _cancel: the barrier opened (through, not the leader). */
#define PARKLOT_BARRIER_PASSED 1
/** parklot_barrier_wait_async_begin: this arrival opened the barrier (the leader). */
#define PARKLOT_BARRIER_LEADER 2

/** A new record, not queued, or NULL if memory ran out. Keep and reuse
 *  records: each one counts as one more waiter in sizing parklot's table. */
parklot_async_waiter_t *parklot_async_waiter_new(void);

/** Frees a record that is not queued. Returns 0 (also for NULL) or
 *  PARKLOT_EINVAL (misaligned, or still queued: not freed; cancel first). */
int32_t parklot_async_waiter_free(parklot_async_waiter_t *waiter);

/** The record's 32-bit word, to wait on: 1 while it is queued, 0 once it is
 *  woken (see above for the wake). Read it atomically; never write it.
 *  NULL for a NULL or misaligned record. */
const int32_t *parklot_async_waiter_word(const parklot_async_waiter_t *waiter);

/** Lock, step 1: 1 taken now, 0 queued, PARKLOT_EDEADLK (deadlock
 *  detection refused the wait: not queued; so may step 2 when it queues
 *  again, for these and the rwlock's steps), PARKLOT_EINVAL (a NULL or
 *  misaligned pointer, or a record that is still queued). */
int32_t parklot_lock_async_begin(parklot_lock_t *lock, parklot_async_waiter_t *waiter);
/** Lock, step 2 (the word read 0): 1 taken, 0 queued again, PARKLOT_EINVAL. */
int32_t parklot_lock_async_resume(parklot_lock_t *lock, parklot_async_waiter_t *waiter);
/** Lock, giving up: 1 taken after all (unlock it), 0 nothing held, PARKLOT_EINVAL. */
int32_t parklot_lock_async_cancel(parklot_lock_t *lock, parklot_async_waiter_t *waiter);

/** Read lock, step 1: 1 taken now, 0 queued, PARKLOT_EINVAL (as for
 *  parklot_lock_async_begin). */
int32_t parklot_rwlock_read_async_begin(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Read lock, step 2: 1 taken, 0 queued again, PARKLOT_EINVAL. */
int32_t parklot_rwlock_read_async_resume(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Read lock, giving up: 1 taken after all (parklot_rwlock_unlock_read it),
 *  0 nothing held, PARKLOT_EINVAL. */
int32_t parklot_rwlock_read_async_cancel(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);

/** Write lock, step 1: 1 taken now, 0 queued, PARKLOT_EINVAL. */
int32_t parklot_rwlock_write_async_begin(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Write lock, step 2: 1 taken, 0 queued again, PARKLOT_EINVAL. */
int32_t parklot_rwlock_write_async_resume(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Write lock, giving up: 1 taken after all (parklot_rwlock_unlock_write
 *  it), 0 nothing held, PARKLOT_EINVAL. */
int32_t parklot_rwlock_write_async_cancel(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);

/** Upgradable read, step 1: 1 taken now, 0 queued, PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgradable_read_async_begin(parklot_rwlock_t *lock,
                                                   parklot_async_waiter_t *waiter);
/** Upgradable read, step 2: 1 taken, 0 queued again, PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgradable_read_async_resume(parklot_rwlock_t *lock,
                                                    parklot_async_waiter_t *waiter);
/** Upgradable read, giving up: 1 taken after all
 *  (parklot_rwlock_unlock_upgradable it), 0 nothing held, PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgradable_read_async_cancel(parklot_rwlock_t *lock,
                                                    parklot_async_waiter_t *waiter);

/** Upgrade of the caller's upgradable read, step 1: 1 upgraded now, 0
 *  queued (new readers wait meanwhile), PARKLOT_ENOTLOCKED (no upgradable
 *  read held, or its upgrade already pending) or PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgrade_async_begin(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Upgrade, step 2: 1 upgraded (release with parklot_rwlock_unlock_write),
 *  0 queued again, PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgrade_async_resume(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);
/** Upgrade, giving up: 1 upgraded after all (the write lock is held), 0 only
 *  the upgradable read is held (new readers may enter again), PARKLOT_EINVAL. */
int32_t parklot_rwlock_upgrade_async_cancel(parklot_rwlock_t *lock, parklot_async_waiter_t *waiter);

/** n permits, step 1: 1 taken now, 0 queued, PARKLOT_EINVAL (also for n
 *  over 2^30 - 1). */
int32_t parklot_semaphore_acquire_async_begin(parklot_semaphore_t *sem, uint32_t n,
                                              parklot_async_waiter_t *waiter);
/** n permits, step 2 (the same n): 1 taken, 0 queued again, PARKLOT_EINVAL. */
int32_t parklot_semaphore_acquire_async_resume(parklot_semaphore_t *sem, uint32_t n,
                                               parklot_async_waiter_t *waiter);
/** n permits, giving up (the same n): 1 taken after all (release them), 0
 *  nothing held, PARKLOT_EINVAL. */
int32_t parklot_semaphore_acquire_async_cancel(parklot_semaphore_t *sem, uint32_t n,
                                               parklot_async_waiter_t *waiter);

/** Barrier, step 1: arrives. Returns PARKLOT_BARRIER_LEADER (this arrival
 *  opened it), PARKLOT_BARRIER_QUEUED, PARKLOT_BARRIER_BROKEN or
 *  PARKLOT_EINVAL. */
int32_t parklot_barrier_wait_async_begin(parklot_barrier_t *barrier, parklot_async_waiter_t *waiter);
/** Barrier, step 2: PARKLOT_BARRIER_PASSED, PARKLOT_BARRIER_QUEUED (not woken
 *  yet: wait for the word again), PARKLOT_BARRIER_BROKEN, PARKLOT_EINVAL. */
int32_t parklot_barrier_wait_async_resume(parklot_barrier_t *barrier, parklot_async_waiter_t *waiter);
/** Barrier, giving up (a timeout): the party leaves, which breaks the
 *  barrier. Returns PARKLOT_BARRIER_TIMED_OUT, or what ended the wait first:
 *  PARKLOT_BARRIER_PASSED or PARKLOT_BARRIER_BROKEN; or PARKLOT_EINVAL. */
int32_t parklot_barrier_wait_async_cancel(parklot_barrier_t *barrier,
                                          parklot_async_waiter_t *waiter);

/** Waits for a call through `once` that another thread is making, step 1:
 *  1 none runs now (call parklot_once, which returns at once if it
 *  completed), 0 queued, PARKLOT_EINVAL. */
int32_t parklot_once_wait_async_begin(parklot_once_t *once, parklot_async_waiter_t *waiter);
/** Once, step 2: 1 none runs now, 0 queued again (another run began), PARKLOT_EINVAL. */
int32_t parklot_once_wait_async_resume(parklot_once_t *once, parklot_async_waiter_t *waiter);
/** Once, giving up: 1 if the run ended first, 0 if not, PARKLOT_EINVAL. */
int32_t parklot_once_wait_async_cancel(parklot_once_t *once, parklot_async_waiter_t *waiter);

/* ---- Tuning (process-wide) ------------------------------------------------ */

/* The defaults are measured; these are for benchmarks and for hosts that
 * measure their own machine. Each setting applies to every lock and wait in
 * the process and returns the one it replaced. Set them from one thread at a
 * time: two threads setting one at once may each be told the value from
 * before both. */

/** How many times a contended parklot_lock retries before it parks
 *  (default 40; 0: park at once). Returns the previous limit. */
uint32_t parklot_set_spin_limit(uint32_t spins);

/** How many iterations a parked thread may spin, watching for its wakeup,
 *  before it sleeps (default 2048 natively; 0: sleep at once). Returns the
 *  previous limit. */
uint32_t parklot_set_park_spin_limit(uint32_t spins);

/** How a release that wakes one of several parked threads leaves the lock:
 *  1, the woken thread carries the "others are parked" bit (the most
 *  throughput where threads cannot yield); 0, the lock keeps the bit and
 *  marks the wake in flight (the native default, the fairest). Returns the
 *  previous policy (0 or 1), or PARKLOT_EINVAL for any other value, which
 *  changes nothing. */
int32_t parklot_set_carry_parked(int32_t on);

/* ---- Diagnostics ---------------------------------------------------------
 * Who waits where, who holds what, deadlocks refused as they close. Kinds
 * (parklot_kind_name): 0 unknown, 1 Lock, 2 RwLock.read, 3 RwLock.write,
 * 4 RwLock.upgradable, 5 Condition, 6 Semaphore, 7 Barrier, 8 Once, 9 futex.
 * Holds are known for locks and the write and upgradable holds of a rwlock,
 * while tracking, detection or lock-order checking is on. With all of them
 * off (the default) each lock and unlock pays one relaxed load. */

/** A queued waiter, as parklot_diagnostics reports it. */
typedef struct parklot_waiter_info {
    uintptr_t address;   /* what it waits on */
    uint32_t kind;
    uint64_t thread;     /* parklot_thread_id() of the waiting thread */
    int32_t blocking;    /* 1 a blocked thread, 0 an async record */
    uint64_t since_ns;   /* queued at, in the runtime's clock */
    int64_t deadline_ns; /* gives up at, or -1 */
} parklot_waiter_info_t;

/** A hold of a tracked lock. */
typedef struct parklot_hold_info {
    uintptr_t address;
    uint32_t kind;
    uint64_t thread;
} parklot_hold_info_t;

/** A thread the runtime knows (named, seen holding or waiting, or reaped). */
typedef struct parklot_thread_info {
    uint64_t id;
    const char *name;    /* NULL if unnamed; valid during the callback only */
    int32_t reaped;
} parklot_thread_info_t;

/** Takes a snapshot and calls each non-NULL callback once per waiter, hold
 *  and thread, in that order; a callback returning nonzero stops the walk.
 *  Returns how many waiters the snapshot had. Cheap enough to call often:
 *  each wait queue is locked only while its waiters are copied. */
int32_t parklot_diagnostics(int32_t (*on_waiter)(const parklot_waiter_info_t *, void *),
                            int32_t (*on_hold)(const parklot_hold_info_t *, void *),
                            int32_t (*on_thread)(const parklot_thread_info_t *, void *),
                            void *ctx);

/** The calling thread's id in the snapshot and the reports. */
uint64_t parklot_thread_id(void);

/** Names the calling thread (UTF-8, copied). Returns 0, or PARKLOT_EINVAL
 *  for NULL or invalid UTF-8. */
int32_t parklot_set_thread_name(const char *name);

/** A kind's name (a static string; "unknown" for any other number). */
const char *parklot_kind_name(uint32_t kind);

/** Deadlock detection on (1) or off (0), for every thread: while on, a
 *  blocking lock that would close a cycle returns PARKLOT_EDEADLK instead
 *  of waiting forever. Returns the previous state, or PARKLOT_EINVAL for
 *  any other value (nothing changed). */
int32_t parklot_set_deadlock_detection(int32_t on);

/** Hold tracking for parklot_diagnostics on (1) or off (0). Returns the
 *  previous state of this switch, or PARKLOT_EINVAL. */
int32_t parklot_set_hold_tracking(int32_t on);

/** Lock-order checking on (1) or off (0): the first time two locks are
 *  taken in both orders it is reported (parklot_lock_order_violation).
 *  Returns the previous state, or PARKLOT_EINVAL. */
int32_t parklot_set_lock_order_checking(int32_t on);

/** Copies the message of the cycle the calling thread's last PARKLOT_EDEADLK
 *  was about into buf (NUL-terminated, cut to len bytes) and forgets it.
 *  Returns the message's full length, or 0 if there is none. */
size_t parklot_last_deadlock(char *buf, size_t len);

/** Copies the index-th lock-order inversion's message into buf as
 *  parklot_last_deadlock does; returns 0 past the last one. */
size_t parklot_lock_order_violation(size_t index, char *buf, size_t len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PARKLOT_H */
