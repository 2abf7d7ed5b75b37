//! The bottleneck as one 802.11n hop shared by both directions (`bottleneck.wifi`), as pure
//! logic (no I/O, time passed in) so it can be unit tested.
//!
//! ccbench-wifi's `Medium` (the simulator's code) replaces the two directions' queues and
//! transmitters: a packet read from either TUN device is enqueued at its station (`Dir::Fwd`
//! for the data direction, `Dir::Rev` for the ACK direction) at the CLOCK_MONOTONIC time it
//! arrived, in front of the scenario's queue discipline (drop-tail as a served FIFO of the
//! scenario's buffer, else `aqm` / `aqm_params`, built as the simulator builds the stations').
//! The forwarding loop runs the medium at the times it asks for (`next_service`); every MPDU
//! the far station releases goes through its direction's loss and delay line (propagation.rs:
//! the wired `rtt/2 + 2 × access delay`, jitter and loss where `impair` puts them). What
//! became of each packet comes back as `(Dir, Outcome)` for the loop to settle, exactly as the
//! wire path's AQM arm: deliver (ECN field rewritten to CE when marked), or free the slot of a
//! packet the discipline dropped (`Dropped`), the loss model removed or the retry limit
//! discarded (both `Lost`: gone on the air or on the wire, not at a queue).
//!
//! The medium's clock counts from `origin` (the emulator's start): `mcs_trace` steps are
//! times since then.
use crate::config::{DirConfig, WifiConfig};
use crate::measured::UnimpairedSlots;
use crate::path::{Outcome, Verdict};
use crate::propagation::Propagation;
use crate::served::Arrival;
use crate::stats::Counters;
use ccbench_queue::aqm;
use ccbench_queue::{Pkt, QueueStats};
use ccbench_sim::rng::stream_seed;
use ccbench_wifi::{Delivery, Dir, DropReason, Medium, MediumStats};
use std::collections::VecDeque;

pub struct WifiPath {
    medium: Medium,
    /// CLOCK_MONOTONIC time of the medium's time 0.
    origin: u64,
    /// Loss and delay line after the hop, per direction ([Fwd, Rev] = [data, ack]).
    propagation: [Propagation; 2],
    pub counters: [Counters; 2],
    /// Per station: arrivals the discipline refused (`drops_overlimit`), packets it dropped
    /// after accepting them (`drops_aqm`), CE marks, and the largest backlog (discipline +
    /// driver queue + awaiting a retry) seen at an arrival.
    queue: [QueueStats; 2],
    /// MPDUs discarded after the retry limit, per direction.
    pub retry_dropped: [u64; 2],
    /// (release time, bytes) not yet counted as departed, and the bytes counted, per direction.
    released: [VecDeque<(u64, u32)>; 2],
    departed: [u64; 2],
    bytes_released: [u64; 2],
    deliveries: Vec<Delivery>,
    dropped: Vec<(Dir, Pkt, DropReason)>,
    outcomes: Vec<(Dir, Outcome)>,
    /// Held packets that meet no loss or jitter (setup packets, measured.rs).
    unimpaired: UnimpairedSlots,
}

impl WifiPath {
    /// `dirs`: the data and ACK directions (config.rs `directions()`); the discipline and buffer
    /// are the scenario's, the same for both stations.
    pub fn new(wifi: &WifiConfig, dirs: &[DirConfig; 2], origin: u64) -> Self {
        let c = &dirs[0];
        // The simulator's construction (crates/sim/src/topology.rs): one discipline per
        // station, each with its own random stream, and the medium's own stream.
        let station = |name: &str| {
            aqm::build(&c.aqm, &c.aqm_params, c.buffer, c.rate_bps, stream_seed(c.seed, name))
                .unwrap_or_else(|| aqm::droptail_served(c.buffer))
        };
        let qdiscs = [station("bottleneck/wifi/fwd/aqm"), station("bottleneck/wifi/rev/aqm")];
        WifiPath {
            medium: Medium::new(wifi, qdiscs, stream_seed(c.seed, "bottleneck/wifi")),
            origin,
            propagation: [Propagation::new(&dirs[0]), Propagation::new(&dirs[1])],
            counters: Default::default(),
            queue: Default::default(),
            retry_dropped: [0; 2],
            released: Default::default(),
            departed: [0; 2],
            bytes_released: [0; 2],
            deliveries: Vec::new(),
            dropped: Vec::new(),
            outcomes: Vec::new(),
            unimpaired: UnimpairedSlots::default(),
        }
    }

