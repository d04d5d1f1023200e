/*
 * parklot_test.c - tests the C ABI of libparklot.a (runtime/include/parklot.h)
 * from C, with pthreads.
 *
 * Prints one line per check ("ok   ..." or "FAIL ...") and finally
 * "c-abi: N passed, M failed"; exits 0 only if nothing failed. A watchdog
 * turns a hang (a wait that never returns) into a failure too.
 *
 * Built and run by scripts/c-abi-test.sh.
 */
#define _POSIX_C_SOURCE 200809L
#ifdef __linux__
#define _DEFAULT_SOURCE /* syscall(SYS_futex): the async tests wait on a record's word */
#endif

#include "parklot.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#define MS ((int64_t)1000000)          /* one millisecond in nanoseconds */
#define LONG_WAIT (30000 * MS)         /* "forever", but a broken library times out */
#define POLL_LIMIT_MS 10000            /* how long to poll for another thread */
#define WATCHDOG_SECONDS 300           /* generous: qemu-user is slow */

/* ---- reporting ----------------------------------------------------------- */

static int passed, failed;

static void check(int ok, const char *name)
{
    if (ok) {
        passed++;
        printf("ok   %s\n", name);
    } else {
        failed++;
        printf("FAIL %s\n", name);
    }
}

static void check_eq(long long got, long long want, const char *name)
{
    if (got == want) {
        check(1, name);
    } else {
        failed++;
        printf("FAIL %s: got %lld, want %lld\n", name, got, want);
    }
}

/* A check that the call took at least `min_ns`, with the time in its line. */
static void check_not_early(int64_t elapsed_ns, int64_t min_ns, const char *what)
{
    char name[160];
    snprintf(name, sizeof name, "%s did not return before its %.0f ms timeout (took %.2f ms)",
             what, (double)min_ns / MS, (double)elapsed_ns / MS);
    check(elapsed_ns >= min_ns, name);
}

