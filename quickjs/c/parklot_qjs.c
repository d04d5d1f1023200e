/*
 * parklot_qjs.c - QuickJS's Atomics.wait, Atomics.notify and a new
 * Atomics.waitAsync, served by parklot's C ABI (runtime/include/parklot.h).
 *
 * What an engine calls, and where this file calls it:
 * - a context is made: install the three functions on its Atomics
 *   (parklot_qjs_new_context);
 * - Atomics.wait: parklot_wait32/parklot_wait64 (blocking, on the calling
 *   thread), after the spec's checks, [[CanBlock]] included;
 * - Atomics.notify: parklot_notify (it counts blocking and async waiters);
 * - Atomics.waitAsync: parklot_wait32_async/parklot_wait64_async with a waker
 *   that only records the outcome and signals the owning context; the
 *   context's "pump" job (queued while it has pending waits) resolves the
 *   promises on the owning thread, and expires due waits with
 *   parklot_async_wait_expire (the timers are the embedder's, here);
 * - a context is freed: parklot_async_wait_cancel on its pending waits,
 *   then wait for their wakers (one may be running on a notifier's thread);
 * - a SharedArrayBuffer's memory is freed: parklot_cancel_range on it (a
 *   pending waitAsync also holds its buffer, so this finds none of ours).
 *
 * Where the thread runs quickjs-libc's loop and the embedder said so
 * (parklot_qjs_settle_on_libc_loop: the shell and its workers), the waker
 * also writes to the context's eventfd, which the loop polls beside its
 * other handlers, and a loop timer expires the nearest timeout: the loop's
 * timers and messages run while a wait is pending. Elsewhere (run-test262,
 * which only runs jobs) the pump blocks the owning thread when nothing else
 * is queued, until the next outcome or the nearest timeout.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "parklot.h"
#include "quickjs.h"

/* The hooks header renames these for every other file; here they are the
 * engine's own. */
#undef JS_NewContext
#undef JS_FreeContext
#undef JS_SetCanBlock
#undef JS_SetSharedArrayBufferFunctions

/* ---- per-context state ---------------------------------------------------- */

/** One Atomics.waitAsync, from the call until its promise is resolved. */
typedef struct qjs_waiter {
    struct qjs_waiter *next;
    struct qjs_context *owner;
    parklot_async_wait_t *handle;
    JSValue resolve;      /* the promise's resolving functions */
    JSValue reject;
    JSValue buffer;       /* keeps the SharedArrayBuffer alive while pending */
    int64_t deadline_ns;  /* monotonic; INT64_MAX: none */
    int32_t outcome;      /* -1 while pending, else PARKLOT_ASYNC_* */
    bool expiring;        /* parklot_async_wait_expire is being called */
} qjs_waiter;

/** A context's waitAsync bookkeeping. `lock` guards `waiters`, `pending`,
 *  `pump_queued` and every waiter's `outcome`; the fields from `libc_loop`
 *  on are the owning thread's alone (`wake_fd` is written once, before any
 *  waker can read it). */
typedef struct qjs_context {
    struct qjs_context *next;
    JSContext *ctx;
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a waiter settled (monotonic clock) */
    qjs_waiter *waiters;     /* pending and settled, not yet delivered */
    size_t pending;
    bool pump_queued;
    JSValue growable_getter; /* SharedArrayBuffer.prototype.growable's, as made */
    bool libc_loop;          /* settle through quickjs-libc's loop */
    int wake_fd;             /* eventfd the wakers write, or -1 */
    bool watching;           /* the loop has a read handler on wake_fd */
    int64_t timer_id;        /* the loop's timer for timer_deadline_ns, or 0 */
    int64_t timer_deadline_ns;
    JSValue on_wake, on_timer; /* deliver(), as the loop calls it */
} qjs_context;

