//! parklot's monotonic clock. Timeouts and the fairness timer read it, on
//! every target: natively it is the system's monotonic clock, in wasm the time
//! source the embedder installs (see [`install_time_source`]).

use core::ops::{Add, Sub};
use core::time::Duration;

pub use crate::sys::install_time_source;

/// A moment on parklot's monotonic clock, in nanoseconds from an arbitrary
/// origin. Used for deadlines (`try_lock_until`, `wait_until`) because
/// `std::time::Instant` does not exist on wasm32-unknown-unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    nanos: u64,
}

impl Instant {
    /// The current time.
    #[inline]
    pub fn now() -> Instant {
        Instant {
            nanos: crate::sys::now_ns(),
        }
    }

    /// `self + duration`, or `None` if that is too far away to represent
    /// (which callers treat as "no deadline").
    pub fn checked_add(self, duration: Duration) -> Option<Instant> {
        let d = u64::try_from(duration.as_nanos()).ok()?;
        self.nanos.checked_add(d).map(|nanos| Instant { nanos })
    }

    /// Time from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.nanos.saturating_sub(earlier.nanos))
    }

    /// Time from now until `self`, or zero if it has passed.
    pub fn remaining(self) -> Duration {
        self.saturating_duration_since(Instant::now())
    }

    #[inline]
    pub(crate) fn as_nanos(self) -> u64 {
        self.nanos
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn from_nanos(nanos: u64) -> Instant {
        Instant { nanos }
    }
}

/// A `std::time::Instant` on parklot's clock (where std has a clock: not
/// on wasm32-unknown-unknown), so that deadlines written with std's type work
/// with `try_lock_until` and `wait_until`. Measured against both clocks'
/// "now", so the same moment to within the two reads.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
impl From<std::time::Instant> for Instant {
    fn from(moment: std::time::Instant) -> Instant {
        let (std_now, now) = (std::time::Instant::now(), Instant::now());
        if moment >= std_now {
            now + (moment - std_now)
        } else {
            let ago = u64::try_from((std_now - moment).as_nanos()).unwrap_or(u64::MAX);
            Instant {
                nanos: now.nanos.saturating_sub(ago),
            }
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturates at the far future instead of overflowing.
    fn add(self, duration: Duration) -> Instant {
        self.checked_add(duration)
            .unwrap_or(Instant { nanos: u64::MAX })
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// The deadline `timeout` from now; `None` (wait forever) when it cannot be
/// represented.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn clock_is_monotonic_and_moves() {
        let a = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        let b = Instant::now();
        assert!(b > a);
        assert!(b - a >= Duration::from_millis(2));
        assert_eq!(a - b, Duration::ZERO);
    }

    #[test]
    fn huge_timeouts_mean_no_deadline() {
        assert_eq!(deadline_after(Duration::MAX), None);
        assert_eq!(
            Instant::now() + Duration::MAX,
            Instant::from_nanos(u64::MAX)
        );
    }

    #[test]
    fn a_std_instant_converts_to_the_same_moment() {
        let soon = std::time::Instant::now() + Duration::from_millis(50);
        let ours = Instant::from(soon);
        let left = ours.remaining();
        assert!(left <= Duration::from_millis(50) && left > Duration::from_millis(30));
        let past = Instant::from(std::time::Instant::now() - Duration::from_millis(5));
        assert!(past < Instant::now());
    }

    #[test]
    fn native_targets_need_no_time_source() {
        assert!(!install_time_source(|| 0));
    }
}
