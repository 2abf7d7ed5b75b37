//! PIE (RFC 8033; Linux net/sched/sch_pie.c + include/net/pie.h): a drop probability,
//! updated every `tupdate` from the queueing delay's distance to `target` and its trend, decides
//! at enqueue whether to drop (or, for ECT packets while the probability is at most 10 %, mark).
//!
//! Followed from Linux 6.x: the probability in fixed point (`MAX_PROB` = 2⁵⁶ − 1) with alpha
//! and beta in units of 1/16 (2 and 20: 0.125 and 1.25), auto-tuned by the probability's decade
//! (pie_calculate_probability), the 2 % step cap above 10 %, +2 % when the delay exceeds
//! 250 ms, decay by 1/64 when the delay has been 0 for two updates, the restart of the
//! measurement (and of the 150 ms burst allowance) when the queue has been calm, the
//! de-randomisation with `accu_prob` (pie_drop_early), no early drop below two MTUs of backlog
//! or while delay < target/2 with probability < 20 %. Queue delay comes from enqueue
//! timestamps (Linux's default, `dq_rate_estimator` off) or, if enabled, from the departure-rate
//! estimate (Little's law).
//!
//! Timer: Linux runs pie_calculate_probability from a timer every `tupdate` (first 500 ms after
//! creation). Here the updates due are run at the next enqueue/dequeue, with the backlog that
//! held in between (it cannot change between two calls), which gives the same result. Times are
//! nanoseconds (Linux: 64 ns psched ticks and jiffies).
use crate::rng::Rng;
use crate::stats::{Backlog, PktFifo, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};

const MS: Nanos = 1_000_000;
const NS_PER_SEC: u64 = 1_000_000_000;
/// pie.h MAX_PROB: probability 1 in fixed point.
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// pie.h QUEUE_THRESHOLD: bytes of backlog needed to measure the departure rate.
const QUEUE_THRESHOLD: u64 = 16384;
/// pie_init arms the first update HZ/2 after the qdisc is created.
const FIRST_UPDATE_DELAY: Nanos = 500 * MS;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieConfig {
    /// pie_params_init: 15 ms.
    pub target_ns: Nanos,
    /// pie_params_init: 15 ms.
    pub tupdate_ns: Nanos,
    /// pie_params_init: 1000 packets.
    pub limit_packets: u64,
    /// In units of 1/16: 2 = 0.125 (RFC 8033 §4.2).
    pub alpha: u32,
    /// In units of 1/16: 20 = 1.25.
    pub beta: u32,
    /// Mark ECT packets instead of dropping while the probability is ≤ 10 % (off in Linux).
    pub ecn: bool,
    /// Scale the probability by packet size / MTU.
    pub bytemode: bool,
    /// Queue delay from the departure rate (Little's law) instead of timestamps (off in Linux).
    pub dq_rate_estimator: bool,
    /// Burst allowance after a calm period: 150 ms (pie_vars_init, RFC 8033 MAX_BURST).
    pub max_burst_ns: Nanos,
    /// psched_mtu: 1514.
    pub mtu: u32,
    /// Seed of the drop decisions.
    pub seed: u64,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target_ns: 15 * MS,
            tupdate_ns: 15 * MS,
            limit_packets: 1000,
            alpha: 2,
            beta: 20,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
            max_burst_ns: 150 * MS,
            mtu: 1514,
            seed: 1,
        }
    }
}

/// struct pie_vars.
#[derive(Debug, Clone, Copy)]
struct Vars {
    qdelay: Nanos,
    qdelay_old: Nanos,
    burst_time: Nanos,
    dq_tstamp: Option<Nanos>,
    prob: u64,
    accu_prob: u64,
    dq_count: Option<u64>,
    /// Departure rate, bytes per ns (EWMA 1/8); 0 = not measured yet.
    avg_dq_rate: f64,
}

#[derive(Debug, Clone)]
pub struct Pie {
    pub cfg: PieConfig,
    fifo: PktFifo,
    v: Vars,
    next_update: Nanos,
    rng: Rng,
}

impl Pie {
    /// A PIE queue created at `now` (its first probability update is 500 ms later).
    pub fn new(cfg: PieConfig, now: Nanos) -> Self {
        let mut p = Pie {
            cfg,
            fifo: PktFifo::default(),
            v: Vars {
                qdelay: 0,
                qdelay_old: 0,
                burst_time: 0,
                dq_tstamp: None,
                prob: 0,
                accu_prob: 0,
                dq_count: None,
                avg_dq_rate: 0.0,
            },
            next_update: now + FIRST_UPDATE_DELAY,
            rng: Rng::new(cfg.seed),
        };
        p.vars_init();
        p
    }

