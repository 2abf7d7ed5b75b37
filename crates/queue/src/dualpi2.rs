//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332; Linux 6.18 net/sched/sch_dualpi2.c,
//! mainline since 6.17). Two FIFOs share one limit:
//!
//! * **Classification** (`dualpi2_skb_classify` with the default `ecn_mask` = ECT(1)): a
//!   packet whose ECN field is ECT(1) or CE goes to the L queue, every other one to the C
//!   (classic) queue. The tc-filter and skb->priority classes are not modelled.
//! * **Coupled signal** (`must_drop`, `dualpi2_classic_marking`, `dualpi2_scalable_marking`):
//!   nothing is signalled while the whole qdisc holds less than 2 MTU. A classic packet gets
//!   the signal with probability p'² (two rolls of p'): CE if it is ECT, else dropped. An L4S
//!   packet is marked with probability k·p'. Overload, k·p' > 1: an L4S packet is dropped with
//!   probability p'² and marked otherwise (`drop_overload`, the default; without it p' is
//!   capped at 1/k and every L4S packet is marked), a classic ECT packet is dropped instead of
//!   marked. By default the decision is taken at dequeue (`drop_early` off).
//! * **Native L4S step** (`do_step_aqm`, at dequeue): an L-queue packet whose sojourn time
//!   exceeds `step_thresh` (1 ms; or, in packets, when the L queue still holds more than that
//!   many) is CE-marked, or dropped if Not-ECT; only packets that found at least
//!   `min_qlen_step` packets in the L queue at enqueue are subject to it.
//! * **Scheduler** (`dequeue_packet`): a weighted round robin in bytes with `c_protection`
//!   = wc % for the C queue (10 %; wl = 100 − wc). The credit starts at MTU·(wc − wl)
//!   (negative: the L queue first); serving L while C waits adds wc·len, serving C while L
//!   waits subtracts wl·len; L is served while the credit is ≤ 0 or C is empty; both queues
//!   empty reset it.
//! * **Limits** (`dualpi2_enqueue_skb`): tail drop at `limit` packets (10 000) or when the
//!   packets' memory would exceed `memory_limit` (limit · 2 · MTU); memory per packet is
//!   `len + SKB_OVERHEAD` as in fq_codel.rs, for the kernel's truesize.
//!
//! The PI update runs lazily (see pi2.rs and the PIE note in lib.rs): the updates due are run
//! at the next enqueue/dequeue with the head timestamps that held then. GSO splitting is
//! irrelevant here (every packet is one segment).
use crate::fq_codel::SKB_OVERHEAD;
use crate::pi2::{Pi2, MAX_PROB};
use crate::rng::Rng;
use crate::stats::{Backlog, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};
use std::collections::VecDeque;

const MS: Nanos = 1_000_000;
/// MAX_WC: the scheduler weights are percentages.
pub const MAX_WC: u8 = 100;

