//! CUBIC (RFC 9438) as Linux implements it in net/ipv4/tcp_cubic.c (followed: Linux 6.x,
//! the version on this project's kernel referee, 6.18).
//!
//! Constants as Linux: beta = 717/1024 (≈0.7), C = 0.4 (bic_scale 41 ⇒ cube_rtt_scale 410,
//! in units of 2^-10 s), fast convergence on, TCP friendliness on, HyStart on with both the
//! ACK-train and the delay detector, hystart_low_window 16, ack delta 2 ms, 8 RTT samples a
//! round, delay threshold clamp(min_rtt/8, 4 ms, 16 ms). Time is kept in jiffies (HZ=250)
//! exactly where Linux uses jiffies (the cubic epoch) and in µs where Linux uses µs (HyStart).
//! The only arithmetic difference: the cube root is computed exactly instead of by Linux's
//! table-plus-one-Newton-step approximation (which is within a fraction of a percent).
use super::{AckSample, CaEvent, CaState, CcSock, CongestionControl};
use crate::time::{jiffies, HZ, NS_PER_US};

const BETA_SCALE: u64 = 1024;
const BETA: u64 = 717;
const BIC_SCALE: u64 = 41;
/// 2^BICTCP_HZ units per second in the cubic time variable.
const BICTCP_HZ: u32 = 10;
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// beta_scale = 8·(1024 + beta) / 3 / (1024 − beta): the Reno-friendly slope.
const BETA_FRIENDLY: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// cube_factor = 2^(10 + 3·BICTCP_HZ) / cube_rtt_scale.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_US: u64 = 2000;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN_US: u64 = 4000;
const HYSTART_DELAY_MAX_US: u64 = 16000;

#[derive(Debug, Default)]
pub struct Cubic {
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    origin_point: u32,
    k: u64,
    delay_min_us: u64,
    epoch_start: u64,
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart
    found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    sample_cnt: u32,
}

fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt().round() as u64;
    // Correct floating rounding so that x = floor(cbrt(a)).
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

impl Cubic {
    pub fn new() -> Self {
        Cubic::default()
    }

    /// `bictcp_reset`
    fn reset(&mut self) {
        // Linux zeroes the whole state, min delay and HyStart's `found` included.
        *self = Cubic::default();
    }

    fn hystart_reset(&mut self, sk: &CcSock) {
        let now_us = sk.now_ns / NS_PER_US;
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = sk.snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: compute `cnt`, the number of ACKed packets per cwnd increment.
    fn update(&mut self, sk: &CcSock, cwnd: u32, acked: u32) {
        let now = jiffies(sk.now_ns);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // Once per jiffy, update the cubic target; in between only the friendliness part.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            if self.epoch_start == 0 {
                self.epoch_start = now.max(1);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    self.k = cube_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                    self.origin_point = self.last_max_cwnd;
                }
            }
            // t: time since the epoch plus min RTT, in 2^-10 s.
            let mut t = now.saturating_sub(self.epoch_start);
            t += self.delay_min_us * HZ / 1_000_000;
            t = (t << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k);
            let delta =
                ((CUBE_RTT_SCALE as u128 * offs as u128 * offs as u128 * offs as u128) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.k {
                (self.origin_point as u64).saturating_sub(delta)
            } else {
                self.origin_point as u64 + delta
            };
            self.cnt = if target > cwnd as u64 { (cwnd as u64 / (target - cwnd as u64)) as u32 } else { 100 * cwnd };
            // Slow growth right after start-up (no loss yet).
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness: follow the window a Reno flow would have.
        let delta = ((cwnd as u64 * BETA_FRIENDLY) >> 3) as u32;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// Extra delay allowed in the ACK-train test for pacing/TSO (`hystart_ack_delay`):
    /// min(1 ms, 4·64 KiB / pacing rate).
    fn hystart_ack_delay_us(sk: &CcSock) -> u64 {
        if sk.pacing_rate == 0 {
            return 0;
        }
        (4 * 65536 * 1_000_000 / sk.pacing_rate).min(1000)
    }

    /// `hystart_update` (Linux 6.18): a new round starts once snd_una passes end_seq — on every
    /// slow-start ACK with an RTT sample, small windows included, so rounds keep the phase of
    /// the flights from the first ACK on; the two exit tests run only from hystart_low_window.
    fn hystart_update(&mut self, sk: &mut CcSock, delay_us: u64) {
        if sk.snd_una > self.end_seq {
            self.hystart_reset(sk);
        }
        if sk.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        let now_us = sk.now_ns / NS_PER_US;
        // ACK train: ACKs closely spaced for longer than ~min_rtt/2 mean the pipe is full.
        if now_us.saturating_sub(self.last_ack_us) <= HYSTART_ACK_DELTA_US {
            self.last_ack_us = now_us;
            let mut threshold = self.delay_min_us + Self::hystart_ack_delay_us(sk);
            if !sk.pacing_enabled {
                threshold >>= 1;
            }
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                sk.hystart_train_detect += 1;
                sk.hystart_train_cwnd += sk.cwnd as u64;
                sk.ssthresh = sk.cwnd;
            }
        }
        // Delay increase: the round's min RTT exceeds the floor by clamp(min_rtt/8, 4, 16) ms.
        if self.curr_rtt_us > delay_us {
            self.curr_rtt_us = delay_us;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.curr_rtt_us > self.delay_min_us + thresh {
                self.found = true;
                sk.hystart_delay_detect += 1;
                sk.hystart_delay_cwnd += sk.cwnd as u64;
                sk.ssthresh = sk.cwnd;
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, sk: &mut CcSock) {
        self.reset();
        self.hystart_reset(sk);
    }

    fn ssthresh(&mut self, sk: &CcSock) -> u32 {
        let cwnd = sk.cwnd;
        self.epoch_start = 0;
        // Fast convergence: release bandwidth faster when the window shrank since last time.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            ((cwnd as u64 * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        (((cwnd as u64 * BETA) / BETA_SCALE) as u32).max(2)
    }

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
        let cwnd = sk.cwnd;
        self.update(sk, cwnd, acked);
        let cnt = self.cnt;
        sk.cong_avoid_ai(cnt, acked);
    }

    fn set_state(&mut self, sk: &mut CcSock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(sk);
        }
    }