    /// Current drop probability, 0..=1 (may exceed 1 briefly, as in Linux).
    pub fn prob(&self) -> f64 {
        self.v.prob as f64 / MAX_PROB as f64
    }
    /// Remaining burst allowance.
    pub fn burst_time(&self) -> Nanos {
        self.v.burst_time
    }
    /// Current queue-delay estimate.
    pub fn qdelay(&self) -> Nanos {
        self.v.qdelay
    }

    /// pie_vars_init (prob and the delays are kept).
    fn vars_init(&mut self) {
        self.v.burst_time = self.cfg.max_burst_ns;
        self.v.dq_tstamp = None;
        self.v.accu_prob = 0;
        self.v.dq_count = None;
        self.v.avg_dq_rate = 0.0;
    }

    /// Run the probability updates due by `now` (Linux's pie_timer).
    fn run_timers(&mut self, now: Nanos) {
        if self.cfg.tupdate_ns == 0 {
            return;
        }
        while now >= self.next_update {
            self.calculate_probability();
            self.next_update += self.cfg.tupdate_ns;
        }
    }

    /// pie_calculate_probability.
    fn calculate_probability(&mut self) {
        let c = self.cfg;
        let backlog = self.fifo.backlog.bytes;
        let (qdelay, qdelay_old) = if c.dq_rate_estimator {
            let old = self.v.qdelay;
            self.v.qdelay_old = old;
            let d = if self.v.avg_dq_rate > 0.0 { (backlog as f64 / self.v.avg_dq_rate) as Nanos } else { 0 };
            (d, old)
        } else {
            (self.v.qdelay, self.v.qdelay_old)
        };
        // A zero delay with a non-empty queue: too small to tell; no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        // alpha and beta per ns of delay, in probability units, scaled down by 16.
        let mut alpha = (c.alpha as u64 * (MAX_PROB / NS_PER_SEC)) >> 4;
        let mut beta = (c.beta as u64 * (MAX_PROB / NS_PER_SEC)) >> 4;
        // Auto-tuning (RFC 8033 §5.2): gentler steps while the probability is small.
        if self.v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while self.v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        let mut delta: i128 = alpha as i128 * (qdelay as i128 - c.target_ns as i128)
            + beta as i128 * (qdelay as i128 - qdelay_old as i128);
        // Steps of at most 2 % once the probability is above 10 %.
        if delta > (MAX_PROB / 50) as i128 && self.v.prob >= MAX_PROB / 10 {
            delta = (MAX_PROB / 100 * 2) as i128;
        }
        // Delay above 250 ms: +2 % per update regardless.
        if qdelay > 250 * MS {
            delta += (MAX_PROB / 50) as i128;
        }
        let p = self.v.prob as i128 + delta;
        if p > u64::MAX as i128 {
            self.v.prob = MAX_PROB;
            update_prob = false;
        } else if p < 0 {
            self.v.prob = 0;
        } else {
            self.v.prob = p as u64;
        }
        // Delay 0 for two updates: decay fast (to 98.4 %).
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.v.prob -= self.v.prob / 64;
        }
        self.v.qdelay = qdelay;
        // Calm for two updates and nothing left to drop: restart (re-arms the burst allowance).
        if self.v.qdelay < c.target_ns / 2
            && self.v.qdelay_old < c.target_ns / 2
            && self.v.prob == 0
            && (!c.dq_rate_estimator || self.v.avg_dq_rate > 0.0)
        {
            self.vars_init();
        }
        if !c.dq_rate_estimator {
            self.v.qdelay_old = qdelay;
        }
    }

    /// pie_drop_early: should the arriving packet get the congestion signal?
    fn drop_early(&mut self, len: u32) -> bool {
        let c = self.cfg;
        if self.v.burst_time > 0 {
            return false;
        }
        if self.v.qdelay < c.target_ns / 2 && self.v.prob < MAX_PROB / 5 {
            return false;
        }
        if self.fifo.backlog.bytes < 2 * c.mtu as u64 {
            return false;
        }
        let local_prob =
            if c.bytemode && len <= c.mtu { len as u64 * (self.v.prob / c.mtu as u64) } else { self.v.prob };
        if local_prob == 0 {
            self.v.accu_prob = 0;
        } else {
            self.v.accu_prob = self.v.accu_prob.saturating_add(local_prob);
        }
        // De-randomisation (RFC 8033 §5.1): never before 0.85, always from 8.5.
        if self.v.accu_prob < MAX_PROB / 100 * 85 {
            return false;
        }
        if self.v.accu_prob >= MAX_PROB / 2 * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            self.v.accu_prob = 0;
            return true;
        }
        false
    }

    /// pie_process_dequeue: queue delay (or departure rate) and the burst allowance.
    fn process_dequeue(&mut self, now: Nanos, pkt: &Pkt) {
        let backlog = self.fifo.backlog.bytes;
        let dtime;
        if !self.cfg.dq_rate_estimator {
            self.v.qdelay = if backlog == 0 { 0 } else { now - pkt.enq_ns };
            dtime = self.v.dq_tstamp.map_or(0, |t| now - t);
            self.v.dq_tstamp = Some(now);
            if dtime == 0 {
                return;
            }
        } else {
            if backlog >= QUEUE_THRESHOLD && self.v.dq_count.is_none() {
                self.v.dq_tstamp = Some(now);
                self.v.dq_count = Some(0);
            }
            let Some(count) = self.v.dq_count else { return };
            let count = count + pkt.len as u64;
            self.v.dq_count = Some(count);
            if count < QUEUE_THRESHOLD {
                return;
            }
            dtime = now - self.v.dq_tstamp.unwrap_or(now);
            if dtime == 0 {
                return;
            }
            let rate = count as f64 / dtime as f64;
            self.v.avg_dq_rate =
                if self.v.avg_dq_rate == 0.0 { rate } else { self.v.avg_dq_rate * 7.0 / 8.0 + rate / 8.0 };
            if backlog < QUEUE_THRESHOLD {
                self.v.dq_count = None;
            } else {
                self.v.dq_count = Some(0);
                self.v.dq_tstamp = Some(now);
            }
        }
        self.v.burst_time = self.v.burst_time.saturating_sub(dtime);
    }
}

