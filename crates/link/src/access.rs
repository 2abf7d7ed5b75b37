//! Access links with a rate (`access.rate`), as the simulator builds them
//! (crates/sim/src/topology.rs `Dumbbell::build`): every host has its own link per direction,
//! a drop-tail FIFO of `ACCESS_QUEUE_PKTS` packets (a host's txqueuelen) serialised at the
//! access rate, followed by the access delay. A direction of the emulator (data: sender →
//! receiver, or ACK) therefore passes each packet through
//!
//!   entry link of its host (sender uplink; receiver uplink on the ACK direction)
//!   → bottleneck (path.rs or wifi.rs) → exit link of its host (receiver / sender downlink).
//!
//! Both links are ccbench-queue's `ScheduledDropTail`, the code the simulator's drop-tail links
//! run: a packet's transmission end is known when it arrives, so an access link needs no
//! events of its own, only a time-ordered line for what it has sent. Entry: a packet enters
//! the bottleneck at its transmission end + the access delay. Exit: the bottleneck's delay
//! line already carries the exit link's delay (config.rs `directions`), and a FIFO served at a
//! fixed rate behind a constant delay releases every packet at the time it would have with the
//! delay after it, so the exit link serialises a packet at its due time and hands it out at
//! its transmission end. Base RTT and every queueing delay are then the simulator's.
//!
//! Which host a packet belongs to: hostof.rs. A packet of no host is not serialised.
//!
//! Follows this repository's simulator (crates/sim/src/topology.rs); the buffer,
//! `ACCESS_QUEUE_PKTS` = 1000, is Linux's default txqueuelen (DEFAULT_TX_QUEUE_LEN,
//! include/net/pkt_sched.h, unchanged through v6.18).
use crate::hostof::HostOf;
use crate::path::DelayLine;
use ccbench_queue::{Limit, QueueStats, Rounding, ScheduledDropTail};
use ccbench_sim::topology::ACCESS_QUEUE_PKTS;
use serde::Serialize;

/// The scenario's access links: each host's rate (IP bits per second; the flow's own
/// `access_rate_bps`, else `access.rate_bps`) and the one-way delay of each link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessSpec {
    /// `access.rate_bps`: the rate of a host without its own.
    pub rate_bps: Option<u64>,
    /// Host f's own rate (flow f's `access_rate_bps`), where set.
    pub host_rates_bps: Vec<Option<u64>>,
    pub delay_ns: u64,
}

impl AccessSpec {
    /// The rate of `host`'s links; None: no serialisation (the access delay alone).
    #[inline]
    pub fn rate_of(&self, host: usize) -> Option<u64> {
        self.host_rates_bps.get(host).copied().flatten().or(self.rate_bps)
    }
}

/// One side's access links (entry or exit), one per host, made when a host first sends; None
/// for a host whose links have no rate.
pub struct AccessLinks {
    links: Vec<Option<ScheduledDropTail>>,
}

impl AccessLinks {
    pub fn new() -> Self {
        AccessLinks { links: Vec::new() }
    }

    /// Offer `len` IP bytes at `now` to `host`'s link: the end of its transmission (`now` on a
    /// link without a rate), or None when the host's buffer is full (drop-tail).
    #[inline]
    pub fn offer(&mut self, spec: &AccessSpec, now: u64, host: usize, len: u32) -> Option<u64> {
        while self.links.len() <= host {
            // CarryRemainder: the rate exact on average against the real clock, as path.rs
            let limit = Limit::Packets(ACCESS_QUEUE_PKTS);
            let rate = spec.rate_of(self.links.len());
            self.links.push(rate.map(|r| ScheduledDropTail::new(r, limit, Rounding::CarryRemainder)));
        }
        match &mut self.links[host] {
            Some(l) => l.offer(now, len),
            None => Some(now),
        }
    }

    /// Packets waiting (not yet in transmission) in `host`'s link at `now`.
    #[cfg(test)]
    pub fn backlog_packets(&mut self, host: usize, now: u64) -> u64 {
        self.links.get_mut(host).and_then(Option::as_mut).map_or(0, |l| l.backlog_packets(now))
    }

    /// All hosts' links together: counts summed, backlog maxima the largest of any one link.
    pub fn stats(&self) -> QueueStats {
        let mut s = QueueStats::default();
        for l in self.links.iter().flatten() {
            let q = &l.stats;
            s.enqueued += q.enqueued;
            s.dequeued += q.dequeued;
            s.drops_overlimit += q.drops_overlimit;
            s.max_backlog_bytes = s.max_backlog_bytes.max(q.max_backlog_bytes);
            s.max_backlog_packets = s.max_backlog_packets.max(q.max_backlog_packets);
        }
        s
    }
}

/// The access links of one direction around its bottleneck, and the packets between them and
/// the bottleneck or the host (buffer slot, length, due time).
pub struct AccessStage {
    spec: AccessSpec,
    hosts: HostOf,
    entry: AccessLinks,
    exit: AccessLinks,
    /// Sent by an entry link, due at the bottleneck.
    entering: DelayLine,
    /// Sent by an exit link, due at the far host.
    leaving: DelayLine,
}