static void on_watchdog(int sig)
{
    static const char msg[] = "FAIL watchdog: the test hung\nc-abi: watchdog fired\n";
    ssize_t ignored = write(STDOUT_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    (void)sig;
    _exit(3);
}

/* ---- helpers --------------------------------------------------------------- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static pthread_t spawn(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0) {
        perror("pthread_create");
        exit(2);
    }
    return t;
}

/* Defines the thread function `name` (for spawn), whose body sees its
 * argument as `type *var` and returns nothing. */
#define THREAD_FN(name, type, var)      \
    static void name##_body(type *var); \
    static void *name(void *arg)        \
    {                                   \
        name##_body(arg);               \
        return NULL;                    \
    }                                   \
    static void name##_body(type *var)

/* A thread's argument: the state its test shares, and its index. */
struct thread_arg { void *shared; int id; };

/* Starts fn on n threads, thread i with args[i] = {shared, i}. */
static void spawn_each(void *(*fn)(void *), void *shared, int n, struct thread_arg *args,
                       pthread_t *threads)
{
    for (int i = 0; i < n; i++) {
        args[i] = (struct thread_arg){ shared, i };
        threads[i] = spawn(fn, &args[i]);
    }
}

/* Runs fn(arg) on n threads at once (at most 8) and joins them all. */
static void run_threads(void *(*fn)(void *), void *arg, int n)
{
    pthread_t t[8];
    for (int i = 0; i < n; i++)
        t[i] = spawn(fn, arg);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* Words that other threads wait on with parklot_wait32 are accessed atomically. */
static int32_t load32(const int32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static int32_t bump32(int32_t *p) { return __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST); }

/* Polls until *p == want; returns 0 if that took longer than POLL_LIMIT_MS. */
static int poll_until(const int32_t *p, int32_t want)
{
    int64_t deadline = now_ns() + POLL_LIMIT_MS * MS;
    while (load32(p) != want) {
        if (now_ns() > deadline)
            return 0;
        sched_yield();
    }
    return 1;
}

/* Notifies one waiter on addr, retrying until a waiter is there to be woken.
 * Returns the last parklot_notify result: 1, or 0 if nobody ever came. */
static uint64_t notify_until_woken(const void *addr)
{
    int64_t deadline = now_ns() + POLL_LIMIT_MS * MS;
    uint64_t woken;
    while ((woken = parklot_notify(addr, 1)) == 0 && now_ns() < deadline)
        sleep_ms(1);
    return woken;
}

/* ---- lock: single-threaded ------------------------------------------------ */

static void test_sizes(void)
{
    check_eq((long long)sizeof(parklot_lock_t), 1, "sizeof(parklot_lock_t) == 1");
    check_eq((long long)sizeof(parklot_condition_t), 1, "sizeof(parklot_condition_t) == 1");
}

static void test_lock_basics(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    check_eq(parklot_is_locked(&l), 0, "a new lock is unlocked");
    check_eq(parklot_lock(&l), 0, "lock returns 0");
    check_eq(parklot_is_locked(&l), 1, "is_locked is 1 after lock");
    check_eq(parklot_try_lock(&l), 0, "try_lock on a held lock returns 0");
    check_eq(parklot_unlock(&l), 0, "unlock returns 0");
    check_eq(parklot_is_locked(&l), 0, "is_locked is 0 after unlock");
    check_eq(parklot_try_lock(&l), 1, "try_lock on a free lock returns 1");
    check_eq(parklot_is_locked(&l), 1, "is_locked is 1 after try_lock");
    check_eq(parklot_unlock_fair(&l), 0, "unlock_fair returns 0");
    check_eq(parklot_try_lock_for(&l, 0), 1, "try_lock_for(0) on a free lock returns 1");
    check_eq(parklot_unlock(&l), 0, "unlock after try_lock_for returns 0");
    check_eq(parklot_try_lock_for(&l, -1), 1, "try_lock_for(forever) on a free lock returns 1");
    check_eq(parklot_unlock(&l), 0, "unlock after try_lock_for(forever) returns 0");
}

static void test_owner_died(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    check_eq(parklot_lock_checked(&l), 0, "lock_checked on a fresh lock returns 0");
    /* Stands for a reaper releasing the lock of a thread that is gone. */
    check_eq(parklot_unlock_owner_died(&l), 0, "unlock_owner_died of a held lock returns 0");
    check_eq(parklot_is_locked(&l), 0, "... and releases it");
    check_eq(parklot_lock_checked(&l), PARKLOT_EOWNERDEAD, "the next lock_checked -> PARKLOT_EOWNERDEAD");
    check_eq(parklot_is_locked(&l), 1, "... holding the lock");
    check_eq(parklot_unlock(&l), 0, "unlock returns 0");
    check_eq(parklot_lock_checked(&l), 0, "reported once: the next lock_checked returns 0");
    check_eq(parklot_unlock(&l), 0, "unlock returns 0");
    check_eq(parklot_unlock_owner_died(&l), PARKLOT_ENOTLOCKED, "unlock_owner_died of a free lock -> PARKLOT_ENOTLOCKED");
    check_eq(parklot_lock_checked(NULL), PARKLOT_EINVAL, "lock_checked(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_unlock_owner_died(NULL), PARKLOT_EINVAL, "unlock_owner_died(NULL) -> PARKLOT_EINVAL");
}

static void test_unlock_unlocked(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    check_eq(parklot_unlock(&l), PARKLOT_ENOTLOCKED, "unlock of an unlocked lock -> PARKLOT_ENOTLOCKED");
    check_eq(parklot_is_locked(&l), 0, "... and the lock is still unlocked");
    /* White-box: "touches nothing" means the byte too, not just the LOCKED bit. */
    check_eq(l.state, 0, "... and its state byte is untouched");
    check_eq(parklot_unlock_fair(&l), PARKLOT_ENOTLOCKED, "unlock_fair of an unlocked lock -> PARKLOT_ENOTLOCKED");

    parklot_lock(&l);
    parklot_unlock(&l);
    check_eq(parklot_unlock(&l), PARKLOT_ENOTLOCKED, "a second unlock -> PARKLOT_ENOTLOCKED");
    check_eq(parklot_try_lock(&l), 1, "after a bad unlock the lock can still be taken");
    parklot_unlock(&l);
}

static void test_null_pointers(void)
{
    parklot_lock_t held = PARKLOT_LOCK_INIT;
    parklot_condition_t cond = PARKLOT_CONDITION_INIT;
    parklot_lock(&held); /* so that only the NULL can be wrong below */

    check_eq(parklot_lock(NULL), PARKLOT_EINVAL, "lock(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_try_lock(NULL), PARKLOT_EINVAL, "try_lock(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_try_lock_for(NULL, 0), PARKLOT_EINVAL, "try_lock_for(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_unlock(NULL), PARKLOT_EINVAL, "unlock(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_unlock_fair(NULL), PARKLOT_EINVAL, "unlock_fair(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_is_locked(NULL), PARKLOT_EINVAL, "is_locked(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_condition_wait(NULL, &held, 0), PARKLOT_EINVAL, "condition_wait(NULL, lock) -> PARKLOT_EINVAL");
    check_eq(parklot_condition_wait(&cond, NULL, 0), PARKLOT_EINVAL, "condition_wait(cond, NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_condition_notify_one(NULL), PARKLOT_EINVAL, "condition_notify_one(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_condition_notify_all(NULL), PARKLOT_EINVAL, "condition_notify_all(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_wait32(NULL, 0, 0), PARKLOT_EINVAL, "wait32(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_wait64(NULL, 0, 0), PARKLOT_EINVAL, "wait64(NULL) -> PARKLOT_EINVAL");
    /* notify accepts any address: nobody can be waiting on a bad one. */
    check_eq((long long)parklot_notify(NULL, PARKLOT_NOTIFY_ALL), 0, "notify(NULL) -> 0");

    check_eq(parklot_is_locked(&held), 1, "the NULL-cond condition_wait left the lock held");
    parklot_unlock(&held);
}

/* ---- lock: threads ------------------------------------------------------- */

#define COUNTER_THREADS 8
#define COUNTER_ITERATIONS 100000

/* The lock byte sits right next to the data it guards, as in real structs:
 * the lock must not disturb its neighbour either. */
struct counter {
    parklot_lock_t lock;
    long value; /* plain, non-atomic: only the lock protects it */
};

static void *counter_thread(void *arg)
{
    struct counter *c = arg;
    intptr_t errors = 0;
    for (int i = 0; i < COUNTER_ITERATIONS; i++) {
        errors += parklot_lock(&c->lock) != 0;
        c->value++;
        errors += parklot_unlock(&c->lock) != 0;
    }
    return (void *)errors;
}

/* Runs COUNTER_THREADS counter_threads on `c`; returns how many lock/unlock calls failed. */
static long long run_counter(struct counter *c)
{
    pthread_t threads[COUNTER_THREADS];
    long long errors = 0;

    for (int i = 0; i < COUNTER_THREADS; i++)
        threads[i] = spawn(counter_thread, c);
    for (int i = 0; i < COUNTER_THREADS; i++) {
        void *ret;
        pthread_join(threads[i], &ret);
        errors += (intptr_t)ret;
    }
    return errors;
}

static void test_counter(void)
{
    struct counter c = { PARKLOT_LOCK_INIT, 0 };
    long long errors = run_counter(&c);
    check_eq(c.value, (long long)COUNTER_THREADS * COUNTER_ITERATIONS,
             "8 threads x 100000 increments of a plain counter under one lock are exact");
    check_eq(errors, 0, "... and every lock/unlock in them returned 0");
    check_eq(parklot_is_locked(&c.lock), 0, "... and the lock ends up unlocked");
}

static void test_try_lock_for_timeout(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    parklot_lock(&l);

    int64_t start = now_ns();
    int32_t got = parklot_try_lock_for(&l, 20 * MS);
    int64_t elapsed = now_ns() - start;

    check_eq(got, 0, "try_lock_for(20 ms) on a held lock times out (0)");
    check_not_early(elapsed, 20 * MS, "try_lock_for");
    check_eq(parklot_is_locked(&l), 1, "... and the lock is still held");
    parklot_unlock(&l);
    check_eq(parklot_try_lock(&l), 1, "... and once released it can be taken");
    parklot_unlock(&l);
}

/* Locks have no owner, so a helper thread may release the main thread's lock. */
static void *unlock_later_thread(void *arg)
{
    sleep_ms(20);
    parklot_unlock(arg);
    return NULL;
}

static void test_try_lock_for_success(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    parklot_lock(&l);
    pthread_t t = spawn(unlock_later_thread, &l);

    int64_t start = now_ns();
    int32_t got = parklot_try_lock_for(&l, LONG_WAIT);
    int64_t elapsed = now_ns() - start;
    pthread_join(t, NULL);

    check_eq(got, 1, "try_lock_for gets the lock when its holder releases it");
    check(elapsed < LONG_WAIT / 2, "... well before its timeout (the waiter was woken)");
    parklot_unlock(&l);
}

/* ---- condition ----------------------------------------------------------- */

#define RING_SIZE 4
#define PRODUCERS 2
#define CONSUMERS 2
#define ITEMS_PER_PRODUCER 10000
#define TOTAL_ITEMS (PRODUCERS * ITEMS_PER_PRODUCER)

/* A bounded ring buffer: everything but `seen` is guarded by `lock`. */
struct ring {
    parklot_lock_t lock;
    parklot_condition_t not_empty;
    parklot_condition_t not_full;
    int32_t items[RING_SIZE];
    int head;      /* index of the oldest item */
    int count;     /* items in the buffer */
    int taken;     /* items removed so far, by all consumers */
    int bad_waits; /* condition_wait results other than 1 ("notified") */
    unsigned char seen[TOTAL_ITEMS + 1]; /* times each item was received (atomic) */
};

struct producer { struct ring *ring; int32_t first; };
struct consumer { struct ring *ring; long long sum; long long received; };

/* Waits forever; with no timeout, anything but 1 is a library bug. */
static void ring_wait(struct ring *r, parklot_condition_t *cond)
{
    if (parklot_condition_wait(cond, &r->lock, -1) != 1)
        r->bad_waits++;
}

THREAD_FN(producer_thread, struct producer, p)
{
    struct ring *r = p->ring;
    for (int32_t i = 0; i < ITEMS_PER_PRODUCER; i++) {
        parklot_lock(&r->lock);
        while (r->count == RING_SIZE)
            ring_wait(r, &r->not_full);
        r->items[(r->head + r->count) % RING_SIZE] = p->first + i;
        r->count++;
        parklot_condition_notify_one(&r->not_empty);
        parklot_unlock(&r->lock);
    }
}

/* Takes the next item, or returns 0 once all items have been taken. */
static int32_t ring_take(struct ring *r)
{
    int32_t item = 0;
    parklot_lock(&r->lock);
    while (r->count == 0 && r->taken < TOTAL_ITEMS)
        ring_wait(r, &r->not_empty);
    if (r->count > 0) {
        item = r->items[r->head];
        r->head = (r->head + 1) % RING_SIZE;
        r->count--;
        r->taken++;
        parklot_condition_notify_one(&r->not_full);
        /* The last item: the other consumer may be waiting for an item that
         * will never come, so let it see that we are done. */
        if (r->taken == TOTAL_ITEMS)
            parklot_condition_notify_all(&r->not_empty);
    }
    parklot_unlock(&r->lock);
    return item;
}

THREAD_FN(consumer_thread, struct consumer, c)
{
    int32_t item;
    while ((item = ring_take(c->ring)) != 0) {
        c->sum += item;
        c->received++;
        __atomic_fetch_add(&c->ring->seen[item], 1, __ATOMIC_RELAXED);
    }
}

static void test_producer_consumer(void)
{
    static struct ring ring; /* zeroed: PARKLOT_*_INIT and an empty buffer */
    struct producer producers[PRODUCERS];
    struct consumer consumers[CONSUMERS];
    pthread_t threads[PRODUCERS + CONSUMERS];

    for (int i = 0; i < CONSUMERS; i++) {
        consumers[i] = (struct consumer){ &ring, 0, 0 };
        threads[i] = spawn(consumer_thread, &consumers[i]);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        /* Producer i sends i*ITEMS_PER_PRODUCER+1 ...: together, 1..TOTAL_ITEMS. */
        producers[i] = (struct producer){ &ring, i * ITEMS_PER_PRODUCER + 1 };
        threads[CONSUMERS + i] = spawn(producer_thread, &producers[i]);
    }
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(threads[i], NULL);

    long long sum = 0, received = 0, not_once = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        sum += consumers[i].sum;
        received += consumers[i].received;
    }
    for (int v = 1; v <= TOTAL_ITEMS; v++)
        not_once += ring.seen[v] != 1;

    check_eq(received, TOTAL_ITEMS, "producer/consumer: 20000 items received");
    check_eq(sum, (long long)TOTAL_ITEMS * (TOTAL_ITEMS + 1) / 2, "producer/consumer: the items' sum is right");
    check_eq(not_once, 0, "producer/consumer: every item received exactly once");
    check_eq(ring.bad_waits, 0, "producer/consumer: every condition_wait(forever) returned 1");
}

static void test_condition_timeout(void)
{
    parklot_lock_t l = PARKLOT_LOCK_INIT;
    parklot_condition_t c = PARKLOT_CONDITION_INIT;

    check_eq(parklot_condition_wait(&c, &l, 10 * MS), PARKLOT_ENOTLOCKED,
             "condition_wait on an unlocked lock -> PARKLOT_ENOTLOCKED");
    check_eq(parklot_condition_notify_one(&c), 0, "condition_notify_one with no waiter -> 0");
    check_eq(parklot_condition_notify_all(&c), 0, "condition_notify_all with no waiter -> 0");

    parklot_lock(&l);
    int64_t start = now_ns();
    int32_t got = parklot_condition_wait(&c, &l, 20 * MS);
    int64_t elapsed = now_ns() - start;

    check_eq(got, 0, "condition_wait(20 ms) with nobody notifying times out (0)");
    check_not_early(elapsed, 20 * MS, "condition_wait");
    check_eq(parklot_is_locked(&l), 1, "... and it returns with the lock held again");
    parklot_unlock(&l);
}

#define COND_WAITERS 3

struct cond_waiters {
    parklot_lock_t lock;
    parklot_condition_t cond;
    int waiting;            /* guarded by lock */
    int32_t results[COND_WAITERS];
};

THREAD_FN(cond_waiter_thread, struct thread_arg, w)
{
    struct cond_waiters *s = w->shared;
    parklot_lock(&s->lock);
    s->waiting++;
    s->results[w->id] = parklot_condition_wait(&s->cond, &s->lock, LONG_WAIT);
    parklot_unlock(&s->lock);
}

/* Returns holding the lock once n threads are inside condition_wait. A waiter
 * bumps `waiting` and calls condition_wait without letting go of the lock,
 * and condition_wait queues the thread before it releases the lock: so when
 * we hold the lock and see n, all n are queued and a notify must find them. */
static int lock_when_waiting(struct cond_waiters *s, int n)
{
    int64_t deadline = now_ns() + POLL_LIMIT_MS * MS;
    for (;;) {
        parklot_lock(&s->lock);
        if (s->waiting == n)
            return 1;
        parklot_unlock(&s->lock);
        if (now_ns() > deadline)
            return 0;
        sched_yield();
    }
}

static void test_condition_notify(void)
{
    static struct cond_waiters s;
    struct thread_arg args[COND_WAITERS];
    pthread_t threads[COND_WAITERS];

    /* notify_one: exactly one queued waiter, found at the first try. */
    spawn_each(cond_waiter_thread, &s, 1, args, threads);
    int32_t one = lock_when_waiting(&s, 1) ? parklot_condition_notify_one(&s.cond) : -100;
    parklot_unlock(&s.lock);
    pthread_join(threads[0], NULL);
    check_eq(one, 1, "condition_notify_one with a queued waiter -> 1");
    check_eq(s.results[0], 1, "condition_wait returns 1 when notified");

    /* notify_all: counts every queued waiter. */
    s.waiting = 0;
    spawn_each(cond_waiter_thread, &s, COND_WAITERS, args, threads);
    int64_t all = lock_when_waiting(&s, COND_WAITERS) ? parklot_condition_notify_all(&s.cond) : -100;
    parklot_unlock(&s.lock);
    for (int i = 0; i < COND_WAITERS; i++)
        pthread_join(threads[i], NULL);
    check_eq(all, COND_WAITERS, "condition_notify_all with 3 queued waiters -> 3");
    check_eq(s.results[0] + s.results[1] + s.results[2], COND_WAITERS, "... and each of them returned 1");
}

/* ---- wait32 / wait64 / notify -------------------------------------------- */

struct word_waiter {
    int32_t word32;
    int64_t word64;
    int32_t result;
};

THREAD_FN(wait32_thread, struct word_waiter, w)
{
    w->result = parklot_wait32(&w->word32, w->word32, LONG_WAIT);
}

THREAD_FN(wait64_thread, struct word_waiter, w)
{
    w->result = parklot_wait64(&w->word64, w->word64, LONG_WAIT);
}

/* A 32-bit wait on the first half of the 64-bit word (both halves are 0). */
THREAD_FN(wait32_on_word64_thread, struct word_waiter, w)
{
    w->result = parklot_wait32((const int32_t *)(const void *)&w->word64, 0, LONG_WAIT);
}

/* Starts `fn` waiting on `addr`, notifies it, and returns what its wait returned;
 * *woken gets the notify's result. */
static int32_t wait_and_notify(void *(*fn)(void *), struct word_waiter *w, const void *addr, uint64_t *woken)
{
    pthread_t t = spawn(fn, w);
    *woken = notify_until_woken(addr);
    pthread_join(t, NULL);
    return w->result;
}

static void test_wait32(void)
{
    struct word_waiter w = { 5, 0, -100 };
    uint64_t woken;

    /* A finite timeout everywhere: a wrong result fails instead of hanging. */
    check_eq(parklot_wait32(&w.word32, 4, 1000 * MS), PARKLOT_WAIT_NOT_EQUAL, "wait32 with a wrong value -> NOT_EQUAL");

    int64_t start = now_ns();
    int32_t got = parklot_wait32(&w.word32, 5, 1 * MS);
    int64_t elapsed = now_ns() - start;
    check_eq(got, PARKLOT_WAIT_TIMED_OUT, "wait32 with a 1 ms timeout -> TIMED_OUT");
    check_not_early(elapsed, 1 * MS, "wait32");

    got = wait_and_notify(wait32_thread, &w, &w.word32, &woken);
    check_eq((long long)woken, 1, "notify(addr, 1) wakes a wait32 waiter and returns 1");
    check_eq(got, PARKLOT_WAIT_OK, "wait32 returns OK when notified");
}

static void test_wait64(void)
{
    struct word_waiter w = { 0, (int64_t)1 << 40, -100 };
    uint64_t woken;

    /* The low 32 bits of 1<<40 are 0: only a full 64-bit compare says NOT_EQUAL. */
    check_eq(parklot_wait64(&w.word64, 0, 1000 * MS), PARKLOT_WAIT_NOT_EQUAL, "wait64 compares all 64 bits (NOT_EQUAL)");
    check_eq(parklot_wait64(&w.word64, (int64_t)1 << 40, 1 * MS), PARKLOT_WAIT_TIMED_OUT, "wait64 with a 1 ms timeout -> TIMED_OUT");

    int32_t got = wait_and_notify(wait64_thread, &w, &w.word64, &woken);
    check_eq((long long)woken, 1, "notify(addr, 1) wakes a wait64 waiter and returns 1");
    check_eq(got, PARKLOT_WAIT_OK, "wait64 returns OK when notified");

    w.word64 = 0;
    w.result = -100;
    got = wait_and_notify(wait32_on_word64_thread, &w, &w.word64, &woken);
    check_eq(got, PARKLOT_WAIT_OK, "a wait32 and a notify on a 64-bit word's address share one list");
}

static void test_misaligned(void)
{
    int64_t buf[2] = { 0, 0 };
    /* Forming these pointers is formally undefined in C, but it is exactly the
     * caller mistake the library must catch, and gcc passes the address on. A
     * library that missed it would wait (value 0 == expected 0) and time out. */
    const int32_t *odd32 = (const int32_t *)(const void *)((const char *)buf + 1);
    const int64_t *odd64 = (const int64_t *)(const void *)((const char *)buf + 1);
    const int64_t *half64 = (const int64_t *)(const void *)((const char *)buf + 4);

    check_eq(parklot_wait32(odd32, 0, 0), PARKLOT_EINVAL, "wait32 on a misaligned address -> PARKLOT_EINVAL");
    check_eq(parklot_wait64(odd64, 0, 0), PARKLOT_EINVAL, "wait64 on a misaligned address -> PARKLOT_EINVAL");
    check_eq(parklot_wait64(half64, 0, 0), PARKLOT_EINVAL, "wait64 on a 4- but not 8-aligned address -> PARKLOT_EINVAL");
}

static void test_notify_no_waiter(void)
{
    int32_t word = 0;
    check_eq((long long)parklot_notify(&word, 1), 0, "notify(addr, 1) with no waiter -> 0");
    check_eq((long long)parklot_notify(&word, PARKLOT_NOTIFY_ALL), 0, "notify(addr, ALL) with no waiter -> 0");
}

#define FIFO_WAITERS 3
#define QUEUE_SETTLE_MS 50 /* time for a thread to get from its bump into the queue */

struct fifo {
    int32_t word;                   /* waited on; stays 0 */
    int32_t queued;                 /* bumped by each waiter just before it waits */
    int32_t woken;                  /* next free slot in `order` */
    int32_t order[FIFO_WAITERS];    /* ids, in the order the waiters woke */
    int32_t results[FIFO_WAITERS];
};

THREAD_FN(fifo_waiter_thread, struct thread_arg, w)
{
    struct fifo *f = w->shared;
    bump32(&f->queued);
    f->results[w->id] = parklot_wait32(&f->word, 0, LONG_WAIT);
    __atomic_store_n(&f->order[bump32(&f->woken)], w->id, __ATOMIC_SEQ_CST);
}

static void test_notify_fifo(void)
{
    static struct fifo f;
    struct thread_arg args[FIFO_WAITERS];
    pthread_t threads[FIFO_WAITERS];
    int in_order = 1, one_each = 1, all_ok = 1;

    /* Queue the waiters one at a time, so that the queue order is 0, 1, 2. */
    for (int32_t i = 0; i < FIFO_WAITERS; i++) {
        args[i] = (struct thread_arg){ &f, i };
        threads[i] = spawn(fifo_waiter_thread, &args[i]);
        poll_until(&f.queued, i + 1);
        sleep_ms(QUEUE_SETTLE_MS);
    }
    /* Wake them one at a time, letting each record itself before the next
     * notify, so that the recorded order is the wake order. */
    for (int32_t i = 0; i < FIFO_WAITERS; i++) {
        one_each &= parklot_notify(&f.word, 1) == 1;
        poll_until(&f.woken, i + 1);
    }
    for (int i = 0; i < FIFO_WAITERS; i++) {
        pthread_join(threads[i], NULL);
        in_order &= f.order[i] == i;
        all_ok &= f.results[i] == PARKLOT_WAIT_OK;
    }

    char name[120];
    snprintf(name, sizeof name, "notify wakes waiters in FIFO order (queued 0 1 2, woke %d %d %d)",
             (int)f.order[0], (int)f.order[1], (int)f.order[2]);
    check(in_order, name);
    check(one_each, "... each notify(addr, 1) woke exactly one");
    check(all_ok, "... and each wait32 returned OK");
}

/* ---- wait32_async / wait64_async: waits that call back ---------------------- */

struct async_record {
    int32_t calls;      /* how many times the waker ran */
    int32_t outcome;    /* the last outcome it was given */
    int32_t notified;   /* parklot_notify from inside the waker (no lock is held) */
};

static void record_waker(void *data, int32_t outcome)
{
    struct async_record *r = data;
    /* A waker runs with no parklot lock held: calling back in must not deadlock. */
    int32_t other = 0;
    __atomic_store_n(&r->notified, (int32_t)parklot_notify(&other, 1), __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->outcome, outcome, __ATOMIC_SEQ_CST);
    bump32(&r->calls);
}

static void test_wait_async_outcomes(void)
{
    int32_t word = 0;
    int64_t word64 = (int64_t)1 << 40;
    struct async_record r = { 0, -1, -1 };
    parklot_async_wait_t *w = NULL;

    check_eq(parklot_wait32_async(&word, 1, record_waker, &r, &w), PARKLOT_WAIT_NOT_EQUAL, "wait32_async with a wrong value -> NOT_EQUAL");
    check(w == NULL && load32(&r.calls) == 0, "... with no handle and no call");
    check_eq(parklot_wait64_async(&word64, 0, record_waker, &r, &w), PARKLOT_WAIT_NOT_EQUAL, "wait64_async compares all 64 bits");
    check_eq(parklot_wait32_async(NULL, 0, record_waker, &r, &w), PARKLOT_EINVAL, "wait32_async(NULL) -> PARKLOT_EINVAL");
    check_eq(parklot_wait32_async(&word, 0, NULL, &r, &w), PARKLOT_EINVAL, "wait32_async without a waker -> PARKLOT_EINVAL");
    check_eq(parklot_async_wait_expire(NULL), PARKLOT_EINVAL, "async_wait_expire(NULL) -> PARKLOT_EINVAL");
    parklot_async_wait_release(NULL);

    /* Woken: counted by notify, the waker runs once on the notifier's thread. */
    check_eq(parklot_wait32_async(&word, 0, record_waker, &r, &w), PARKLOT_WAIT_OK, "wait32_async with the right value -> queued");
    check_eq(load32(&r.calls), 0, "... and the waker has not run");
    check_eq((long long)parklot_notify(&word, PARKLOT_NOTIFY_ALL), 1, "notify counts the async waiter");
    check_eq(load32(&r.calls), 1, "... whose waker ran once");
    check_eq(load32(&r.outcome), PARKLOT_ASYNC_WOKEN, "... with PARKLOT_ASYNC_WOKEN");
    check_eq(load32(&r.notified), 0, "... and could call parklot_notify (no lock held)");
    check_eq(parklot_async_wait_expire(w), 0, "expire after the wake -> 0");
    check_eq(parklot_async_wait_cancel(w), 0, "cancel after the wake -> 0");
    check_eq(load32(&r.calls), 1, "... and the waker did not run again");
    parklot_async_wait_release(w);

    /* Expired and cancelled: each runs the waker once, and notify counts neither. */
    r.calls = 0;
    check_eq(parklot_wait64_async(&word64, (int64_t)1 << 40, record_waker, &r, &w), PARKLOT_WAIT_OK, "wait64_async -> queued");
    check_eq(parklot_async_wait_expire(w), 1, "expire ends the wait -> 1");
    check_eq(load32(&r.outcome), PARKLOT_ASYNC_TIMED_OUT, "... the waker got PARKLOT_ASYNC_TIMED_OUT");
    check_eq(parklot_async_wait_cancel(w), 0, "cancel after expire -> 0");
    check_eq((long long)parklot_notify(&word64, PARKLOT_NOTIFY_ALL), 0, "notify does not count an expired wait");
    parklot_async_wait_release(w);

    check_eq(parklot_wait32_async(&word, 0, record_waker, &r, &w), PARKLOT_WAIT_OK, "wait32_async -> queued");
    parklot_async_wait_release(w); /* the handle goes; the wait stays */
    check_eq((long long)parklot_notify(&word, PARKLOT_NOTIFY_ALL), 1, "a released handle's wait is still woken");
    check_eq(parklot_wait32_async(&word, 0, record_waker, &r, &w), PARKLOT_WAIT_OK, "wait32_async -> queued");
    check_eq(parklot_async_wait_cancel(w), 1, "cancel ends the wait -> 1");
    check_eq(load32(&r.outcome), PARKLOT_ASYNC_CANCELLED, "... the waker got PARKLOT_ASYNC_CANCELLED");
    check_eq((long long)parklot_notify(&word, PARKLOT_NOTIFY_ALL), 0, "notify does not count a cancelled wait");
    check_eq(load32(&r.calls), 3, "each wait ran its waker once");
    parklot_async_wait_release(w);
}

#define RACE_ROUNDS 2000

struct race {
    int32_t word;
    int32_t go;
    uint64_t woken;
};

THREAD_FN(race_notifier_thread, struct race, rc)
{
    poll_until(&rc->go, 1);
    rc->woken = parklot_notify(&rc->word, 1);
}

/* A notify on one thread against expire or cancel on another: exactly one of
 * them ends each wait, the waker runs once, and notify counts only its wins. */
static void test_wait_async_races(void)
{
    int exactly_one = 1, called_once = 1;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        struct race rc = { 0, 0, 0 };
        struct async_record r = { 0, -1, -1 };
        parklot_async_wait_t *w = NULL;
        if (parklot_wait32_async(&rc.word, 0, record_waker, &r, &w) != PARKLOT_WAIT_OK) {
            exactly_one = 0;
            break;
        }
        pthread_t t = spawn(race_notifier_thread, &rc);
        __atomic_store_n(&rc.go, 1, __ATOMIC_SEQ_CST);
        int32_t gave_up = (i & 1) ? parklot_async_wait_expire(w) : parklot_async_wait_cancel(w);
        pthread_join(t, NULL);
        exactly_one &= (int64_t)gave_up + (int64_t)rc.woken == 1;
        called_once &= load32(&r.calls) == 1;
        int32_t want = rc.woken ? PARKLOT_ASYNC_WOKEN : (i & 1) ? PARKLOT_ASYNC_TIMED_OUT : PARKLOT_ASYNC_CANCELLED;
        called_once &= load32(&r.outcome) == want;
        parklot_async_wait_release(w);
    }
    check(exactly_one, "notify racing expire/cancel: exactly one ends each wait (2000 rounds)");
    check(called_once, "... and the waker runs once with that outcome");
}

/* ---- embedding: cancel a range, interrupt a thread, count waiters ------ */

struct interrupt_waiter {
    int32_t word;
    parklot_thread_t *thread;
    int32_t result;
};

THREAD_FN(interruptible_thread, struct interrupt_waiter, w)
{
    __atomic_store_n(&w->thread, parklot_thread_self(), __ATOMIC_SEQ_CST);
    w->result = parklot_wait32(&w->word, 0, LONG_WAIT);
}

static void test_embedding(void)
{
    /* A "buffer" of four words: an async wait on [1], a blocking one on [2], one outside on [3]. */
    int32_t buffer[4] = { 0, 0, 0, 0 };
    struct async_record r = { 0, -1, -1 };
    parklot_async_wait_t *w = NULL;
    struct word_waiter blocked = { 0, 0, -100 }, outside = { 0, 0, -100 };

    check_eq((long long)parklot_waiter_count(&buffer[1]), 0, "waiter_count with nobody waiting -> 0");
    check_eq(parklot_wait32_async(&buffer[1], 0, record_waker, &r, &w), PARKLOT_WAIT_OK, "wait32_async in the buffer");
    check_eq((long long)parklot_waiter_count(&buffer[1]), 1, "waiter_count counts an async wait");
    /* The blocking waiters wait on their own words; point them at the buffer's. */
    pthread_t t1 = spawn(wait32_thread, &blocked);
    pthread_t t2 = spawn(wait32_thread, &outside);
    int64_t start = now_ns();
    while (parklot_waiter_count(&blocked.word32) + parklot_waiter_count(&outside.word32) < 2 && now_ns() - start < 10000 * MS)
        sched_yield();
    check_eq((long long)parklot_waiter_count(&blocked.word32), 1, "waiter_count counts a blocking wait");
    check_eq((long long)parklot_cancel_range(&buffer[0], sizeof buffer), 1, "cancel_range ends the async wait in the range only");
    check(load32(&r.calls) == 1 && load32(&r.outcome) == PARKLOT_ASYNC_CANCELLED, "... whose waker ran once with PARKLOT_ASYNC_CANCELLED");
    check_eq((long long)parklot_cancel_range(&blocked.word32, sizeof blocked.word32), 1, "cancel_range ends a blocking wait");
    pthread_join(t1, NULL);
    check_eq(blocked.result, PARKLOT_WAIT_CANCELLED, "... which returns PARKLOT_WAIT_CANCELLED");
    check_eq((long long)parklot_cancel_range(&buffer[0], 0), 0, "cancel_range of an empty range -> 0");
    check_eq((long long)parklot_notify(&buffer[1], PARKLOT_NOTIFY_ALL), 0, "a cancelled wait is not counted by a notify");
    check_eq((long long)parklot_notify(&outside.word32, PARKLOT_NOTIFY_ALL), 1, "a wait outside the range still waits");
    pthread_join(t2, NULL);
    parklot_async_wait_release(w);

    struct interrupt_waiter iw = { 0, NULL, -100 };
    pthread_t t3 = spawn(interruptible_thread, &iw);
    while (__atomic_load_n(&iw.thread, __ATOMIC_SEQ_CST) == NULL)
        sched_yield();
    start = now_ns();
    while (parklot_thread_interrupt(__atomic_load_n(&iw.thread, __ATOMIC_SEQ_CST)) != 1 && now_ns() - start < 10000 * MS)
        sched_yield();
    pthread_join(t3, NULL);
    check_eq(iw.result, PARKLOT_WAIT_CANCELLED, "thread_interrupt ends a thread's wait32 with PARKLOT_WAIT_CANCELLED");
    check_eq(parklot_thread_interrupt(parklot_thread_self()), 0, "thread_interrupt of a thread not waiting -> 0");
    check_eq(parklot_thread_interrupt(NULL), PARKLOT_EINVAL, "thread_interrupt(NULL) -> PARKLOT_EINVAL");
}

/* ---- reader-writer lock, semaphore, barrier, once --------------------- */

static void test_rwlock_basics(void)
{
    check_eq(sizeof(parklot_rwlock_t), 4, "rwlock: four bytes");
    for (int prefer_writers = 0; prefer_writers < 2; prefer_writers++) {
        parklot_rwlock_t l;
        check_eq(parklot_rwlock_init(&l, prefer_writers), 0, "rwlock: init");
        check_eq(parklot_rwlock_read(&l), 0, "rwlock: read");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 1, "rwlock: readers share");
        check_eq(parklot_rwlock_try_write_for(&l, 0), 0, "rwlock: a writer waits for readers");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "rwlock: unlock one read");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "rwlock: unlock the other");
        check_eq(parklot_rwlock_unlock_read(&l), PARKLOT_ENOTLOCKED, "rwlock: unlock_read of nobody's read");
        check_eq(parklot_rwlock_write(&l), 0, "rwlock: write");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 0, "rwlock: a writer excludes readers");
        int64_t start = now_ns();
        check_eq(parklot_rwlock_try_write_for(&l, 10 * MS), 0, "rwlock: try_write_for times out");
        check_not_early(now_ns() - start, 10 * MS, "rwlock: try_write_for");
        check_eq(parklot_rwlock_downgrade(&l), 0, "rwlock: downgrade");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 1, "rwlock: readers join a downgraded writer");
        check_eq(parklot_rwlock_unlock_write(&l), PARKLOT_ENOTLOCKED, "rwlock: unlock_write of a read lock");
        parklot_rwlock_unlock_read(&l);
        parklot_rwlock_unlock_read(&l);
        check_eq(parklot_rwlock_try_write_for(&l, 0), 1, "rwlock: free again");
        check_eq(parklot_rwlock_unlock_write(&l), 0, "rwlock: unlock_write");
    }
    parklot_rwlock_t s = PARKLOT_RWLOCK_INIT_PREFER_WRITERS;
    check_eq(parklot_rwlock_try_write_for(&s, 0), 1, "rwlock: the static initialiser works");
    parklot_rwlock_unlock_write(&s);
    check_eq(parklot_rwlock_read(NULL), PARKLOT_EINVAL, "rwlock: NULL");
    check_eq(parklot_rwlock_init((parklot_rwlock_t *)((char *)&s + 1), 1), PARKLOT_EINVAL, "rwlock: misaligned");
}

struct rw_shared {
    parklot_rwlock_t lock;
    int32_t inside;      /* readers of any kind inside; -1000 while a writer is */
    int32_t upgradable;  /* upgradable readers inside */
    int32_t bad;
    int64_t value;
};

static void rw_mark_bad(struct rw_shared *s) { __atomic_store_n(&s->bad, 1, __ATOMIC_SEQ_CST); }

/* One write: nobody may be inside with it, not even an upgradable reader. */
static void rw_write_step(struct rw_shared *s)
{
    parklot_rwlock_write(&s->lock);
    if (__atomic_fetch_add(&s->inside, -1000, __ATOMIC_SEQ_CST) != 0 || load32(&s->upgradable) != 0)
        rw_mark_bad(s);
    s->value++;
    __atomic_fetch_add(&s->inside, 1000, __ATOMIC_SEQ_CST);
    parklot_rwlock_unlock_write(&s->lock);
}

/* One read: no writer may be inside with it. */
static void rw_read_step(struct rw_shared *s)
{
    parklot_rwlock_read(&s->lock);
    if (__atomic_fetch_add(&s->inside, 1, __ATOMIC_SEQ_CST) < 0)
        rw_mark_bad(s);
    __atomic_fetch_add(&s->inside, -1, __ATOMIC_SEQ_CST);
    parklot_rwlock_unlock_read(&s->lock);
}

THREAD_FN(rw_thread, struct rw_shared, s)
{
    for (int i = 0; i < 20000; i++) {
        if (i % 3 == 0)
            rw_write_step(s);
        else
            rw_read_step(s);
    }
}

/* Runs fn on 4 threads over one rw_shared, in each policy: nobody may have
 * been inside beside whom they must not (`no_overlap`), and the value must
 * come out at `value` (`counted`). */
static void rw_threads(void *(*fn)(void *), int64_t value, const char *no_overlap,
                       const char *counted)
{
    for (int prefer_writers = 0; prefer_writers < 2; prefer_writers++) {
        struct rw_shared s = {.inside = 0, .upgradable = 0, .bad = 0, .value = 0};
        parklot_rwlock_init(&s.lock, prefer_writers);
        run_threads(fn, &s, 4);
        check(!s.bad, no_overlap);
        check_eq(s.value, value, counted);
    }
}

static void test_rwlock_threads(void)
{
    rw_threads(rw_thread, 4 * 6667, "rwlock: no writer overlapped anyone (4 threads)",
               "rwlock: every write counted");
}

static void test_rwlock_upgradable_basics(void)
{
    for (int prefer_writers = 0; prefer_writers < 2; prefer_writers++) {
        parklot_rwlock_t l;
        parklot_rwlock_init(&l, prefer_writers);
        check_eq(parklot_rwlock_unlock_upgradable(&l), PARKLOT_ENOTLOCKED, "upgradable: unlock of nobody's upgradable read");
        check_eq(parklot_rwlock_upgrade(&l), PARKLOT_ENOTLOCKED, "upgradable: upgrade without an upgradable read");
        check_eq(parklot_rwlock_read(&l), 0, "upgradable: a plain read");
        check_eq(parklot_rwlock_upgrade(&l), PARKLOT_ENOTLOCKED, "upgradable: a plain read cannot upgrade");
        check_eq(parklot_rwlock_downgrade_upgradable(&l), PARKLOT_ENOTLOCKED, "upgradable: a plain read has nothing to downgrade");
        check_eq(parklot_rwlock_try_upgradable_read_for(&l, 0), 1, "upgradable: joins a plain reader");
        check_eq(parklot_rwlock_try_upgradable_read_for(&l, 0), 0, "upgradable: excludes a second upgradable reader");
        int64_t start = now_ns();
        check_eq(parklot_rwlock_try_upgradable_read_for(&l, 10 * MS), 0, "upgradable: a second one times out");
        check_not_early(now_ns() - start, 10 * MS, "upgradable: try_upgradable_read_for");
        check_eq(parklot_rwlock_try_write_for(&l, 0), 0, "upgradable: excludes writers");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 1, "upgradable: plain readers still join");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "upgradable: the extra reader leaves");
        check_eq(parklot_rwlock_try_upgrade_for(&l, 0), 0, "upgradable: no upgrade while a plain reader reads");
        start = now_ns();
        check_eq(parklot_rwlock_try_upgrade_for(&l, 10 * MS), 0, "upgradable: try_upgrade_for times out");
        check_not_early(now_ns() - start, 10 * MS, "upgradable: try_upgrade_for");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 1, "upgradable: a timed-out upgrade lets readers in again");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "upgradable: that reader leaves");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "upgradable: the first reader leaves");
        check_eq(parklot_rwlock_unlock_read(&l), PARKLOT_ENOTLOCKED, "upgradable: an upgradable read is not a plain one to unlock_read");
        check_eq(parklot_rwlock_try_upgrade_for(&l, 0), 1, "upgradable: upgrades once alone");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 0, "upgradable: the upgraded lock excludes readers");
        check_eq(parklot_rwlock_unlock_upgradable(&l), PARKLOT_ENOTLOCKED, "upgradable: upgraded, it is a write lock now");
        check_eq(parklot_rwlock_downgrade_to_upgradable(&l), 0, "upgradable: write -> upgradable");
        check_eq(parklot_rwlock_try_read_for(&l, 0), 1, "upgradable: readers join after that downgrade");
        check_eq(parklot_rwlock_try_upgradable_read_for(&l, 0), 0, "upgradable: ... but not a second upgradable reader");
        check_eq(parklot_rwlock_downgrade_to_upgradable(&l), PARKLOT_ENOTLOCKED, "upgradable: no write lock to downgrade");
        check_eq(parklot_rwlock_downgrade_upgradable(&l), 0, "upgradable: upgradable -> read");
        check_eq(parklot_rwlock_try_upgradable_read_for(&l, 0), 1, "upgradable: another upgradable reader enters");
        check_eq(parklot_rwlock_unlock_upgradable(&l), 0, "upgradable: unlock_upgradable");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "upgradable: unlock the downgraded read");
        check_eq(parklot_rwlock_unlock_read(&l), 0, "upgradable: unlock the other read");
        check_eq(parklot_rwlock_upgradable_read(&l), 0, "upgradable: upgradable_read");
        check_eq(parklot_rwlock_upgrade(&l), 0, "upgradable: upgrade alone does not wait");
        check_eq(parklot_rwlock_unlock_write(&l), 0, "upgradable: unlock the upgraded lock");
        check_eq(parklot_rwlock_try_write_for(&l, 0), 1, "upgradable: free at the end");
        parklot_rwlock_unlock_write(&l);
    }
    parklot_rwlock_t s;
    parklot_rwlock_t *odd = (parklot_rwlock_t *)((char *)&s + 1);
    check_eq(parklot_rwlock_upgradable_read(NULL), PARKLOT_EINVAL, "upgradable: NULL upgradable_read");
    check_eq(parklot_rwlock_try_upgradable_read_for(odd, 0), PARKLOT_EINVAL, "upgradable: misaligned try_upgradable_read_for");
    check_eq(parklot_rwlock_unlock_upgradable(NULL), PARKLOT_EINVAL, "upgradable: NULL unlock_upgradable");
    check_eq(parklot_rwlock_upgrade(odd), PARKLOT_EINVAL, "upgradable: misaligned upgrade");
    check_eq(parklot_rwlock_try_upgrade_for(NULL, 0), PARKLOT_EINVAL, "upgradable: NULL try_upgrade_for");
    check_eq(parklot_rwlock_downgrade_to_upgradable(odd), PARKLOT_EINVAL, "upgradable: misaligned downgrade_to_upgradable");
    check_eq(parklot_rwlock_downgrade_upgradable(NULL), PARKLOT_EINVAL, "upgradable: NULL downgrade_upgradable");
}

