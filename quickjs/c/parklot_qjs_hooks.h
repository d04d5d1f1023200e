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

#define JS_NewContext parklot_qjs_new_context
#define JS_FreeContext parklot_qjs_free_context
#define JS_SetCanBlock parklot_qjs_set_can_block
#define JS_SetSharedArrayBufferFunctions parklot_qjs_set_sab_functions
#endif
