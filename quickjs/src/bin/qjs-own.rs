//! The same QuickJS shell on QuickJS's own Atomics (the baseline).
use std::ffi::{c_char, c_int};

#[link(name = "qjs_own", kind = "static")]
extern "C" {
    fn parklot_qjs_shell_main(argc: c_int, argv: *mut *mut c_char) -> c_int;
}

fn main() {
    std::process::exit(parklot_quickjs::run_c_main(parklot_qjs_shell_main));
}