impl Qdisc for Pie {
    /// pie_qdisc_enqueue.
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        self.run_timers(now);
        if self.fifo.backlog.packets >= self.cfg.limit_packets {
            self.fifo.stats.drops_overlimit += 1;
            self.v.accu_prob = 0;
            return Verdict::Dropped;
        }
        let mut verdict = Verdict::Queued;
        if self.drop_early(pkt.len) {
            if self.cfg.ecn && self.v.prob <= MAX_PROB / 10 && pkt.set_ce() {
                self.fifo.stats.marks += 1;
                verdict = Verdict::QueuedMarked;
            } else {
                self.fifo.stats.drops_aqm += 1;
                self.v.accu_prob = 0;
                return Verdict::Dropped;
            }
        }
        self.fifo.push(now, pkt);
        verdict
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        self.run_timers(now);
        let p = self.fifo.pop()?;
        self.process_dequeue(now, &p);
        Some(p)
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

    const T0: Nanos = 1_000_000_000;

    /// A 1-packet-per-ms link (12 Mbit/s of 1500-byte packets), PIE created at 0.
    struct Harness {
        q: Pie,
        id: u64,
        ect: bool,
        /// (time, prob) of each early drop and each mark.
        drops: Vec<(Nanos, f64)>,
        marks: Vec<(Nanos, f64)>,
    }

    impl Harness {
        fn new(cfg: PieConfig, ect: bool) -> Harness {
            Harness { q: Pie::new(cfg, 0), id: 0, ect, drops: vec![], marks: vec![] }
        }
        fn arrive(&mut self, t: Nanos) -> Verdict {
            self.id += 1;
            let before = self.q.stats().drops_aqm;
            let v = self.q.enqueue(t, Pkt::new(self.id, 1500, 1).ect(self.ect));
            let prob = self.q.prob();
            if self.q.stats().drops_aqm > before {
                self.drops.push((t, prob));
            }
            if v == Verdict::QueuedMarked {
                self.marks.push((t, prob));
            }
            v
        }
        /// `standing` packets queued one per ms before `t0`.
        fn prefill(&mut self, t0: Nanos, standing: u64) {
            for i in 0..standing {
                self.arrive(t0 - (standing - i) * MS);
            }
        }
        /// Each ms: one arrival (or, `hold` = Some(n), arrivals until n are queued), one departure.
        fn run(&mut self, from: Nanos, ms: u64, hold: Option<u64>) {
            for k in 0..ms {
                let t = from + k * MS;
                match hold {
                    None => {
                        self.arrive(t);
                    }
                    Some(n) => {
                        for _ in 0..20 {
                            if self.q.backlog_packets() > n {
                                break;
                            }
                            self.arrive(t);
                        }
                    }
                }
                self.q.dequeue(t);
            }
        }
    }

