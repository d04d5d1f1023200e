//! The C ABI's tuning knobs: the process-wide settings the Rust API and the
//! wasm module already expose, for an embedder that measures its own
//! machine. Each returns the setting it replaced. The defaults are measured
//! (see the Rust functions); these are for benchmarks and hosts that know
//! better. A setting is read once per slow path, not a synchronisation
//! variable: set it from one thread at a time (two threads setting it at once
//! may each be told the value from before both).

use crate::ffi::PARKLOT_EINVAL;

/// How many times a contended `parklot_lock` retries before it parks, for
/// every lock in the process ([`crate::set_spin_limit`]; 0: park at once).
/// Returns the previous limit.
#[no_mangle]
pub extern "C" fn parklot_set_spin_limit(spins: u32) -> u32 {
    let was = crate::spin_limit();
    crate::set_spin_limit(spins);
    was
}

/// How many iterations a parked thread may spin before it sleeps, for every
/// wait in the process ([`crate::set_park_spin_limit`]; 0: sleep at once).
/// Returns the previous limit.
#[no_mangle]
pub extern "C" fn parklot_set_park_spin_limit(spins: u32) -> u32 {
    let was = crate::park_spin_limit();
    crate::set_park_spin_limit(spins);
    was
}

/// How a lock's release that wakes one of several parked threads leaves the
/// lock's byte ([`crate::set_carry_parked`]): 1, the woken thread carries the
/// parked bit (the most throughput where threads cannot yield); 0, the byte
/// keeps it and marks the wake in flight (the native default, the fairest).
/// Returns the previous policy (0 or 1), or `PARKLOT_EINVAL` for any other
/// value, which changes nothing.
#[no_mangle]
pub extern "C" fn parklot_set_carry_parked(on: i32) -> i32 {
    if on != 0 && on != 1 {
        return PARKLOT_EINVAL;
    }
    let was = crate::carry_parked() as i32;
    crate::set_carry_parked(on == 1);
    was
}
