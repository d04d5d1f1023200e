//! The two QuickJS shells run scripts: parklot's Atomics (waitAsync included)
//! in the main context and in workers, and QuickJS's own as the baseline.
use std::path::Path;
use std::process::{Command, Output};

/// What a shell printed, stdout then stderr.
fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn run(shell: &str, script: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("js");
    let out = Command::new(shell)
        .arg(script)
        .current_dir(&dir)
        .output()
        .expect("run the shell");
    let text = text(&out);
    assert!(out.status.success(), "{shell} {script} failed:\n{text}");
    text
}

/// Runs `script` (in tests/js) with parklot's shell: it prints `expected`.
fn prints(script: &str, expected: &str) {
    let out = run(env!("CARGO_BIN_EXE_parklot-qjs"), script);
    assert_eq!(out.trim(), expected);
}

#[test]
fn worker_wait_async_is_woken_by_another_threads_notify() {
    prints("worker-wait-async.js", "ok");
}

#[test]
fn both_shells_serve_atomics_and_only_parklots_has_wait_async() {
    let script = "print(typeof Atomics.waitAsync, Atomics.wait(new Int32Array(new SharedArrayBuffer(8)), 0, 1))";
    let dir = std::env::temp_dir().join(format!("parklot-qjs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("probe.js");
    std::fs::write(&file, script).unwrap();
    let file = file.to_str().unwrap();
    let mine = run(env!("CARGO_BIN_EXE_parklot-qjs"), file);
    let own = run(env!("CARGO_BIN_EXE_qjs-own"), file);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(mine.trim(), "function not-equal");
    assert_eq!(own.trim(), "undefined not-equal");
}

#[test]
fn waiter_count_sees_async_waits_and_notify_settles_them() {
    prints("waiter-count.js", "2:timed-out ok ok");
}

/// Regression: the per-thread cache of the last typed array was dropped with
/// a null runtime (a crash) when a thread's second runtime validated its
/// first array; run-test262 runs every test, and each scenario of a test, in
/// a new runtime on the same thread.
#[test]
fn one_thread_runs_many_runtimes_in_turn() {
    let dir = std::env::temp_dir().join(format!("parklot-qjs-262-{}", std::process::id()));
    let harness = dir.join("harness");
    std::fs::create_dir_all(&harness).unwrap();
    std::fs::write(
        harness.join("sta.js"),
        "function Test262Error(m) { this.message = m; }\n",
    )
    .unwrap();
    std::fs::write(
        harness.join("assert.js"),
        "function assert(c) { if (!c) throw new Test262Error('assert'); }\n",
    )
    .unwrap();
    let config = dir.join("all.conf");
    std::fs::write(
        &config,
        format!(
            "[config]\nharnessdir={}\nmode=all\nfeatures=Atomics\n",
            harness.display()
        ),
    )
    .unwrap();
    let test = dir.join("notify.js");
    std::fs::write(
        &test,
        "/*---\nfeatures: [Atomics]\n---*/\nconst ta = new Int32Array(new SharedArrayBuffer(8));\n\
         assert(Atomics.notify(ta, 0) === 0);\nassert(Atomics.wait(ta, 1, 1) === 'not-equal');\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_parklot-qjs-test262"))
        .args(["-v", "-c", config.to_str().unwrap(), "-f"])
        .args([&test, &test])
        .output()
        .expect("run parklot-qjs-test262");
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{:?}:\n{}", out.status, text(&out));
}

/// A pending `waitAsync` on the shell's main thread leaves quickjs-libc's
/// loop running: its timers fire and a worker's messages arrive meanwhile,
/// and the wait settles through the loop.
#[test]
fn the_event_loop_runs_while_a_wait_async_is_pending() {
    prints("loop-while-waiting.js", "ok ticks messages waited");
}
