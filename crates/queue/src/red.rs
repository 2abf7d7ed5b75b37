//! RED (Floyd & Jacobson 1993, with Floyd's 2000 "gentle" variant; Linux net/sched/sch_red.c and
//! include/net/red.h for the ECN, hard-drop and idle-time handling).
//!
//! At each arrival the average queue `avg` (bytes) is updated, avg ← (1 − W)·avg + W·backlog, or,
//! after an idle period, decayed as if `m` = idle time / (transmission time of an `avpkt`-byte
//! packet) empty-queue samples had been taken: avg ← (1 − W)^m · avg (the paper's rule; Linux
//! approximates it with a lookup table, red_calc_qavg_from_idle_time). Then:
//! * avg < min_th: accept;
//! * min_th ≤ avg < max_th: signal with p_b = max_p·(avg − min_th)/(max_th − min_th), spread
//!   uniformly with the count n since the last signal: p_a = p_b / (1 − n·p_b) (red_action,
//!   red_mark_probability: Linux's qR/qcount form of the same rule);
//! * gentle and max_th ≤ avg < 2·max_th: p_b = max_p + (1 − max_p)·(avg − max_th)/max_th;
//! * otherwise (hard mark): signal every packet.
//!
//! A signal marks an ECT packet when `ecn` is on (in the hard region too, unless `harddrop`),
//! as sch_red's red_enqueue; otherwise it drops. The byte `limit` is a tail drop.
//! Linux's sch_red has no gentle mode (ns-2 and FreeBSD dummynet do); here it is an option.
//! Arithmetic is floating point where Linux uses fixed point (Wlog, Plog).
use crate::rng::Rng;
use crate::stats::{Backlog, PktFifo, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedConfig {
    /// Tail-drop limit, bytes (tc red `limit`).
    pub limit_bytes: u64,
    /// Thresholds on the average queue, bytes.
    pub min_th: u64,
    pub max_th: u64,
    /// Signal probability at max_th.
    pub max_p: f64,
    /// EWMA weight W of the average queue.
    pub wq: f64,
    pub gentle: bool,
    pub ecn: bool,
    /// Drop (not mark) above max_th even with ECN (TC_RED_HARDDROP).
    pub harddrop: bool,
    /// Typical packet size, bytes (tc red `avpkt`), for the idle-time decay.
    pub avpkt: u32,
    /// Link rate, for the idle-time decay (tc red `bandwidth`).
    pub rate_bps: u64,
    pub seed: u64,
}

impl RedConfig {
    /// Defaults for a buffer of `limit_bytes` on a link of `rate_bps`: min_th = limit/10,
    /// max_th = 3·min_th (Floyd's rule of thumb max_th ≥ 2·min_th, "3 is good"), gentle on with
    /// max_p = 0.1 (Floyd 2000, "Recommendation on using the gentle variant of RED"; the gentle
    /// ramp then ends at 0.6·limit, before the tail drop), ECN off, avpkt 1500 (a full-size
    /// packet), W from tc's rule (tc_red_eval_ewma) with tc red's default burst
    /// (2·min_th + max_th)/(3·avpkt).
    pub fn for_buffer(limit_bytes: u64, rate_bps: u64) -> RedConfig {
        let avpkt = 1500u32;
        let min_th = (limit_bytes / 10).max(avpkt as u64);
        let max_th = 3 * min_th;
        let burst = ((2 * min_th + max_th) / (3 * avpkt as u64)).max(1);
        RedConfig {
            limit_bytes,
            min_th,
            max_th,
            max_p: 0.1,
            wq: ewma_weight(min_th, burst, avpkt),
            gentle: true,
            ecn: false,
            harddrop: false,
            avpkt,
            rate_bps,
            seed: 1,
        }
    }
}

/// tc's tc_red_eval_ewma: the largest W = 2^-k that still lets a burst of `burst` packets
/// through an empty queue without the average crossing min_th:
/// burst + 1 − min_th/avpkt ≤ (1 − (1 − W)^burst) / W.
pub fn ewma_weight(min_th: u64, burst: u64, avpkt: u32) -> f64 {
    let a = burst as f64 + 1.0 - min_th as f64 / avpkt as f64;
    let mut w: f64 = 0.5;
    for _ in 1..32 {
        if a <= (1.0 - (1.0 - w).powf(burst as f64)) / w {
            return w;
        }
        w /= 2.0;
    }
    w
}

#[derive(Debug, Clone)]
pub struct Red {
    pub cfg: RedConfig,
    fifo: PktFifo,
    avg: f64,
    /// Packets since the last signal (−1: none counted yet), as red.h's qcount.
    count: i64,
    /// Start of the current idle period (queue empty).
    idle_since: Option<Nanos>,
    rng: Rng,
}

enum Action {
    None,
    Prob,
    Hard,
}

impl Red {
    pub fn new(cfg: RedConfig) -> Self {
        assert!(cfg.max_th > cfg.min_th && cfg.wq > 0.0 && cfg.wq <= 1.0, "RED: min_th < max_th, 0 < W ≤ 1");
        Red { fifo: PktFifo::default(), avg: 0.0, count: -1, idle_since: Some(0), rng: Rng::new(cfg.seed), cfg }
    }

    /// Average queue, bytes.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// red_calc_qavg (+ the paper's idle-time rule).
    fn update_avg(&mut self, now: Nanos) {
        let w = self.cfg.wq;
        match self.idle_since.take() {
            Some(t) if self.cfg.rate_bps > 0 => {
                let pkt_time = self.cfg.avpkt as f64 * 8e9 / self.cfg.rate_bps as f64;
                let m = now.saturating_sub(t) as f64 / pkt_time;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg += w * (self.fifo.backlog.bytes as f64 - self.avg),
        }
    }

    /// red_action with the gentle region.
    fn action(&mut self) -> Action {
        let c = &self.cfg;
        let (min, max) = (c.min_th as f64, c.max_th as f64);
        let p_b = if self.avg < min {
            self.count = -1;
            return Action::None;
        } else if self.avg < max {
            c.max_p * (self.avg - min) / (max - min)
        } else if c.gentle && self.avg < 2.0 * max {
            c.max_p + (1.0 - c.max_p) * (self.avg - max) / max
        } else {
            self.count = -1;
            return Action::Hard;
        };
        self.count += 1;
        if self.count == 0 {
            // First packet in the region: no signal yet (red_action's `if (++qcount)`).
            return Action::None;
        }
        // Uniform spacing of signals: with n = count − 1 packets unsignalled since the last
        // signal, p_a = p_b / (1 − n·p_b), so the gap is uniform on 1..1/p_b.
        let denom = 1.0 - (self.count - 1) as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { p_b / denom };
        if self.rng.next_f64() < p_a {
            self.count = 0;
            Action::Prob
        } else {
            Action::None
        }
    }
}

impl Qdisc for Red {
    /// red_enqueue.
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        self.update_avg(now);
        let mut verdict = Verdict::Queued;
        match self.action() {
            Action::None => {}
            Action::Prob if self.cfg.ecn && pkt.set_ce() => verdict = Verdict::QueuedMarked,
            Action::Hard if self.cfg.ecn && !self.cfg.harddrop && pkt.set_ce() => verdict = Verdict::QueuedMarked,
            Action::Prob | Action::Hard => {
                self.fifo.stats.drops_aqm += 1;
                return Verdict::Dropped;
            }
        }
        if self.fifo.backlog.bytes + pkt.len as u64 > self.cfg.limit_bytes {
            self.fifo.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        if verdict == Verdict::QueuedMarked {
            self.fifo.stats.marks += 1;
        }
        self.fifo.push(now, pkt);
        verdict
    }

    /// red_dequeue: the queue going empty starts an idle period.
    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        let p = self.fifo.pop();
        if self.fifo.q.is_empty() && self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
        p
    }
    fn backlog(&self) -> Backlog {
        self.fifo.backlog
    }
    fn stats(&self) -> &QueueStats {
        &self.fifo.stats
    }
    fn take_dropped(&mut self, _out: &mut Vec<Pkt>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RedConfig {
        RedConfig {
            limit_bytes: 400_000,
            min_th: 30_000,
            max_th: 90_000,
            max_p: 0.1,
            wq: 1.0 / 64.0,
            gentle: false,
            ecn: false,
            harddrop: false,
            avpkt: 1500,
            rate_bps: 12_000_000,
            seed: 3,
        }
    }

    /// Hold the backlog at `level` bytes (1500-byte packets): fill it, then for each arrival
    /// that is queued serve one packet, so every arrival sees `level`. After 2000 arrivals (the
    /// average has converged: (1 − 1/64)^2000 ≈ 0), return (drops, marks) over `n` more.
    fn held(red: &mut Red, level: u64, n: u64, ect: bool) -> (u64, u64) {
        let mut t = 0;
        let mut id = 0;
        while red.backlog_bytes() < level {
            t += 1000;
            id += 1;
            red.enqueue(t, Pkt::new(id, 1500, 1).ect(ect));
        }
        let (mut drops, mut marks) = (0, 0);
        for i in 0..2000 + n {
            t += 1000;
            id += 1;
            let v = red.enqueue(t, Pkt::new(id, 1500, 1).ect(ect));
            if v != Verdict::Dropped {
                red.dequeue(t);
            }
            if i >= 2000 {
                drops += (v == Verdict::Dropped) as u64;
                marks += (v == Verdict::QueuedMarked) as u64;
            }
        }
        (drops, marks)
    }

    /// The signal fraction the uniformised rule gives for p_b: the gap between signals is
    /// uniform on 1..1/p_b, mean (1/p_b + 1)/2.
    fn uniformised(p_b: f64) -> f64 {
        2.0 * p_b / (1.0 + p_b)
    }

    #[test]
    fn no_drop_below_min_th() {
        let mut red = Red::new(cfg());
        assert_eq!(held(&mut red, 25_500, 20_000, false), (0, 0));
    }

    #[test]
    fn linear_between_thresholds() {
        // avg at 1/4 and 3/4 of the way from min_th to max_th: p_b = 0.025 and 0.075.
        for (level, p_b) in [(45_000, 0.025), (75_000, 0.075)] {
            let mut red = Red::new(cfg());
            let n = 40_000;
            let (drops, _) = held(&mut red, level, n, false);
            let f = drops as f64 / n as f64;
            let want = uniformised(p_b);
            assert!((f / want - 1.0).abs() < 0.1, "level {level}: fraction {f} want {want}");
        }
    }

    #[test]
    fn forced_above_max_th_without_gentle() {
        let mut red = Red::new(cfg());
        let n = 5000;
        assert_eq!(held(&mut red, 120_000, n, false).0, n, "avg > max_th: every arrival dropped");
    }

    #[test]
    fn gentle_ramps_to_twice_max_th() {
        // Gentle: at 1.5·max_th, p_b = 0.1 + 0.9·0.5 = 0.55 (not 1); from 2·max_th all dropped.
        let mut c = cfg();
        c.gentle = true;
        let n = 20_000;
        let mut red = Red::new(c);
        let f = held(&mut red, 135_000, n, false).0 as f64 / n as f64;
        assert!((f / uniformised(0.55) - 1.0).abs() < 0.1, "gentle fraction {f}");
        let mut red = Red::new(c);
        assert_eq!(held(&mut red, 181_500, n, false).0, n);
    }

    #[test]
    fn ecn_marks_ect_in_both_regions_unless_harddrop() {
        let mut c = cfg();
        c.ecn = true;
        let n = 20_000;
        let mut red = Red::new(c);
        let (d, m) = held(&mut red, 75_000, n, true);
        assert_eq!(d, 0, "ECT packets marked, not dropped");
        assert!((m as f64 / n as f64 / uniformised(0.075) - 1.0).abs() < 0.1, "marks {m}");
        // Above max_th: hard marks for ECT (sch_red without harddrop)…
        let mut red = Red::new(c);
        assert_eq!(held(&mut red, 120_000, 5000, true), (0, 5000));
        // …drops with harddrop, and drops for Not-ECT packets.
        c.harddrop = true;
        let mut red = Red::new(c);
        assert_eq!(held(&mut red, 120_000, 5000, true), (5000, 0));
        c.harddrop = false;
        let mut red = Red::new(c);
        assert_eq!(held(&mut red, 75_000, n, false).1, 0);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // After the queue empties, an arrival 1 s later sees the average decayed by
        // (1 − W)^(1 s / 1 ms per 1500-byte packet) ≈ 1.5e-7; one 1 µs later barely changes it.
        for (idle, expect_low) in [(1_000_000_000u64, true), (1_000, false)] {
            let mut red = Red::new(cfg());
            held(&mut red, 75_000, 1000, false);
            let before = red.avg();
            let mut t = 100_000_000_000;
            while red.dequeue(t).is_some() {}
            t += idle;
            red.enqueue(t, Pkt::new(0, 1500, 1));
            let ratio = red.avg() / before;
            assert_eq!(ratio < 0.01, expect_low, "idle {idle} ns: avg ratio {ratio}");
            assert!(ratio <= 1.0);
        }
    }

    #[test]
    fn defaults_for_a_buffer() {
        // 1 BDP at 10 Mbit/s × 100 ms = 125 kB.
        let c = RedConfig::for_buffer(125_000, 10_000_000);
        assert_eq!((c.min_th, c.max_th), (12_500, 37_500));
        assert!(2 * c.max_th < c.limit_bytes, "the gentle ramp ends before the tail drop");
        // burst = (25 000 + 37 500)/4500 = 13; a = 14 − 8.33 = 5.67; W = 1/8 is the first
        // power of two with (1 − (1 − W)^13)/W = 6.59 ≥ 5.67.
        assert_eq!(c.wq, 0.125);
    }
}