    fn cwnd_event(&mut self, sk: &mut CcSock, ev: CaEvent) {
        // After an idle period, shift the epoch so the cubic curve does not jump ahead.
        if ev == CaEvent::TxStart && self.epoch_start != 0 {
            // bictcp_cwnd_event: the idle time since the last transmission (tp->lsndtime).
            let now = jiffies(sk.now_ns);
            let delta = now.saturating_sub(jiffies(sk.lsndtime_ns));
            if delta > 0 {
                self.epoch_start = (self.epoch_start + delta).min(now);
            }
        }
    }

    fn pkts_acked(&mut self, sk: &mut CcSock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Ignore delay samples for a second after a window reduction.
        if self.epoch_start != 0 && jiffies(sk.now_ns).saturating_sub(self.epoch_start) < HZ {
            return;
        }
        let delay = (sample.rtt_us as u64).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if !self.found && sk.in_slow_start() {
            self.hystart_update(sk, delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_linux() {
        assert_eq!(BETA_FRIENDLY, 15); // 8·1741/3/307 in integer arithmetic
        assert_eq!(CUBE_FACTOR, (1u64 << 40) / 410);
        assert_eq!(cube_root(27), 3);
        assert_eq!(cube_root(26), 2);
    }

    #[test]
    fn ssthresh_is_beta_and_fast_convergence() {
        let mut c = Cubic::new();
        let mut sk = CcSock::new(1448, 100, u32::MAX);
        assert_eq!(c.ssthresh(&sk), 70); // 100·717/1024
        assert_eq!(c.last_max_cwnd, 100);
        sk.cwnd = 80; // lost again below the previous maximum
        c.ssthresh(&sk);
        assert_eq!(c.last_max_cwnd, 80 * 1741 / 2048);
    }

    #[test]
    fn window_returns_to_wmax_after_k_seconds() {
        // After a loss at W_max = 1000 (cwnd 1000·717/1024 = 700), the cubic curve is back at
        // W_max after K = cbrt(W_max·(1-β)/C) = cbrt(300/0.4) ≈ 9.1 s. At 100 ms RTT the
        // Reno-friendly window would need ~570 RTTs (57 s) for the same growth, so the cubic
        // region decides. (At small RTTs the Reno-friendly region wins, as RFC 9438 says.)
        let mut c = Cubic::new();
        let mut sk = CcSock::new(1448, 1000, u32::MAX);
        sk.is_cwnd_limited = true;
        sk.ssthresh = c.ssthresh(&sk);
        sk.cwnd = sk.ssthresh;
        let k_s = c_k_seconds(1000.0, sk.cwnd as f64);
        let rtt_ns = 100_000_000u64;
        let mut t = 0u64;
        let mut cwnd_at = std::collections::BTreeMap::new();
        while t <= 15_000_000_000 {
            sk.now_ns = t + 1;
            let cwnd = sk.cwnd;
            c.cong_avoid(&mut sk, 0, cwnd);
            cwnd_at.insert(t / 100_000_000, sk.cwnd);
            t += rtt_ns;
        }
        // W(t) = C·(t − K)³ + W_max, C = 0.4 (RFC 9438 eq. 1); cwnd runs at most one RTT ahead.
        for secs in [2u64, 4, 6, 12, 15] {
            let w = 0.4 * (secs as f64 - k_s).powi(3) + 1000.0;
            let got = cwnd_at[&(secs * 10)] as f64;
            assert!((got - w).abs() / w < 0.02, "t={secs}s cwnd {got} vs W(t) {w:.1} (K {k_s:.2})");
        }
    }

    #[test]
    fn hystart_rounds_start_below_the_low_window() {
        // Linux 6.18 hystart_update resets the round (end_seq = snd_nxt) before it checks
        // hystart_low_window, so a round boundary falls on the first ACK past end_seq even
        // while cwnd < 16. init leaves end_seq at snd_nxt = 0; an ACK moving snd_una to 2 with
        // cwnd 12 and snd_nxt 14 starts the round that ends at segment 14.
        let mut c = Cubic::new();
        let mut sk = CcSock::new(1448, 10, u32::MAX);
        c.init(&mut sk);
        sk.cwnd = 12;
        sk.snd_una = 2;
        sk.snd_nxt = 14;
        sk.now_ns = 50_000_000;
        c.pkts_acked(&mut sk, &AckSample { pkts_acked: 2, rtt_us: 50_000, in_flight: 10 });
        assert_eq!(c.end_seq, 14);
        assert_eq!(c.round_start_us, 50_000);
        // Neither exit test ran: no samples counted, no exit found.
        assert_eq!(c.sample_cnt, 0);
        assert!(!c.found);
        // From cwnd 16 on, samples count towards the delay test of the round.
        sk.cwnd = 16;
        sk.snd_una = 6;
        sk.now_ns = 51_000_000;
        c.pkts_acked(&mut sk, &AckSample { pkts_acked: 4, rtt_us: 50_000, in_flight: 10 });
        assert_eq!(c.end_seq, 14);
        assert_eq!(c.sample_cnt, 1);
    }

    /// Slow start at cwnd 100 with a 50 ms RTT, one ACK a millisecond, `gap_us` of silence
    /// before ACK number 10: the index of the ACK whose train test ends slow start, if any.
    fn train_exit_with_gap(gap_us: u64) -> Option<u64> {
        let mut c = Cubic::new();
        let mut sk = CcSock::new(1448, 10, u32::MAX);
        c.init(&mut sk);
        sk.cwnd = 100;
        sk.snd_nxt = 1000;
        let mut t_us = 100_000;
        for i in 0..45u64 {
            if i == 10 {
                t_us += gap_us.saturating_sub(1000);
            }
            sk.now_ns = t_us * 1000;
            sk.snd_una = i + 1;
            c.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 50_000, in_flight: 100 });
            if c.found {
                return Some(i);
            }
            t_us += 1000;
        }
        None
    }

    #[test]
    fn an_ack_gap_over_2ms_breaks_the_train_for_the_rest_of_its_round() {
        // hystart_update (Linux 6.18) extends the train only while each ACK comes within
        // hystart_ack_delta_us (2 ms) of the previous one; after a longer gap last_ack stays
        // behind, so the test cannot fire again before the next round resets it. The round
        // starts at ACK 0; unpaced, the train must outlast delay_min / 2 = 25 ms.
        assert_eq!(train_exit_with_gap(1000), Some(26));
        assert_eq!(train_exit_with_gap(2000), Some(25)); // a 2 ms gap is still within the train
        assert_eq!(train_exit_with_gap(2100), None); // 44 ms of later ACKs 1 ms apart do not revive it
    }

    fn c_k_seconds(wmax: f64, cwnd: f64) -> f64 {
        ((wmax - cwnd) / 0.4).cbrt()
    }
}
