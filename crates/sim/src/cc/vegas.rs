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
use super::{AckSample, CaEvent, CaState, CcSock, CongestionControl};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Path;

    /// Vegas in congestion avoidance: cwnd 20, ssthresh 10, baseRTT 100 ms (+1 µs offset
    /// included: samples of 99 999 µs give 100 000).
    fn ca() -> (Vegas, CcSock) {
        let mut sk = CcSock::new(1448, 20, 10_000);
        sk.ssthresh = 10;
        sk.snd_nxt = 100;
        // Reno's fallback only grows a cwnd-limited flow (tcp_is_cwnd_limited).
        sk.is_cwnd_limited = true;
        let mut v = Vegas::new();
        v.init(&mut sk);
        v.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 99_999, in_flight: 20 });
        (v, sk)
    }

    /// One round: `n` RTT samples of `rtt_us` (−1 for the Vegas offset), then the ACK that
    /// passes beg_snd_nxt. Returns the new cwnd.
    fn round(v: &mut Vegas, sk: &mut CcSock, n: u32, rtt_us: i64) -> u32 {
        for _ in 0..n {
            v.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: rtt_us - 1, in_flight: sk.cwnd });
        }
        let ack = v.beg_snd_nxt + 1;
        sk.snd_una = ack;
        sk.snd_nxt = ack + sk.cwnd as u64;
        v.cong_avoid(sk, ack, 1);
        sk.cwnd
    }

    #[test]
    fn diff_in_packets_like_linux() {
        assert_eq!(Vegas::diff(20, 105_000, 100_000), 1);
        assert_eq!(Vegas::diff(20, 109_999, 100_000), 1, "integer division truncates");
        assert_eq!(Vegas::diff(20, 110_000, 100_000), 2);
        assert_eq!(Vegas::diff(100, 100_000, 100_000), 0);
    }

    #[test]
    fn grows_below_alpha_shrinks_above_beta_holds_between() {
        let (mut v, mut sk) = ca();
        // The first round's start: the init made beg_snd_nxt = snd_nxt = 100 (first sample
        // is in this round too: 1 + 3 samples).
        assert_eq!(round(&mut v, &mut sk, 3, 105_000), 21, "diff 1 < alpha: +1");
        // diff = 21 × 10 000 / 100 000 = 2 (= alpha): hold.
        assert_eq!(round(&mut v, &mut sk, 3, 110_000), 21);
        // diff = 21 × 20 000 / 100 000 = 4 (= beta): hold.
        assert_eq!(round(&mut v, &mut sk, 3, 120_000), 21);
        // diff = 21 × 25 000 / 100 000 = 5 > beta: −1, ssthresh min(10, 20) then
        // tcp_current_ssthresh: max(10, 20/2 + 20/4 = 15) = 15.
        assert_eq!(round(&mut v, &mut sk, 3, 125_000), 20);
        assert_eq!(sk.ssthresh, 15);
        // Within a round (ack not past beg_snd_nxt) nothing changes in CA.
        let beg = v.beg_snd_nxt;
        v.cong_avoid(&mut sk, beg, 1);
        v.cong_avoid(&mut sk, beg - 3, 1);
        assert_eq!(sk.cwnd, 20);
        // The minimum of the round is what counts: one low sample among high ones.
        v.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 300_000, in_flight: 20 });
        v.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 300_000, in_flight: 20 });
        assert_eq!(round(&mut v, &mut sk, 1, 100_000), 21, "min RTT 100 ms → diff 0 → +1");
    }

    #[test]
    fn too_few_samples_fall_back_to_reno() {
        let (mut v, mut sk) = ca();
        // ca() put 1 sample in this round; one more makes 2 (<= 2): Reno's additive increase,
        // cwnd_cnt += 1 only, although the samples show a 200 % queue.
        let c = round(&mut v, &mut sk, 1, 300_000);
        assert_eq!(c, 20);
        assert_eq!(sk.cwnd_cnt, 1, "Reno AI counted the ACK");
        // Reno with 20 ACK-rounds of 1 would add 1; Vegas would have cut (diff 40 > beta).
        sk.cwnd_cnt = 19;
        let c = round(&mut v, &mut sk, 2, 300_000);
        assert_eq!(c, 21, "Reno AI: +1 after cwnd packets acked");
    }

    #[test]
    fn slow_start_exit_on_gamma_sets_cwnd_to_actual_rate() {
        let mut sk = CcSock::new(1448, 10, 10_000);
        sk.snd_nxt = 10;
        let mut v = Vegas::new();
        v.init(&mut sk);
        // Round 1 at base RTT 50 ms: slow start (+acked) at the round end ...
        assert_eq!(round(&mut v, &mut sk, 10, 50_000), 11);
        // ... and between round ends too (Linux calls tcp_slow_start there).
        v.cong_avoid(&mut sk, v.beg_snd_nxt, 5);
        assert_eq!(sk.cwnd, 16);
        // Round with RTT 60 ms: diff = 16 × 10 000 / 50 000 = 3 > gamma → leave slow start with
        // cwnd = min(16, 16 × 50/60 + 1 = 14) = 14, ssthresh = 14 then max(14, 7 + 3) = 14.
        assert_eq!(round(&mut v, &mut sk, 5, 60_000), 14);
        assert_eq!(sk.ssthresh, 14);
        assert!(!sk.in_slow_start());
        // diff = 1 (<= gamma) in slow start would keep growing:
        let mut sk2 = CcSock::new(1448, 10, 10_000);
        let mut v2 = Vegas::new();
        v2.init(&mut sk2);
        assert_eq!(round(&mut v2, &mut sk2, 5, 50_000), 11);
        assert_eq!(round(&mut v2, &mut sk2, 5, 54_999), 12, "diff 11×4999/50000 = 1: still slow start");
    }

    #[test]
    fn state_changes_and_restart() {
        let (mut v, mut sk) = ca();
        assert_eq!(v.ssthresh(&sk), 10, "Reno: cwnd / 2");
        v.set_state(&mut sk, CaState::Recovery);
        assert!(!v.doing_vegas_now);
        // Disabled: pure Reno even with plenty of samples showing a queue.
        sk.cwnd_cnt = 0;
        round(&mut v, &mut sk, 5, 300_000);
        assert_eq!((sk.cwnd, sk.cwnd_cnt), (20, 1));
        sk.snd_nxt = 555;
        v.set_state(&mut sk, CaState::Open);
        assert!(v.doing_vegas_now);
        assert_eq!((v.beg_snd_nxt, v.cnt_rtt, v.min_rtt), (555, 0, 0x7fff_ffff));
        assert_eq!(v.base_rtt, 100_000, "Open keeps baseRTT");
        v.cwnd_event(&mut sk, CaEvent::TxStart);
        assert_eq!(v.base_rtt, 0x7fff_ffff, "restart after idle forgets baseRTT");
    }

    #[test]
    fn closed_loop_keeps_alpha_to_beta_packets_queued() {
        // 10 Mbit/s (833 pkt/s), 40 ms, deep buffer, one ACK per packet, no pacing.
        let mut p = Path::new(Vegas::new(), 10e6 / 12_000.0, 40.0, 1000);
        p.run_until(30_000_000_000);
        let late: Vec<_> = p.rows.iter().filter(|r| r.t_ns >= 15_000_000_000).collect();
        let mean_q = late.iter().map(|r| r.queue_pkts as f64).sum::<f64>() / late.len() as f64;
        let max_q = late.iter().map(|r| r.queue_pkts).max().unwrap();
        let delivered = late.last().unwrap().delivered - late[0].delivered;
        let secs = (late.last().unwrap().t_ns - late[0].t_ns) as f64 / 1e9;
        let util = delivered as f64 / secs / (10e6 / 12_000.0);
        println!("vegas: mean queue {mean_q:.2} pkts, max {max_q}, utilisation {util:.3}, cwnd {}", p.sk.cwnd);
        assert!((1.0..=6.0).contains(&mean_q), "mean queue {mean_q}");
        assert!(max_q <= 8, "max queue {max_q}");
        assert!(util > 0.97, "utilisation {util}");
        assert_eq!(p.drops, 0);
    }

    #[test]
    fn closed_loop_deep_buffer_slow_start_overshoot_drains_one_packet_per_rtt() {
        // 50 Mbit/s, 50 ms (BDP 208 packets), ACK every second packet. Slow start only checks
        // gamma once per round against the round's *minimum* RTT, so it overshoots to about
        // 3 BDP; congestion avoidance then removes one packet per RTT (as Linux does), which
        // takes about a minute here, and finally holds 4-5 packets queued.
        let mut p = Path::new(Vegas::new(), 50e6 / 12_000.0, 50.0, 2000);
        p.delack = true;
        p.run_until(80_000_000_000);
        let at = |s: u64| p.rows.iter().find(|r| r.t_ns >= s * 1_000_000_000).unwrap().clone();
        let (r2, r30, r75) = (at(2), at(30), at(75));
        println!(
            "queue/cwnd at 2 s {}/{}, 30 s {}/{}, 75 s {}/{}",
            r2.queue_pkts, r2.cwnd, r30.queue_pkts, r30.cwnd, r75.queue_pkts, r75.cwnd
        );
        assert!(r2.cwnd > 2 * 208 && r2.queue_pkts > 208, "overshoot: cwnd {}", r2.cwnd);
        // One packet per round: from 2 s to 30 s about 28 s / ~90 ms rounds.
        let fell = r2.cwnd - r30.cwnd;
        assert!((150..=350).contains(&fell), "cwnd fell by {fell}");
        assert!((1..=6).contains(&r75.queue_pkts), "steady queue {}", r75.queue_pkts);
        assert!((209..=216).contains(&r75.cwnd), "steady cwnd {}", r75.cwnd);
    }
}
