//! `contend`: a quick native microcontention demo (seed 000's experiment 1).
//!
//! For each thread count, every peer lock (parklot `Lock` and `WordLock`,
//! `std::sync::Mutex`, `parking_lot::Mutex`, glibc `pthread_mutex_t`) is run
//! for a fixed time with a one-iteration critical section, rounds interleaved
//! across locks (A B C D E, A B C D E, ...). Every round checks that no update
//! was lost. Prints the floor, then a table of throughput, ratio to parklot's
//! `Lock`, and per-thread fairness; `--json PATH` also writes every round.
//!
//! ```text
//! cargo run --release -p parklot-bench --bin contend -- [--quick] [--threads 1,2,4] [--ms 200] [--rounds 5] [--json PATH]
//! ```

use parklot_bench::{floor, report, Results, RoundConfig, Settings, PEERS};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const USAGE: &str = "\
usage: contend [--quick] [--threads LIST] [--ms N] [--rounds N] [--json PATH]

  --threads LIST  comma-separated thread counts        (default 1,2,4,8)
  --ms N          milliseconds per round               (default 200)
  --rounds N      rounds per lock and thread count     (default 5)
  --quick         threads 1,2,4, 100 ms, 3 rounds (explicit flags still win)
  --json PATH     also write every round as JSON to PATH
  --help          this text";

/// The lock the ratios are taken against.
const BASELINE: &str = "parklot::Lock";

/// Iterations of the add-and-multiply per critical section (seed 000: one).
const WORK: u32 = 1;

/// Command-line options; `None` means "not given", so `--quick` can fill it.
#[derive(Default)]
struct Args {
    quick: bool,
    threads: Option<Vec<usize>>,
    ms: Option<u64>,
    rounds: Option<usize>,
    json: Option<String>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut parsed = Args::default();
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--quick" => parsed.quick = true,
                "--threads" => parsed.threads = Some(parse_list(&value()?)?),
                "--ms" => parsed.ms = Some(parse_positive(&flag, &value()?)?),
                "--rounds" => parsed.rounds = Some(parse_positive(&flag, &value()?)?),
                "--json" => parsed.json = Some(value()?),
                "--help" | "-h" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(parsed)
    }

    fn settings(&self) -> Settings {
        let (threads, ms, rounds) = if self.quick {
            (vec![1, 2, 4], 100, 3)
        } else {
            (vec![1, 2, 4, 8], 200, 5)
        };
        Settings {
            threads: self.threads.clone().unwrap_or(threads),
            duration: Duration::from_millis(self.ms.unwrap_or(ms)),
            rounds: self.rounds.unwrap_or(rounds),
            work: WORK,
            spin_limit: parklot::spin_limit(),
        }
    }
}

fn parse_positive<T: std::str::FromStr + PartialOrd + Default>(
    flag: &str,
    text: &str,
) -> Result<T, String> {
    match text.trim().parse::<T>() {
        Ok(n) if n > T::default() => Ok(n),
        _ => Err(format!(
            "{flag} wants a positive whole number, not {text:?}"
        )),
    }
}

fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|t| parse_positive("--threads", t))
        .collect()
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            if message.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("contend: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let settings = args.settings();

    let mut results = Results {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        floor_ns: floor::cas_store_ns(10_000_000, 5),
        settings,
        rounds: Vec::new(),
    };
    let title = "parklot contend: native microcontention, one lock shared by N threads";
    print!("{}", report::header(&results, title));
    println!();

    let s = results.settings.clone();
    for &threads in &s.threads {
        eprint!("[contend] {threads} thread(s): ");
        for round in 0..s.rounds {
            for peer in PEERS {
                let config = RoundConfig {
                    threads,
                    duration: s.duration,
                    work: s.work,
                    round,
                };
                let r = (peer.run)(&config);
                if let Err(mismatch) = r.check() {
                    eprintln!("\ncontend: ABORT: {mismatch}");
                    return ExitCode::FAILURE;
                }
                results.rounds.push(r);
            }
            eprint!(".");
        }
        eprintln!();
    }

    let summaries = results.summaries(BASELINE);
    print!("{}", report::table(&summaries, BASELINE));

    if let Some(path) = &args.json {
        if let Err(e) = std::fs::write(path, report::json(&results, &summaries, BASELINE)) {
            eprintln!("contend: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        println!("\nwrote {path} ({} rounds)", results.rounds.len());
    }
    ExitCode::SUCCESS
}
