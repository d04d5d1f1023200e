/* A small QuickJS shell: `parklot-qjs [-m] file [args...]` runs a script (a
 * module if -m, if it ends in .mjs or if it has import/export) with the std
 * and os modules (`import * as os from 'qjs:os'`, os.Worker), the std
 * helpers (print, scriptArgs) and the event loop, then exits 0, or 1 if it
 * threw. Built twice: with parklot's Atomics (and a global `parklot` with
 * waiterCount, for tests) and with QuickJS's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quickjs.h"
#include "quickjs-libc.h"

static JSContext *shell_new_context(JSRuntime *rt)
{
    JSContext *ctx = JS_NewContext(rt);
    if (!ctx)
        return NULL;
    js_init_module_std(ctx, "qjs:std");
    js_init_module_os(ctx, "qjs:os");
    js_init_module_bjson(ctx, "qjs:bjson");
#ifdef PARKLOT_QJS_HOOKS_H
    parklot_qjs_add_helpers(ctx);
    /* The shell's threads run quickjs-libc's loop (js_std_loop). */
    parklot_qjs_settle_on_libc_loop(ctx);
#endif
    return ctx;
}

static int shell_eval_file(JSContext *ctx, const char *filename, int module)
{
    size_t len;
    uint8_t *buf = js_load_file(ctx, &len, filename);
    JSValue val;
    int flags;

    if (!buf) {
        perror(filename);
        return -1;
    }
    if (module < 0)
        module = strstr(filename, ".mjs") != NULL || JS_DetectModule((const char *)buf, len);
    if (module) {
        flags = JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY;
        val = JS_Eval(ctx, (const char *)buf, len, filename, flags);
        if (!JS_IsException(val)) {
            js_module_set_import_meta(ctx, val, true, true);
            val = JS_EvalFunction(ctx, val);
        }
        val = js_std_await(ctx, val);
    } else {
        val = JS_Eval(ctx, (const char *)buf, len, filename, JS_EVAL_TYPE_GLOBAL);
    }
    js_free(ctx, buf);
    if (JS_IsException(val)) {
        js_std_dump_error(ctx);
        return -1;
    }
    JS_FreeValue(ctx, val);
    return 0;
}

int parklot_qjs_shell_main(int argc, char **argv)
{
    int arg = 1, module = -1, ret;
    JSRuntime *rt;
    JSContext *ctx;

    if (arg < argc && strcmp(argv[arg], "-m") == 0) {
        module = 1;
        arg++;
    }
    if (arg >= argc) {
        fprintf(stderr, "usage: %s [-m] file [args...]   (QuickJS %s, %s)\n", argv[0],
                JS_GetVersion(), PARKLOT_QJS_FLAVOUR);
        return 2;
    }
    rt = JS_NewRuntime();
    js_std_set_worker_new_context_func(shell_new_context);
    js_std_init_handlers(rt);
    JS_SetCanBlock(rt, true); /* a shell's main thread may block, as a worker's */
    JS_SetModuleLoaderFunc2(rt, NULL, js_module_loader, js_module_check_attributes, NULL);
    JS_SetHostPromiseRejectionTracker(rt, js_std_promise_rejection_tracker, NULL);
    ctx = shell_new_context(rt);
    if (!ctx) {
        fprintf(stderr, "cannot create a context\n");
        return 1;
    }
    js_std_add_helpers(ctx, argc - arg, argv + arg);
    ret = shell_eval_file(ctx, argv[arg], module);
    if (ret == 0 && js_std_loop(ctx))
        ret = -1;
    js_std_free_handlers(rt);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    return ret ? 1 : 0;
}
