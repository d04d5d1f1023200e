//! Compiles quickjs-ng's libc (event loop, `os.Worker`), its test262 runner
//! and parklot's shim from the sources that the `rquickjs-sys` crate ships
//! (it builds the engine itself, libquickjs.a, which every binary here links).
//!
//! Two static libraries, one per flavour of Atomics, selected by each binary's
//! `#[link]` attribute:
//! - `qjs_parklot`: the same C compiled with `c/parklot_qjs_hooks.h` forced
//!   in, which routes context creation and teardown, `JS_SetCanBlock` and the
//!   SharedArrayBuffer allocator through `c/parklot_qjs.c`;
//! - `qjs_own`: the same C as is, on QuickJS's own Atomics (the baseline).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rquickjs-sys version in Cargo.toml (pinned with `=`).
const RQUICKJS_SYS: &str = "rquickjs-sys-0.14.0";

fn main() {
    let src = quickjs_sources();
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let shim = here.join("c");
    let parklot_include = here.join("..").join("runtime").join("include");
    println!("cargo:rerun-if-changed=c");
    println!("cargo:rerun-if-env-changed=PARKLOT_QUICKJS_SRC");

    for (lib, hooked) in [("qjs_parklot", true), ("qjs_own", false)] {
        let mut build = cc::Build::new();
        build
            .cargo_metadata(false)
            .warnings(false)
            .extra_warnings(false)
            .define("_GNU_SOURCE", None)
            // run-test262.c's and the shell's `main` become functions the
            // Rust binaries call.
            .include(&src)
            .include(&shim)
            .include(&parklot_include)
            // quickjs-libc.c, with parklot's access to its loop in the
            // hooked flavour (c/libc_loop.c includes it).
            .file(if hooked {
                shim.join("libc_loop.c")
            } else {
                src.join("quickjs-libc.c")
            })
            .file(shim.join("shell.c"))
            .file(shim.join("test262_main.c"));
        if hooked {
            build
                .flag(format!(
                    "-include{}",
                    shim.join("parklot_qjs_hooks.h").display()
                ))
                .define("PARKLOT_QJS_FLAVOUR", "\"quickjs + parklot\"")
                .file(shim.join("parklot_qjs.c"));
        } else {
            build.define("PARKLOT_QJS_FLAVOUR", "\"quickjs's own Atomics\"");
        }
        build.compile(lib);
    }
    println!(
        "cargo:rustc-link-search=native={}",
        env::var("OUT_DIR").unwrap()
    );
}

/// The `quickjs/` folder of rquickjs-sys's sources: $PARKLOT_QUICKJS_SRC, else
/// the registry's unpacked copy, else what `cargo metadata` says.
fn quickjs_sources() -> PathBuf {
    if let Some(dir) = env::var_os("PARKLOT_QUICKJS_SRC") {
        return PathBuf::from(dir);
    }
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("neither CARGO_HOME nor HOME is set");
    if let Ok(registries) = std::fs::read_dir(cargo_home.join("registry").join("src")) {
        for registry in registries.flatten() {
            let dir = registry.path().join(RQUICKJS_SYS).join("quickjs");
            if dir.join("quickjs-libc.c").exists() {
                return dir;
            }
        }
    }
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(env::var("CARGO_MANIFEST_DIR").unwrap())
        .output()
        .expect("cargo metadata");
    let text = String::from_utf8_lossy(&out.stdout);
    let needle = format!("{RQUICKJS_SYS}/Cargo.toml");
    let end = text
        .find(&needle)
        .expect("rquickjs-sys is not in cargo metadata");
    let start = text[..end].rfind('"').unwrap() + 1;
    Path::new(&text[start..end])
        .join(RQUICKJS_SYS)
        .join("quickjs")
}
