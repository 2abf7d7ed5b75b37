//! One direction of the emulated path as pure logic (no I/O, time passed in), so it can be unit
//! tested: a bottleneck queue served at `rate_bps` (IP bytes), then random loss ("on the
//! wire": a lost packet has used its serialisation time), then the delay line (propagation
//! delay + jitter; netem-like independent per-packet delays when `reorder`, else order kept by
//! never delivering before the previous packet).
//!
//! The queue has two arms, as the simulator's link:
//! * **drop-tail** (the fast path): ccbench-queue's `ScheduledDropTail`, the simulator's
//!   drop-tail too: served at a fixed rate in FIFO order, each packet's departure time is known
//!   when it arrives, so the packet goes straight into the delay line keyed by its delivery
//!   time (`Verdict::Deliver`).
//! * **every other discipline** (CoDel, FQ-CoDel, PIE, RED, fq; the scenario's `aqm` and
//!   `aqm_params`, built by `ccbench_queue::aqm::build`): a [`ServedQueue`] that
//!   holds the packet (`Verdict::Queued`) and decides at dequeue; loss, jitter and delay are
//!   drawn when a packet leaves it. What happens to held packets is reported as [`Outcome`]s
//!   (`take_outcomes`), which the forwarding loop settles: deliver (rewriting the ECN field to
//!   CE when marked), or free the slot of a dropped or lost packet.
//!
//! A trace-driven direction (`DirConfig::trace`, Mahimahi format) always takes the served arm,
//! with drop-tail as a FIFO discipline unless `aqm` names another: its transmitter is the
//! trace's `TraceServer` (ccbench-queue's `trace` module), started at the emulator's start.
//!
//! Both transmitters carry the rate division's remainder (`Rounding::CarryRemainder`) so that
//! the rate is exact on average against the real clock.
use crate::config::DirConfig;
use crate::measured::UnimpairedSlots;
use crate::propagation::Propagation;
use crate::served::{Arrival, Left, ServedQueue};
pub use crate::stats::Counters;
use ccbench_queue::{aqm, Limit, QueueStats, Rounding, ScheduledDropTail, Server, TraceServer};
// The loss and jitter models (propagation.rs), the RNG and the disciplines' construction are the
// simulator's own: both backends draw a packet's fate and delay, and build the queue, from the
// same code.
use ccbench_sim::rng::stream_seed;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver at this CLOCK_MONOTONIC time (ns).
    Deliver(u64),
    Dropped,
    Lost,
    /// Held by the queue discipline: its fate comes later as an [`Outcome`].
    Queued,
}

/// The fate of a packet that a queue discipline held (the AQM arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub slot: u32,
    pub len: u32,
    /// `Deliver(t)`, `Dropped` (by the discipline) or `Lost` (random loss after the queue).
    pub verdict: Verdict,
    /// Marked Congestion Experienced by the discipline: rewrite the ECN field before delivery.
    pub ce: bool,
}

enum Queue {
    Fast(ScheduledDropTail),
    Served(Box<ServedQueue>),
}

pub struct PathModel {
    /// Loss and the delay line after the bottleneck.
    propagation: Propagation,
    /// The bottleneck: queue discipline and transmitter.
    queue: Queue,
    /// Scratch for the served queue's departures, and the outcomes not yet taken.
    left: Vec<Left>,
    outcomes: Vec<Outcome>,
    /// Held packets that meet no loss or jitter (setup packets, measured.rs).
    unimpaired: UnimpairedSlots,
    pub counters: Counters,
}

