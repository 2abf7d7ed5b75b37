//! CoDel (RFC 8289; Linux net/sched/sch_codel.c): one FIFO whose head is dropped, or CE-marked,
//! when packets have waited longer than `target` for at least `interval`.
use crate::codel_core::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use crate::stats::{Backlog, PktFifo, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};
use std::collections::VecDeque;

/// sch_codel DEFAULT_CODEL_LIMIT: packets.
pub const DEFAULT_LIMIT_PACKETS: u64 = 1000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelConfig {
    pub params: CodelParams,
    /// Tail-drop limit in packets (sch->limit).
    pub limit_packets: u64,
}

impl Default for CodelConfig {
    /// sch_codel defaults: target 5 ms, interval 100 ms, limit 1000 packets, ECN off.
    fn default() -> Self {
        CodelConfig { params: CodelParams::default(), limit_packets: DEFAULT_LIMIT_PACKETS }
    }
}

#[derive(Debug, Clone)]
pub struct Codel {
    pub cfg: CodelConfig,
    fifo: PktFifo,
    vars: CodelVars,
    dropped: Vec<Pkt>,
}

/// The FIFO as CoDel sees it.
struct Fifo<'a> {
    q: &'a mut VecDeque<Pkt>,
    backlog: &'a mut Backlog,
    dropped: &'a mut Vec<Pkt>,
}

