//! Helpers the integration tests share (each test file that needs them
//! declares `mod common;`).
#![allow(dead_code)]

/// Pins the calling thread to the first CPU it may run on.
#[cfg(target_os = "linux")]
pub fn pin_to_one_cpu() {
    // SAFETY (test): cpu_set_t is plain data, filled in by sched_getaffinity;
    // the CPU_* macros stay inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
        let cpu = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .unwrap();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
    }
}

/// Makes the calling thread SCHED_BATCH: it keeps its share of the CPU, but
/// waking it never preempts the running thread.
#[cfg(target_os = "linux")]
pub fn never_preempt_on_wakeup() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY (test): pid 0 is the calling thread; param is a valid struct.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    assert_eq!(r, 0, "sched_setscheduler(SCHED_BATCH)");
}