struct upgrade_race {
    parklot_rwlock_t lock;
    int32_t stage;       /* 1: holds the upgradable read; 2: upgraded */
    int32_t reader_left; /* set by the reader just before it unlocks */
    int32_t saw_left;    /* what the upgrader saw once upgraded */
};

THREAD_FN(upgrader_thread, struct upgrade_race, r)
{
    parklot_rwlock_upgradable_read(&r->lock);
    __atomic_store_n(&r->stage, 1, __ATOMIC_SEQ_CST);
    parklot_rwlock_upgrade(&r->lock);
    __atomic_store_n(&r->saw_left, load32(&r->reader_left), __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->stage, 2, __ATOMIC_SEQ_CST);
    parklot_rwlock_unlock_write(&r->lock);
}

static void test_rwlock_upgrade_waits_for_readers(void)
{
    for (int prefer_writers = 0; prefer_writers < 2; prefer_writers++) {
        struct upgrade_race r = {.stage = 0, .reader_left = 0, .saw_left = 0};
        parklot_rwlock_init(&r.lock, prefer_writers);
        parklot_rwlock_read(&r.lock);
        pthread_t t = spawn(upgrader_thread, &r);
        check(poll_until(&r.stage, 1), "upgrade: the upgrader holds its upgradable read beside a reader");
        sleep_ms(20);
        check_eq(load32(&r.stage), 1, "upgrade: waits while another reader reads");
        check_eq(parklot_rwlock_try_read_for(&r.lock, 0), 0, "upgrade: a waiting upgrade keeps new readers out");
        __atomic_store_n(&r.reader_left, 1, __ATOMIC_SEQ_CST);
        parklot_rwlock_unlock_read(&r.lock);
        pthread_join(t, NULL);
        check_eq(load32(&r.saw_left), 1, "upgrade: completed only after the reader left");
        check_eq(parklot_rwlock_try_write_for(&r.lock, 0), 1, "upgrade: the lock is free afterwards");
        parklot_rwlock_unlock_write(&r.lock);
    }
}