impl CodelSource for Fifo<'_> {
    fn pop(&mut self) -> Option<Pkt> {
        let p = self.q.pop_front()?;
        self.backlog.remove(p.len);
        Some(p)
    }
    fn backlog_bytes(&self) -> u64 {
        self.backlog.bytes
    }
    fn drop_pkt(&mut self, pkt: Pkt) {
        self.dropped.push(pkt);
    }
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Self {
        Codel { cfg, fifo: PktFifo::default(), vars: CodelVars::default(), dropped: Vec::new() }
    }
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl Qdisc for Codel {
    /// codel_qdisc_enqueue: tail drop at the packet limit, else timestamp and queue.
    fn enqueue(&mut self, now: Nanos, pkt: Pkt) -> Verdict {
        if self.fifo.backlog.packets >= self.cfg.limit_packets {
            self.fifo.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        self.fifo.push(now, pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        let PktFifo { q, backlog, stats } = &mut self.fifo;
        let mut src = Fifo { q, backlog, dropped: &mut self.dropped };
        let p = codel_dequeue(&mut src, &self.cfg.params, &mut self.vars, stats, now)?;
        stats.dequeued += 1;
        Some(p)
    }
    fn backlog(&self) -> Backlog {
        self.fifo.backlog
    }
    fn stats(&self) -> &QueueStats {
        &self.fifo.stats
    }
    fn take_dropped(&mut self, out: &mut Vec<Pkt>) {
        out.append(&mut self.dropped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codel_core::MS;

    const T0: Nanos = 1_000_000_000;

    /// A link that serves one 1500-byte packet per millisecond while one arrives per
    /// millisecond: the standing queue (prefilled with `standing` packets, one per ms before
    /// T0) stays put except that each drop shortens it by one packet, i.e. 1 ms of sojourn.
    /// Returns the times of drops and marks from T0 to T0 + `ms` (and the queue).
    struct Harness {
        q: Codel,
        drops: Vec<Nanos>,
        marks: Vec<Nanos>,
        next_id: u64,
        ect: bool,
    }

    impl Harness {
        fn new(ecn: bool, ect: bool, standing: u64) -> Harness {
            let mut cfg = CodelConfig::default();
            cfg.params.ecn = ecn;
            let mut h = Harness { q: Codel::new(cfg), drops: vec![], marks: vec![], next_id: 0, ect };
            for i in 0..standing {
                h.arrive(T0 - (standing - i) * MS);
            }
            h
        }
        fn arrive(&mut self, t: Nanos) {
            self.next_id += 1;
            self.q.enqueue(t, Pkt::new(self.next_id, 1500, 1).ect(self.ect));
        }
        /// One ms tick at `t`: `arrivals` packets arrive, one is served.
        fn tick(&mut self, t: Nanos, arrivals: u64) {
            for _ in 0..arrivals {
                self.arrive(t);
            }
            let before = self.q.stats().drops_aqm;
            let p = self.q.dequeue(t);
            for _ in before..self.q.stats().drops_aqm {
                self.drops.push(t);
            }
            if p.is_some_and(|p| p.ce) {
                self.marks.push(t);
            }
        }
        fn run(&mut self, from: Nanos, ms: u64) {
            for k in 0..ms {
                self.tick(from + k * MS, 1);
            }
        }
    }

    /// Times the RFC's control law gives for drops 1..=n after entering the dropping state at
    /// `first` (drop k+1 at drop_next_k + interval/sqrt(k+1)), rounded up to the next 1 ms tick.
    fn rfc_schedule(first: Nanos, n: usize) -> Vec<Nanos> {
        let mut v = vec![first];
        let mut next = first as f64 + 100e6; // after the first drop: now + interval/sqrt(1)
        for k in 2..=n {
            v.push(((next / 1e6).ceil() * 1e6) as Nanos);
            next += 100e6 / (k as f64).sqrt();
        }
        v
    }

    #[test]
    fn no_drop_below_target() {
        // 4 ms standing queue (< 5 ms target) for 2 s: CoDel must never drop.
        let mut h = Harness::new(false, false, 4);
        h.run(T0, 2000);
        assert!(h.drops.is_empty(), "dropped at {:?}", h.drops);
    }

    #[test]
    fn drops_follow_control_law_then_stop_below_target() {
        // 20 ms standing queue: above target from T0. No drop for the first interval (the
        // first drop is due strictly after T0 + 100 ms: the tick at T0 + 101 ms); then drops
        // at interval/sqrt(count) spacing; each drop removes 1 ms of queue, so after 16 drops
        // the sojourn is 4 ms < target and CoDel leaves the dropping state for good.
        let mut h = Harness::new(false, false, 20);
        h.run(T0, 3000);
        assert_eq!(h.drops.first(), Some(&(T0 + 101 * MS)), "drops {:?}", h.drops);
        assert_eq!(h.drops.len(), 16, "20 ms → 4 ms takes 16 drops: {:?}", h.drops);
        let want = rfc_schedule(T0 + 101 * MS, 16);
        assert_eq!(h.drops, want, "spacing interval/sqrt(count)");
        assert!(!h.q.vars().dropping, "sojourn 4 ms < target: dropping state left");
    }

    #[test]
    fn count_memory_on_quick_reentry() {
        // After the 16 drops above, raise the queue again 50 ms later: re-entering within 16
        // intervals of the last scheduled drop resumes at count = 16 - 1 = 15 (delta =
        // count - lastcount), so the second drop follows the first by interval/sqrt(16) = 25 ms
        // (drop_next = now + 100/sqrt(15) = 25.8 ms, rounded up to the 26 ms tick) instead of a
        // full interval. Without memory (re-entry after 2 s > 16 intervals) the gap is 100 ms.
        for (pause_ms, want_gap_ms) in [(50, 26), (2000, 100)] {
            let mut h = Harness::new(false, false, 20);
            h.run(T0, 1000);
            assert_eq!(h.drops.len(), 16);
            let t1 = T0 + (1000 + pause_ms) * MS;
            // The queue stays at 4 ms of sojourn, then a 20-packet burst arrives.
            h.run(T0 + 1000 * MS, pause_ms);
            for _ in 0..20 {
                h.arrive(t1);
            }
            h.run(t1, 500);
            let re: Vec<Nanos> = h.drops[16..].to_vec();
            assert!(re.len() >= 2, "pause {pause_ms}: re-entry drops {re:?}");
            assert_eq!((re[1] - re[0]) / MS, want_gap_ms, "pause {pause_ms}: {re:?}");
        }
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        // Same load, ECT packets, ecn on: the same schedule, as marks. Marks do not shorten the
        // queue, so marking continues (count keeps growing) and nothing is dropped.
        let mut h = Harness::new(true, true, 20);
        h.run(T0, 1000);
        assert!(h.drops.is_empty(), "ECT packets must not be dropped: {:?}", h.drops);
        assert_eq!(&h.marks[..3], &rfc_schedule(T0 + 101 * MS, 3)[..]);
        assert!(h.marks.len() > 16, "queue not reduced by marks, marking goes on: {}", h.marks.len());
        // ecn on but Not-ECT packets: dropped as without ECN.
        let mut h = Harness::new(true, false, 20);
        h.run(T0, 1000);
        assert_eq!((h.drops.len(), h.marks.len()), (16, 0));
    }

    #[test]
    fn tail_drop_at_limit_and_dropped_packets_are_reported() {
        let mut q = Codel::new(CodelConfig { limit_packets: 3, ..Default::default() });
        let v: Vec<Verdict> = (0..4).map(|i| q.enqueue(0, Pkt::new(i, 1500, 1))).collect();
        assert_eq!(v[3], Verdict::Dropped, "fourth over a 3-packet limit");
        let mut h = Harness::new(false, false, 20);
        h.run(T0, 200);
        let mut out = vec![];
        h.q.take_dropped(&mut out);
        assert_eq!(out.len(), h.drops.len(), "every AQM drop is handed back to the caller");
        assert!(out.iter().all(|p| p.id > 0));
    }
}