impl PathModel {
    pub fn new(c: &DirConfig) -> Self {
        let limit = Limit::from(c.buffer);
        // PIE's and RED's random streams are named after the direction, like loss and jitter.
        let seed = stream_seed(c.seed, &format!("{}/aqm", c.stream()));
        // A trace link always takes the served arm (drop-tail as a FIFO discipline).
        let served = c.serve_droptail_at_dequeue || c.trace.is_some();
        let qdisc = match aqm::build(&c.aqm, &c.aqm_params, c.buffer, c.rate_bps, seed) {
            None if served => Some(aqm::droptail_served(c.buffer)),
            q => q,
        };
        let queue = match (qdisc, &c.trace) {
            // origin 0 until the forwarding loop calls `start_trace_at`
            (Some(q), Some(t)) => {
                Queue::Served(Box::new(ServedQueue::with_server(q, Server::Trace(TraceServer::new(t.clone(), 0)))))
            }
            (Some(q), None) => Queue::Served(Box::new(ServedQueue::new(q, c.rate_bps))),
            (None, _) => Queue::Fast(ScheduledDropTail::new(c.rate_bps, limit, Rounding::CarryRemainder)),
        };
        PathModel {
            propagation: Propagation::new(c),
            queue,
            left: Vec::new(),
            outcomes: Vec::new(),
            unimpaired: UnimpairedSlots::default(),
            counters: Counters::default(),
        }
    }

    /// Start a trace link's trace at `t0` on CLOCK_MONOTONIC (the emulator's start, the
    /// simulator's time 0), before the first packet; no-op otherwise.
    pub fn start_trace_at(&mut self, t0: u64) {
        if let Queue::Served(q) = &mut self.queue {
            q.set_trace_origin(t0);
        }
    }

    /// The queue decides at dequeue (AQM arm): arrivals need `offer` with their slot, flow
    /// hash and ECT, and held packets come back through `take_outcomes`.
    #[inline]
    pub fn is_served(&self) -> bool {
        matches!(self.queue, Queue::Served(_))
    }

    /// The queue discipline's counters (drops, marks, backlog maxima).
    pub fn queue_stats(&self) -> QueueStats {
        match &self.queue {
            Queue::Fast(q) => q.stats.clone(),
            Queue::Served(q) => q.stats().clone(),
        }
    }

    /// IP bytes whose transmission has started (fast path: accepted, all of which will be sent).
    pub fn bytes_served(&self) -> u64 {
        match &self.queue {
            Queue::Fast(q) => q.bytes_served,
            Queue::Served(q) => q.bytes_served,
        }
    }

    /// Packets the discipline holds (AQM arm; the fast path holds none: they are in the delay line).
    pub fn held_packets(&self) -> u64 {
        match &self.queue {
            Queue::Fast(_) => 0,
            Queue::Served(q) => q.backlog_packets(),
        }
    }

    /// Bytes waiting in the queue at `now` (the packet being serialised is not counted, as a
    /// Linux qdisc's backlog does not count the packet the NIC is sending).
    pub fn backlog_bytes(&mut self, now: u64) -> u64 {
        match &mut self.queue {
            Queue::Fast(q) => q.backlog_bytes(now),
            Queue::Served(q) => q.backlog_bytes(),
        }
    }

    /// IP bytes that have completely left the bottleneck by `now` (cumulative).
    pub fn departed_bytes(&mut self, now: u64) -> u64 {
        match &mut self.queue {
            Queue::Fast(q) => q.departed_bytes(now),
            Queue::Served(q) => q.departed_bytes(now),
        }
    }

    /// A packet of `len` IP bytes arrives at `now` (CLOCK_MONOTONIC ns) at a drop-tail
    /// bottleneck (the fast path; see `offer` for both arms).
    #[cfg(test)]
    pub fn arrive(&mut self, now: u64, len: u32) -> Verdict {
        self.arrive_impaired(now, len, true)
    }

    /// `arrive` for a packet that meets the loss and jitter only if `impaired`.
    pub fn arrive_impaired(&mut self, now: u64, len: u32, impaired: bool) -> Verdict {
        let Queue::Fast(q) = &mut self.queue else {
            panic!("arrive() is the drop-tail fast path; a served queue takes packets through offer()")
        };
        self.counters.packets_in += 1;
        self.counters.bytes_in += len as u64;
        let Some(link_free_ns) = q.offer(now, len) else {
            return Verdict::Dropped;
        };
        self.after_queue(link_free_ns, impaired)
    }