/* Every other iteration an upgradable read, which every fourth upgrades to
 * add 1 to the value it read; else writes (odd i divisible by 3) and reads. */
THREAD_FN(upg_thread, struct rw_shared, s)
{
    for (int i = 0; i < 10000; i++) {
        if (i % 2 == 0) {
            parklot_rwlock_upgradable_read(&s->lock);
            if (__atomic_fetch_add(&s->upgradable, 1, __ATOMIC_SEQ_CST) != 0 ||
                __atomic_fetch_add(&s->inside, 1, __ATOMIC_SEQ_CST) < 0)
                rw_mark_bad(s);
            int64_t seen = s->value;
            __atomic_fetch_add(&s->inside, -1, __ATOMIC_SEQ_CST);
            if (i % 4 == 0) {
                parklot_rwlock_upgrade(&s->lock);
                if (__atomic_fetch_add(&s->inside, -1000, __ATOMIC_SEQ_CST) != 0 || s->value != seen)
                    rw_mark_bad(s);
                s->value = seen + 1;
                __atomic_fetch_add(&s->inside, 1000, __ATOMIC_SEQ_CST);
                __atomic_fetch_add(&s->upgradable, -1, __ATOMIC_SEQ_CST);
                parklot_rwlock_unlock_write(&s->lock);
            } else {
                __atomic_fetch_add(&s->upgradable, -1, __ATOMIC_SEQ_CST);
                parklot_rwlock_unlock_upgradable(&s->lock);
            }
        } else if (i % 3 == 0) {
            rw_write_step(s);
        } else {
            rw_read_step(s);
        }
    }
}

