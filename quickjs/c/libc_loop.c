/*
 * libc_loop.c - quickjs-libc.c as it is, plus what parklot's QuickJS needs
 * from its event loop to settle Atomics.waitAsync there (c/parklot_qjs.c):
 * a read handler and timers added from C. os.setReadHandler and
 * os.setTimeout do the same from JS; these call their code, which is static
 * in quickjs-libc.c, hence one translation unit (the file is included, not
 * changed); and a fix to its poll loop (below). Built only for QuickJS +
 * parklot (build.rs).
 */
#include <poll.h>

/* quickjs-libc's loop scans only the first N entries of its poll set, N being
 * poll()'s count of ready ones: a ready entry behind one that is not is
 * never seen (a worker's message behind an idle read handler, and the loop
 * then spins, since poll keeps returning at once). Its one call to poll goes
 * through this instead, which returns how many entries to scan to see every
 * ready one (scanning one that is not ready does nothing). */
static int parklot_libc_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
#define poll parklot_libc_poll
#include "quickjs-libc.c"
#undef poll

static int parklot_libc_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    int ready = poll(fds, n, timeout_ms);
    if (ready <= 0)
        return ready;
    for (nfds_t i = n; i > 0; i--)
        if (fds[i - 1].revents)
            return (int)i;
    return ready;
}

#include "parklot_qjs_hooks.h"

bool parklot_qjs_libc_loop_runs(JSContext *ctx)
{
    JSThreadState *ts = js_get_thread_state(JS_GetRuntime(ctx));
    return ts != NULL && ts->can_js_os_poll;
}

int parklot_qjs_libc_set_read_handler(JSContext *ctx, int fd, JSValueConst func)
{
    JSValueConst argv[2] = {JS_NewInt32(ctx, fd), func};
    JSValue r = js_os_setReadHandler(ctx, JS_UNDEFINED, 2, argv, 0);
    if (JS_IsException(r))
        return -1;
    JS_FreeValue(ctx, r);
    return 0;
}

int64_t parklot_qjs_libc_set_timeout(JSContext *ctx, JSValueConst func, int64_t delay_ms)
{
    JSValueConst argv[2] = {func, JS_NewInt64(ctx, delay_ms)};
    JSValue r = js_os_setTimeout(ctx, JS_UNDEFINED, 2, argv, 0);
    int64_t id = -1;
    if (!JS_IsException(r))
        JS_ToInt64(ctx, &id, r);
    JS_FreeValue(ctx, r);
    return id;
}

void parklot_qjs_libc_clear_timeout(JSContext *ctx, int64_t id)
{
    JSValueConst argv[1] = {JS_NewInt64(ctx, id)};
    JS_FreeValue(ctx, js_os_clearTimeout(ctx, JS_UNDEFINED, 1, argv));
}
