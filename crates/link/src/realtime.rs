//! A forwarding thread's clock and scheduling: CLOCK_MONOTONIC in ns, SCHED_FIFO, a 1 ns timer
//! slack, and the thread's CPU time for the report.

/// Packets read from one device per turn of a forwarding loop, so that deliveries are not
/// starved by a burst of arrivals.
pub const BATCH: usize = 64;

/// How a forwarding thread schedules itself (from the command line).
pub struct Timing {
    pub spin_ns: u64,
    pub max_busy_ns: u64,
    pub rest_ns: u64,
    /// SCHED_FIFO priority; 0 = normal scheduling.
    pub rt_prio: i32,
    /// Stop the run at this clock reading (`--duration-s`).
    pub deadline: Option<u64>,
}

#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Make the calling thread real-time (SCHED_FIFO at `prio`, if > 0; true if that worked) and
/// ask for timer wake-ups without slack.
pub fn enter_realtime(prio: i32) -> bool {
    let rt = prio > 0 && {
        let p = libc::sched_param { sched_priority: prio };
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
    };
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    rt
}

/// User and system CPU seconds of the calling thread.
pub fn thread_cpu() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}