impl AccessStage {
    pub fn new(spec: AccessSpec, measured_tcp_ports: &[u16]) -> Self {
        AccessStage {
            spec,
            hosts: HostOf::new(measured_tcp_ports),
            entry: AccessLinks::new(),
            exit: AccessLinks::new(),
            entering: DelayLine::new(),
            leaving: DelayLine::new(),
        }
    }

    /// A packet from the near host arrives at `now` in `slot`: false when its host's entry
    /// buffer is full (the caller drops it).
    #[inline]
    pub fn enter(&mut self, now: u64, pkt: &[u8], slot: u32) -> bool {
        let len = pkt.len() as u32;
        let sent = match self.hosts.of(pkt) {
            Some(h) => match self.entry.offer(&self.spec, now, h, len) {
                Some(end) => end,
                None => return false,
            },
            None => now,
        };
        self.entering.push(sent + self.spec.delay_ns, slot, len);
        true
    }

    /// The next packet due at the bottleneck by `now`: (due time, slot, length).
    #[inline]
    pub fn pop_entering(&mut self, now: u64) -> Option<(u64, u32, u32)> {
        self.entering.pop_due(now)
    }

    /// A packet the bottleneck's delay line released, due at `due`: false when its host's exit
    /// buffer is full (the caller drops it).
    #[inline]
    pub fn leave(&mut self, due: u64, pkt: &[u8], slot: u32) -> bool {
        let len = pkt.len() as u32;
        let sent = match self.hosts.of(pkt) {
            Some(h) => match self.exit.offer(&self.spec, due, h, len) {
                Some(end) => end,
                None => return false,
            },
            None => due,
        };
        self.leaving.push(sent, slot, len);
        true
    }

    /// The next packet due at the far host by `now`: (due time, slot, length).
    #[inline]
    pub fn pop_leaving(&mut self, now: u64) -> Option<(u64, u32, u32)> {
        self.leaving.pop_due(now)
    }

