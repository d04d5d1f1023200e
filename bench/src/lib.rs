//! parklot's native benchmarks: the pieces shared by the `contend` demo and,
//! later, the full suite described in `BENCHMARKS.md`.
//!
//! - [`locks`]: the [`RawLock`] trait and its implementations for every peer
//!   (parklot `Lock` and `WordLock`, `std::sync::Mutex`, `parking_lot::Mutex`,
//!   glibc `pthread_mutex_t`), plus the list of peers, [`PEERS`].
//! - [`runner`]: one generic round — N threads, one lock, a fixed duration —
//!   and its result, [`Round`], with the lost-update check.
//! - [`results`]: a whole run (settings, floor, every round) and its
//!   per-lock, per-thread-count [`Summary`].
//! - [`report`]: the aligned text table and the JSON file.
//! - [`floor`]: the physical limit, one uncontended CAS plus store.

pub mod floor;
pub mod locks;
pub mod report;
pub mod results;
pub mod runner;

pub use locks::{Peer, RawLock, PEERS};
pub use results::{Results, Settings, Summary};
pub use runner::{run_round, CounterMismatch, Round, RoundConfig};