/** Runtimes whose [[CanBlock]] is false (few: run-test262's CanBlockIsFalse). */
typedef struct qjs_no_block {
    struct qjs_no_block *next;
    JSRuntime *rt;
} qjs_no_block;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static qjs_context *contexts;
static qjs_no_block *no_block;
static _Atomic size_t no_block_count;
static JSClassID sab_class_id;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static qjs_context *context_state(JSContext *ctx, bool create)
{
    qjs_context *st;
    pthread_mutex_lock(&registry_lock);
    for (st = contexts; st && st->ctx != ctx; st = st->next)
        ;
    if (!st && create && (st = calloc(1, sizeof(*st)))) {
        pthread_condattr_t attr;
        st->ctx = ctx;
        st->growable_getter = JS_UNDEFINED;
        st->wake_fd = -1;
        st->timer_deadline_ns = INT64_MAX;
        st->on_wake = JS_UNDEFINED;
        st->on_timer = JS_UNDEFINED;
        pthread_mutex_init(&st->lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&st->changed, &attr);
        pthread_condattr_destroy(&attr);
        st->next = contexts;
        contexts = st;
    }
    pthread_mutex_unlock(&registry_lock);
    return st;
}

static bool runtime_can_block(JSRuntime *rt)
{
    bool can = true;
    if (!no_block_count)
        return true;
    pthread_mutex_lock(&registry_lock);
    for (qjs_no_block *n = no_block; n; n = n->next)
        if (n->rt == rt)
            can = false;
    pthread_mutex_unlock(&registry_lock);
    return can;
}

/* ---- argument checks (ValidateIntegerTypedArray, ValidateAtomicAccess) ---- */

typedef struct {
    void *addr;  /* the element */
    bool is64;   /* BigInt64Array */
    bool shared; /* on a SharedArrayBuffer */
} qjs_location;

/* The last typed array a thread validated, if it views a fixed-length
 * SharedArrayBuffer (its data, offset and length can never change), held
 * (a reference) so that its address names it: a call on the same array skips
 * four engine calls (half the cost of a notify with no waiter, measured with
 * callgrind). Dropped when a context of its runtime is freed. */
typedef struct {
    JSRuntime *rt;
    JSValue array;
    uint8_t *data; /* the view's first element */
    size_t length; /* in elements */
    int type;
} qjs_view_cache;

static _Thread_local qjs_view_cache last_view;

static void drop_view_cache(JSRuntime *rt)
{
    if (rt && last_view.rt == rt) {
        JS_FreeValueRT(rt, last_view.array);
        last_view.array = JS_UNDEFINED;
        last_view.rt = NULL;
    }
}

static qjs_context *context_state(JSContext *ctx, bool create);

/* A fixed-length SharedArrayBuffer: true, false, or -1 (thrown). Asks the
 * realm's original `growable` getter (captured when the context was made),
 * so no script can see or change the answer. */
static int is_fixed_sab(JSContext *ctx, JSValueConst buffer)
{
    qjs_context *st = context_state(ctx, false);
    JSValue growable;
    int r;
    if (!st || !JS_IsFunction(ctx, st->growable_getter))
        return 0; /* unknown: do not cache */
    growable = JS_Call(ctx, st->growable_getter, buffer, 0, NULL);
    if (JS_IsException(growable))
        return -1;
    r = JS_ToBool(ctx, growable);
    JS_FreeValue(ctx, growable);
    return r < 0 ? -1 : !r;
}