    /// A packet arrives at `now`: through the fast path (`Deliver`/`Dropped`/`Lost`), or held
    /// by the discipline (`Queued`; its fate, and that of packets the discipline sent or
    /// dropped meanwhile, is in `take_outcomes`).
    pub fn offer(&mut self, now: u64, a: Arrival) -> Verdict {
        let Queue::Served(q) = &mut self.queue else {
            return self.arrive_impaired(now, a.len, a.impaired);
        };
        self.counters.packets_in += 1;
        self.counters.bytes_in += a.len as u64;
        self.unimpaired.hold(a.slot, a.impaired);
        q.enqueue(now, a, &mut self.left);
        self.settle_left();
        Verdict::Queued
    }

    /// Run the AQM arm's transmitter up to `now` (no-op on the fast path).
    pub fn serve(&mut self, now: u64) {
        if let Queue::Served(q) = &mut self.queue {
            q.serve_until(now, &mut self.left);
            self.settle_left();
        }
    }

    /// When the AQM arm next needs `serve` (the transmitter frees, or fq's next pacing time);
    /// None on the fast path or with nothing held.
    pub fn next_service(&self) -> Option<u64> {
        match &self.queue {
            Queue::Served(q) => q.next_due(),
            Queue::Fast(_) => None,
        }
    }

    /// Move the outcomes of held packets to `out` (which is cleared first).
    pub fn take_outcomes(&mut self, out: &mut Vec<Outcome>) {
        out.clear();
        std::mem::swap(out, &mut self.outcomes);
    }

    /// Turn the served queue's departures into outcomes: loss and delay after the queue.
    fn settle_left(&mut self) {
        let mut left = std::mem::take(&mut self.left);
        for l in left.drain(..) {
            let o = match l {
                Left::Dropped { slot, len } => {
                    self.unimpaired.release(slot);
                    Outcome { slot, len, verdict: Verdict::Dropped, ce: false }
                }
                Left::Sent { slot, len, tx_end, ce } => {
                    self.counters.ce_marked += ce as u64;
                    let impaired = self.unimpaired.release(slot);
                    Outcome { slot, len, verdict: self.after_queue(tx_end, impaired), ce }
                }
            };
            self.outcomes.push(o);
        }
        self.left = left;
    }

    /// Loss and the delay line for a packet whose transmission ends at `link_free_ns`.
    #[inline]
    fn after_queue(&mut self, link_free_ns: u64, impaired: bool) -> Verdict {
        match self.propagation.after(link_free_ns, impaired) {
            Some(t) => Verdict::Deliver(t),
            None => {
                self.counters.lost += 1;
                Verdict::Lost
            }
        }
    }
}

/// The delay line: packets (buffer slot, length) ordered by delivery time; ties keep arrival order.
pub struct DelayLine {
    heap: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    seq: u64,
}

