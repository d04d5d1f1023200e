//! parklot's native benchmark suite: seed 000's ("Locking in WebKit")
//! experiments, with parklot's locks and condition next to std's,
//! parking_lot's, glibc's and the seed's toy locks, in one run.
//!
//! - [`locks`]: the peers behind parklot's one benchmark trait,
//!   [`parklot::toy_locks::RawLock`], and the lists of them.
//! - [`runner`]: one contended round with its lost-update check;
//!   [`condition`]: one producer/consumer round with its exactly-once check;
//!   [`floor`]: the uncontended and ping-pong floors.
//! - [`suite`]: the experiments, rounds interleaved, checks enforced.
//! - [`stats`] and [`summary`]: medians and ranges, the goals; [`report`]
//!   and [`json`]: `native.md` and `native.json` (with chart specs);
//!   [`machine`]: CPU, cores, compiler, date.
//! - [`side`]: what the side suites (`async_locks`, `rwlock`) share.
//!
//! Run it with `cargo run --release -p parklot-bench --bin suite -- [--quick] [--out DIR]`.

pub mod condition;
pub mod floor;
pub mod json;
pub mod locks;
pub mod machine;
pub mod report;
pub mod runner;
pub mod side;
pub mod stats;
pub mod suite;
pub mod summary;