/// The native L4S step threshold: sojourn time or L-queue length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepThresh {
    Time(Nanos),
    Packets(u64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualPi2Config {
    /// PI2 target delay: 15 ms (`dualpi2_reset_default`).
    pub target_ns: Nanos,
    /// PI2 update period: 16 ms.
    pub tupdate_ns: Nanos,
    /// Integral gain in 1/256 Hz: 41 (≈ 0.16 Hz).
    pub alpha: u32,
    /// Proportional gain in 1/256 Hz: 819 (≈ 3.2 Hz).
    pub beta: u32,
    /// L-queue step threshold: 1 ms of sojourn.
    pub step_thresh: StepThresh,
    /// The step applies to packets that found at least this many in the L queue: 0.
    pub min_qlen_step: u64,
    /// k: 2 (window fairness with Reno-friendly classic flows at equal RTTs).
    pub coupling: u8,
    /// wc, the C queue's scheduler weight in %: 10.
    pub c_protection: u8,
    /// Tail-drop limit: 10 000 packets.
    pub limit_packets: u64,
    /// Memory limit, bytes: limit · 2 · MTU.
    pub memory_limit: u64,
    /// Drop L4S packets with p'² on overload (else only mark, capping p' at 1/k): on.
    pub drop_overload: bool,
    /// Take the AQM decision at enqueue instead of dequeue: off.
    pub drop_early: bool,
    /// psched_mtu: 1514.
    pub mtu: u32,
    /// Seed of the random rolls.
    pub seed: u64,
}

impl DualPi2Config {
    pub const DEFAULT_LIMIT_PACKETS: u64 = 10_000;

    /// `get_memory_limit`: limit · 2 · MTU.
    pub fn memory_limit_for(limit_packets: u64, mtu: u32) -> u64 {
        limit_packets.saturating_mul(2 * mtu as u64).min(u32::MAX as u64)
    }
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            target_ns: 15 * MS,
            tupdate_ns: 16 * MS,
            alpha: 41,
            beta: 819,
            step_thresh: StepThresh::Time(MS),
            min_qlen_step: 0,
            coupling: 2,
            c_protection: 10,
            limit_packets: Self::DEFAULT_LIMIT_PACKETS,
            memory_limit: Self::memory_limit_for(Self::DEFAULT_LIMIT_PACKETS, 1514),
            drop_overload: true,
            drop_early: false,
            mtu: 1514,
            seed: 1,
        }
    }
}

/// What the coupled AQM decided for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Pass,
    Marked,
    Drop,
}

/// Counters beyond [`QueueStats`] (`tc -s qdisc show` of dualpi2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DualPi2Counters {
    /// Packets queued in the L queue / the C queue (`packets_in_l`, `packets_in_c`).
    pub packets_in_l: u64,
    pub packets_in_c: u64,
    /// CE marks from the step (`step_marks`); `QueueStats::marks` counts every mark.
    pub step_marks: u64,
}

/// The DualPI2 queue (see the module doc).
#[derive(Debug, Clone)]
pub struct DualPi2 {
    pub cfg: DualPi2Config,
    /// L queue: packets with `apply_step`.
    l: VecDeque<(Pkt, bool)>,
    c: VecDeque<Pkt>,
    backlog: Backlog,
    memory_used: u64,
    stats: QueueStats,
    pub counters: DualPi2Counters,
    pi2: Pi2,
    /// WRR credit (`c_protection_credit`): ≤ 0 serves L first.
    credit: i64,
    rng: Rng,
    dropped: Vec<Pkt>,
}

fn truesize(p: &Pkt) -> u64 {
    (p.len + SKB_OVERHEAD) as u64
}

impl DualPi2 {
    /// A DualPI2 queue created at `now` (its first PI update is `tupdate` later).
    pub fn new(cfg: DualPi2Config, now: Nanos) -> Self {
        let pi2 = Pi2::new(cfg.target_ns, cfg.tupdate_ns, cfg.alpha, cfg.beta, cfg.coupling, cfg.drop_overload, now);
        DualPi2 {
            cfg,
            l: VecDeque::new(),
            c: VecDeque::new(),
            backlog: Backlog::default(),
            memory_used: 0,
            stats: QueueStats::default(),
            counters: DualPi2Counters::default(),
            pi2,
            credit: Self::credit_init(&cfg),
            rng: Rng::new(cfg.seed),
            dropped: Vec::new(),
        }
    }

    /// `dualpi2_calculate_c_protection`: MTU · (wc − wl).
    fn credit_init(cfg: &DualPi2Config) -> i64 {
        let wc = cfg.c_protection.min(MAX_WC) as i64;
        cfg.mtu as i64 * (wc - (MAX_WC as i64 - wc))
    }

    /// The base probability p' (the classic queue's is p'², the L queue's k·p').
    pub fn base_prob(&self) -> f64 {
        self.pi2.prob_f64()
    }