/* Returns 0, or -1 with an exception thrown. */
static int validate(JSContext *ctx, const char *fn, JSValueConst ta, JSValueConst index,
                    bool need_shared, qjs_location *loc)
{
    size_t offset, byte_length, element, size, length;
    uint64_t i;
    uint8_t *data;
    JSValue buffer;
    int type, fixed;

    if (last_view.rt && JS_VALUE_GET_PTR(ta) == JS_VALUE_GET_PTR(last_view.array) &&
        JS_VALUE_GET_TAG(ta) == JS_TAG_OBJECT && last_view.rt == JS_GetRuntime(ctx)) {
        type = last_view.type;
        data = last_view.data;
        length = last_view.length;
        loc->shared = true;
    } else {
        type = JS_GetTypedArrayType(ta);
        if (type != JS_TYPED_ARRAY_INT32 && type != JS_TYPED_ARRAY_BIG_INT64) {
            JS_ThrowTypeError(ctx, "Atomics.%s: the first argument must be an Int32Array or a "
                              "BigInt64Array", fn);
            return -1;
        }
        buffer = JS_GetTypedArrayBuffer(ctx, ta, &offset, &byte_length, &element);
        if (JS_IsException(buffer))
            return -1;
        loc->shared = JS_GetClassID(buffer) == sab_class_id;
        data = JS_GetArrayBuffer(ctx, &size, buffer);
        if (!data && JS_HasException(ctx)) {
            JS_FreeValue(ctx, buffer);
            return -1;
        }
        data += offset;
        length = byte_length / element;
        fixed = loc->shared ? is_fixed_sab(ctx, buffer) : 0;
        JS_FreeValue(ctx, buffer); /* the typed array keeps it */
        if (fixed < 0)
            return -1;
        if (fixed) {
            drop_view_cache(last_view.rt);
            last_view = (qjs_view_cache){JS_GetRuntime(ctx), JS_DupValue(ctx, ta), data, length,
                                         type};
        }
    }
    loc->is64 = type == JS_TYPED_ARRAY_BIG_INT64;
    if (need_shared && !loc->shared) {
        JS_ThrowTypeError(ctx, "Atomics.%s: the typed array must be on a SharedArrayBuffer "
                          "(an ArrayBuffer cannot be waited on)", fn);
        return -1;
    }
    if (JS_VALUE_GET_TAG(index) == JS_TAG_INT && JS_VALUE_GET_INT(index) >= 0)
        i = (uint64_t)JS_VALUE_GET_INT(index);
    else if (JS_ToIndex(ctx, &i, index))
        return -1;
    if (i >= length) {
        JS_ThrowRangeError(ctx, "Atomics.%s: index %" PRIu64 " is out of range (length %zu)",
                           fn, i, length);
        return -1;
    }
    loc->addr = data + (loc->is64 ? 8 : 4) * i;
    return 0;
}

/* Converts `value` as the typed array's element; 0 or -1 (thrown). */
static int expected_value(JSContext *ctx, const qjs_location *loc, JSValueConst value,
                          int64_t *out)
{
    if (loc->is64)
        return JS_ToBigInt64(ctx, out, value);
    int32_t v;
    if (JS_ToInt32(ctx, &v, value))
        return -1;
    *out = v;
    return 0;
}

/* The timeout in nanoseconds (negative: forever), or -2 with an exception. */
static int64_t timeout_ns(JSContext *ctx, JSValueConst timeout, double *ms)
{
    double t;
    if (JS_ToFloat64(ctx, &t, timeout))
        return -2;
    if (isnan(t))
        t = INFINITY;
    if (t < 0)
        t = 0;
    *ms = t;
    if (t * 1e6 >= 9.2e18)
        return -1;
    return (int64_t)(t * 1e6);
}

/* ---- Atomics.wait / Atomics.notify ---------------------------------------- */

/* "ok", "not-equal", "timed-out": atoms the engine predefines (its own wait
 * returns them), the same in every runtime and never freed; a string made
 * per call cost more than the wait itself on the "not-equal" path. */
static JSAtom wait_results[3];

static JSValue js_parklot_wait(JSContext *ctx, JSValueConst this_val, int argc,
                               JSValueConst *argv)
{
    qjs_location loc;
    int64_t expected, ns;
    double ms;
    int32_t r;

    if (validate(ctx, "wait", argv[0], argv[1], true, &loc) ||
        expected_value(ctx, &loc, argv[2], &expected))
        return JS_EXCEPTION;
    if (JS_IsUndefined(argv[3]))
        ns = -1;
    else if ((ns = timeout_ns(ctx, argv[3], &ms)) == -2)
        return JS_EXCEPTION;
    if (!runtime_can_block(JS_GetRuntime(ctx)))
        return JS_ThrowTypeError(ctx, "Atomics.wait cannot block on this thread "
                                 "([[CanBlock]] is false); use Atomics.waitAsync");
    /* A value that differs now is "not-equal" at this instant: no need to
     * take the bucket lock to say so. */
    if ((loc.is64 ? __atomic_load_n((int64_t *)loc.addr, __ATOMIC_SEQ_CST)
                  : __atomic_load_n((int32_t *)loc.addr, __ATOMIC_SEQ_CST)) != expected)
        return JS_AtomToString(ctx, wait_results[PARKLOT_WAIT_NOT_EQUAL]);
    r = loc.is64 ? parklot_wait64(loc.addr, expected, ns)
                 : parklot_wait32(loc.addr, (int32_t)expected, ns);
    if (r == PARKLOT_WAIT_CANCELLED)
        return JS_ThrowInternalError(ctx, "Atomics.wait was cancelled: its buffer was freed "
                                     "or its thread interrupted");
    if (r < 0 || r > 2)
        return JS_ThrowInternalError(ctx, "Atomics.wait: parklot_wait failed (%d)", r);
    return JS_AtomToString(ctx, wait_results[r]);
}