static void test_rwlock_upgradable_threads(void)
{
    /* per thread: i % 4 == 0 upgrades (2500), odd i divisible by 3 writes (1667) */
    rw_threads(upg_thread, 4 * (2500 + 1667),
               "upgradable: one upgradable reader at a time, no writer beside anyone, upgrades see what they read (4 threads)",
               "upgradable: every upgrade and write counted");
}

struct sem_shared {
    parklot_semaphore_t sem;
    int32_t held;
    int32_t bad;
};

THREAD_FN(sem_thread, struct sem_shared, s)
{
    for (int i = 0; i < 20000; i++) {
        uint32_t n = (uint32_t)(i % 3) + 1;
        parklot_semaphore_acquire(&s->sem, n, -1);
        if (__atomic_add_fetch(&s->held, (int32_t)n, __ATOMIC_SEQ_CST) > 3)
            __atomic_store_n(&s->bad, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_sub(&s->held, (int32_t)n, __ATOMIC_SEQ_CST);
        parklot_semaphore_release(&s->sem, n);
    }
}

static void test_semaphore(void)
{
    parklot_semaphore_t one;
    check_eq(parklot_semaphore_init(&one, 2), 0, "semaphore: init");
    check_eq(parklot_semaphore_acquire(&one, 2, 0), 1, "semaphore: take 2 of 2");
    int64_t start = now_ns();
    check_eq(parklot_semaphore_acquire(&one, 1, 10 * MS), 0, "semaphore: none left, times out");
    check_not_early(now_ns() - start, 10 * MS, "semaphore: acquire");
    check_eq(parklot_semaphore_release(&one, 1), 0, "semaphore: release");
    check_eq(parklot_semaphore_available(&one), 1, "semaphore: available");
    check_eq(parklot_semaphore_release(&one, 0x3fffffff), PARKLOT_EINVAL, "semaphore: past the bound");
    check_eq(parklot_semaphore_available(&one), 1, "semaphore: unchanged after a refused release");
    check_eq(parklot_semaphore_init(NULL, 1), PARKLOT_EINVAL, "semaphore: NULL");

    struct sem_shared s = {.held = 0, .bad = 0};
    parklot_semaphore_init(&s.sem, 3);
    run_threads(sem_thread, &s, 4);
    check(!s.bad, "semaphore: never more than 3 permits held (4 threads)");
    check_eq(parklot_semaphore_available(&s.sem), 3, "semaphore: every permit came back");
}

struct barrier_shared {
    parklot_barrier_t barrier;
    int32_t leaders;
    int32_t arrived;
    int32_t bad;
};

THREAD_FN(barrier_thread, struct barrier_shared, s)
{
    for (int round = 0; round < 100; round++) {
        __atomic_fetch_add(&s->arrived, 1, __ATOMIC_SEQ_CST);
        int32_t r = parklot_barrier_wait(&s->barrier);
        if (__atomic_load_n(&s->arrived, __ATOMIC_SEQ_CST) < 4 * (round + 1))
            __atomic_store_n(&s->bad, 1, __ATOMIC_SEQ_CST);
        if (r == 1)
            __atomic_fetch_add(&s->leaders, 1, __ATOMIC_SEQ_CST);
        parklot_barrier_wait(&s->barrier);
    }
}

static int32_t once_runs;

static void once_body(void *context)
{
    sleep_ms(5);
    __atomic_fetch_add((int32_t *)context, 1, __ATOMIC_SEQ_CST);
}

static parklot_once_t the_once = PARKLOT_ONCE_INIT;

static void *once_thread(void *arg)
{
    (void)arg;
    parklot_once(&the_once, once_body, &once_runs);
    if (load32(&once_runs) != 1)
        __atomic_store_n(&once_runs, 100, __ATOMIC_SEQ_CST);
    return NULL;
}

static void test_barrier_and_once(void)
{
    struct barrier_shared s = {.leaders = 0, .arrived = 0, .bad = 0};
    check_eq(parklot_barrier_init(&s.barrier, 4), 0, "barrier: init");
    run_threads(barrier_thread, &s, 4);
    check(!s.bad, "barrier: nobody passed before all four arrived");
    check_eq(s.leaders, 100, "barrier: one leader per opening (100 rounds)");
    check_eq(parklot_barrier_init(NULL, 2), PARKLOT_EINVAL, "barrier: NULL");

    check_eq(parklot_once_done(&the_once), 0, "once: not done yet");
    run_threads(once_thread, NULL, 4);
    check_eq(once_runs, 1, "once: ran once, and every caller saw it done");
    check_eq(parklot_once_done(&the_once), 1, "once: done");
    check_eq(parklot_once(&the_once, NULL, NULL), PARKLOT_EINVAL, "once: NULL function");
}

/* Issue 29: more threads than parties, breaking, timeouts, reset. */

struct barrier_pool {
    parklot_barrier_t barrier;
    int32_t tickets; /* arrivals handed out; each thread takes them in turn */
    int32_t openings;
    int32_t leaders;
    int32_t broken;
};

THREAD_FN(barrier_pool_thread, struct barrier_pool, p)
{
    while (__atomic_fetch_add(&p->tickets, 1, __ATOMIC_SEQ_CST) < 2 * p->openings) {
        int32_t r = parklot_barrier_wait_for(&p->barrier, LONG_WAIT);
        if (r == 1)
            __atomic_fetch_add(&p->leaders, 1, __ATOMIC_SEQ_CST);
        else if (r != 0)
            __atomic_fetch_add(&p->broken, 1, __ATOMIC_SEQ_CST);
    }
}

static void *waiting_barrier_thread(void *arg)
{
    return (void *)(intptr_t)parklot_barrier_wait(arg);
}

static void test_barrier_breaks(void)
{
    /* 4 threads on a barrier for 2, from one pool of arrivals: every arrival
     * counts into some generation (a lost one leaves a thread waiting). */
    struct barrier_pool p = {.tickets = 0, .openings = 5000, .leaders = 0, .broken = 0};
    parklot_barrier_init(&p.barrier, 2);
    run_threads(barrier_pool_thread, &p, 4);
    check_eq(p.leaders, 5000, "barrier: 4 threads on a barrier for 2, exactly one leader per 2 arrivals");
    check_eq(p.broken, 0, "barrier: 4 threads on a barrier for 2, no wait timed out");

    /* A timed wait that times out breaks the barrier until reset. */
    parklot_barrier_t b;
    parklot_barrier_init(&b, 2);
    int64_t start = now_ns();
    check_eq(parklot_barrier_wait_for(&b, 20 * MS), PARKLOT_BARRIER_TIMED_OUT, "barrier: a lone timed wait times out");
    check_not_early(now_ns() - start, 20 * MS, "barrier: parklot_barrier_wait_for");
    check_eq(parklot_barrier_is_broken(&b), 1, "barrier: broken by the timeout");
    check_eq(parklot_barrier_wait(&b), PARKLOT_BARRIER_BROKEN, "barrier: a wait at a broken barrier fails at once");
    check_eq(parklot_barrier_wait_for(&b, -1), PARKLOT_BARRIER_BROKEN, "barrier: so does a timed one");
    check_eq(parklot_barrier_reset(&b), 0, "barrier: reset");
    check_eq(parklot_barrier_is_broken(&b), 0, "barrier: not broken after reset");
    pthread_t other = spawn(waiting_barrier_thread, &b);
    int32_t mine = parklot_barrier_wait_for(&b, LONG_WAIT);
    void *theirs;
    pthread_join(other, &theirs);
    check((mine == 1) + ((intptr_t)theirs == 1) == 1 && mine >= 0 && (intptr_t)theirs >= 0,
          "barrier: usable again after reset, one leader");

    /* The others waiting when a timeout breaks it are told so. */
    parklot_barrier_init(&b, 3);
    other = spawn(waiting_barrier_thread, &b);
    sleep_ms(50);
    check_eq(parklot_barrier_wait_for(&b, 20 * MS), PARKLOT_BARRIER_TIMED_OUT, "barrier: the second of three times out");
    pthread_join(other, &theirs);
    check_eq((intptr_t)theirs, PARKLOT_BARRIER_BROKEN, "barrier: the waiting party is told it broke");

    /* Reset breaks the waiters present. */
    parklot_barrier_reset(&b);
    other = spawn(waiting_barrier_thread, &b);
    sleep_ms(50);
    check_eq(parklot_barrier_reset(&b), 0, "barrier: reset with a party waiting");
    pthread_join(other, &theirs);
    check_eq((intptr_t)theirs, PARKLOT_BARRIER_BROKEN, "barrier: a party waiting at a reset is told it broke");
    check_eq(parklot_barrier_is_broken(&b), 0, "barrier: not broken after that reset");
    check_eq(parklot_barrier_wait_for(NULL, 0), PARKLOT_EINVAL, "barrier: wait_for NULL");
    check_eq(parklot_barrier_reset(NULL), PARKLOT_EINVAL, "barrier: reset NULL");
    check_eq(parklot_barrier_is_broken(NULL), PARKLOT_EINVAL, "barrier: is_broken NULL");
}

/* ---- asynchronous forms: a record queues, the word turns 0, resume -------- */

/* Waits (as an embedder would, outside parklot) until the record's word reads
 * 0: FUTEX_WAIT_PRIVATE on Linux, polling elsewhere. 0 if it took longer
 * than POLL_LIMIT_MS. */
static int word_turns_0(const parklot_async_waiter_t *w)
{
    const int32_t *word = parklot_async_waiter_word(w);
    int64_t deadline = now_ns() + POLL_LIMIT_MS * MS;
    int32_t v;
    while ((v = load32(word)) != 0) {
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return 0;
#ifdef __linux__
        struct timespec ts = { (time_t)(left / 1000000000), (long)(left % 1000000000) };
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
#else
        sched_yield();
#endif
    }
    return 1;
}

static void test_async_waiter_basics(void)
{
    parklot_async_waiter_t *w = parklot_async_waiter_new();
    check(w != NULL, "async waiter: new");
    check(parklot_async_waiter_word(w) != NULL && load32(parklot_async_waiter_word(w)) == 0,
          "async waiter: a new record's word reads 0");
    check(parklot_async_waiter_word(NULL) == NULL, "async waiter: word of NULL is NULL");
    parklot_async_waiter_t *odd = (parklot_async_waiter_t *)((char *)w + 1);
    parklot_lock_t lock = PARKLOT_LOCK_INIT;
    parklot_rwlock_t rw = PARKLOT_RWLOCK_INIT_PREFER_READERS;
    parklot_semaphore_t sem;
    parklot_semaphore_init(&sem, 0);
    check_eq(parklot_lock_async_begin(&lock, NULL), PARKLOT_EINVAL, "async: NULL waiter");
    check_eq(parklot_lock_async_begin(&lock, odd), PARKLOT_EINVAL, "async: misaligned waiter");
    check_eq(parklot_rwlock_read_async_begin(NULL, w), PARKLOT_EINVAL, "async: NULL rwlock");
    check_eq(parklot_rwlock_write_async_begin((parklot_rwlock_t *)((char *)&rw + 1), w),
             PARKLOT_EINVAL, "async: misaligned rwlock");
    check_eq(parklot_semaphore_acquire_async_begin(&sem, 1u << 30, w), PARKLOT_EINVAL,
             "async: more permits than a semaphore holds");
    check_eq(parklot_rwlock_upgrade_async_begin(&rw, w), PARKLOT_ENOTLOCKED,
             "async: upgrade without an upgradable read");
    check_eq(parklot_barrier_wait_async_begin(NULL, w), PARKLOT_EINVAL, "async: NULL barrier");
    check_eq(parklot_once_wait_async_resume(NULL, w), PARKLOT_EINVAL, "async: NULL once");
    check_eq(parklot_async_waiter_free(odd), PARKLOT_EINVAL, "async waiter: free misaligned");
    check_eq(parklot_async_waiter_free(NULL), 0, "async waiter: free NULL");

    check_eq(parklot_lock_async_begin(&lock, w), 1, "async lock: a free lock is taken at once");
    check_eq(parklot_lock_async_begin(&lock, w), 0, "async lock: a held lock queues the record");
    check_eq(load32(parklot_async_waiter_word(w)), 1, "async lock: the word reads 1 while queued");
    check_eq(parklot_lock_async_begin(&lock, w), PARKLOT_EINVAL, "async lock: a queued record is refused");
    check_eq(parklot_async_waiter_free(w), PARKLOT_EINVAL, "async waiter: a queued record is not freed");
    check_eq(parklot_lock_async_resume(&lock, w), 0, "async lock: resume before the wake stays queued");
    parklot_unlock(&lock);
    check(word_turns_0(w), "async lock: unlock turns the word 0");
    check_eq(parklot_lock_async_resume(&lock, w), 1, "async lock: resume takes it");
    check_eq(parklot_is_locked(&lock), 1, "async lock: held after resume");
    parklot_unlock(&lock);
    check_eq(parklot_async_waiter_free(w), 0, "async waiter: free");
}

struct async_writer {
    parklot_rwlock_t lock;
    int32_t holding;
    int32_t go;
};

THREAD_FN(async_writer_thread, struct async_writer, s)
{
    parklot_rwlock_write(&s->lock);
    __atomic_store_n(&s->holding, 1, __ATOMIC_SEQ_CST);
    poll_until(&s->go, 1);
    parklot_rwlock_unlock_write(&s->lock);
}

static void test_async_rwlock(void)
{
    parklot_async_waiter_t *w = parklot_async_waiter_new();
    parklot_async_waiter_t *w2 = parklot_async_waiter_new();
    struct async_writer s = {.holding = 0, .go = 0};
    parklot_rwlock_init(&s.lock, 1);
    pthread_t t = spawn(async_writer_thread, &s);
    check(poll_until(&s.holding, 1), "async read: the other thread holds the write lock");
    check_eq(parklot_rwlock_read_async_begin(&s.lock, w), 0, "async read: queued behind the writer");
    sleep_ms(20);
    check_eq(load32(parklot_async_waiter_word(w)), 1, "async read: still queued while the writer holds it");
    check_eq(parklot_rwlock_read_async_resume(&s.lock, w), 0, "async read: resume before the wake stays queued");
    __atomic_store_n(&s.go, 1, __ATOMIC_SEQ_CST);
    check(word_turns_0(w), "async read: the writer's unlock turns the word 0");
    check_eq(parklot_rwlock_read_async_resume(&s.lock, w), 1, "async read: resume takes the read");
    check_eq(parklot_rwlock_try_write_for(&s.lock, 0), 0, "async read: the read is really held");
    check_eq(parklot_rwlock_unlock_read(&s.lock), 0, "async read: unlock it");
    pthread_join(t, NULL);

    /* Cancel of queued waiters leaves the lock usable by others. */
    parklot_rwlock_write(&s.lock);
    check_eq(parklot_rwlock_write_async_begin(&s.lock, w), 0, "async write: queued");
    check_eq(parklot_rwlock_read_async_begin(&s.lock, w2), 0, "async read: queued too");
    check_eq(parklot_rwlock_write_async_cancel(&s.lock, w), 0, "async write: cancel holds nothing");
    check_eq(load32(parklot_async_waiter_word(w)), 0, "async write: the word reads 0 after cancel");
    check_eq(parklot_rwlock_read_async_cancel(&s.lock, w2), 0, "async read: cancel holds nothing");
    parklot_rwlock_unlock_write(&s.lock);
    check_eq(parklot_rwlock_try_write_for(&s.lock, 0), 1, "async cancel: the write lock is free after");
    parklot_rwlock_unlock_write(&s.lock);
    check_eq(parklot_rwlock_try_read_for(&s.lock, 0), 1, "async cancel: a read is free after");
    parklot_rwlock_unlock_read(&s.lock);

    /* Woken, then cancelled: the read was handed over, and cancel says so. */
    parklot_rwlock_write(&s.lock);
    check_eq(parklot_rwlock_read_async_begin(&s.lock, w), 0, "async read: queued again");
    parklot_rwlock_unlock_write(&s.lock);
    check(word_turns_0(w), "async read: woken");
    check_eq(parklot_rwlock_read_async_cancel(&s.lock, w), 1, "async read: cancel after the wake holds it");
    check_eq(parklot_rwlock_unlock_read(&s.lock), 0, "async read: which unlock_read releases");
    check_eq(parklot_rwlock_unlock_read(&s.lock), PARKLOT_ENOTLOCKED, "async read: and only one read");

    /* Upgradable read behind another; upgrade behind a plain reader. */
    parklot_rwlock_upgradable_read(&s.lock);
    check_eq(parklot_rwlock_upgradable_read_async_begin(&s.lock, w), 0,
             "async upgradable: queued behind another upgradable read");
    check_eq(parklot_rwlock_unlock_upgradable(&s.lock), 0, "async upgradable: the other leaves");
    check(word_turns_0(w), "async upgradable: woken");
    check_eq(parklot_rwlock_upgradable_read_async_resume(&s.lock, w), 1, "async upgradable: taken");
    check_eq(parklot_rwlock_read(&s.lock), 0, "async upgrade: a plain reader too");
    check_eq(parklot_rwlock_upgrade_async_begin(&s.lock, w), 0, "async upgrade: queued behind the reader");
    check_eq(parklot_rwlock_try_read_for(&s.lock, 0), 0, "async upgrade: new readers wait meanwhile");
    check_eq(parklot_rwlock_unlock_read(&s.lock), 0, "async upgrade: the reader leaves");
    check(word_turns_0(w), "async upgrade: woken");
    check_eq(parklot_rwlock_upgrade_async_resume(&s.lock, w), 1, "async upgrade: upgraded");
    check_eq(parklot_rwlock_unlock_write(&s.lock), 0, "async upgrade: the write lock is held");

    parklot_rwlock_upgradable_read(&s.lock);
    parklot_rwlock_read(&s.lock);
    check_eq(parklot_rwlock_upgrade_async_begin(&s.lock, w), 0, "async upgrade: queued again");
    check_eq(parklot_rwlock_upgrade_async_cancel(&s.lock, w), 0, "async upgrade: cancel keeps the upgradable read");
    check_eq(parklot_rwlock_try_read_for(&s.lock, 0), 1, "async upgrade: readers enter again after cancel");
    parklot_rwlock_unlock_read(&s.lock);
    parklot_rwlock_unlock_read(&s.lock);
    check_eq(parklot_rwlock_unlock_upgradable(&s.lock), 0, "async upgrade: the upgradable read was still held");
    check_eq(parklot_rwlock_try_write_for(&s.lock, 0), 1, "async upgrade: all free at the end");
    parklot_rwlock_unlock_write(&s.lock);
    check_eq(parklot_async_waiter_free(w), 0, "async rwlock: free the records");
    parklot_async_waiter_free(w2);
}

static void test_async_semaphore(void)
{
    parklot_async_waiter_t *w = parklot_async_waiter_new();
    parklot_semaphore_t sem;
    parklot_semaphore_init(&sem, 0);
    check_eq(parklot_semaphore_acquire_async_begin(&sem, 2, w), 0, "async acquire(2): no permits: queued");
    parklot_semaphore_release(&sem, 1);
    sleep_ms(5);
    /* Woken to retry or not, one permit is not enough: resume queues (again). */
    check_eq(parklot_semaphore_acquire_async_resume(&sem, 2, w), 0, "async acquire(2): one permit free: queued");
    check_eq(parklot_semaphore_available(&sem), 1, "async acquire(2): the one permit is untouched");
    parklot_semaphore_release(&sem, 1);
    int32_t r = 0;
    for (int i = 0; i < 3 && r == 0; i++) {
        if (!word_turns_0(w))
            break;
        r = parklot_semaphore_acquire_async_resume(&sem, 2, w);
    }
    check_eq(r, 1, "async acquire(2): taken once the second permit came");
    check_eq(parklot_semaphore_available(&sem), 0, "async acquire(2): both permits taken");

    check_eq(parklot_semaphore_acquire_async_begin(&sem, 3, w), 0, "async acquire(3): queued");
    check_eq(parklot_semaphore_acquire_async_cancel(&sem, 3, w), 0, "async acquire(3): cancel holds nothing");
    parklot_semaphore_release(&sem, 3);
    check_eq(parklot_semaphore_acquire(&sem, 3, 0), 1, "async acquire(3): the permits are free after cancel");
    check_eq(parklot_async_waiter_free(w), 0, "async semaphore: free the record");
}

static void *blocking_barrier_thread(void *arg)
{
    return (void *)(intptr_t)parklot_barrier_wait(arg);
}

static void test_async_barrier(void)
{
    parklot_async_waiter_t *w = parklot_async_waiter_new();
    parklot_barrier_t b;
    parklot_barrier_init(&b, 2);
    check_eq(parklot_barrier_wait_async_begin(&b, w), PARKLOT_BARRIER_QUEUED, "async barrier: the first arrival queues");
    check_eq(parklot_barrier_wait_async_resume(&b, w), PARKLOT_BARRIER_QUEUED, "async barrier: not open with one of two");
    void *leader;
    pthread_t t = spawn(blocking_barrier_thread, &b);
    pthread_join(t, &leader);
    check_eq((intptr_t)leader, 1, "async barrier: the blocking arrival opened it (leader)");
    check(word_turns_0(w), "async barrier: the opening turns the word 0");
    check_eq(parklot_barrier_wait_async_resume(&b, w), PARKLOT_BARRIER_PASSED, "async barrier: through");

    /* The next generation: the blocking thread arrives first. */
    t = spawn(blocking_barrier_thread, &b);
    sleep_ms(20);
    int32_t r = parklot_barrier_wait_async_begin(&b, w);
    if (r == PARKLOT_BARRIER_QUEUED) { /* the thread was slow: it is the leader */
        check(word_turns_0(w), "async barrier: woken (second round)");
        r = parklot_barrier_wait_async_resume(&b, w) == PARKLOT_BARRIER_PASSED ? PARKLOT_BARRIER_PASSED : -9;
    }
    pthread_join(t, &leader);
    check((r == PARKLOT_BARRIER_LEADER) != ((intptr_t)leader == 1) && r != -9,
          "async barrier: exactly one leader in the second round");

    /* Cancel (a timeout): the party leaves, and the barrier breaks. */
    check_eq(parklot_barrier_wait_async_begin(&b, w), PARKLOT_BARRIER_QUEUED, "async barrier: queued (third round)");
    check_eq(parklot_barrier_wait_async_cancel(&b, w), PARKLOT_BARRIER_TIMED_OUT, "async barrier: a cancel breaks it");
    check_eq(load32(parklot_async_waiter_word(w)), 0, "async barrier: the word reads 0 after cancel");
    check_eq(parklot_barrier_is_broken(&b), 1, "async barrier: broken by the cancel");
    check_eq(parklot_barrier_wait_async_begin(&b, w), PARKLOT_BARRIER_BROKEN, "async barrier: an arrival at a broken barrier fails");
    t = spawn(blocking_barrier_thread, &b);
    pthread_join(t, &leader);
    check_eq((intptr_t)leader, PARKLOT_BARRIER_BROKEN, "async barrier: so does a blocking one");

    /* Broken while queued; then, after a reset, a cancel that comes too late. */
    parklot_barrier_reset(&b);
    parklot_barrier_t b3;
    parklot_barrier_init(&b3, 3);
    check_eq(parklot_barrier_wait_async_begin(&b3, w), PARKLOT_BARRIER_QUEUED, "async barrier: queued at a barrier for 3");
    check_eq(parklot_barrier_wait_for(&b3, 10 * MS), PARKLOT_BARRIER_TIMED_OUT, "async barrier: another party times out");
    check(word_turns_0(w), "async barrier: the break turns the word 0");
    check_eq(parklot_barrier_wait_async_resume(&b3, w), PARKLOT_BARRIER_BROKEN, "async barrier: resume says broken");
    check_eq(parklot_barrier_wait_async_begin(&b, w), PARKLOT_BARRIER_QUEUED, "async barrier: queued after reset");
    t = spawn(blocking_barrier_thread, &b);
    pthread_join(t, &leader);
    check_eq((intptr_t)leader, 1, "async barrier: the blocking arrival leads after reset");
    check_eq(parklot_barrier_wait_async_cancel(&b, w), PARKLOT_BARRIER_PASSED, "async barrier: a cancel after the opening says passed");
    check_eq(parklot_barrier_is_broken(&b), 0, "async barrier: and breaks nothing");
    check_eq(parklot_async_waiter_free(w), 0, "async barrier: free the record");
}

struct slow_once {
    parklot_once_t once;
    int32_t running;
    int32_t go;
    int32_t runs;
};

static void slow_once_body(void *arg)
{
    struct slow_once *s = arg;
    __atomic_store_n(&s->running, 1, __ATOMIC_SEQ_CST);
    poll_until(&s->go, 1);
    bump32(&s->runs);
}

static void *slow_once_thread(void *arg)
{
    parklot_once(&((struct slow_once *)arg)->once, slow_once_body, arg);
    return NULL;
}

static void test_async_once(void)
{
    parklot_async_waiter_t *w = parklot_async_waiter_new();
    struct slow_once s = {.once = PARKLOT_ONCE_INIT, .running = 0, .go = 0, .runs = 0};
    pthread_t t = spawn(slow_once_thread, &s);
    check(poll_until(&s.running, 1), "async once: another thread runs it");
    check_eq(parklot_once_wait_async_begin(&s.once, w), 0, "async once: queued while it runs");
    sleep_ms(20);
    check_eq(parklot_once_wait_async_resume(&s.once, w), 0, "async once: still running, still queued");
    __atomic_store_n(&s.go, 1, __ATOMIC_SEQ_CST);
    check(word_turns_0(w), "async once: the run's end turns the word 0");
    check_eq(parklot_once_wait_async_resume(&s.once, w), 1, "async once: resume: nothing runs now");
    check_eq(parklot_once_done(&s.once), 1, "async once: done");
    pthread_join(t, NULL);
    check_eq(parklot_once_wait_async_begin(&s.once, w), 1, "async once: begin on a done once returns at once");

    struct slow_once s2 = {.once = PARKLOT_ONCE_INIT, .running = 0, .go = 0, .runs = 0};
    t = spawn(slow_once_thread, &s2);
    poll_until(&s2.running, 1);
    check_eq(parklot_once_wait_async_begin(&s2.once, w), 0, "async once: queued (cancel case)");
    check_eq(parklot_once_wait_async_cancel(&s2.once, w), 0, "async once: cancel before the end");
    __atomic_store_n(&s2.go, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    check_eq(s2.runs, 1, "async once: the run completed after the cancel");
    check_eq(parklot_async_waiter_free(w), 0, "async once: free the record");
}

/* ---- main ------------------------------------------------------------------ */

/* ---- tuning ------------------------------------------------------------------ */

/* Whether COUNTER_THREADS threads counting under one lock, with the settings
 * as they are, come out exact with no failed call. */
static int counter_exact(void)
{
    struct counter c = { PARKLOT_LOCK_INIT, 0 };
    long long errors = run_counter(&c);
    return errors == 0 && c.value == (long long)COUNTER_THREADS * COUNTER_ITERATIONS && parklot_is_locked(&c.lock) == 0;
}

static void test_tuning(void)
{
    uint32_t spins = parklot_set_spin_limit(0);
    check_eq(spins, 40, "parklot_set_spin_limit returns the limit it replaced, the default 40");
    check(counter_exact(), "... and with 0 (park at once) 8 threads x 100000 increments under one lock are exact");
    check_eq(parklot_set_spin_limit(spins), 0, "... and setting 40 back returns the 0 it replaced");

    check_eq(parklot_set_carry_parked(2), PARKLOT_EINVAL, "parklot_set_carry_parked(2) -> PARKLOT_EINVAL");
    check_eq(parklot_set_carry_parked(-1), PARKLOT_EINVAL, "parklot_set_carry_parked(-1) -> PARKLOT_EINVAL");
    int32_t carry = parklot_set_carry_parked(1);
    check_eq(carry, 0, "... which changed nothing: 1 replaced the native default, 0");
    check(counter_exact(), "... and with 1 (the woken thread carries the parked bit) the 8 threads' count is exact");
    check_eq(parklot_set_carry_parked(carry), 1, "... and setting 0 back returns the 1 it replaced");

    uint32_t park = parklot_set_park_spin_limit(0);
    check_eq(park, 2048, "parklot_set_park_spin_limit returns the limit it replaced, the native default 2048");
    struct word_waiter w = { 5, 0, -100 };
    uint64_t woken;
    int32_t got = wait_and_notify(wait32_thread, &w, &w.word32, &woken);
    check(got == PARKLOT_WAIT_OK && woken == 1, "... and with 0 (sleep at once) a wait32 waiter is woken by notify, which returns 1");
    check(counter_exact(), "... and the 8 threads' count is exact");
    check_eq(parklot_set_park_spin_limit(park), 0, "... and setting 2048 back returns the 0 it replaced");
}

/* ---- diagnostics ----------------------------------------------------------- */

struct cycle_side {
    parklot_lock_t *mine, *other;
    int32_t result;       /* parklot_lock(other)'s */
    int32_t holding;      /* set once `mine` is held */
    char message[256];
};

static void *cycle_thread(void *arg)
{
    struct cycle_side *s = arg;
    parklot_set_thread_name("c-cycle");
    parklot_lock(s->mine);
    __atomic_store_n(&s->holding, 1, __ATOMIC_SEQ_CST);
    s->result = parklot_lock(s->other);
    if (s->result == PARKLOT_EDEADLK) {
        parklot_last_deadlock(s->message, sizeof s->message);
    } else {
        parklot_unlock(s->other);
    }
    parklot_unlock(s->mine);
    return NULL;
}

struct seen {
    uintptr_t address;
    int waiters_there, blocking, lock_kind, holds_there, named;
};

static int32_t on_waiter(const parklot_waiter_info_t *w, void *ctx)
{
    struct seen *s = ctx;
    if (w->address == s->address) {
        s->waiters_there++;
        s->blocking += w->blocking;
        s->lock_kind += w->kind == 1;
    }
    return 0;
}

static int32_t on_hold(const parklot_hold_info_t *h, void *ctx)
{
    struct seen *s = ctx;
    s->holds_there += h->address == s->address && h->thread == parklot_thread_id();
    return 0;
}

static int32_t on_thread(const parklot_thread_info_t *t, void *ctx)
{
    struct seen *s = ctx;
    s->named += t->name != NULL && strcmp(t->name, "c-cycle") == 0;
    return 0;
}

static void test_diagnostics(void)
{
    parklot_lock_t a = PARKLOT_LOCK_INIT, b = PARKLOT_LOCK_INIT;
    check_eq(parklot_set_deadlock_detection(2), PARKLOT_EINVAL, "diagnostics: a switch refuses 2");
    check_eq(parklot_set_deadlock_detection(1), 0, "diagnostics: detection was off");
    check_eq(parklot_set_thread_name(NULL), PARKLOT_EINVAL, "diagnostics: a NULL name is refused");
    check(strcmp(parklot_kind_name(1), "Lock") == 0 && strcmp(parklot_kind_name(99), "unknown") == 0,
          "diagnostics: kind names");

    /* The thread holds b and asks for a, which we hold: it waits. */
    parklot_lock(&a);
    struct cycle_side side = { &b, &a, 0, 0, {0} };
    pthread_t t;
    pthread_create(&t, NULL, cycle_thread, &side);
    check(poll_until(&side.holding, 1), "diagnostics: the thread holds its lock");
    int64_t start = now_ns();
    while (parklot_waiter_count(&a) < 1 && now_ns() - start < POLL_LIMIT_MS * MS) {
        usleep(1000);
    }
    struct seen seen = { (uintptr_t)&a, 0, 0, 0, 0, 0 };
    int32_t n = parklot_diagnostics(on_waiter, on_hold, on_thread, &seen);
    check(n >= 1 && seen.waiters_there == 1 && seen.blocking == 1 && seen.lock_kind == 1,
          "diagnostics: the snapshot shows the thread blocked on the Lock");
    check(seen.holds_there == 1, "diagnostics: and that this thread holds it");
    check(seen.named == 1, "diagnostics: and the thread's name");

    /* Asking for b now would close the cycle: refused, nothing taken. */
    check_eq(parklot_lock(&b), PARKLOT_EDEADLK, "diagnostics: parklot_lock refuses the closing wait");
    char message[256];
    size_t len = parklot_last_deadlock(message, sizeof message);
    check(len > 0 && strstr(message, "c-cycle") != NULL && strncmp(message, "deadlock: ", 10) == 0,
          "diagnostics: parklot_last_deadlock names the cycle");
    check_eq((long long)parklot_last_deadlock(message, sizeof message), 0, "diagnostics: once");
    parklot_unlock(&a);
    pthread_join(t, NULL);
    check_eq(side.result, 0, "diagnostics: the other thread went on and took the lock");
    check_eq(parklot_lock(&a), 0, "diagnostics: a lock without a cycle is taken");
    check_eq(parklot_lock(&a), PARKLOT_EDEADLK, "diagnostics: a relock is a cycle of one");
    parklot_unlock(&a);
    check_eq(parklot_set_deadlock_detection(0), 1, "diagnostics: detection was on");

    /* Lock order: a then b, later b then a. */
    check_eq(parklot_set_lock_order_checking(1), 0, "diagnostics: lock-order checking was off");
    parklot_lock(&a); parklot_lock(&b); parklot_unlock(&b); parklot_unlock(&a);
    check_eq((long long)parklot_lock_order_violation(0, NULL, 0), 0, "diagnostics: one order is fine");
    parklot_lock(&b); parklot_lock(&a); parklot_unlock(&a); parklot_unlock(&b);
    len = parklot_lock_order_violation(0, message, sizeof message);
    check(len > 0 && strncmp(message, "lock order inversion", 20) == 0,
          "diagnostics: both orders are reported");
    check_eq(parklot_set_lock_order_checking(0), 1, "diagnostics: lock-order checking was on");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the lines so far if we crash */
    signal(SIGALRM, on_watchdog);
    alarm(WATCHDOG_SECONDS);

    test_sizes();
    test_lock_basics();
    test_unlock_unlocked();
    test_owner_died();
    test_null_pointers();
    test_counter();
    test_try_lock_for_timeout();
    test_try_lock_for_success();
    test_producer_consumer();
    test_condition_timeout();
    test_condition_notify();
    test_wait32();
    test_wait64();
    test_misaligned();
    test_notify_no_waiter();
    test_notify_fifo();
    test_wait_async_outcomes();
    test_wait_async_races();
    test_embedding();
    test_tuning();

    /* reader-writer lock, semaphore, barrier, once */
    test_rwlock_basics();
    test_rwlock_threads();
    test_rwlock_upgradable_basics();
    test_rwlock_upgrade_waits_for_readers();
    test_rwlock_upgradable_threads();
    test_semaphore();
    test_barrier_and_once();
    test_barrier_breaks();

    /* asynchronous forms */
    test_async_waiter_basics();
    test_async_rwlock();
    test_async_semaphore();
    test_async_barrier();
    test_async_once();

    test_diagnostics();

    printf("c-abi: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
