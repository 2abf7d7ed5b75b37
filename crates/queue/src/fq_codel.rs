//! FQ-CoDel (RFC 8290; Linux net/sched/sch_fq_codel.c): packets hashed into `flows` buckets,
//! each a FIFO under its own CoDel; buckets served by deficit round robin with a one-MTU
//! quantum, newly active buckets (the "new flows" list) before the rest ("old flows"). When the
//! packet or memory limit is exceeded, packets are dropped from the head of the bucket with the
//! largest backlog (fq_codel_drop).
//!
//! Simplifications: no external classifier (the packet's flow hash picks the bucket, as
//! Linux without a tc filter); memory per packet is modelled as `len + SKB_OVERHEAD` for the
//! kernel's `skb->truesize`.
use crate::codel_core::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use crate::stats::{Backlog, QueueStats};
use crate::{Nanos, Pkt, Qdisc, Verdict};
use std::collections::VecDeque;

/// fq_codel_init: 1024 buckets.
pub const DEFAULT_FLOWS: u32 = 1024;
/// fq_codel_init: sch->limit = 10 * 1024 packets.
pub const DEFAULT_LIMIT_PACKETS: u64 = 10 * 1024;
/// fq_codel_init: memory_limit = 32 MB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 32 << 20;
/// fq_codel_init: drop_batch_size = 64.
pub const DEFAULT_DROP_BATCH: u32 = 64;
/// fq_codel_init: quantum = psched_mtu (1514 for Ethernet).
pub const DEFAULT_QUANTUM: u32 = 1514;
/// Memory one packet costs beyond its length: SKB_TRUESIZE adds the aligned sizes of
/// struct sk_buff (~256 B) and struct skb_shared_info (~320 B).
pub const SKB_OVERHEAD: u32 = 576;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqCodelConfig {
    /// Per-flow CoDel (target 5 ms, interval 100 ms); ECN on by default (fq_codel_init).
    pub codel: CodelParams,
    pub flows: u32,
    pub quantum: u32,
    pub limit_packets: u64,
    pub memory_limit: u64,
    pub drop_batch: u32,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            codel: CodelParams { ecn: true, ..CodelParams::default() },
            flows: DEFAULT_FLOWS,
            quantum: DEFAULT_QUANTUM,
            limit_packets: DEFAULT_LIMIT_PACKETS,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            drop_batch: DEFAULT_DROP_BATCH,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug, Clone)]
struct Flow {
    q: VecDeque<Pkt>,
    /// Bytes queued in this bucket (q->backlogs[idx]).
    backlog: u64,
    deficit: i64,
    cvars: CodelVars,
    list: List,
}

#[derive(Debug, Clone)]
pub struct FqCodel {
    pub cfg: FqCodelConfig,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    backlog: Backlog,
    memory_usage: u64,
    stats: QueueStats,
    dropped: Vec<Pkt>,
    /// Buckets that became active (fq_codel's new_flow_count).
    pub new_flow_count: u64,
    /// Packets dropped while over the memory limit (drop_overmemory).
    pub drop_overmemory: u64,
}

/// One bucket as CoDel sees it; the backlog CoDel compares with the MTU is the whole qdisc's.
struct Bucket<'a> {
    q: &'a mut VecDeque<Pkt>,
    flow_backlog: &'a mut u64,
    backlog: &'a mut Backlog,
    memory_usage: &'a mut u64,
    dropped: &'a mut Vec<Pkt>,
}