static JSValue js_parklot_notify(JSContext *ctx, JSValueConst this_val, int argc,
                                 JSValueConst *argv)
{
    qjs_location loc;
    uint64_t count = PARKLOT_NOTIFY_ALL;
    double c;

    if (validate(ctx, "notify", argv[0], argv[1], false, &loc))
        return JS_EXCEPTION;
    if (JS_VALUE_GET_TAG(argv[2]) == JS_TAG_INT) {
        count = JS_VALUE_GET_INT(argv[2]) < 0 ? 0 : (uint64_t)JS_VALUE_GET_INT(argv[2]);
    } else if (!JS_IsUndefined(argv[2])) {
        if (JS_ToFloat64(ctx, &c, argv[2]))
            return JS_EXCEPTION;
        c = isnan(c) ? 0 : trunc(c);
        if (c < 0)
            c = 0;
        if (c < 1.8e19)
            count = (uint64_t)c;
    }
    if (!loc.shared)
        return JS_NewInt32(ctx, 0);
    return JS_NewInt64(ctx, (int64_t)parklot_notify(loc.addr, count));
}

/* ---- Atomics.waitAsync ----------------------------------------------------- */

/* The waker: any thread, no parklot lock held. Only records the outcome. */
static void waiter_settled(void *data, int32_t outcome)
{
    qjs_waiter *w = data;
    qjs_context *st = w->owner;
    pthread_mutex_lock(&st->lock);
    w->outcome = outcome;
    st->pending--;
    pthread_cond_broadcast(&st->changed);
    if (st->wake_fd >= 0) {
        /* Under the lock: once pending is 0 the context may be freed. */
        uint64_t one = 1;
        ssize_t n = write(st->wake_fd, &one, sizeof(one));
        (void)n; /* only fails when the counter is full: a wake is pending anyway */
    }
    pthread_mutex_unlock(&st->lock);
}

static void free_waiter(JSContext *ctx, qjs_waiter *w)
{
    JS_FreeValue(ctx, w->resolve);
    JS_FreeValue(ctx, w->reject);
    JS_FreeValue(ctx, w->buffer);
    parklot_async_wait_release(w->handle);
    free(w);
}

static JSValue pump(JSContext *ctx, int argc, JSValueConst *argv);
static void resolve_settled(JSContext *ctx, qjs_waiter *done);

/* Whether the context's waits settle through quickjs-libc's loop (else the pump). */
static bool on_libc_loop(JSContext *ctx, qjs_context *st)
{
    return st->libc_loop && parklot_qjs_libc_loop_runs(ctx);
}

/* Detaches the settled waiters; with may_block and nothing else to run,
 * first waits for one (expiring due ones). Call with st->lock held. */
static qjs_waiter *take_settled(JSContext *ctx, qjs_context *st)
{
    qjs_waiter *done = NULL, **link;
    for (;;) {
        int64_t now = now_ns(), nearest = INT64_MAX;
        parklot_async_wait_t *due[32];
        int ndue = 0;

        for (link = &st->waiters; *link;) {
            qjs_waiter *w = *link;
            if (w->outcome >= 0) {
                *link = w->next;
                w->next = done;
                done = w;
                continue;
            }
            if (!w->expiring && w->deadline_ns <= now && ndue < 32) {
                w->expiring = true;
                due[ndue++] = w->handle;
            } else if (!w->expiring && w->deadline_ns < nearest) {
                nearest = w->deadline_ns;
            }
            link = &w->next;
        }
        if (ndue) {
            /* The waker takes st->lock: expire without it. */
            pthread_mutex_unlock(&st->lock);
            for (int i = 0; i < ndue; i++)
                parklot_async_wait_expire(due[i]);
            pthread_mutex_lock(&st->lock);
            continue;
        }
        if (done || !st->pending || on_libc_loop(ctx, st) || JS_IsJobPending(JS_GetRuntime(ctx)))
            return done;
        if (nearest == INT64_MAX) {
            pthread_cond_wait(&st->changed, &st->lock);
        } else {
            struct timespec ts = {nearest / 1000000000, nearest % 1000000000};
            pthread_cond_timedwait(&st->changed, &st->lock, &ts);
        }
    }
}