    /// The medium's clock at CLOCK_MONOTONIC `now`.
    #[inline]
    fn clock(&self, now: u64) -> u64 {
        now.saturating_sub(self.origin)
    }

    /// A packet arrives at station `dir` at `now`: `Queued` (its fate comes as an outcome) or
    /// `Dropped` (refused by the discipline; the slot stays the caller's). The medium runs up
    /// to `now` first, so the station sees the arrival in time order.
    pub fn offer(&mut self, now: u64, dir: Dir, a: Arrival) -> Verdict {
        self.serve(now);
        let d = dir as usize;
        self.counters[d].packets_in += 1;
        self.counters[d].bytes_in += a.len as u64;
        let desc = Pkt::new(a.slot as u64, a.len, a.flow).ect(a.ect).l4s(a.l4s);
        let v = self.medium.enqueue(self.clock(now), dir, desc);
        self.collect_dropped();
        if v == ccbench_queue::Verdict::Dropped {
            self.queue[d].drops_overlimit += 1;
            return Verdict::Dropped;
        }
        self.unimpaired.hold(a.slot, a.impaired);
        let b = self.medium.backlog(dir);
        let q = &mut self.queue[d];
        q.max_backlog_bytes = q.max_backlog_bytes.max(b.bytes);
        q.max_backlog_packets = q.max_backlog_packets.max(b.packets);
        Verdict::Queued
    }

    /// Run the medium up to `now`: released MPDUs go through their direction's loss and delay
    /// line, dropped ones are reported (both as outcomes).
    pub fn serve(&mut self, now: u64) {
        self.medium.advance(self.clock(now), &mut self.deliveries);
        for del in self.deliveries.drain(..) {
            let d = del.dir as usize;
            let at = del.at + self.origin;
            let (slot, len, ce) = (del.pkt.id as u32, del.pkt.len, del.pkt.ce);
            self.released[d].push_back((at, len));
            self.bytes_released[d] += len as u64;
            self.counters[d].ce_marked += ce as u64;
            self.queue[d].marks += ce as u64;
            let impaired = self.unimpaired.release(slot);
            let verdict = match self.propagation[d].after(at, impaired) {
                Some(t) => Verdict::Deliver(t),
                None => {
                    self.counters[d].lost += 1;
                    Verdict::Lost
                }
            };
            self.outcomes.push((del.dir, Outcome { slot, len, verdict, ce }));
        }
        self.collect_dropped();
    }

    fn collect_dropped(&mut self) {
        self.medium.take_dropped(&mut self.dropped);
        for (dir, p, why) in self.dropped.drain(..) {
            let d = dir as usize;
            let verdict = match why {
                DropReason::Queue => {
                    self.queue[d].drops_aqm += 1;
                    Verdict::Dropped
                }
                DropReason::RetryLimit => {
                    self.retry_dropped[d] += 1;
                    Verdict::Lost
                }
            };
            self.unimpaired.release(p.id as u32);
            self.outcomes.push((dir, Outcome { slot: p.id as u32, len: p.len, verdict, ce: false }));
        }
    }

    /// When `serve` must next run (CLOCK_MONOTONIC; None: nothing pending).
    pub fn next_service(&self) -> Option<u64> {
        self.medium.next_event().map(|t| t + self.origin)
    }

    /// Move the outcomes of held packets to `out` (which is cleared first).
    pub fn take_outcomes(&mut self, out: &mut Vec<(Dir, Outcome)>) {
        out.clear();
        std::mem::swap(out, &mut self.outcomes);
    }

    /// Bytes waiting at station `dir` (discipline, driver queue, awaiting a retry).
    pub fn backlog_bytes(&self, dir: Dir) -> u64 {
        self.medium.backlog(dir).bytes
    }

    /// Packets the station holds.
    pub fn held_packets(&self, dir: Dir) -> u64 {
        self.medium.backlog(dir).packets
    }

    /// IP bytes the far side of `dir` released by `t` (cumulative; `t` must not go backwards).
    pub fn departed_bytes(&mut self, dir: Dir, t: u64) -> u64 {
        let d = dir as usize;
        while let Some(&(at, len)) = self.released[d].front() {
            if at > t {
                break;
            }
            self.released[d].pop_front();
            self.departed[d] += len as u64;
        }
        self.departed[d]
    }

    /// IP bytes released so far in direction `dir`.
    pub fn bytes_released(&self, dir: Dir) -> u64 {
        self.bytes_released[dir as usize]
    }

    pub fn queue_stats(&self, dir: Dir) -> QueueStats {
        self.queue[dir as usize].clone()
    }

