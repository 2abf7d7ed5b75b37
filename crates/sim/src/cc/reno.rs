//! Reno, as Linux tcp_cong.c implements it (tcp_reno_ssthresh / tcp_reno_cong_avoid).
use super::{CcSock, CongestionControl};

#[derive(Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// tcp_reno_ssthresh: half the window, at least 2.
    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        (sk.cwnd >> 1).max(2)
    }

    /// tcp_reno_cong_avoid: only when cwnd-limited; slow start, then +1 per cwnd acked.
    fn cong_avoid(&mut self, sk: &mut CcSock, _ack: u64, acked: u32) {
        if !sk.is_cwnd_limited {
            return;
        }
        let mut acked = acked;
        if sk.in_slow_start() {
            acked = sk.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let w = sk.cwnd;
        sk.cong_avoid_ai(w, acked);
    }
}