/* The pump job: resolves settled promises, re-queues itself while any wait
 * of the context is pending. */
static JSValue pump(JSContext *ctx, int argc, JSValueConst *argv)
{
    qjs_context *st = context_state(ctx, false);
    qjs_waiter *done, *next;
    bool again;

    if (!st)
        return JS_UNDEFINED;
    pthread_mutex_lock(&st->lock);
    st->pump_queued = false;
    done = take_settled(ctx, st);
    again = st->waiters != NULL;
    st->pump_queued = again;
    pthread_mutex_unlock(&st->lock);
    if (again)
        JS_EnqueueJob(ctx, pump, 0, NULL);
    resolve_settled(ctx, done);
    return JS_UNDEFINED;
}

/* Resolves the promises of `done` (detached settled waiters) and frees them. */
static void resolve_settled(JSContext *ctx, qjs_waiter *done)
{
    qjs_waiter *next;
    for (; done; done = next) {
        next = done->next;
        if (done->outcome == PARKLOT_ASYNC_CANCELLED) {
            /* Only parklot_cancel_range cancels here (its buffer's memory is
             * gone): the promise is left pending, as the spec has no word
             * for it; an engine might reject it instead. */
            free_waiter(ctx, done);
            continue;
        }
        JSValue result = JS_NewString(ctx, done->outcome == PARKLOT_ASYNC_WOKEN ? "ok" : "timed-out");
        JSValue ret = JS_Call(ctx, done->resolve, JS_UNDEFINED, 1, (JSValueConst *)&result);
        JS_FreeValue(ctx, result);
        JS_FreeValue(ctx, ret);
        free_waiter(ctx, done);
    }
}

/* On quickjs-libc's loop: keeps a read handler on the eventfd while the
 * context has waiters, and a timer at the nearest timeout. A pending wait
 * thus keeps the thread's loop alive, timed or not (QuickJS has no
 * waitAsync of its own to follow; Node's loop would exit for an infinite
 * one). Owning thread only. */
static void arm_libc_loop(JSContext *ctx, qjs_context *st)
{
    int64_t nearest = INT64_MAX;
    bool any;

    pthread_mutex_lock(&st->lock);
    any = st->waiters != NULL;
    for (qjs_waiter *w = st->waiters; w; w = w->next)
        if (w->outcome < 0 && !w->expiring && w->deadline_ns < nearest)
            nearest = w->deadline_ns;
    pthread_mutex_unlock(&st->lock);
    if (any != st->watching &&
        parklot_qjs_libc_set_read_handler(ctx, st->wake_fd, any ? st->on_wake : JS_NULL) == 0)
        st->watching = any;
    if (nearest != st->timer_deadline_ns) {
        if (st->timer_id > 0)
            parklot_qjs_libc_clear_timeout(ctx, st->timer_id);
        st->timer_id = 0;
        st->timer_deadline_ns = nearest;
        if (nearest != INT64_MAX) {
            int64_t left = nearest - now_ns();
            st->timer_id = parklot_qjs_libc_set_timeout(
                ctx, st->on_timer, left <= 0 ? 1 : (left + 999999) / 1000000);
        }
    }
}

/* The loop's read handler (magic 0, the eventfd is readable) and timer
 * (magic 1, the nearest timeout is due): expires due waits, resolves the
 * settled ones' promises, re-arms. */
static JSValue deliver(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
                       int magic)
{
    qjs_context *st = context_state(ctx, false);
    qjs_waiter *done;
    uint64_t count;

    if (!st)
        return JS_UNDEFINED;
    if (magic == 1) { /* the timer is spent */
        st->timer_id = 0;
        st->timer_deadline_ns = INT64_MAX;
    } else if (read(st->wake_fd, &count, sizeof(count)) < 0) {
        /* EAGAIN: nothing was written since the last read */
    }
    pthread_mutex_lock(&st->lock);
    done = take_settled(ctx, st);
    pthread_mutex_unlock(&st->lock);
    resolve_settled(ctx, done);
    arm_libc_loop(ctx, st);
    return JS_UNDEFINED;
}

