/* quickjs-ng's own test262 runner (run-test262.c from rquickjs-sys's
 * sources, unchanged), its `main` renamed for the Rust binaries to call.
 * In the parklot flavour, parklot_qjs_hooks.h is forced in before it, so
 * every context it makes (tests, $262.createRealm, $262.agent threads) gets
 * parklot's Atomics. */
#define main parklot_qjs_test262_main
#include "run-test262.c"