impl CodelSource for Bucket<'_> {
    fn pop(&mut self) -> Option<Pkt> {
        let p = self.q.pop_front()?;
        *self.flow_backlog -= p.len as u64;
        *self.memory_usage -= truesize(p.len);
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

#[inline]
fn truesize(len: u32) -> u64 {
    (len + SKB_OVERHEAD) as u64
}

impl FqCodel {
    pub fn new(cfg: FqCodelConfig) -> Self {
        assert!(cfg.flows > 0 && cfg.flows <= 65536, "fq_codel: 1..=65536 flows");
        let flow = Flow { q: VecDeque::new(), backlog: 0, deficit: 0, cvars: CodelVars::default(), list: List::None };
        FqCodel {
            flows: vec![flow; cfg.flows as usize],
            cfg,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            backlog: Backlog::default(),
            memory_usage: 0,
            stats: QueueStats::default(),
            dropped: Vec::new(),
            new_flow_count: 0,
            drop_overmemory: 0,
        }
    }

    /// fq_codel_hash: reciprocal_scale(hash, flows).
    #[inline]
    pub fn bucket_of(&self, flow_hash: u32) -> u32 {
        ((flow_hash as u64 * self.cfg.flows as u64) >> 32) as u32
    }

    /// Packets queued in a bucket.
    pub fn bucket_len(&self, bucket: u32) -> usize {
        self.flows[bucket as usize].q.len()
    }

    pub fn memory_usage(&self) -> u64 {
        self.memory_usage
    }

    /// fq_codel_drop: drop from the head of the fattest bucket until half its backlog is gone
    /// (at most `drop_batch` packets); tell its CoDel to signal harder. Returns the bucket.
    fn drop_from_fattest(&mut self) -> u32 {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max {
                max = f.backlog;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let flow = &mut self.flows[idx];
        let (mut len, mut n) = (0u64, 0u32);
        while let Some(p) = flow.q.pop_front() {
            len += p.len as u64;
            self.memory_usage -= truesize(p.len);
            self.backlog.remove(p.len);
            self.dropped.push(p);
            n += 1;
            if n >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        flow.cvars.count = flow.cvars.count.wrapping_add(n);
        flow.backlog -= len;
        self.stats.drops_overlimit += n as u64;
        idx as u32
    }
}

impl Qdisc for FqCodel {
    /// fq_codel_enqueue.
    fn enqueue(&mut self, now: Nanos, mut pkt: Pkt) -> Verdict {
        let idx = self.bucket_of(pkt.flow);
        pkt.enq_ns = now;
        let flow = &mut self.flows[idx as usize];
        flow.q.push_back(pkt);
        flow.backlog += pkt.len as u64;
        self.backlog.add(pkt.len, &mut self.stats);
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(idx);
            self.new_flow_count += 1;
        }
        self.memory_usage += truesize(pkt.len);
        let memory_limited = self.memory_usage > self.cfg.memory_limit;
        if self.backlog.packets <= self.cfg.limit_packets && !memory_limited {
            self.stats.enqueued += 1;
            return Verdict::Queued;
        }
        let dropped_before = self.dropped.len();
        let fattest = self.drop_from_fattest();
        if memory_limited {
            self.drop_overmemory += (self.dropped.len() - dropped_before) as u64;
        }
        // Head drops: the arriving packet (at the tail) went only if its bucket was emptied.
        if fattest == idx && self.flows[idx as usize].q.is_empty() {
            let me = self.dropped.pop().expect("the arriving packet was the last dropped");
            debug_assert_eq!(me.id, pkt.id);
            return Verdict::Dropped;
        }
        self.stats.enqueued += 1;
        Verdict::Queued
    }

    /// fq_codel_dequeue: new flows first, DRR with `quantum`, CoDel on the chosen bucket.
    fn dequeue(&mut self, now: Nanos) -> Option<Pkt> {
        loop {
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i),
                None => (false, *self.old_flows.front()?),
            };
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let flow = &mut self.flows[idx as usize];
            if flow.deficit <= 0 {
                flow.deficit += self.cfg.quantum as i64;
                list.pop_front();
                flow.list = List::Old;
                self.old_flows.push_back(idx);
                continue;
            }
            let mut src = Bucket {
                q: &mut flow.q,
                flow_backlog: &mut flow.backlog,
                backlog: &mut self.backlog,
                memory_usage: &mut self.memory_usage,
                dropped: &mut self.dropped,
            };
            let got = codel_dequeue(&mut src, &self.cfg.codel, &mut flow.cvars, &mut self.stats, now);
            match got {
                None => {
                    list.pop_front();
                    // An emptied new flow makes one pass through old flows (prevents starvation
                    // by flows that keep re-entering as new).
                    if from_new && !self.old_flows.is_empty() {
                        flow.list = List::Old;
                        self.old_flows.push_back(idx);
                    } else {
                        flow.list = List::None;
                    }
                }
                Some(p) => {
                    flow.deficit -= p.len as i64;
                    self.stats.dequeued += 1;
                    return Some(p);
                }
            }
        }
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
    use crate::codel_core::MS;

    /// Flow hashes that land in buckets 0, 1, 2, … of 1024 (reciprocal_scale: bucket =
    /// hash · 1024 / 2³²).
    fn h(bucket: u32) -> u32 {
        bucket << 22
    }

    fn fill(q: &mut FqCodel, now: Nanos, flow: u32, n: u64, len: u32, first_id: u64) {
        for i in 0..n {
            assert_ne!(q.enqueue(now, Pkt::new(first_id + i, len, h(flow))), Verdict::Dropped);
        }
    }

    #[test]
    fn sparse_flow_overtakes_bulk_backlog() {
        // Bulk flow A has 50 packets queued and has used its first quantum; a single packet of
        // flow B then arrives. B goes on the new-flows list and is served next, ahead of A's
        // 48-packet backlog (a FIFO would make it wait for all of them).
        let mut q = FqCodel::new(FqCodelConfig::default());
        fill(&mut q, 0, 0, 50, 1500, 0);
        assert_eq!(q.dequeue(0).map(|p| p.id), Some(0));
        assert_eq!(q.dequeue(0).map(|p| p.id), Some(1), "deficit 1514 - 1500 = 14 > 0: A again");
        q.enqueue(0, Pkt::new(1000, 100, h(1)));
        assert_eq!(q.dequeue(0).map(|p| p.id), Some(1000), "new flow B first");
        assert_eq!(q.dequeue(0).map(|p| p.id), Some(2), "then A resumes");
    }

    #[test]
    fn drr_gives_backlogged_flows_equal_bytes() {
        // A sends 1500-byte packets, B 300-byte ones, both always backlogged. DRR with a
        // 1514-byte quantum serves equal bytes (±1 quantum) — packet round robin would give A
        // five times B's bytes.
        let mut q = FqCodel::new(FqCodelConfig::default());
        fill(&mut q, 0, 0, 400, 1500, 0);
        fill(&mut q, 0, 1, 2000, 300, 10_000);
        let (mut a, mut b) = (0u64, 0u64);
        while a + b < 400_000 {
            let p = q.dequeue(0).unwrap();
            if p.id < 10_000 {
                a += p.len as u64
            } else {
                b += p.len as u64
            }
            assert!(a.abs_diff(b) <= 2 * 1514, "a {a} b {b}");
        }
        assert!(a.abs_diff(b) <= 1514 + 1500, "a {a} b {b}");
        assert_eq!(q.stats().drops(), 0, "sojourn 0: CoDel idle");
    }

    #[test]
    fn packet_limit_drops_half_of_the_fattest_flow() {
        // limit 100 packets: A holds 80, B 20; C's arrival makes 101. fq_codel_drop empties half
        // of A's bytes from its head (40 packets of 1500 B reach 60 000 = half of 120 000), and
        // raises A's CoDel count by 40. B and C keep everything.
        let cfg = FqCodelConfig { limit_packets: 100, ..Default::default() };
        let mut q = FqCodel::new(cfg);
        fill(&mut q, 0, 0, 80, 1500, 0);
        fill(&mut q, 0, 1, 20, 1500, 1000);
        assert_eq!(q.enqueue(0, Pkt::new(2000, 1500, h(2))), Verdict::Queued);
        let mut out = vec![];
        q.take_dropped(&mut out);
        let ids: Vec<u64> = out.iter().map(|p| p.id).collect();
        assert_eq!(ids, (0..40).collect::<Vec<_>>(), "A's 40 oldest");
        assert_eq!((q.bucket_len(0), q.bucket_len(1), q.bucket_len(2)), (40, 20, 1));
        assert_eq!(q.flows[0].cvars.count, 40);
        assert_eq!((q.stats().drops_overlimit, q.backlog_packets()), (40, 61));
    }

    #[test]
    fn drop_batch_caps_the_fattest_flow_drops() {
        // Same with 300 packets in A: half its backlog would be 150 packets, the batch stops at 64.
        let cfg = FqCodelConfig { limit_packets: 300, ..Default::default() };
        let mut q = FqCodel::new(cfg);
        fill(&mut q, 0, 0, 300, 1500, 0);
        q.enqueue(0, Pkt::new(999, 100, h(3)));
        assert_eq!(q.stats().drops_overlimit, 64);
    }

    #[test]
    fn memory_limit_drops_and_can_drop_the_arrival() {
        // A memory limit of 10 full packets: the 11th 1500-byte packet of a single flow is over;
        // the only (so fattest) bucket loses half its bytes from the head, not the arrival.
        let per = (1500 + SKB_OVERHEAD) as u64;
        let cfg = FqCodelConfig { memory_limit: 10 * per, ..Default::default() };
        let mut q = FqCodel::new(cfg);
        fill(&mut q, 0, 0, 10, 1500, 0);
        assert_eq!(q.enqueue(0, Pkt::new(10, 1500, h(0))), Verdict::Queued);
        assert_eq!(q.drop_overmemory, 6, "drops until ≥ half of 16 500 bytes: 6 × 1500");
        assert!(q.memory_usage() <= 10 * per);
        // A bucket holding only the arrival, and fattest: the arrival itself is refused.
        let cfg = FqCodelConfig { memory_limit: per / 2, ..Default::default() };
        let mut q = FqCodel::new(cfg);
        assert_eq!(q.enqueue(0, Pkt::new(7, 1500, h(5))), Verdict::Dropped);
        let mut out = vec![];
        q.take_dropped(&mut out);
        assert!(out.is_empty(), "the refused arrival is reported by its verdict, not twice");
        assert_eq!(q.backlog_packets(), 0);
    }

    #[test]
    fn per_flow_codel_marks_ect_and_drops_not_ect() {
        // Two flows with a standing 20 ms sojourn (1 packet per ms in and out, alternating
        // flows): ECN is on by default, so the ECT flow is CE-marked and never dropped, the
        // Not-ECT flow is dropped; both only after the first interval.
        let mut q = FqCodel::new(FqCodelConfig::default());
        let t0 = 1_000_000_000;
        let mut id = 0;
        for k in 0..20u64 {
            id += 1;
            q.enqueue(t0 - (20 - k) * MS, Pkt::new(id, 1500, h((k % 2) as u32)).ect(k % 2 == 0));
        }
        let (mut marks, mut first_signal) = (0, None);
        for k in 0..1000u64 {
            let t = t0 + k * MS;
            id += 1;
            q.enqueue(t, Pkt::new(id, 1500, h((k % 2) as u32)).ect(k % 2 == 0));
            let before = q.stats().drops_aqm;
            if let Some(p) = q.dequeue(t) {
                if p.ce {
                    assert!(p.ect);
                    marks += 1;
                    first_signal.get_or_insert(t);
                }
            }
            if q.stats().drops_aqm > before {
                first_signal.get_or_insert(t);
            }
        }
        let mut out = vec![];
        q.take_dropped(&mut out);
        assert!(marks > 0 && !out.is_empty(), "marks {marks} drops {}", out.len());
        assert!(out.iter().all(|p| !p.ect), "an ECT packet was dropped");
        assert!(first_signal.unwrap() > t0 + 100 * MS, "signal before one interval");
    }
}