    /// Packets held in the L queue and the C queue.
    pub fn lengths(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// Run the PI updates due by `now` (`dualpi2_timer`), each with the head sojourn times of
    /// that instant (`get_queue_delays`: the larger of the two queues').
    fn run_timers(&mut self, now: Nanos) {
        while now >= self.pi2.next_update() {
            let t = self.pi2.next_update();
            let head = |ts: Option<Nanos>| ts.map_or(0, |e| t.saturating_sub(e));
            let qdelay = head(self.l.front().map(|(p, _)| p.enq_ns)).max(head(self.c.front().map(|p| p.enq_ns)));
            self.pi2.update(qdelay);
            self.pi2.advance_timer();
        }
    }

    /// `dualpi2_roll`: true with probability `prob` / MAX_PROB.
    fn roll(&mut self, prob: u64) -> bool {
        (self.rng.next_u64() >> 32) <= prob
    }

    /// `must_drop`: the coupled signal for `pkt` (CE set on it when marked).
    fn coupled_signal(&mut self, pkt: &mut Pkt, l4s: bool) -> Signal {
        if self.backlog.bytes < 2 * self.cfg.mtu as u64 {
            return Signal::Pass;
        }
        let prob = self.pi2.prob as u64;
        let l_prob = prob * self.cfg.coupling as u64;
        let overload = l_prob > MAX_PROB as u64;
        if !l4s {
            // dualpi2_classic_marking: p'² by two rolls.
            if self.roll(prob) && self.roll(prob) {
                if overload || !pkt.ect {
                    return Signal::Drop;
                }
                return self.mark(pkt);
            }
            return Signal::Pass;
        }
        // dualpi2_scalable_marking.
        if overload {
            if self.cfg.drop_overload && self.roll(prob) && self.roll(prob) {
                return Signal::Drop;
            }
            return self.mark(pkt);
        }
        if self.roll(l_prob) {
            if !pkt.ect {
                return Signal::Drop;
            }
            return self.mark(pkt);
        }
        Signal::Pass
    }

    /// `dualpi2_mark`: CE on an ECT packet; counted when newly set.
    fn mark(&mut self, pkt: &mut Pkt) -> Signal {
        let was_ce = pkt.ce;
        if !pkt.set_ce() {
            return Signal::Pass;
        }
        if !was_ce {
            self.stats.marks += 1;
        }
        Signal::Marked
    }

    /// `dequeue_packet`: the WRR choice. The packet, the credit change to apply if it is sent,
    /// and for an L-queue packet its `apply_step` flag (None: from the C queue).
    fn pick(&mut self) -> Option<(Pkt, i64, Option<bool>)> {
        let wc = self.cfg.c_protection.min(MAX_WC) as i64;
        let wl = MAX_WC as i64 - wc;
        let (pkt, change, step) = if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
            let (p, apply_step) = self.l.pop_front().expect("non-empty");
            (p, if self.c.is_empty() { 0 } else { wc }, Some(apply_step))
        } else if let Some(p) = self.c.pop_front() {
            (p, if self.l.is_empty() { 0 } else { -wl }, None)
        } else {
            self.credit = Self::credit_init(&self.cfg);
            return None;
        };
        self.backlog.remove(pkt.len);
        self.memory_used -= truesize(&pkt);
        Some((pkt, change * pkt.len as i64, step))
    }

    /// `do_step_aqm`: is the L-queue packet over the step (sojourn, or L-queue length left)?
    fn over_step(&self, now: Nanos, pkt: &Pkt) -> bool {
        match self.cfg.step_thresh {
            StepThresh::Time(t) => now.saturating_sub(pkt.enq_ns) > t,
            StepThresh::Packets(n) => self.l.len() as u64 > n,
        }
    }
}

impl Qdisc for DualPi2 {
    /// `dualpi2_qdisc_enqueue` → `dualpi2_enqueue_skb`.
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        self.run_timers(now);
        let l4s = pkt.l4s;
        if self.backlog.packets >= self.cfg.limit_packets || self.memory_used + truesize(&pkt) > self.cfg.memory_limit {
            self.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        let mut verdict = Verdict::Queued;
        if self.cfg.drop_early {
            match self.coupled_signal(&mut pkt, l4s) {
                Signal::Drop => {
                    self.stats.drops_aqm += 1;
                    return Verdict::Dropped;
                }
                Signal::Marked => verdict = Verdict::QueuedMarked,
                Signal::Pass => {}
            }
        }
        pkt.enq_ns = now;
        self.memory_used += truesize(&pkt);
        self.backlog.add(pkt.len, &mut self.stats);
        self.stats.enqueued += 1;
        if l4s {
            let apply_step = self.l.len() as u64 >= self.cfg.min_qlen_step;
            self.counters.packets_in_l += 1;
            self.l.push_back((pkt, apply_step));
        } else {
            self.counters.packets_in_c += 1;
            self.c.push_back(pkt);
        }
        verdict
    }