impl DelayLine {
    pub fn new() -> Self {
        DelayLine { heap: BinaryHeap::with_capacity(8192), seq: 0 }
    }
    #[inline]
    pub fn push(&mut self, t: u64, slot: u32, len: u32) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, slot, len)));
    }
    #[inline]
    pub fn next_time(&self) -> Option<u64> {
        self.heap.peek().map(|r| r.0 .0)
    }
    /// Pop the earliest packet if it is due at `now`: (due time, slot, len).
    #[inline]
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, u32, u32)> {
        match self.heap.peek() {
            Some(r) if r.0 .0 <= now => {
                let Reverse((t, _, slot, len)) = self.heap.pop().unwrap();
                Some((t, slot, len))
            }
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::*;
    use crate::config::{JitterDist, LossConfig};
    use ccbench_sim::rng::Rng;
    use std::sync::Arc;

    fn dir(loss: LossConfig, jitter: u64, dist: JitterDist, buffer: BufferConfig) -> DirConfig {
        DirConfig {
            name: "data",
            rate_bps: 12_000_000, // 1 ms per 1500 B
            delay_ns: 25_000_000,
            jitter_ns: jitter,
            jitter_dist: dist,
            reorder: true,
            loss,
            buffer,
            aqm: "droptail".into(),
            aqm_params: Default::default(),
            serve_droptail_at_dequeue: false,
            trace: None,
            seed: 1,
            sample_interval_ns: 0,
            measured_tcp_ports: Vec::new(),
            access: None,
        }
    }

    const MS: u64 = 1_000_000;
    const T0: u64 = 1_000_000_000;

    /// Outcomes by slot, with the time they were reported at.
    fn settle(m: &mut PathModel, now: u64, fates: &mut std::collections::HashMap<u32, (Outcome, u64)>) {
        let mut out = Vec::new();
        m.take_outcomes(&mut out);
        for o in out {
            assert!(fates.insert(o.slot, (o, now)).is_none(), "slot {} settled twice", o.slot);
        }
    }

    fn arrival(slot: u32, len: u32, flow: u32, ect: bool) -> Arrival {
        Arrival { slot, len, flow, ect, l4s: false, impaired: true }
    }

    #[test]
    fn droptail_through_the_aqm_arm_delivers_at_the_fast_paths_times() {
        // Bursts and gaps around the service rate, mixed sizes, a byte limit that bites, loss
        // and jitter: the FIFO discipline served at dequeue must give every packet the fate
        // and delivery time of the departure-on-arrival fast path. Loss and jitter are drawn in
        // transmission order in both arms (FIFO = arrival order of accepted packets), so the
        // random streams line up too.
        for (buffer, loss, jitter, reorder) in [
            (BufferConfig::Packets(5), LossConfig::None, 0, true),
            (BufferConfig::Bytes(9000), LossConfig::Bernoulli { p: 0.05 }, 3 * MS, true),
            (BufferConfig::Packets(40), LossConfig::Bernoulli { p: 0.01 }, 2 * MS, false),
        ] {
            let mut c = dir(loss, jitter, JitterDist::Normal, buffer);
            c.reorder = reorder;
            let mut fast = PathModel::new(&c);
            c.serve_droptail_at_dequeue = true;
            let mut aqm = PathModel::new(&c);
            assert!(!fast.is_served() && aqm.is_served());
            let mut rng = Rng::new(7);
            let mut fates = std::collections::HashMap::new();
            let mut want = Vec::new();
            let mut t = T0;
            for i in 0..20_000u32 {
                // phases of 500 packets: overload (mostly back-to-back bursts: the buffer
                // fills and drops) and underload (gaps of up to 4 packet times: the link idles),
                // and arrivals exactly at a transmission's end now and then
                let over = (i / 500) % 2 == 0;
                t += match rng.below(10) {
                    0..=5 => rng.below(if over { 100_000 } else { 300_000 }),
                    6..=8 => rng.below(if over { MS } else { 4 * MS }),
                    _ => MS,
                };
                let len = [1500, 52, 1500, 576][rng.below(4) as usize];
                want.push(fast.arrive(t, len));
                assert_eq!(aqm.offer(t, arrival(i, len, 0, false)), Verdict::Queued);
                settle(&mut aqm, t, &mut fates);
                assert_eq!(aqm.backlog_bytes(t), fast.backlog_bytes(t), "backlog at packet {i}");
                assert_eq!(aqm.departed_bytes(t), fast.departed_bytes(t), "departed by packet {i}");
            }
            aqm.serve(u64::MAX / 2);
            settle(&mut aqm, u64::MAX / 2, &mut fates);
            assert!(aqm.next_service().is_none() && aqm.held_packets() == 0);
            for (i, w) in want.iter().enumerate() {
                assert_eq!(fates[&(i as u32)].0.verdict, *w, "packet {i} ({buffer:?})");
            }
            let drops = want.iter().filter(|v| **v == Verdict::Dropped).count() as u64;
            assert!(drops > 100, "the buffer must bite for the test to mean something: {drops}");
            let (f, a) = (fast.queue_stats(), aqm.queue_stats());
            assert_eq!(
                (f.drops(), f.max_backlog_bytes, f.max_backlog_packets),
                (a.drops(), a.max_backlog_bytes, a.max_backlog_packets)
            );
            assert_eq!(fast.bytes_served(), aqm.bytes_served());
            assert_eq!(fast.counters.lost, aqm.counters.lost);
        }
    }

    /// CoDel (target 5 ms, interval 100 ms) behind a 12 Mbit/s link (1 ms per packet): a burst
    /// of `standing` packets at T0, then one packet per ms, exactly the service rate, so the
    /// queue stays put except for what CoDel removes. Returns (outcomes, arrival times).
    fn codel_standing_queue(ecn: bool, ect: bool, standing: u32) -> (PathModel, Vec<(Outcome, u64)>, Vec<u64>) {
        let mut c = dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(1000));
        c.aqm = "codel".into();
        c.aqm_params = AqmParams { ecn: Some(ecn), ..Default::default() };
        let mut m = PathModel::new(&c);
        let mut fates = std::collections::HashMap::new();
        let mut arrived = Vec::new();
        let mut slot = 0;
        for k in 0..2000u64 {
            let n = if k == 0 { standing } else { 1 };
            let t = T0 + k * MS;
            for _ in 0..n {
                m.offer(t, arrival(slot, 1500, 1, ect));
                arrived.push(t);
                slot += 1;
            }
            settle(&mut m, t, &mut fates);
        }
        m.serve(u64::MAX / 2);
        settle(&mut m, u64::MAX / 2, &mut fates);
        let mut v: Vec<(Outcome, u64)> = fates.into_values().collect();
        v.sort_by_key(|(o, _)| o.slot);
        (m, v, arrived)
    }

    #[test]
    fn codel_drops_a_standing_queue_down_to_its_target() {
        let (m, v, arrived) = codel_standing_queue(false, false, 20);
        let drops: Vec<u64> = v.iter().filter(|(o, _)| o.verdict == Verdict::Dropped).map(|(_, at)| *at).collect();
        // RFC 8289 §3.2: the first drop comes once the sojourn has stayed above target for an
        // interval: it rose above 5 ms with the 7th packet sent (T0 + 6 ms), so not before
        // T0 + 106 ms (reported at the next arrival: within 1 ms).
        assert!(drops[0] >= T0 + 106 * MS && drops[0] <= T0 + 108 * MS, "first drop at {} ms", (drops[0] - T0) / MS);
        // Each drop takes 1 ms off a queue that otherwise stays put; dropping stops when the
        // sojourn is back under 5 ms: about 20 - 5 = 15 drops, then none.
        assert!((13..=17).contains(&drops.len()), "{} drops", drops.len());
        // Sojourn of the last second's packets: delivery - delay - 1 ms serialisation - arrival.
        for (o, _) in v.iter().filter(|(o, _)| arrived[o.slot as usize] > T0 + 1000 * MS) {
            let Verdict::Deliver(d) = o.verdict else { panic!("no drops once below target") };
            let sojourn = d - 25 * MS - MS - arrived[o.slot as usize];
            assert!(sojourn <= 5 * MS + MS, "sojourn {} µs", sojourn / 1000);
        }
        let q = m.queue_stats();
        assert_eq!((q.drops_aqm, q.marks, m.counters.ce_marked), (drops.len() as u64, 0, 0));
    }

    #[test]
    fn codel_with_ecn_marks_ect_packets_instead_of_dropping() {
        let (m, v, _) = codel_standing_queue(true, true, 20);
        let marked = v.iter().filter(|(o, _)| o.ce).count() as u64;
        assert!(v.iter().all(|(o, _)| matches!(o.verdict, Verdict::Deliver(_))), "nothing dropped");
        // Marks do not shorten the queue, so CoDel stays in its dropping state and marks at
        // its ever faster control-law pace (interval / sqrt(count)): far more than the 15
        // drops that emptied the queue above.
        assert!(marked > 50, "{marked} marks");
        assert_eq!(m.counters.ce_marked, marked);
        assert_eq!(m.queue_stats().drops(), 0);
        // Not-ECT packets under the same ECN-enabled CoDel are dropped (RFC 3168 §5, Linux
        // INET_ECN_set_ce fails), as without ECN.
        let (m, v, _) = codel_standing_queue(true, false, 20);
        assert_eq!(m.counters.ce_marked, 0);
        assert!(v.iter().filter(|(o, _)| o.verdict == Verdict::Dropped).count() >= 13);
    }

    /// Step marking at K = 10 packets behind a 12 Mbit/s link (1 ms per packet): a burst of 30
    /// packets at T0. The first goes to the wire at once, so packet i finds i − 1 queued and is
    /// marked from i = 12 on (11 > K): 18 marks if ECT, none and no drop if not (only the
    /// tail-drop limit drops Not-ECT packets).
    #[test]
    fn step_marks_ect_packets_arriving_above_k_and_leaves_the_others() {
        for ect in [true, false] {
            let mut c = dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(1000));
            c.aqm = "step".into();
            c.aqm_params = AqmParams { k_packets: Some(10), ..Default::default() };
            let mut m = PathModel::new(&c);
            let mut fates = std::collections::HashMap::new();
            for slot in 0..30 {
                m.offer(T0, arrival(slot, 1500, 1, ect));
            }
            m.serve(u64::MAX / 2);
            settle(&mut m, u64::MAX / 2, &mut fates);
            assert_eq!(fates.len(), 30);
            assert!(fates.values().all(|(o, _)| matches!(o.verdict, Verdict::Deliver(_))), "nothing dropped");
            let marked: Vec<u32> = (0..30).filter(|s| fates[s].0.ce).collect();
            let want: Vec<u32> = if ect { (12..30).collect() } else { vec![] };
            assert_eq!(marked, want, "ect {ect}");
            assert_eq!((m.counters.ce_marked, m.queue_stats().drops()), (want.len() as u64, 0));
        }
    }

    #[test]
    fn fq_codel_serves_a_sparse_flow_ahead_of_a_standing_queue() {
        // A bulk flow keeps 50 packets queued (a burst, then one per ms at the service rate);
        // a ping-like flow sends a small packet every 10 ms. FQ-CoDel puts the sparse flow on
        // the new-flows list, so its packets wait at most for the packet on the wire (1 ms),
        // not behind the bulk queue (~50 ms, less what CoDel drops).
        let mut c = dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(1000));
        c.aqm = "fq_codel".into();
        let mut m = PathModel::new(&c);
        let mut fates = std::collections::HashMap::new();
        let (mut slot, mut sparse) = (0u32, Vec::new());
        let bulk = ccbench_queue::flow_hash(1);
        let ping = ccbench_queue::flow_hash(2);
        for k in 0..1000u64 {
            let t = T0 + k * MS;
            for _ in 0..if k == 0 { 50 } else { 1 } {
                m.offer(t, arrival(slot, 1500, bulk, false));
                slot += 1;
            }
            if k % 10 == 5 {
                m.offer(t + 300_000, arrival(slot, 84, ping, false));
                sparse.push((slot, t + 300_000));
                slot += 1;
            }
            settle(&mut m, t, &mut fates);
        }
        m.serve(u64::MAX / 2);
        settle(&mut m, u64::MAX / 2, &mut fates);
        for (s, at) in sparse {
            let Verdict::Deliver(d) = fates[&s].0.verdict else { panic!("sparse packet dropped") };
            let wait = d - 25 * MS - at;
            assert!(wait <= MS + MS / 10, "sparse packet waited {} µs", wait / 1000);
        }
    }

    #[test]
    fn trace_link_delivers_at_the_opportunities() {
        // Trace 1, 1, 4 (ms), looping every 4 ms, started at T0: opportunities at T0 + 1, 1, 4,
        // 5, 5, 8, 9, 9, 12 ms … A burst of 9 full-size packets at T0 finds the link waiting for
        // its first opportunity: a 7-packet buffer keeps 7 (they leave at the first 7
        // opportunities) and drops 2.
        let mut c = dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(7));
        c.trace = Some(Arc::new(ccbench_queue::Trace::from_ms(&[1, 1, 4]).unwrap()));
        let mut m = PathModel::new(&c);
        m.start_trace_at(T0);
        assert!(m.is_served());
        let mut fates = std::collections::HashMap::new();
        for slot in 0..9 {
            m.offer(T0, arrival(slot, 1500, 1, false));
        }
        assert_eq!(m.next_service(), Some(T0 + MS), "idle link: the first dequeue waits for the first opportunity");
        m.serve(T0 + 100 * MS);
        settle(&mut m, T0 + 100 * MS, &mut fates);
        let leave = [1, 1, 4, 5, 5, 8, 9];
        for (slot, ms) in leave.iter().enumerate() {
            assert_eq!(fates[&(slot as u32)].0.verdict, Verdict::Deliver(T0 + ms * MS + 25 * MS), "packet {slot}");
        }
        assert_eq!(fates[&7].0.verdict, Verdict::Dropped);
        assert_eq!(fates[&8].0.verdict, Verdict::Dropped);
        // ACK-sized packets share an opportunity: 28 of 52 bytes fit in 1500, the 29th spills
        // into the next one, the second at 101 ms (the idle link lost the ones in between).
        let t = T0 + 101 * MS; // opportunities at 101, 101, 104 ms
        for slot in 100..129 {
            m.offer(t, arrival(slot, 52, 2, false));
        }
        m.serve(t + 10 * MS);
        settle(&mut m, t + 10 * MS, &mut fates);
        for slot in 100..128 {
            assert_eq!(fates[&slot].0.verdict, Verdict::Deliver(t + 25 * MS), "ACK {slot}");
        }
        assert_eq!(fates[&128].0.verdict, Verdict::Deliver(t + 25 * MS), "the second opportunity at 101 ms");
    }

    /// Setup packets (measured.rs) draw no loss or jitter, so the packets that do meet the same
    /// draws as on a link that never saw the setup packets — on the fast path and through the
    /// served queue (whose departures are settled later, by slot).
    #[test]
    fn unimpaired_packets_draw_nothing() {
        for served in [false, true] {
            let mut c = dir(LossConfig::Bernoulli { p: 0.3 }, 3 * MS, JitterDist::Uniform, BufferConfig::Packets(1000));
            c.serve_droptail_at_dequeue = served;
            let (mut with_setup, mut without) = (PathModel::new(&c), PathModel::new(&c));
            let fate = |m: &mut PathModel, t: u64, slot: u32, impaired: bool| -> Verdict {
                let v = m.offer(t, Arrival { slot, len: 1500, flow: 1, ect: false, l4s: false, impaired });
                if v != Verdict::Queued {
                    return v;
                }
                m.serve(t + 10 * MS);
                let mut out = Vec::new();
                m.take_outcomes(&mut out);
                out.iter().find(|o| o.slot == slot).expect("served within 10 ms").verdict
            };
            let mut kept = 0;
            for n in 0..400u32 {
                let t = T0 + n as u64 * 20 * MS; // the link is idle at every arrival
                                                 // every third packet of `with_setup` is a setup packet: never lost, no jitter
                if n % 3 == 0 {
                    assert_eq!(fate(&mut with_setup, t, n, false), Verdict::Deliver(t + MS + 25 * MS));
                    continue;
                }
                assert_eq!(fate(&mut with_setup, t, n, true), fate(&mut without, t, n, true), "packet {n}");
                kept += 1;
            }
            assert_eq!(with_setup.counters.lost, without.counters.lost);
            assert!(without.counters.lost > 50 && kept > 250, "the draws are exercised");
        }
    }

    #[test]
    fn serialisation_and_droptail() {
        let mut m = PathModel::new(&dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(3)));
        // Burst of 6 at t=1 s: first served at once, 3 wait, 2 dropped.
        let t0 = 1_000_000_000;
        let v: Vec<_> = (0..6).map(|_| m.arrive(t0, 1500)).collect();
        assert_eq!(v[0], Verdict::Deliver(t0 + 1_000_000 + 25_000_000));
        assert_eq!(v[3], Verdict::Deliver(t0 + 4_000_000 + 25_000_000));
        assert_eq!(v[4], Verdict::Dropped);
        assert_eq!(v[5], Verdict::Dropped);
        assert_eq!(m.backlog_bytes(t0), 4500);
        assert_eq!(m.backlog_bytes(t0 + 1_000_000), 3000);
        assert_eq!(m.backlog_bytes(t0 + 3_000_000), 0);
        let q = m.queue_stats();
        assert_eq!((q.drops_overlimit, q.max_backlog_packets, q.max_backlog_bytes), (2, 3, 4500));
        assert_eq!(m.bytes_served(), 6000, "4 packets accepted");
        // times must not go backwards: a fresh model for the departure counter
        let mut m = PathModel::new(&dir(LossConfig::None, 0, JitterDist::Uniform, BufferConfig::Packets(3)));
        for _ in 0..6 {
            m.arrive(t0, 1500);
        }
        assert_eq!(m.departed_bytes(t0 + 500_000), 0);
        assert_eq!(m.departed_bytes(t0 + 1_000_000), 1500);
        assert_eq!(m.departed_bytes(t0 + 3_500_000), 4500);
        assert_eq!(m.departed_bytes(t0 + 9_000_000), 6000);
    }

    #[test]
    fn bernoulli_rate() {
        let mut m = PathModel::new(&dir(
            LossConfig::Bernoulli { p: 0.05 },
            0,
            JitterDist::Uniform,
            BufferConfig::Packets(1000),
        ));
        let n = 200_000u64;
        for i in 0..n {
            m.arrive(i * 10_000_000, 100);
        }
        let f = m.counters.lost as f64 / n as f64;
        assert!((f - 0.05).abs() < 0.003, "{f}");
    }

    #[test]
    fn gilbert_stationary_loss() {
        // p=0.01, r=0.2, h=0, k=1: P(bad) = p/(p+r) = 0.0476
        let mut m = PathModel::new(&dir(
            LossConfig::Gilbert { p: 0.01, r: 0.2, h: 0.0, k: 1.0 },
            0,
            JitterDist::Uniform,
            BufferConfig::Packets(1000),
        ));
        let n = 400_000u64;
        for i in 0..n {
            m.arrive(i * 10_000_000, 100);
        }
        let f = m.counters.lost as f64 / n as f64;
        assert!((f - 0.0476).abs() < 0.004, "{f}");
    }

    #[test]
    fn jitter_std_matches() {
        for dist in [JitterDist::Uniform, JitterDist::Normal, JitterDist::Pareto] {
            let mut m = PathModel::new(&dir(LossConfig::None, 2_000_000, dist, BufferConfig::Packets(1000)));
            let n = 200_000u64;
            let mut s = 0.0;
            let mut s2 = 0.0;
            for i in 0..n {
                let t = i * 10_000_000;
                if let Verdict::Deliver(d) = m.arrive(t, 1500) {
                    let x = (d - t - 1_000_000) as f64 - 25_000_000.0;
                    s += x;
                    s2 += x * x;
                }
            }
            let mean = s / n as f64;
            let std = (s2 / n as f64 - mean * mean).sqrt();
            let want = if dist == JitterDist::Uniform { 2e6 / 3f64.sqrt() } else { 2e6 };
            assert!(mean.abs() < 30_000.0, "{dist:?} mean {mean}");
            assert!((std / want - 1.0).abs() < 0.08, "{dist:?} std {std} want {want}");
        }
    }

    #[test]
    fn order_kept_without_reorder() {
        let mut c = dir(LossConfig::None, 5_000_000, JitterDist::Uniform, BufferConfig::Packets(1000));
        c.reorder = false;
        let mut m = PathModel::new(&c);
        let mut last = 0;
        for i in 0..10_000u64 {
            if let Verdict::Deliver(d) = m.arrive(i * 100_000, 100) {
                assert!(d >= last);
                last = d;
            }
        }
    }
}
