/* Forced (-include) into quickjs-libc.c, the shell and run-test262.c when
 * they are built for QuickJS + parklot. Every place that makes or frees a
 * context, sets [[CanBlock]] or installs the SharedArrayBuffer allocator goes
 * through parklot_qjs.c instead, which calls the real function and then:
 * installs Atomics.wait/notify/waitAsync on the new context; cancels and
 * settles the context's pending waitAsync before it is freed; remembers
 * whether the runtime may block; wraps the allocator so that freeing a
 * buffer's memory cancels every waiter on it. quickjs.c itself is untouched. */
#ifndef PARKLOT_QJS_HOOKS_H
#define PARKLOT_QJS_HOOKS_H
#include "quickjs.h"

JSContext *parklot_qjs_new_context(JSRuntime *rt);
void parklot_qjs_free_context(JSContext *ctx);
void parklot_qjs_set_can_block(JSRuntime *rt, bool can_block);
void parklot_qjs_set_sab_functions(JSRuntime *rt, const JSSharedArrayBufferFunctions *sf);
/* The shell's test helpers: a global `parklot` with waiterCount(typedArray,
 * index), the waits (blocking and async) queued on that element. */
void parklot_qjs_add_helpers(JSContext *ctx);
/* For an embedder whose threads run quickjs-libc's loop (js_std_loop, as the
 * shell and its workers do): settle this context's Atomics.waitAsync through
 * that loop (a read handler on an eventfd, and a timer for the nearest
 * timeout), so that its timers and messages run while a wait is pending.
 * Without it (run-test262, which only runs jobs) a job of parklot's own
 * settles them, sleeping when nothing else is queued. */
void parklot_qjs_settle_on_libc_loop(JSContext *ctx);
/* In c/libc_loop.c: quickjs-libc's read handlers and timers, from C. */
bool parklot_qjs_libc_loop_runs(JSContext *ctx);
int parklot_qjs_libc_set_read_handler(JSContext *ctx, int fd, JSValueConst func);
int64_t parklot_qjs_libc_set_timeout(JSContext *ctx, JSValueConst func, int64_t delay_ms);
void parklot_qjs_libc_clear_timeout(JSContext *ctx, int64_t id);

#define JS_NewContext parklot_qjs_new_context
#define JS_FreeContext parklot_qjs_free_context
#define JS_SetCanBlock parklot_qjs_set_can_block
#define JS_SetSharedArrayBufferFunctions parklot_qjs_set_sab_functions
#endif
