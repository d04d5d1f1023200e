//! `suite`: seed 000's experiments natively, every peer side by side.
//!
//! ```text
//! cargo run --release -p parklot-bench --bin suite -- [--quick] [--out DIR]
//! ```
//!
//! Progress goes to stderr, one line per point; a short summary (the floor
//! and the goals) to stdout; `DIR/native.json` and `DIR/native.md` are
//! overwritten. Exits 1 at the first correctness failure (a lost update, an
//! item lost or delivered twice), 2 on a usage or I/O error.

use parklot_bench::json::{document, to_text};
use parklot_bench::report::{brief, markdown};
use parklot_bench::suite::{run, Params};
use parklot_bench::summary::Summary;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "\
usage: suite [--quick] [--out DIR]

  --quick    every experiment and check, few points, short rounds (about 10 s)
  --out DIR  where native.json and native.md go (default bench/results)
  --help     this text";

fn main() -> ExitCode {
    let mut quick = false;
    let mut out = PathBuf::from("bench/results");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--out" => match args.next() {
                Some(dir) => out = PathBuf::from(dir),
                None => return usage("--out needs a directory"),
            },
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }

    let params = if quick {
        Params::quick()
    } else {
        Params::full()
    };
    let started = Instant::now();
    let run = match run(&params, &mut |line| eprintln!("{line}")) {
        Ok(run) => run,
        Err(failure) => {
            eprintln!("suite: ABORTED, correctness check failed in {failure}");
            return ExitCode::FAILURE;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let summary = Summary::of(&run);

    let files = [
        ("native.json", to_text(&document(&run, &summary))),
        ("native.md", markdown(&run, &summary)),
    ];
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("suite: cannot create {}: {e}", out.display());
        return ExitCode::from(2);
    }
    print!("{}", brief(&run, &summary, seconds));
    for (name, text) in files {
        let path = out.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("suite: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("suite: {problem}\n\n{USAGE}");
    ExitCode::from(2)
}