    pub fn stats(&self) -> &MediumStats {
        self.medium.stats()
    }

    /// The PHY rate in force at CLOCK_MONOTONIC `now`.
    pub fn phy_rate_bps(&self, now: u64) -> u64 {
        self.medium.phy_rate_bps(self.clock(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BufferConfig, JitterDist, LinkConfig, LossConfig};
    use std::collections::HashMap;

    const MS: u64 = 1_000_000;
    /// CLOCK_MONOTONIC time of the emulator's start (the medium's time 0).
    const ORIGIN: u64 = 7_000_000_000;

    fn dir(name: &'static str, delay_ns: u64, buffer: BufferConfig, aqm: &str) -> DirConfig {
        DirConfig {
            name,
            rate_bps: 130_000_000,
            delay_ns,
            jitter_ns: 0,
            jitter_dist: JitterDist::Uniform,
            reorder: false,
            loss: LossConfig::None,
            buffer,
            aqm: aqm.into(),
            aqm_params: Default::default(),
            serve_droptail_at_dequeue: false,
            trace: None,
            seed: 3,
            sample_interval_ns: 0,
            measured_tcp_ports: Vec::new(),
            access: None,
        }
    }

    /// Run the medium at every time it asks for up to `until`, then at `until`.
    fn run_until(p: &mut WifiPath, until: u64) {
        while let Some(t) = p.next_service() {
            if t > until {
                break;
            }
            p.serve(t);
        }
        p.serve(until);
    }

    /// Outcomes by slot (each slot must be settled once).
    fn collect(p: &mut WifiPath, fates: &mut HashMap<u32, (Dir, Outcome)>) {
        let mut out = Vec::new();
        p.take_outcomes(&mut out);
        for (d, o) in out {
            assert!(fates.insert(o.slot, (d, o)).is_none(), "slot {} settled twice", o.slot);
        }
    }

    fn arrival(slot: u32, len: u32) -> Arrival {
        Arrival { slot, len, flow: slot % 7, ect: false, l4s: false, impaired: true }
    }

    #[test]
    fn every_packet_comes_back_once_in_its_own_direction_after_its_own_delay() {
        // Data (10 ms) and ACK (30 ms) directions with different wired delays; bursts of
        // full-size data far above the PHY rate (the buffer and the shallow driver queue
        // overflow) and small ACKs the other way.
        let wifi = WifiConfig { driver_queue_fwd: 8, driver_queue_rev: 8, ..WifiConfig::default() };
        let dirs = [
            dir("data", 10 * MS, BufferConfig::Packets(20), "droptail"),
            dir("ack", 30 * MS, BufferConfig::Packets(20), "droptail"),
        ];
        let mut p = WifiPath::new(&wifi, &dirs, ORIGIN);
        let mut fates = HashMap::new();
        let mut offered = Vec::new(); // (slot, dir, len, arrival time)
        let mut refused = 0u64;
        let mut t = ORIGIN + MS;
        for i in 0..3000u32 {
            t += 20_000; // 1500 B every 20 µs = 600 Mbit/s offered, above any HT rate here
            let (d, len) = if i % 3 == 2 { (Dir::Rev, 52) } else { (Dir::Fwd, 1500) };
            run_until(&mut p, t);
            match p.offer(t, d, arrival(i, len)) {
                Verdict::Queued => offered.push((i, d, len, t)),
                Verdict::Dropped => refused += 1,
                v => panic!("offer gave {v:?}"),
            }
            collect(&mut p, &mut fates);
        }
        run_until(&mut p, t + 10_000 * MS);
        collect(&mut p, &mut fates);
        assert!(p.next_service().is_none());
        assert_eq!((p.held_packets(Dir::Fwd), p.held_packets(Dir::Rev)), (0, 0));
        assert!(refused > 100, "the buffer must overflow for the test to mean something: {refused}");
        assert_eq!(fates.len(), offered.len(), "every accepted packet settled once");
        let mut delivered = [0u64; 2];
        for &(slot, d, len, at) in &offered {
            let (od, o) = fates[&slot];
            assert_eq!((od, o.len), (d, len), "slot {slot}");
            let Verdict::Deliver(when) = o.verdict else {
                panic!("slot {slot}: {:?} with no loss or errors", o.verdict)
            };
            let wired = if d == Dir::Fwd { 10 * MS } else { 30 * MS };
            // it crossed the air (at least one PPDU) and then the wire
            assert!(when > at + wired, "slot {slot} delivered {} ns after arrival", when - at);
            delivered[d as usize] += len as u64;
        }
        for (k, dir) in Dir::BOTH.into_iter().enumerate() {
            let c = &p.counters[k];
            let q = p.queue_stats(dir);
            assert_eq!(c.packets_in, offered.iter().filter(|o| o.1 == dir).count() as u64 + q.drops_overlimit);
            assert_eq!(p.bytes_released(dir), delivered[k]);
            assert_eq!(p.departed_bytes(dir, u64::MAX), delivered[k]);
            assert_eq!(p.stats().dir[k].bytes_delivered, delivered[k]);
            // the station never held more than its qdisc limit plus its driver queue (which
            // counts MPDUs queued, in the air and awaiting a retry), and the data one filled both
            assert!(q.max_backlog_packets <= 20 + 8, "{:?}", q);
            if dir == Dir::Fwd {
                assert_eq!(q.max_backlog_packets, 20 + 8, "{:?}", q);
            }
        }
        assert_eq!(p.queue_stats(Dir::Fwd).drops_overlimit + p.queue_stats(Dir::Rev).drops_overlimit, refused);
    }

    #[test]
    fn releases_are_the_simulators_medium_times_plus_the_wired_delay() {
        // The same medium built as the simulator builds it (crates/sim/src/topology.rs), driven
        // with the same arrivals on its own clock: the link must deliver each packet exactly at
        // the medium's release time + origin + the direction's wired delay. Frame errors and
        // the retry limit exercise the medium's random stream.
        let wifi = WifiConfig { mpdu_error: 0.3, retry_limit: 2, ..WifiConfig::default() };
        let dirs = [
            dir("data", 25 * MS, BufferConfig::Packets(100), "droptail"),
            dir("ack", 25 * MS, BufferConfig::Packets(100), "droptail"),
        ];
        let mut p = WifiPath::new(&wifi, &dirs, ORIGIN);
        let station = || aqm::droptail_served(BufferConfig::Packets(100));
        let mut m = Medium::new(&wifi, [station(), station()], stream_seed(3, "bottleneck/wifi"));
        let (mut want, mut dels, mut drops) = (HashMap::new(), Vec::new(), Vec::new());
        let mut fates = HashMap::new();
        let advance = |m: &mut Medium,
                       now: u64,
                       want: &mut HashMap<u32, Option<u64>>,
                       dels: &mut Vec<Delivery>,
                       drops: &mut Vec<_>| {
            while let Some(t) = m.next_event() {
                if t > now {
                    break;
                }
                m.advance(t, dels);
            }
            m.advance(now, dels);
            for d in dels.drain(..) {
                want.insert(d.pkt.id as u32, Some(d.at));
            }
            m.take_dropped(drops);
            for (_, pk, _) in drops.drain(..) {
                want.insert(pk.id as u32, None);
            }
        };
        let mut t = 0;
        for i in 0..2000u32 {
            t += if i % 50 < 40 { 30_000 } else { 400_000 };
            let (d, len) = if i % 4 == 3 { (Dir::Rev, 52) } else { (Dir::Fwd, 1500) };
            advance(&mut m, t, &mut want, &mut dels, &mut drops);
            run_until(&mut p, ORIGIN + t);
            let mv = m.enqueue(t, d, Pkt::new(i as u64, len, i % 7));
            let pv = p.offer(ORIGIN + t, d, arrival(i, len));
            assert_eq!(mv == ccbench_queue::Verdict::Dropped, pv == Verdict::Dropped, "packet {i}");
            collect(&mut p, &mut fates);
        }
        advance(&mut m, t + 60_000 * MS, &mut want, &mut dels, &mut drops);
        run_until(&mut p, ORIGIN + t + 60_000 * MS);
        collect(&mut p, &mut fates);
        assert_eq!(fates.len(), want.len());
        let mut lost = 0;
        for (slot, w) in &want {
            let (_, o) = fates[slot];
            match w {
                Some(at) => assert_eq!(o.verdict, Verdict::Deliver(ORIGIN + at + 25 * MS), "slot {slot}"),
                None => {
                    assert_eq!(o.verdict, Verdict::Lost, "slot {slot}: a retry-limit drop is a loss on the air");
                    lost += 1;
                }
            }
        }
        assert_eq!(lost, p.retry_dropped[0] + p.retry_dropped[1]);
        assert_eq!(p.stats(), m.stats());
    }

    #[test]
    fn wired_loss_only_where_impair_puts_it() {
        // impair = data: the data direction loses p = 10 % after the hop, the ACK direction
        // nothing. 3000 data packets: the count must sit in the binomial's 99.9 % interval
        // (300 ± 3.3σ, σ = √(3000·0.1·0.9) ≈ 16.4).
        let j = r#"{"rate_bps":130000000,"rtt_ns":20000000,"buffer":{"packets":100000},
                    "loss":{"model":"bernoulli","p":0.1},"impair":"data","wifi":{}}"#;
        let c = LinkConfig::from_json(j).unwrap();
        let mut p = WifiPath::new(c.wifi().unwrap(), &c.directions(), ORIGIN);
        let mut fates = HashMap::new();
        let mut t = ORIGIN;
        let mut dir_of = HashMap::new();
        for i in 0..6000u32 {
            t += 200_000; // well below the PHY rate: nothing queues up for long
            let d = if i % 2 == 0 { Dir::Fwd } else { Dir::Rev };
            run_until(&mut p, t);
            assert_eq!(p.offer(t, d, arrival(i, 1500)), Verdict::Queued);
            dir_of.insert(i, d);
            collect(&mut p, &mut fates);
        }
        run_until(&mut p, t + 1000 * MS);
        collect(&mut p, &mut fates);
        let lost = |d: Dir| fates.values().filter(|(od, o)| *od == d && o.verdict == Verdict::Lost).count() as u64;
        assert_eq!(lost(Dir::Rev), 0);
        let f = lost(Dir::Fwd);
        assert!((300 - 54..=300 + 54).contains(&f), "data direction lost {f} of 3000");
        assert_eq!(p.counters[0].lost, f);
        assert!(fates.iter().all(|(s, (d, _))| dir_of[s] == *d));
    }

    #[test]
    fn ce_marks_from_the_station_discipline_reach_the_outcome() {
        // CoDel with ECN in front of the driver queue, ECT traffic offered far above the PHY
        // rate for 1 s: CoDel marks instead of dropping (RFC 8289 / RFC 3168; only its packet
        // limit refuses arrivals), and each mark travels with its packet to the delay line.
        let mut d = dir("data", 5 * MS, BufferConfig::Packets(10_000), "codel");
        d.aqm_params.ecn = Some(true);
        let dirs = [d.clone(), DirConfig { name: "ack", ..d }];
        let mut p = WifiPath::new(&WifiConfig::default(), &dirs, ORIGIN);
        let mut fates = HashMap::new();
        let mut t = ORIGIN;
        for i in 0..20_000u32 {
            t += 50_000; // 240 Mbit/s offered
            run_until(&mut p, t);
            let a = Arrival { slot: i, len: 1500, flow: 1, ect: true, l4s: false, impaired: true };
            assert!(matches!(p.offer(t, Dir::Fwd, a), Verdict::Queued | Verdict::Dropped));
            collect(&mut p, &mut fates);
        }
        run_until(&mut p, t + 60_000 * MS);
        collect(&mut p, &mut fates);
        assert_eq!(p.queue_stats(Dir::Fwd).drops_aqm, 0);
        assert_eq!(fates.len() as u64 + p.queue_stats(Dir::Fwd).drops_overlimit, 20_000);
        let marked = fates.values().filter(|(_, o)| o.ce).count() as u64;
        assert!(marked > 0, "CoDel never marked a standing queue");
        assert!(
            fates.values().all(|(_, o)| matches!(o.verdict, Verdict::Deliver(_))),
            "ECT packets are marked, not dropped"
        );
        assert_eq!((p.counters[0].ce_marked, p.queue_stats(Dir::Fwd).marks), (marked, marked));
    }

    #[test]
    fn the_medium_clock_starts_at_the_origin() {
        // mcs_trace steps count from the emulator's start: MCS 15 until 1 s, then MCS 0.
        let wifi = WifiConfig { mcs_trace: Some(vec![(1_000 * MS, 0)]), ..WifiConfig::default() };
        let dirs = [
            dir("data", 0, BufferConfig::Packets(10), "droptail"),
            dir("ack", 0, BufferConfig::Packets(10), "droptail"),
        ];
        let p = WifiPath::new(&wifi, &dirs, ORIGIN);
        let rate = |mcs| ccbench_wifi::phy_rate_bps(&WifiConfig { mcs, ..WifiConfig::default() });
        assert_eq!(p.phy_rate_bps(ORIGIN + 999 * MS), rate(15));
        assert_eq!(p.phy_rate_bps(ORIGIN + 1_000 * MS), rate(0));
        assert_ne!(rate(15), rate(0));
    }
}
