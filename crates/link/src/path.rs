//! One direction of the emulated path as pure logic (no I/O, time passed in), so it can be unit
//! tested: a drop-tail bottleneck queue served at `rate_bps` (IP bytes), then random loss
//! ("on the wire": a lost packet has used its serialisation time), then the delay line
//! (propagation delay + jitter; netem-like independent per-packet delays when `reorder`, else
//! order kept by never delivering before the previous packet).
//!
//! The queue is ccbench-queue's `ScheduledDropTail`, the simulator's drop-tail too: served at a
//! fixed rate in FIFO order, each packet's departure time is known when it arrives, so the
//! packet goes straight into the delay line keyed by its delivery time. The emulator's
//! transmitter carries the rate division's remainder (`Rounding::CarryRemainder`) so that the
//! rate is exact on average against the real clock.
use crate::config::{BufferConfig, DirConfig};
use ccbench_queue::{Limit, Rounding, ScheduledDropTail};
// The loss and jitter models and the RNG are the simulator's own: both backends draw a
// packet's fate and delay from the same code.
use ccbench_sim::link::jitter::Jitter;
use ccbench_sim::link::loss::LossModel;
use ccbench_sim::rng::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Counters of the path outside the queue (the queue's drops, bytes served and backlog maxima
/// are in `PathModel::queue()`).
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    /// Removed by the random loss model.
    pub lost: u64,
    pub write_errors: u64,
}

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver at this CLOCK_MONOTONIC time (ns).
    Deliver(u64),
    Dropped,
    Lost,
}

pub struct PathModel {
    delay_ns: u64,
    jitter: Option<Jitter>,
    reorder: bool,
    loss: LossModel,
    /// The bottleneck: drop-tail buffer and transmitter.
    queue: ScheduledDropTail,
    last_delivery_ns: u64,
    loss_rng: Rng,
    jitter_rng: Rng,
    pub counters: Counters,
}

impl PathModel {
    pub fn new(c: &DirConfig) -> Self {
        let limit = match c.buffer {
            BufferConfig::Bytes(b) => Limit::Bytes(b),
            BufferConfig::Packets(p) => Limit::Packets(p),
        };
        PathModel {
            delay_ns: c.delay_ns,
            jitter: (c.jitter_ns > 0).then_some(Jitter { dist: c.jitter_dist, jitter_ns: c.jitter_ns }),
            reorder: c.reorder,
            loss: LossModel::from_config(&c.loss),
            queue: ScheduledDropTail::new(c.rate_bps, limit, Rounding::CarryRemainder),
            last_delivery_ns: 0,
            loss_rng: Rng::stream(c.seed, &format!("link.{}.loss", c.name)),
            jitter_rng: Rng::stream(c.seed, &format!("link.{}.jitter", c.name)),
            counters: Counters::default(),
        }
    }

    /// The bottleneck queue: its `stats` (drops, backlog maxima) and `bytes_served`.
    pub fn queue(&self) -> &ScheduledDropTail {
        &self.queue
    }

    /// Bytes waiting in the queue at `now` (the packet being serialised is not counted, as a
    /// Linux qdisc's backlog does not count the packet the NIC is sending).
    pub fn backlog_bytes(&mut self, now: u64) -> u64 {
        self.queue.backlog_bytes(now)
    }

    /// IP bytes that have completely left the bottleneck by `now` (cumulative).
    pub fn departed_bytes(&mut self, now: u64) -> u64 {
        self.queue.departed_bytes(now)
    }

    /// A packet of `len` IP bytes arrives at `now` (CLOCK_MONOTONIC ns).
    pub fn arrive(&mut self, now: u64, len: u32) -> Verdict {
        self.counters.packets_in += 1;
        self.counters.bytes_in += len as u64;
        let Some(link_free_ns) = self.queue.offer(now, len) else {
            return Verdict::Dropped;
        };
        if self.loss.lose(&mut self.loss_rng) {
            self.counters.lost += 1;
            return Verdict::Lost;
        }
        let d = match &self.jitter {
            Some(j) => j.sample(self.delay_ns, &mut self.jitter_rng),
            None => self.delay_ns,
        };
        let mut t = link_free_ns + d;
        if !self.reorder {
            t = t.max(self.last_delivery_ns);
        }
        self.last_delivery_ns = self.last_delivery_ns.max(t);
        Verdict::Deliver(t)
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
    use crate::config::{JitterDist, LossConfig};
    use crate::config::*;

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
            seed: 1,
            sample_interval_ns: 0,
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
        let q = m.queue();
        assert_eq!((q.stats.drops_overlimit, q.stats.max_backlog_packets, q.stats.max_backlog_bytes), (2, 3, 4500));
        assert_eq!(q.bytes_served, 6000, "4 packets accepted");
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
        let mut m = PathModel::new(&dir(LossConfig::Bernoulli { p: 0.05 }, 0, JitterDist::Uniform, BufferConfig::Packets(1000)));
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
        let mut m = PathModel::new(&dir(LossConfig::Gilbert { p: 0.01, r: 0.2, h: 0.0, k: 1.0 }, 0, JitterDist::Uniform, BufferConfig::Packets(1000)));
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

