//! How a forwarding thread waits between packets: it sleeps in ppoll on its devices until
//! `spin_ns` before the next deadline, then spins on the clock (a timer wake-up is tens of µs
//! late, a spin is not); and because a real-time thread that never sleeps starves everything
//! else on its CPU until the kernel throttles it for tens of ms, it rests `rest_ns` after
//! `max_busy_ns` without a sleep, at a time it chooses.
use crate::realtime::now_ns;

pub struct Idler {
    spin_ns: u64,
    max_busy_ns: u64,
    rest_ns: u64,
    last_rest: u64,
    /// Rests forced by `max_busy_ns` (reported: each one delays packets by up to `rest_ns`).
    pub forced_rests: u64,
    /// Nanoseconds spent spinning.
    pub spin_total: u64,
}

impl Idler {
    pub fn new(spin_ns: u64, max_busy_ns: u64, rest_ns: u64) -> Self {
        Idler { spin_ns, max_busy_ns, rest_ns, last_rest: now_ns(), forced_rests: 0, spin_total: 0 }
    }

    /// One pause of the loop at `now`: a forced rest if the thread has been busy too long;
    /// nothing if `busy` (packets were just read: read again); else spin until `wake` if it is
    /// within `spin_ns` (4 µs at a time, so arrivals are seen at most 4 µs late), or sleep in
    /// ppoll on `pfds` until `spin_ns` before it.
    pub fn pause(&mut self, now: u64, busy: bool, wake: u64, pfds: &mut [libc::pollfd]) {
        if now - self.last_rest > self.max_busy_ns {
            let ts = libc::timespec { tv_sec: 0, tv_nsec: self.rest_ns as _ };
            unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
            self.last_rest = now_ns();
            self.forced_rests += 1;
            return;
        }
        if busy {
            return;
        }
        if wake <= now + self.spin_ns {
            let until = wake.min(now + 4_000);
            let mut t = now;
            while t < until {
                std::hint::spin_loop();
                t = now_ns();
            }
            self.spin_total += t - now;
            return;
        }
        let sleep = wake - now - self.spin_ns;
        let ts = libc::timespec { tv_sec: (sleep / 1_000_000_000) as _, tv_nsec: (sleep % 1_000_000_000) as _ };
        unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
        self.last_rest = now_ns();
    }
}
