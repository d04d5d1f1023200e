//! QuickJS (quickjs-ng, built from the `rquickjs-sys` crate's sources) whose
//! `Atomics.wait`, `Atomics.notify` and `Atomics.waitAsync` are served by
//! parklot's C ABI: the second engine embedding (the Node addon is the first).
//!
//! The C is in `c/` (the shim, `parklot_qjs.c`, is the embedding); this crate
//! only links it and gives its entry points a `main`. Four binaries:
//!
//! | binary | what | Atomics |
//! | --- | --- | --- |
//! | `parklot-qjs` | a shell: `parklot-qjs [-m] file [args]` | parklot |
//! | `qjs-own` | the same shell | QuickJS's own |
//! | `parklot-qjs-test262` | quickjs-ng's `run-test262` | parklot |
//! | `qjs-own-test262` | the same runner | QuickJS's own |

use std::ffi::{c_char, c_int, CString};

// The engine (libquickjs.a) and parklot's C ABI, which the C calls.
use parklot as _;
use rquickjs_sys as _;

/// A C `main`: `int main(int argc, char **argv)`.
pub type CMain = unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int;

/// Calls `entry` with this process's arguments and returns its exit code.
pub fn run_c_main(entry: CMain) -> i32 {
    let args: Vec<CString> = std::env::args_os()
        .map(|a| {
            use std::os::unix::ffi::OsStrExt;
            CString::new(a.as_bytes()).unwrap_or_default()
        })
        .collect();
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let argc = c_int::try_from(args.len()).unwrap_or(c_int::MAX);
    // SAFETY: argv holds argc NUL-terminated strings and a final NULL, alive
    // (in `args`) until the call returns; the C does not free them.
    unsafe { entry(argc, argv.as_mut_ptr()) }
}