    #[test]
    fn probability_rises_above_target_and_decays_when_empty() {
        // Queue held at 30 packets = 30 ms of delay, twice the 15 ms target: every update adds
        // alpha·(30 − 15 ms) > 0, so the probability grows at each sample. Then arrivals stop:
        // the queue drains, the delay reads 0, and the probability falls (alpha·(0 − target)
        // and the 1/64 decay) to under half within a second.
        let mut h = Harness::new(PieConfig::default(), false);
        h.prefill(T0, 30);
        let mut samples = vec![];
        for s in 0..30 {
            h.run(T0 + s * 100 * MS, 100, Some(30));
            samples.push(h.q.prob());
        }
        assert!(samples.windows(2).all(|w| w[1] > w[0]), "not rising: {samples:?}");
        let at_stop = *samples.last().unwrap();
        assert!(at_stop > 0.01, "prob after 3 s at 2× target: {at_stop}");
        let t1 = T0 + 3000 * MS;
        let mut idle = vec![];
        for s in 0..10 {
            for k in 0..100 {
                h.q.dequeue(t1 + (s * 100 + k) * MS);
            }
            idle.push(h.q.prob());
        }
        assert_eq!(h.q.backlog_packets(), 0);
        assert!(idle.windows(2).all(|w| w[1] < w[0] || w[1] == 0.0), "not decaying: {idle:?}");
        assert!(idle[9] < at_stop / 2.0, "{at_stop} → {idle:?}");
    }

    #[test]
    fn burst_allowance_lets_the_first_150ms_through() {
        // A 300 ms standing queue from T0 (above the 250 ms bound: +2 %/update at least), so
        // the probability is well above 0 within a few updates. With the default 150 ms burst
        // allowance (counted down by dequeues from T0) no early drop happens before T0 + 150 ms;
        // with no allowance the first drop comes earlier.
        for (burst, expect_before) in [(150 * MS, false), (0, true)] {
            let mut h = Harness::new(PieConfig { max_burst_ns: burst, ..Default::default() }, false);
            h.prefill(T0, 300);
            h.run(T0, 1000, None);
            let first = h.drops.first().expect("drops under a 300 ms queue").0;
            assert_eq!(
                first < T0 + 150 * MS,
                expect_before,
                "burst {burst}: first drop at T0+{} ms",
                (first - T0) / MS
            );
        }
    }

    #[test]
    fn allowance_rearmed_after_calm() {
        // After congestion, a long calm period brings the probability to 0 and restarts PIE
        // (pie_vars_init): the burst allowance is 150 ms again.
        let mut h = Harness::new(PieConfig::default(), false);
        h.prefill(T0, 300);
        h.run(T0, 1000, None);
        assert_eq!(h.q.burst_time(), 0);
        for k in 0..20_000 {
            h.q.dequeue(T0 + 1000 * MS + k * MS);
        }
        assert_eq!(h.q.prob(), 0.0);
        assert_eq!(h.q.burst_time(), 150 * MS);
    }

    #[test]
    fn ecn_marks_only_while_probability_at_most_10_percent() {
        let cfg = PieConfig { ecn: true, ..Default::default() };
        let mut h = Harness::new(cfg, true);
        h.prefill(T0, 30);
        h.run(T0, 6000, Some(30));
        assert!(!h.marks.is_empty(), "no marks");
        assert!(h.marks.iter().all(|&(_, p)| p <= 0.1 + 1e-12), "mark above 10 %");
        assert!(!h.drops.is_empty(), "probability passed 10 %: ECT packets are dropped then");
        assert!(h.drops.iter().all(|&(_, p)| p > 0.1), "ECT drop at ≤ 10 %");
    }

    #[test]
    fn limit_is_tail_drop() {
        let mut q = Pie::new(PieConfig { limit_packets: 5, ..Default::default() }, 0);
        let v: Vec<Verdict> = (0..6).map(|i| q.enqueue(0, Pkt::new(i, 1500, 1))).collect();
        assert_eq!(v[5], Verdict::Dropped);
        assert_eq!(q.stats().drops_overlimit, 1);
    }

    #[test]
    fn rate_estimator_measures_the_departure_rate() {
        // With dq_rate_estimator, qdelay = backlog / departure rate. 30 packets held, served at
        // 1500 B/ms: the estimate must come out near 30 ms.
        let cfg = PieConfig { dq_rate_estimator: true, ..Default::default() };
        let mut h = Harness::new(cfg, false);
        h.prefill(T0, 30);
        h.run(T0, 1000, Some(30));
        let d = h.q.qdelay() as f64 / 1e6;
        assert!((d - 30.0).abs() < 3.0, "qdelay {d} ms");
    }
}