    /// When a held packet is next due (at the bottleneck or the far host).
    pub fn next_time(&self) -> Option<u64> {
        match (self.entering.next_time(), self.leaving.next_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Packets sent by an access link and not yet handed on.
    pub fn held(&self) -> usize {
        self.entering.len() + self.leaving.len()
    }

    pub fn report(&self) -> AccessJson {
        AccessJson {
            rate_bps: self.spec.rate_bps,
            host_rates_bps: self.spec.host_rates_bps.clone(),
            delay_ns: self.spec.delay_ns,
            entry: AccessSideJson::from(self.entry.stats()),
            exit: AccessSideJson::from(self.exit.stats()),
        }
    }
}

/// A direction's access links in the report (`access` of a direction; null without a rate).
#[derive(Debug, Clone, Serialize)]
pub struct AccessJson {
    rate_bps: Option<u64>,
    host_rates_bps: Vec<Option<u64>>,
    delay_ns: u64,
    /// The hosts' links in front of the bottleneck (sender uplinks on the data direction).
    entry: AccessSideJson,
    /// The hosts' links behind it (receiver downlinks on the data direction).
    exit: AccessSideJson,
}

#[derive(Debug, Clone, Serialize)]
pub struct AccessSideJson {
    packets: u64,
    dropped: u64,
    /// The largest backlog of any one host's link.
    max_backlog_packets: u64,
    max_backlog_bytes: u64,
}

impl From<QueueStats> for AccessSideJson {
    fn from(q: QueueStats) -> Self {
        AccessSideJson {
            packets: q.enqueued,
            dropped: q.drops_overlimit,
            max_backlog_packets: q.max_backlog_packets,
            max_backlog_bytes: q.max_backlog_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostof::tests::ipv4;

    const TCP: u8 = 6;
    const MS: u64 = 1_000_000;
    const T0: u64 = 1_000_000_000;

    /// 12 Mbit/s: a 1500-byte packet takes 1500 × 8 / 12e6 s = 1 ms, a 52-byte ACK 34 667 ns.
    fn stage(delay_ns: u64) -> AccessStage {
        AccessStage::new(AccessSpec { rate_bps: Some(12_000_000), host_rates_bps: vec![], delay_ns }, &[40000, 40001])
    }

    fn drain_entering(s: &mut AccessStage) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| s.pop_entering(u64::MAX).map(|(t, slot, _)| (t, slot))).collect()
    }

    #[test]
    fn serialisation_takes_bytes_over_rate_then_the_access_delay() {
        let mut s = stage(3 * MS);
        // three full packets back to back at T0: transmission ends 1, 2, 3 ms later, each then
        // 3 ms of access delay
        for slot in 0..3 {
            assert!(s.enter(T0, &ipv4(TCP, 40000, 5201, 1500), slot));
        }
        // an ACK-sized packet after the burst, when the link is idle again (T0 + 10 ms): it
        // waits for nothing and takes 52 × 8 / 12e6 s = 34 666.7 ns
        assert!(s.enter(T0 + 10 * MS, &ipv4(TCP, 40000, 5201, 52), 3));
        let got = drain_entering(&mut s);
        let ack_end = got[3].0 - 3 * MS - (T0 + 10 * MS);
        assert!((34_666..=34_667).contains(&ack_end), "{ack_end}");
        assert_eq!(&got[..3], &[(T0 + 4 * MS, 0), (T0 + 5 * MS, 1), (T0 + 6 * MS, 2)]);
        // nothing is due before its time
        assert!(s.enter(T0 + 20 * MS, &ipv4(TCP, 40000, 5201, 1500), 4));
        assert!(s.pop_entering(T0 + 23 * MS).is_none());
        assert_eq!(s.pop_entering(T0 + 24 * MS), Some((T0 + 24 * MS, 4, 1500)));
    }

    #[test]
    fn drop_tail_at_the_hosts_transmit_queue() {
        let mut s = stage(0);
        // A burst at one instant: the first packet goes straight onto the wire, the next
        // ACCESS_QUEUE_PKTS wait, and every one after that finds the buffer full.
        let n = ACCESS_QUEUE_PKTS as u32;
        let accepted = (0..n + 10).filter(|&i| s.enter(T0, &ipv4(TCP, 40000, 5201, 1500), i)).count();
        assert_eq!(accepted as u32, 1 + n);
        let r = s.entry.stats();
        assert_eq!((r.drops_overlimit, r.max_backlog_packets), (9, ACCESS_QUEUE_PKTS));
        // one packet time later one has started transmission: room for exactly one more
        assert!(s.enter(T0 + MS, &ipv4(TCP, 40000, 5201, 1500), 9000));
        assert!(!s.enter(T0 + MS, &ipv4(TCP, 40000, 5201, 1500), 9001));
    }

    #[test]
    fn each_host_has_its_own_link_and_hostless_packets_only_the_delay() {
        let mut s = stage(2 * MS);
        // host 0's link is backed up for 100 ms ...
        for slot in 0..100 {
            assert!(s.enter(T0, &ipv4(TCP, 40000, 5201, 1500), slot));
        }
        assert_eq!(s.entry.backlog_packets(0, T0), 99);
        // ... host 1's packet and a control-connection packet arriving meanwhile do not wait
        assert!(s.enter(T0 + MS / 2, &ipv4(TCP, 5202, 40001, 1500), 100));
        assert!(s.enter(T0 + MS / 2, &ipv4(TCP, 51234, 5201, 1500), 101));
        let got = drain_entering(&mut s);
        let at = |slot: u32| got.iter().find(|g| g.1 == slot).unwrap().0;
        assert_eq!(at(100), T0 + MS / 2 + MS + 2 * MS);
        assert_eq!(at(101), T0 + MS / 2 + 2 * MS);
        assert_eq!(at(99), T0 + 100 * MS + 2 * MS);
        assert_eq!(s.entry.backlog_packets(1, T0 + MS), 0);
    }

    #[test]
    fn a_host_s_own_rate_replaces_the_scenario_s_and_none_means_no_serialisation() {
        // host 0 at 4 Mbit/s (3 ms per 1500 B), host 1 at the scenario's 12 (1 ms), host 2
        // (port 40002) has no rate at all
        let spec = AccessSpec { rate_bps: None, host_rates_bps: vec![Some(4_000_000), Some(12_000_000)], delay_ns: 0 };
        let mut s = AccessStage::new(spec, &[40000, 40001, 40002]);
        for (slot, port) in [(0, 40000), (1, 40000), (2, 40001), (3, 40001), (4, 40002), (5, 40002)] {
            assert!(s.enter(T0, &ipv4(TCP, port, 5201, 1500), slot));
        }
        let got = drain_entering(&mut s);
        let at = |slot: u32| got.iter().find(|g| g.1 == slot).unwrap().0 - T0;
        assert_eq!([at(0), at(1), at(2), at(3), at(4), at(5)], [3 * MS, 6 * MS, MS, 2 * MS, 0, 0]);
    }

    #[test]
    fn exit_links_serialise_at_the_due_time_without_adding_delay() {
        let mut s = stage(5 * MS);
        // a burst released together by the bottleneck (a Wi-Fi aggregate) leaves the receiver
        // downlink one packet time apart; the access delay is already in the due time
        for slot in 0..4 {
            assert!(s.leave(T0, &ipv4(TCP, 40001, 5201, 1500), slot));
        }
        let out: Vec<u64> = std::iter::from_fn(|| s.pop_leaving(u64::MAX).map(|g| g.0)).collect();
        assert_eq!(out, vec![T0 + MS, T0 + 2 * MS, T0 + 3 * MS, T0 + 4 * MS]);
        assert_eq!(s.held(), 0);
        assert!(s.next_time().is_none());
    }
}
