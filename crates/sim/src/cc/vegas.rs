//! TCP Vegas, following Linux 6.6 net/ipv4/tcp_vegas.c (the algorithm has not changed in
//! substance since 2.6.x). Reimplemented from the kernel's behaviour:
//!
//! * RTT samples (`pkts_acked`) are offset by +1 µs so that neither RTT can be zero; baseRTT is
//!   the minimum over the connection (reset only by `init` / restart after idle), minRTT the
//!   minimum over the current round, cntRTT the number of samples in the round.
//! * Once per round — when the cumulative ACK passes `beg_snd_nxt`, the `snd_nxt` recorded at
//!   the start of the round — and only with at least 3 samples in the round (2 or fewer are
//!   probably all delayed ACKs), Vegas computes, in packets and integer arithmetic,
//!   `target_cwnd = cwnd × baseRTT / minRTT` and `diff = cwnd × (minRTT − baseRTT) / baseRTT`
//!   (packets queued at the bottleneck). In slow start, diff > gamma ends slow start with
//!   cwnd = min(cwnd, target_cwnd + 1); otherwise slow start continues. In congestion
//!   avoidance cwnd −1 if diff > beta, +1 if diff < alpha, unchanged in between. cwnd is kept
//!   in [2, clamp] and ssthresh is refreshed the way `tcp_current_ssthresh` does.
//! * With too few samples the round is handled by Reno's cong_avoid; between round ends only
//!   slow start grows cwnd (no additive increase).
//! * Vegas runs only in the Open state (set_state enables it on Open, disables it otherwise,
//!   Reno then); restart after idle re-initialises it, baseRTT included.
//! * Loss response (`ssthresh`, `undo_cwnd`) is Reno's.
//!
//! Difference from the kernel: `diff` is computed in 64-bit, where Linux's u32 product
//! cwnd × (rtt − baseRTT) would wrap above ~4.3e9 (e.g. cwnd 10 000 with 430 ms queueing).
use super::reno::Reno;
use super::{CaEvent, CaState, CcSock, CongestionControl, AckSample};

pub const ALPHA: u32 = 2;
pub const BETA: u32 = 4;
pub const GAMMA: u32 = 1;

#[derive(Debug)]
pub struct Vegas {
    /// Right edge (snd_nxt) when the current round began.
    pub beg_snd_nxt: u64,
    pub doing_vegas_now: bool,
    /// RTT samples in the current round.
    pub cnt_rtt: u32,
    /// Min RTT in the current round, µs (+1).
    pub min_rtt: u32,
    /// Min RTT ever seen, µs (+1).
    pub base_rtt: u32,
    reno: Reno,
}

impl Default for Vegas {
    fn default() -> Self {
        Self::new()
    }
}

impl Vegas {
    pub fn new() -> Self {
        Vegas {
            beg_snd_nxt: 0,
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt: 0x7fff_ffff,
            base_rtt: 0x7fff_ffff,
            reno: Reno,
        }
    }

    fn enable(&mut self, sk: &CcSock) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = sk.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = 0x7fff_ffff;
    }

    fn disable(&mut self) {
        self.doing_vegas_now = false;
    }

    fn vegas_init(&mut self, sk: &CcSock) {
        self.base_rtt = 0x7fff_ffff;
        self.enable(sk);
    }

    /// `tcp_current_ssthresh`: in CWR/Recovery the current ssthresh, else at least 3/4 cwnd.
    fn current_ssthresh(sk: &CcSock) -> u32 {
        if matches!(sk.ca_state, CaState::Cwr | CaState::Recovery) {
            sk.ssthresh
        } else {
            sk.ssthresh.max((sk.cwnd >> 1) + (sk.cwnd >> 2))
        }
    }

    /// The diff Vegas acts on, in packets: cwnd × (rtt − baseRTT) / baseRTT.
    pub fn diff(cwnd: u32, rtt: u32, base_rtt: u32) -> u64 {
        cwnd as u64 * (rtt.saturating_sub(base_rtt)) as u64 / base_rtt.max(1) as u64
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, sk: &mut CcSock) {
        self.vegas_init(sk);
    }

    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        self.reno.ssthresh(sk)
    }

    fn pkts_acked(&mut self, _sk: &mut CcSock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = (sample.rtt_us as u64 + 1).min(u32::MAX as u64) as u32;
        if vrtt < self.base_rtt {
            self.base_rtt = vrtt;
        }
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(sk);
        } else {
            self.disable();
        }
    }

    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            self.vegas_init(sk);
        }
    }

    fn cong_avoid(&mut self, sk: &mut CcSock, ack: u64, acked: u32) {
        if !self.doing_vegas_now {
            self.reno.cong_avoid(sk, ack, acked);
            return;
        }
        if ack > self.beg_snd_nxt {
            // A full round has been acknowledged: the once-per-RTT decision.
            self.beg_snd_nxt = sk.snd_nxt;
            if self.cnt_rtt <= 2 {
                self.reno.cong_avoid(sk, ack, acked);
            } else {
                let rtt = self.min_rtt;
                let target_cwnd = sk.cwnd as u64 * self.base_rtt as u64 / rtt.max(1) as u64;
                let diff = Self::diff(sk.cwnd, rtt, self.base_rtt);
                if diff > GAMMA as u64 && sk.in_slow_start() {
                    // Queue building in slow start: match the measured rate and leave.
                    sk.cwnd = sk.cwnd.min((target_cwnd as u32).saturating_add(1));
                    sk.ssthresh = sk.ssthresh.min(sk.cwnd);
                } else if sk.in_slow_start() {
                    sk.slow_start(acked);
                } else if diff > BETA as u64 {
                    sk.cwnd = sk.cwnd.saturating_sub(1);
                    sk.ssthresh = sk.ssthresh.min(sk.cwnd);
                } else if diff < ALPHA as u64 {
                    sk.cwnd += 1;
                }
                if sk.cwnd < 2 {
                    sk.cwnd = 2;
                } else if sk.cwnd > sk.cwnd_clamp {
                    sk.cwnd = sk.cwnd_clamp;
                }
                sk.ssthresh = Self::current_ssthresh(sk);
            }
            self.cnt_rtt = 0;
            self.min_rtt = 0x7fff_ffff;
        } else if sk.in_slow_start() {
            sk.slow_start(acked);
        }
    }
}
