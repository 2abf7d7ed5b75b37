//! fq (Linux net/sched/sch_fq.c, 6.x): per-flow queues served round robin with byte credits
//! (`quantum` 2 MTU, `initial_quantum` 10 MTU for a new flow), new flows ahead of old ones, a
//! per-flow packet limit, and pacing: a packet is not sent before its earliest departure time
//! (`Pkt::send_at_ns`, TCP's EDT `skb->tstamp`, as Linux TCP sets it when fq paces), nor, for a
//! flow with a pacing rate and no EDT (`set_flow_pacing_rate`, sk_pacing_rate), before the
//! previous packet's bytes have been paced out. A flow waiting for its time is "throttled" off the
//! round robin; `next_wakeup` tells the caller when the first throttled flow becomes eligible.
//!
//! Not modelled: the three priority bands (all traffic in one band), the internal fast-path
//! queue (a CPU optimisation that serves an idle qdisc's packets FIFO), orphan/SYN handling,
//! garbage collection of idle flows (flows are keyed by the packet's flow hash and kept).
use crate::stats::{Backlog, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};
use std::collections::{BTreeSet, HashMap, VecDeque};

const NS_PER_SEC: u64 = 1_000_000_000;
/// psched_mtu of an Ethernet device.
pub const MTU: u32 = 1514;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqConfig {
    /// fq_init: sch->limit = 10000 packets.
    pub plimit: u64,
    /// fq_init: flow_plimit = 100 packets.
    pub flow_plimit: u64,
    /// fq_init: 2 · MTU.
    pub quantum: u32,
    /// fq_init: 10 · MTU.
    pub initial_quantum: u32,
    /// fq_init: 40 ms — a flow idle this long gets at least a quantum of credit back.
    pub flow_refill_delay_ns: Nanos,
    /// Per-flow rate cap, bytes/s (TCA_FQ_FLOW_MAX_RATE; None = unlimited, the default).
    pub flow_max_rate: Option<u64>,
    /// fq_init: 550 kbit/s in bytes/s — flows paced slower than this send one packet per turn.
    pub low_rate_threshold: u64,
    /// fq_init: 10 s — packets timestamped further in the future are dropped (horizon_drop).
    pub horizon_ns: Nanos,
    /// CE-mark packets sent this late after their time (TCA_FQ_CE_THRESHOLD); None = off (default).
    pub ce_threshold_ns: Option<Nanos>,
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig {
            plimit: 10_000,
            flow_plimit: 100,
            quantum: 2 * MTU,
            initial_quantum: 10 * MTU,
            flow_refill_delay_ns: 40_000_000,
            flow_max_rate: None,
            low_rate_threshold: 550_000 / 8,
            horizon_ns: 10 * NS_PER_SEC,
            ce_threshold_ns: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// On no list; `age` = when it went idle.
    Detached {
        age: Nanos,
    },
    New,
    Old,
    Throttled,
}

#[derive(Debug, Clone)]
struct Flow {
    /// Packets ordered by time to send (Linux: a list plus an rb-tree for out-of-order EDTs).
    q: VecDeque<Pkt>,
    credit: i64,
    time_next_packet: Nanos,
    state: State,
    /// sk_pacing_rate, bytes/s, used for packets without an EDT.
    pacing_rate: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Fq {
    pub cfg: FqConfig,
    flows: Vec<Flow>,
    by_hash: HashMap<u32, usize>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    /// Throttled flows by the time they may send again.
    delayed: BTreeSet<(Nanos, usize)>,
    backlog: Backlog,
    stats: QueueStats,
    /// Drops by the per-flow limit (stat_flows_plimit) and beyond the horizon.
    pub drops_flow_limit: u64,
    pub drops_horizon: u64,
    /// Times a flow was throttled (stat_throttled).
    pub throttled: u64,
}

/// When a packet may leave: its EDT, else its arrival (fq_skb_cb time_to_send).
#[inline]
fn time_to_send(p: &Pkt) -> Nanos {
    if p.send_at_ns != 0 {
        p.send_at_ns
    } else {
        p.enq_ns
    }
}

impl Fq {
    pub fn new(cfg: FqConfig) -> Self {
        Fq {
            cfg,
            flows: Vec::new(),
            by_hash: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            delayed: BTreeSet::new(),
            backlog: Backlog::default(),
            stats: QueueStats::default(),
            drops_flow_limit: 0,
            drops_horizon: 0,
            throttled: 0,
        }
    }

    /// Set (or clear) a flow's pacing rate in bytes/s (the socket's sk_pacing_rate), applied
    /// to its packets that carry no EDT.
    pub fn set_flow_pacing_rate(&mut self, flow_hash: u32, bytes_per_sec: Option<u64>) {
        let f = self.classify(flow_hash, 0);
        self.flows[f].pacing_rate = bytes_per_sec;
    }

    /// fq_classify: the flow of a hash, created with the initial quantum.
    fn classify(&mut self, hash: u32, now: Nanos) -> usize {
        if let Some(&i) = self.by_hash.get(&hash) {
            return i;
        }
        self.flows.push(Flow {
            q: VecDeque::new(),
            credit: self.cfg.initial_quantum as i64,
            time_next_packet: 0,
            state: State::Detached { age: now },
            pacing_rate: None,
        });
        let i = self.flows.len() - 1;
        self.by_hash.insert(hash, i);
        i
    }

    /// fq_flow_set_throttled.
    fn throttle(&mut self, f: usize) {
        self.flows[f].state = State::Throttled;
        self.delayed.insert((self.flows[f].time_next_packet, f));
        self.throttled += 1;
    }

    /// fq_check_throttled: flows whose time has come go to the tail of the old list.
    fn check_throttled(&mut self, now: Nanos) {
        while let Some(&(t, f)) = self.delayed.first() {
            if t > now {
                break;
            }
            self.delayed.pop_first();
            self.flows[f].state = State::Old;
            self.old_flows.push_back(f);
        }
    }
}

impl Qdisc for Fq {
    /// fq_enqueue.
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        if self.backlog.packets >= self.cfg.plimit {
            self.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        if pkt.send_at_ns != 0 && pkt.send_at_ns > now + self.cfg.horizon_ns {
            self.drops_horizon += 1;
            self.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        pkt.enq_ns = now;
        let fi = self.classify(pkt.flow, now);
        let (quantum, refill) = (self.cfg.quantum as i64, self.cfg.flow_refill_delay_ns);
        let f = &mut self.flows[fi];
        if f.q.len() as u64 >= self.cfg.flow_plimit {
            self.drops_flow_limit += 1;
            self.stats.drops_overlimit += 1;
            return Verdict::Dropped;
        }
        if let State::Detached { age } = f.state {
            f.state = State::New;
            self.new_flows.push_back(fi);
            if now > age + refill {
                f.credit = f.credit.max(quantum);
            }
        }
        // flow_queue_add: in time-to-send order (ties keep arrival order).
        let tts = time_to_send(&pkt);
        if f.q.back().is_none_or(|b| tts >= time_to_send(b)) {
            f.q.push_back(pkt);
        } else {
            let at = f.q.partition_point(|p| time_to_send(p) <= tts);
            f.q.insert(at, pkt);
        }
        self.backlog.add(pkt.len, &mut self.stats);
        self.stats.enqueued += 1;
        Verdict::Queued
    }

    /// fq_dequeue.
    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        if self.backlog.packets == 0 {
            return None;
        }
        self.check_throttled(now);
        let quantum = self.cfg.quantum as i64;
        loop {
            let from_new = !self.new_flows.is_empty();
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let fi = *list.front()?;
            let f = &mut self.flows[fi];
            if f.credit <= 0 {
                f.credit += quantum;
                list.pop_front();
                f.state = State::Old;
                self.old_flows.push_back(fi);
                continue;
            }
            let Some(head) = f.q.front() else {
                list.pop_front();
                // An emptied new flow makes one pass through the old list (starvation guard).
                if from_new {
                    f.state = State::Old;
                    self.old_flows.push_back(fi);
                } else {
                    f.state = State::Detached { age: now };
                }
                continue;
            };
            let tnp = time_to_send(head).max(f.time_next_packet);
            if now < tnp {
                list.pop_front();
                f.time_next_packet = tnp;
                self.throttle(fi);
                continue;
            }
            let mut p = f.q.pop_front().unwrap();
            self.backlog.remove(p.len);
            self.stats.dequeued += 1;
            if let Some(th) = self.cfg.ce_threshold_ns {
                if now > tnp + th && p.set_ce() {
                    self.stats.marks += 1;
                }
            }
            let mut plen = p.len as u64;
            f.credit -= plen as i64;
            // Pacing (rate_enable, the default).
            let mut rate = self.cfg.flow_max_rate.unwrap_or(u64::MAX);
            if p.send_at_ns == 0 {
                rate = rate.min(f.pacing_rate.unwrap_or(u64::MAX));
                if rate <= self.cfg.low_rate_threshold {
                    f.credit = 0;
                } else {
                    plen = plen.max(quantum as u64);
                    if f.credit > 0 {
                        return Some(p);
                    }
                }
            }
            if rate != u64::MAX {
                let mut len = (plen * NS_PER_SEC).checked_div(rate).unwrap_or(NS_PER_SEC);
                len = len.min(NS_PER_SEC);
                if f.time_next_packet != 0 {
                    // Absorb timer lateness, up to half the gap.
                    len -= (len / 2).min(now - f.time_next_packet);
                }
                f.time_next_packet = now + len;
            }
            return Some(p);
        }
    }

    fn backlog(&self) -> Backlog {
        self.backlog
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn take_dropped(&mut self, _out: &mut Vec<Pkt>) {}
    /// The first throttled flow's time (the qdisc watchdog).
    fn next_wakeup(&self) -> Option<Nanos> {
        self.delayed.first().map(|&(t, _)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn run_lengths(ids: &[u64], split: u64) -> Vec<(bool, usize)> {
        let mut runs: Vec<(bool, usize)> = vec![];
        for &id in ids {
            let a = id < split;
            match runs.last_mut() {
                Some((f, n)) if *f == a => *n += 1,
                _ => runs.push((a, 1)),
            }
        }
        runs
    }

    #[test]
    fn round_robin_with_initial_and_steady_quantum() {
        // Two backlogged flows of 1500-byte packets. Each starts with 10 MTU of credit (11
        // packets: 15 140 − 10 × 1500 = 140 > 0 lets an 11th go), then turns of 2 MTU = 3028
        // bytes (2 or 3 packets). A FIFO would serve all of A first.
        let mut q = Fq::new(FqConfig::default());
        for i in 0..100 {
            q.enqueue(0, Pkt::new(i, 1500, 1));
        }
        for i in 0..100 {
            q.enqueue(0, Pkt::new(1000 + i, 1500, 2));
        }
        let ids: Vec<u64> = (0..160).map(|_| q.dequeue(0).unwrap().id).collect();
        let runs = run_lengths(&ids, 1000);
        assert_eq!(&runs[..2], &[(true, 11), (false, 11)], "{runs:?}");
        assert!(runs[2..].iter().all(|&(_, n)| (2..=3).contains(&n)), "{runs:?}");
        let a = ids.iter().filter(|&&i| i < 1000).count() as i64;
        assert!((a - 80).abs() <= 2, "equal shares ±1 quantum: A got {a} of 160");
    }

    #[test]
    fn flow_limit_and_plimit() {
        let mut q = Fq::new(FqConfig { plimit: 150, ..Default::default() });
        let v: Vec<Verdict> = (0..101).map(|i| q.enqueue(0, Pkt::new(i, 1500, 1))).collect();
        assert_eq!(v[99], Verdict::Queued);
        assert_eq!(v[100], Verdict::Dropped, "101st packet of one flow over flow_limit 100");
        assert_eq!(q.enqueue(0, Pkt::new(500, 1500, 2)), Verdict::Queued, "another flow still fits");
        for i in 0..49 {
            q.enqueue(0, Pkt::new(600 + i, 1500, 3 + i as u32));
        }
        assert_eq!(q.backlog_packets(), 150);
        assert_eq!(q.enqueue(0, Pkt::new(999, 1500, 99)), Verdict::Dropped, "plimit 150 reached");
        assert_eq!((q.drops_flow_limit, q.stats().drops_overlimit), (1, 2));
    }

    #[test]
    fn edt_packets_wait_for_their_time_without_blocking_others() {
        let mut q = Fq::new(FqConfig::default());
        let mut edt = Pkt::new(1, 1500, 1);
        edt.send_at_ns = 10 * MS;
        q.enqueue(0, edt);
        q.enqueue(0, Pkt::new(2, 1500, 2));
        assert_eq!(q.dequeue(0).map(|p| p.id), Some(2), "flow 2 not held behind flow 1's EDT");
        assert_eq!(q.dequeue(0), None);
        assert_eq!(q.next_wakeup(), Some(10 * MS));
        assert_eq!(q.dequeue(10 * MS - 1), None, "not before its time");
        assert_eq!(q.dequeue(10 * MS).map(|p| p.id), Some(1));
        // Too far in the future: dropped (horizon 10 s).
        let mut far = Pkt::new(3, 1500, 1);
        far.send_at_ns = 10 * MS + 11 * NS_PER_SEC;
        assert_eq!(q.enqueue(10 * MS, far), Verdict::Dropped);
    }

    /// Serve a flow greedily (dequeue whenever allowed) for `ms` and return (time, bytes) of each
    /// packet.
    fn drain_paced(q: &mut Fq, ms: u64) -> Vec<(Nanos, u64)> {
        let mut t = 0;
        let mut out = vec![];
        while t < ms * MS && q.backlog_packets() > 0 {
            match q.dequeue(t) {
                Some(p) => out.push((t, p.len as u64)),
                None => t = q.next_wakeup().expect("a backlogged flow is throttled"),
            }
        }
        out
    }

    #[test]
    fn pacing_rate_is_kept_over_time() {
        // A flow paced at 1.5 MB/s (12 Mbit/s) with 100 packets queued: after the initial-quantum
        // burst, packets leave at the pacing rate (quantum-sized steps), ±1 quantum per second.
        let mut q = Fq::new(FqConfig::default());
        q.set_flow_pacing_rate(7, Some(1_500_000));
        for i in 0..100 {
            q.enqueue(0, Pkt::new(i, 1500, 7));
        }
        let sent = drain_paced(&mut q, 90);
        let bytes: u64 = sent.iter().filter(|&&(t, _)| (10 * MS..60 * MS).contains(&t)).map(|s| s.1).sum();
        let want = 1_500_000 / 20; // 50 ms
        assert!(bytes.abs_diff(want) <= 2 * 3028, "{bytes} B in 50 ms, want {want}");
    }

    #[test]
    fn low_rate_flows_send_one_packet_per_gap() {
        // Below low_rate_threshold (68 750 B/s) every packet is paced on its own: 1500 B at
        // 50 kB/s = 30 ms apart, no initial burst.
        let mut q = Fq::new(FqConfig::default());
        q.set_flow_pacing_rate(7, Some(50_000));
        for i in 0..5 {
            q.enqueue(0, Pkt::new(i, 1500, 7));
        }
        let times: Vec<Nanos> = drain_paced(&mut q, 200).iter().map(|s| s.0).collect();
        assert_eq!(times, vec![0, 30 * MS, 60 * MS, 90 * MS, 120 * MS]);
    }
}
