//! When the run ends: SIGTERM, SIGINT, stdin reaching end of file (unless --ignore-stdin) or
//! the --duration-s deadline set the one flag every thread polls.
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

pub fn stop() {
    STOP.store(true, Ordering::SeqCst);
}

#[inline]
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

extern "C" fn on_signal(_: libc::c_int) {
    stop();
}

/// SIGTERM and SIGINT stop the run; SIGPIPE (stdout closed) is ignored.
pub fn install_signal_handlers() {
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Stop when stdin reaches end of file (the parent closed it or died).
pub fn stop_at_stdin_eof() {
    std::thread::spawn(|| {
        let mut buf = [0u8; 256];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        stop();
    });
}