void parklot_qjs_settle_on_libc_loop(JSContext *ctx)
{
    qjs_context *st = context_state(ctx, true);
    if (!st || st->libc_loop)
        return;
    st->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (st->wake_fd < 0)
        return; /* the pump settles them */
    st->on_wake = JS_NewCFunctionMagic(ctx, deliver, "parklot: waitAsync settled", 0,
                                       JS_CFUNC_generic_magic, 0);
    st->on_timer = JS_NewCFunctionMagic(ctx, deliver, "parklot: waitAsync timeout", 0,
                                        JS_CFUNC_generic_magic, 1);
    st->libc_loop = true;
}

static JSValue wait_async_result(JSContext *ctx, bool async, JSValue value)
{
    JSValue obj = JS_NewObject(ctx);
    if (JS_IsException(obj)) {
        JS_FreeValue(ctx, value);
        return obj;
    }
    JS_DefinePropertyValueStr(ctx, obj, "async", JS_NewBool(ctx, async), JS_PROP_C_W_E);
    JS_DefinePropertyValueStr(ctx, obj, "value", value, JS_PROP_C_W_E);
    return obj;
}

static JSValue js_parklot_wait_async(JSContext *ctx, JSValueConst this_val, int argc,
                                     JSValueConst *argv)
{
    qjs_location loc;
    qjs_context *st;
    qjs_waiter *w, **link;
    int64_t expected, ns;
    double ms;
    int32_t r;
    JSValue funcs[2], promise;

    if (validate(ctx, "waitAsync", argv[0], argv[1], true, &loc) ||
        expected_value(ctx, &loc, argv[2], &expected))
        return JS_EXCEPTION;
    if ((ns = timeout_ns(ctx, argv[3], &ms)) == -2)
        return JS_EXCEPTION;
    if (ms == 0) {
        /* No wait: compare only. */
        int64_t now = loc.is64 ? __atomic_load_n((int64_t *)loc.addr, __ATOMIC_SEQ_CST)
                               : __atomic_load_n((int32_t *)loc.addr, __ATOMIC_SEQ_CST);
        return wait_async_result(ctx, false,
                                 JS_NewString(ctx, now == expected ? "timed-out" : "not-equal"));
    }
    st = context_state(ctx, true);
    w = calloc(1, sizeof(*w));
    if (!st || !w) {
        free(w);
        return JS_ThrowOutOfMemory(ctx);
    }
    promise = JS_NewPromiseCapability(ctx, funcs);
    if (JS_IsException(promise)) {
        free(w);
        return promise;
    }
    w->owner = st;
    w->resolve = funcs[0];
    w->reject = funcs[1];
    w->buffer = JS_GetTypedArrayBuffer(ctx, argv[0], NULL, NULL, NULL);
    w->deadline_ns = ns < 0 ? INT64_MAX : now_ns() + ns;
    w->outcome = -1;
    /* Queued (and counted) before the wait: a notify may settle it at once. */
    pthread_mutex_lock(&st->lock);
    w->next = st->waiters;
    st->waiters = w;
    st->pending++;
    pthread_mutex_unlock(&st->lock);
    r = loc.is64 ? parklot_wait64_async(loc.addr, expected, waiter_settled, w, &w->handle)
                 : parklot_wait32_async(loc.addr, (int32_t)expected, waiter_settled, w, &w->handle);
    pthread_mutex_lock(&st->lock);
    if (r != PARKLOT_WAIT_OK) {
        for (link = &st->waiters; *link != w; link = &(*link)->next)
            ;
        *link = w->next;
        st->pending--;
        pthread_mutex_unlock(&st->lock);
        free_waiter(ctx, w);
        JS_FreeValue(ctx, promise);
        if (r != PARKLOT_WAIT_NOT_EQUAL)
            return JS_ThrowInternalError(ctx, "Atomics.waitAsync: parklot failed (%d)", r);
        return wait_async_result(ctx, false, JS_NewString(ctx, "not-equal"));
    }
    if (on_libc_loop(ctx, st)) {
        pthread_mutex_unlock(&st->lock);
        arm_libc_loop(ctx, st);
    } else if (!st->pump_queued) {
        st->pump_queued = true;
        pthread_mutex_unlock(&st->lock);
        JS_EnqueueJob(ctx, pump, 0, NULL);
    } else {
        pthread_mutex_unlock(&st->lock);
    }
    return wait_async_result(ctx, true, promise);
}

/* ---- the hooks (parklot_qjs_hooks.h) -------------------------------------- */