    /// `__dualpi2_qdisc_dequeue`: pick, then the coupled AQM (unless it ran at enqueue), then
    /// the step for L-queue packets; a dropped packet is set aside and the next one picked.
    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        self.run_timers(now);
        while let Some((mut pkt, credit_change, step)) = self.pick() {
            self.stats.dequeued += 1;
            let l4s = pkt.l4s;
            if !self.cfg.drop_early && self.coupled_signal(&mut pkt, l4s) == Signal::Drop {
                self.stats.drops_aqm += 1;
                self.dropped.push(pkt);
                continue;
            }
            if step == Some(true) && self.over_step(now, &pkt) {
                if !pkt.ect {
                    self.stats.drops_aqm += 1;
                    self.dropped.push(pkt);
                    continue;
                }
                self.counters.step_marks += 1;
                self.mark(&mut pkt);
            }
            self.credit += credit_change;
            return Some(pkt);
        }
        None
    }

    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn take_dropped(&mut self, out: &mut Vec<Pkt>) {
        out.append(&mut self.dropped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ECN field as (ect, l4s): Not-ECT, ECT(0), ECT(1); CE is ECT + CE + l4s.
    const NOT_ECT: (bool, bool) = (false, false);
    const ECT0: (bool, bool) = (true, false);
    const ECT1: (bool, bool) = (true, true);

    fn pkt(id: u64, (ect, l4s): (bool, bool)) -> Pkt {
        Pkt::new(id, 1500, 1).ect(ect).l4s(l4s)
    }

    fn with_prob(cfg: DualPi2Config, p: f64) -> DualPi2 {
        let mut q = DualPi2::new(cfg, 0);
        q.pi2.prob = (p * MAX_PROB as f64) as u32;
        q
    }

    /// Offer `n` packets of one codepoint at t = 0 and drain them at t = 0 (no PI update is due
    /// before 16 ms, no sojourn exceeds the step): (marked, dropped) among the first n − 3
    /// departures (the last ones leave a backlog under 2 MTU, where nothing is signalled).
    fn drain_signals(q: &mut DualPi2, n: u64, cp: (bool, bool)) -> (u64, u64) {
        for i in 0..n {
            assert_ne!(q.enqueue(0, pkt(i, cp)), Verdict::Dropped);
        }
        let (mut marked, mut dropped_before) = (0, 0);
        let mut out = vec![];
        let mut seen = 0;
        while let Some(p) = q.dequeue(0) {
            q.take_dropped(&mut out);
            dropped_before += out.drain(..).count() as u64;
            seen = p.id;
            if p.id < n - 3 {
                marked += p.ce as u64;
            }
        }
        assert!(seen >= n - 3);
        (marked, dropped_before)
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_the_rest_to_the_c_queue() {
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        let mut ce = pkt(3, ECT1);
        ce.ce = true;
        for p in [pkt(0, NOT_ECT), pkt(1, ECT0), pkt(2, ECT1), ce] {
            q.enqueue(0, p);
        }
        assert_eq!(q.lengths(), (2, 2));
        assert_eq!((q.counters.packets_in_l, q.counters.packets_in_c), (2, 2));
    }

    #[test]
    fn step_marks_l_packets_that_waited_more_than_1ms_at_dequeue() {
        // 1 packet per 0.5 ms in, served from t = 2 ms one per 0.25 ms: the k-th packet (in at
        // 0.5·k ms, out at 2 + 0.25·k ms) has waited 2 − 0.25·k ms, more than 1 ms for k < 4.
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        for k in 0..8u64 {
            q.enqueue(k * MS / 2, pkt(k, ECT1));
        }
        let mut ce = vec![];
        for k in 0..8u64 {
            ce.push(q.dequeue(2 * MS + k * MS / 4).expect("held").ce);
        }
        assert_eq!(ce, vec![true, true, true, true, false, false, false, false]);
        assert_eq!((q.counters.step_marks, q.stats().marks), (4, 4));
        // The C queue has no step: a classic packet that waited 10 ms is not marked (p' = 0).
        q.enqueue(4 * MS, pkt(9, ECT0));
        assert!(!q.dequeue(14 * MS).expect("held").ce);
    }

    #[test]
    fn step_in_packets_and_not_ect_l_packets_are_dropped_over_the_step() {
        // Step at 2 packets: a departure leaving more than 2 behind in the L queue is marked.
        let cfg = DualPi2Config { step_thresh: StepThresh::Packets(2), ..Default::default() };
        let mut q = DualPi2::new(cfg, 0);
        for k in 0..5 {
            q.enqueue(0, pkt(k, ECT1));
        }
        let ce: Vec<bool> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.ce).collect();
        assert_eq!(ce, vec![true, true, false, false, false], "4 and 3 left behind, then 2, 1, 0");
        // A Not-ECT packet classified to L (as a tc filter may) is dropped where it would be marked.
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        q.enqueue(0, pkt(1, (false, true)));
        assert!(q.dequeue(5 * MS).is_none());
        let mut out = vec![];
        q.take_dropped(&mut out);
        assert_eq!((out.len(), q.stats().drops_aqm), (1, 1));
    }

    #[test]
    fn wrr_gives_the_c_queue_its_10_percent_when_both_are_backlogged() {
        // Credit starts at 1514·(10 − 90) = −121 120. Each L departure (C waiting) adds
        // 10·1500 = 15 000: after 9 it is 13 880 > 0, so C goes next and subtracts 90·1500 =
        // 135 000, back to −121 120. So 9 L then 1 C, repeated: exactly 10 of 100 are C.
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        for i in 0..200 {
            q.enqueue(0, pkt(i, if i % 2 == 0 { ECT1 } else { ECT0 }));
        }
        let from_c: Vec<bool> = (0..100).map(|_| !q.dequeue(0).expect("held").l4s).collect();
        assert_eq!(from_c.iter().filter(|&&c| c).count(), 10);
        assert_eq!(from_c.iter().position(|&c| c), Some(9));
        // With one queue empty the other is served back to back.
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        for i in 0..5 {
            q.enqueue(0, pkt(i, ECT0));
        }
        assert!((0..5).all(|_| q.dequeue(0).is_some_and(|p| !p.l4s)));
    }

    #[test]
    fn coupling_marks_l_with_k_p_and_classic_with_p_squared() {
        // p' = 0.2, k = 2: L packets are marked with 0.4, classic ECT ones with 0.04.
        // Binomial spread over 9 000 packets (under the 10 000-packet limit): σ =
        // √(0.4·0.6/9000) = 0.0052 and √(0.04·0.96/9000) = 0.0021; the tolerances are ~5 σ.
        let n = 9_000;
        let mut q = with_prob(DualPi2Config::default(), 0.2);
        let (marked, dropped) = drain_signals(&mut q, n, ECT1);
        let f = marked as f64 / (n - 3) as f64;
        assert!((f - 0.4).abs() < 0.025 && dropped == 0, "L mark fraction {f}, drops {dropped}");
        let mut q = with_prob(DualPi2Config::default(), 0.2);
        let (marked, dropped) = drain_signals(&mut q, n, ECT0);
        let f = marked as f64 / (n - 3) as f64;
        assert!((f - 0.04).abs() < 0.01 && dropped == 0, "C mark fraction {f}, drops {dropped}");
        // Not-ECT classic packets are dropped with p'² instead.
        let mut q = with_prob(DualPi2Config::default(), 0.2);
        let (marked, dropped) = drain_signals(&mut q, n, NOT_ECT);
        let f = dropped as f64 / n as f64;
        assert!(marked == 0 && (f - 0.04).abs() < 0.01, "C drop fraction {f}");
    }

    #[test]
    fn overload_drops_with_p_squared_instead_of_marking() {
        // p' = 0.8: k·p' = 1.6 > 1 is overload. L4S packets: dropped with p'² = 0.64, the
        // rest marked; classic ECT packets: dropped with 0.64, never marked. σ over 9 000
        // packets: √(0.64·0.36/9000) = 0.005.
        let n = 9_000;
        let mut q = with_prob(DualPi2Config::default(), 0.8);
        let (marked, dropped) = drain_signals(&mut q, n, ECT1);
        let fd = dropped as f64 / n as f64;
        assert!((fd - 0.64).abs() < 0.025, "L drop fraction {fd}");
        assert!(marked as f64 >= 0.3 * n as f64, "the L packets not dropped are marked: {marked}");
        let mut q = with_prob(DualPi2Config::default(), 0.8);
        let (marked, dropped) = drain_signals(&mut q, n, ECT0);
        assert_eq!(marked, 0);
        assert!((dropped as f64 / n as f64 - 0.64).abs() < 0.025);
        // drop_overload off: p' is capped at 1/k by the controller and L packets only marked.
        let cfg = DualPi2Config { drop_overload: false, ..Default::default() };
        let mut q = with_prob(cfg, 0.8);
        let (marked, dropped) = drain_signals(&mut q, n, ECT1);
        assert_eq!((dropped, marked), (0, n - 3));
    }

    #[test]
    fn nothing_is_signalled_under_two_mtu_of_backlog() {
        // p' = 1: every packet would get the signal, but with one packet left behind (1500 B <
        // 2·1514) the check is skipped.
        let mut q = with_prob(DualPi2Config::default(), 1.0);
        q.enqueue(0, pkt(0, ECT0));
        q.enqueue(0, pkt(1, ECT0));
        let p = q.dequeue(0).expect("held");
        assert!(!p.ce && q.stats().drops() == 0);
    }

    #[test]
    fn tail_drop_at_the_packet_and_memory_limits() {
        let cfg = DualPi2Config { limit_packets: 3, ..Default::default() };
        let mut q = DualPi2::new(cfg, 0);
        let v: Vec<Verdict> = (0..4).map(|i| q.enqueue(0, pkt(i, ECT1))).collect();
        assert_eq!(v[3], Verdict::Dropped);
        // Memory: 2 packets of 1500 + 576 = 4152 B fit in 5000, a third does not.
        let cfg = DualPi2Config { memory_limit: 5000, ..Default::default() };
        let mut q = DualPi2::new(cfg, 0);
        let v: Vec<Verdict> = (0..3).map(|i| q.enqueue(0, pkt(i, ECT0))).collect();
        assert_eq!(v, vec![Verdict::Queued, Verdict::Queued, Verdict::Dropped]);
        assert_eq!(q.stats().drops_overlimit, 1);
        assert_eq!(DualPi2Config::default().memory_limit, 10_000 * 2 * 1514);
    }

    #[test]
    fn pi_updates_run_lazily_from_the_head_sojourn() {
        // One classic packet held from t = 0: at the update of t = 16 ms the head has waited
        // 16 ms > 15 ms target, so p' rises; with nothing queued (qdelay 0) it falls back.
        let mut q = DualPi2::new(DualPi2Config::default(), 0);
        q.enqueue(0, pkt(0, ECT0));
        q.enqueue(17 * MS, pkt(1, ECT0));
        assert!(q.base_prob() > 0.0);
        // delta = (16 − 15) ms·44 + 16 ms·879 per 64 ns.
        assert_eq!(q.pi2.prob, ((1_000_000u64 * 44 + 16_000_000 * 879) >> 6) as u32);
        while q.dequeue(17 * MS).is_some() {}
        q.enqueue(200 * MS, pkt(2, ECT0));
        assert_eq!(q.base_prob(), 0.0);
    }
}