static void define_method(JSContext *ctx, JSValueConst obj, const char *name, JSCFunction *fn,
                          int length)
{
    JS_DefinePropertyValueStr(ctx, obj, name, JS_NewCFunction2(ctx, fn, name, length,
                                                               JS_CFUNC_generic, 0),
                              JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
}

JSContext *parklot_qjs_new_context(JSRuntime *rt)
{
    JSContext *ctx = JS_NewContext(rt);
    JSValue global, atomics;

    if (!ctx)
        return NULL;
    global = JS_GetGlobalObject(ctx);
    if (!sab_class_id) {
        JSValue ctor = JS_GetPropertyStr(ctx, global, "SharedArrayBuffer");
        JSValue sab = JS_CallConstructor(ctx, ctor, 0, NULL);
        sab_class_id = JS_GetClassID(sab);
        JS_FreeValue(ctx, sab);
        JS_FreeValue(ctx, ctor);
        wait_results[PARKLOT_WAIT_OK] = JS_NewAtom(ctx, "ok");
        wait_results[PARKLOT_WAIT_NOT_EQUAL] = JS_NewAtom(ctx, "not-equal");
        wait_results[PARKLOT_WAIT_TIMED_OUT] = JS_NewAtom(ctx, "timed-out");
    }
    {
        JSValue ctor = JS_GetPropertyStr(ctx, global, "SharedArrayBuffer");
        JSValue proto = JS_GetPropertyStr(ctx, ctor, "prototype");
        JSAtom name = JS_NewAtom(ctx, "growable");
        JSPropertyDescriptor desc;
        qjs_context *st = context_state(ctx, true);
        if (JS_GetOwnProperty(ctx, &desc, proto, name) > 0) {
            if (st)
                st->growable_getter = desc.getter;
            else
                JS_FreeValue(ctx, desc.getter);
            JS_FreeValue(ctx, desc.setter);
            JS_FreeValue(ctx, desc.value);
        }
        JS_FreeAtom(ctx, name);
        JS_FreeValue(ctx, proto);
        JS_FreeValue(ctx, ctor);
    }
    atomics = JS_GetPropertyStr(ctx, global, "Atomics");
    if (JS_IsObject(atomics)) {
        define_method(ctx, atomics, "wait", js_parklot_wait, 4);
        define_method(ctx, atomics, "notify", js_parklot_notify, 3);
        define_method(ctx, atomics, "waitAsync", js_parklot_wait_async, 4);
    }
    JS_FreeValue(ctx, atomics);
    JS_FreeValue(ctx, global);
    return ctx;
}

void parklot_qjs_free_context(JSContext *ctx)
{
    qjs_context *st, **link;
    qjs_waiter *w;

    pthread_mutex_lock(&registry_lock);
    for (link = &contexts; *link && (*link)->ctx != ctx; link = &(*link)->next)
        ;
    st = *link;
    if (st)
        *link = st->next;
    pthread_mutex_unlock(&registry_lock);
    drop_view_cache(JS_GetRuntime(ctx));
    if (st) {
        /* Cancel what is pending, then wait for every waker: a notify may have
         * chosen a waiter and not yet called it. */
        pthread_mutex_lock(&st->lock);
        for (w = st->waiters; w; w = w->next) {
            if (w->outcome < 0) {
                pthread_mutex_unlock(&st->lock);
                parklot_async_wait_cancel(w->handle);
                pthread_mutex_lock(&st->lock);
            }
        }
        while (st->pending)
            pthread_cond_wait(&st->changed, &st->lock);
        pthread_mutex_unlock(&st->lock);
        while ((w = st->waiters)) {
            st->waiters = w->next;
            free_waiter(ctx, w);
        }
        JS_FreeValue(ctx, st->growable_getter);
        JS_FreeValue(ctx, st->on_wake);
        JS_FreeValue(ctx, st->on_timer);
        if (st->wake_fd >= 0)
            close(st->wake_fd);
        pthread_mutex_destroy(&st->lock);
        pthread_cond_destroy(&st->changed);
        free(st);
    }
    JS_FreeContext(ctx);
}

void parklot_qjs_set_can_block(JSRuntime *rt, bool can_block)
{
    qjs_no_block *n, **link;
    pthread_mutex_lock(&registry_lock);
    for (link = &no_block; *link && (*link)->rt != rt; link = &(*link)->next)
        ;
    if (can_block && *link) {
        n = *link;
        *link = n->next;
        free(n);
        no_block_count--;
    } else if (!can_block && !*link && (n = calloc(1, sizeof(*n)))) {
        n->rt = rt;
        n->next = no_block;
        no_block = n;
        no_block_count++;
    }
    pthread_mutex_unlock(&registry_lock);
    JS_SetCanBlock(rt, can_block);
}

/* ---- SharedArrayBuffer memory: cancel its waiters when it is freed -------- */

/* quickjs-libc's allocator counts references (buffers shared with workers);
 * these wrappers count the engine's references to each block and, when the
 * last goes, cancel every waiter on the block before handing it back.
 * quickjs-libc's own message code also holds references (a buffer in a
 * message not yet received) that these do not see. */
typedef struct {
    void *ptr;
    size_t len;
    size_t refs;
} qjs_sab_block;

static JSSharedArrayBufferFunctions libc_sab;
static pthread_mutex_t sab_lock = PTHREAD_MUTEX_INITIALIZER;
static qjs_sab_block *sab_blocks;
static size_t sab_count, sab_capacity;

static qjs_sab_block *sab_find(void *ptr)
{
    for (size_t i = 0; i < sab_count; i++)
        if (sab_blocks[i].ptr == ptr)
            return &sab_blocks[i];
    return NULL;
}

static void *sab_alloc(void *opaque, size_t size)
{
    void *ptr = libc_sab.sab_alloc(libc_sab.sab_opaque, size);
    if (!ptr)
        return NULL;
    pthread_mutex_lock(&sab_lock);
    if (sab_count == sab_capacity) {
        size_t cap = sab_capacity ? 2 * sab_capacity : 16;
        qjs_sab_block *grown = realloc(sab_blocks, cap * sizeof(*grown));
        if (grown) {
            sab_blocks = grown;
            sab_capacity = cap;
        }
    }
    if (sab_count < sab_capacity)
        sab_blocks[sab_count++] = (qjs_sab_block){ptr, size, 1};
    pthread_mutex_unlock(&sab_lock);
    return ptr;
}

static void sab_dup(void *opaque, void *ptr)
{
    qjs_sab_block *b;
    pthread_mutex_lock(&sab_lock);
    if ((b = sab_find(ptr)))
        b->refs++;
    pthread_mutex_unlock(&sab_lock);
    libc_sab.sab_dup(libc_sab.sab_opaque, ptr);
}

static void sab_free(void *opaque, void *ptr)
{
    qjs_sab_block *b;
    size_t len = 0;
    bool last = false;
    pthread_mutex_lock(&sab_lock);
    if ((b = sab_find(ptr)) && --b->refs == 0) {
        last = true;
        len = b->len;
        *b = sab_blocks[--sab_count];
    }
    pthread_mutex_unlock(&sab_lock);
    if (last)
        parklot_cancel_range(ptr, len);
    libc_sab.sab_free(libc_sab.sab_opaque, ptr);
}

void parklot_qjs_set_sab_functions(JSRuntime *rt, const JSSharedArrayBufferFunctions *sf)
{
    JSSharedArrayBufferFunctions mine = {sab_alloc, sab_free, sab_dup, NULL};
    if (!sf || !sf->sab_alloc || !sf->sab_free || !sf->sab_dup) {
        JS_SetSharedArrayBufferFunctions(rt, sf);
        return;
    }
    libc_sab = *sf; /* quickjs-libc installs the same three in every runtime */
    JS_SetSharedArrayBufferFunctions(rt, &mine);
}

/* ---- for tests: parklot.waiterCount(typedArray, index) -------------------- */

static JSValue js_parklot_waiter_count(JSContext *ctx, JSValueConst this_val, int argc,
                                       JSValueConst *argv)
{
    qjs_location loc;
    if (validate(ctx, "waiterCount", argv[0], argv[1], false, &loc))
        return JS_EXCEPTION;
    return JS_NewInt64(ctx, (int64_t)parklot_waiter_count(loc.addr));
}

void parklot_qjs_add_helpers(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue obj = JS_NewObject(ctx);
    define_method(ctx, obj, "waiterCount", js_parklot_waiter_count, 2);
    JS_DefinePropertyValueStr(ctx, global, "parklot", obj, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, global);
}
