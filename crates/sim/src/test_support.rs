//! A minimal closed-loop path for unit tests of the congestion-control algorithms (cc/):
//! one sender, a FIFO bottleneck of fixed rate and packet buffer, a fixed propagation RTT
//! (optionally stepped at a given time), one ACK per packet, and delivery-rate samples
//! generated the way tcp_rate.c does. Dropped packets are declared lost (`rs.losses`, `sk.lost`) when a later
//! packet is acknowledged; they are not retransmitted and the state stays Open. It is a test
//! instrument, not the simulator.
//!
//! Used by the unit tests of `cc::bbr` and `cc::vegas` (`#[cfg(test)]` only).
use crate::cc::{AckSample, CcSock, CongestionControl, RateSample};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

const DELACK_NS: u64 = 40_000_000;

#[derive(Debug, Clone, Copy)]
struct TxInfo {
    sent_ns: u64,
    first_tx_ns: u64,
    delivered: u64,
    delivered_mstamp_ns: u64,
    app_limited: bool,
    dropped: bool,
}

/// One row per ACK.
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub struct Row {
    pub t_ns: u64,
    pub cwnd: u32,
    pub pacing_rate: u64,
    pub in_flight: u32,
    pub queue_pkts: usize,
    pub rtt_us: i64,
    pub label: &'static str,
    pub bw_bps: Option<f64>,
    pub min_rtt_us: Option<u64>,
    pub delivered: u64,
    pub obs: [u64; 4],
}

pub struct Path<C: CongestionControl> {
    pub sk: CcSock,
    pub cc: C,
    /// Extra per-ACK observations of the algorithm's internals, stored in `Row::obs`.
    pub observe: fn(&C) -> [u64; 4],
    /// Bottleneck service time per packet, ns.
    pub tx_ns: u64,
    pub rtt_ns: u64,
    /// (time, new rtt): the propagation RTT changes at that time.
    pub rtt_step: Option<(u64, u64)>,
    pub buffer_pkts: usize,
    pub now: u64,
    next_send_ns: u64,
    link_free_at: u64,
    queue: VecDeque<u64>,
    out: BTreeMap<u64, TxInfo>,
    /// (arrival time, first seq, last seq, delayed): one ACK for one or two packets.
    acks: BinaryHeap<Reverse<(u64, u64, u64, bool)>>,
    /// Receiver with delayed ACKs: an ACK for every second packet, or 40 ms after the
    /// first unacknowledged one (Linux TCP_DELACK_MIN), instead of one per packet.
    pub delack: bool,
    /// The packet waiting for a partner (seq, time its ACK would arrive if sent at once).
    pending: Option<(u64, u64)>,
    last_ack_at: u64,
    first_tx_ns: u64,
    pub drops: u64,
    pub rows: Vec<Row>,
}

fn no_obs<C>(_: &C) -> [u64; 4] {
    [0; 4]
}

impl<C: CongestionControl> Path<C> {
    /// `rate_pps` bottleneck packets/s, `rtt_ms` base RTT, `buffer_pkts` queue limit.
    pub fn new(cc: C, rate_pps: f64, rtt_ms: f64, buffer_pkts: usize) -> Self {
        let mut sk = CcSock::new(1448, 10, 1_000_000);
        sk.is_cwnd_limited = true;
        let mut p = Path {
            sk,
            cc,
            observe: no_obs::<C>,
            tx_ns: (1e9 / rate_pps).round() as u64,
            rtt_ns: (rtt_ms * 1e6).round() as u64,
            rtt_step: None,
            buffer_pkts,
            now: 0,
            next_send_ns: 0,
            link_free_at: 0,
            queue: VecDeque::new(),
            out: BTreeMap::new(),
            acks: BinaryHeap::new(),
            delack: false,
            pending: None,
            last_ack_at: 0,
            first_tx_ns: 0,
            drops: 0,
            rows: Vec::new(),
        };
        p.cc.init(&mut p.sk);
        p
    }

    /// Seed srtt / min RTT with a handshake sample before `init`, as Linux has one from the
    /// SYN / SYN-ACK exchange when the congestion control is initialised: the path RTT plus
    /// the serialisation of a 60-byte SYN at the bottleneck.
    pub fn with_handshake(mut self) -> Self {
        let rtt_us = (self.rtt_ns + self.tx_ns * 60 / 1500) / 1000;
        self.sk.srtt_us = rtt_us;
        self.sk.min_rtt_us = rtt_us as u32;
        self.cc.init(&mut self.sk);
        self
    }

    fn in_flight(&self) -> u32 {
        self.out.len() as u32
    }

    pub fn queue_len(&mut self) -> usize {
        while let Some(&d) = self.queue.front() {
            if d <= self.now {
                self.queue.pop_front();
            } else {
                break;
            }
        }
        self.queue.len()
    }

    fn send(&mut self) {
        let seq = self.sk.snd_nxt;
        self.sk.snd_nxt += 1;
        if self.out.is_empty() {
            self.first_tx_ns = self.now;
            self.sk.delivered_mstamp_ns = self.now;
        }
        let mut info = TxInfo {
            sent_ns: self.now,
            first_tx_ns: self.first_tx_ns,
            delivered: self.sk.delivered,
            delivered_mstamp_ns: self.sk.delivered_mstamp_ns,
            app_limited: self.sk.app_limited != 0,
            dropped: false,
        };
        if self.queue_len() >= self.buffer_pkts {
            info.dropped = true;
            self.drops += 1;
        } else {
            let dep = self.now.max(self.link_free_at) + self.tx_ns;
            self.link_free_at = dep;
            self.queue.push_back(dep);
            let rtt = match self.rtt_step {
                Some((t, r)) if self.now >= t => r,
                _ => self.rtt_ns,
            };
            // ACKs stay in order (FIFO path).
            let at = (dep + rtt).max(self.last_ack_at);
            self.last_ack_at = at;
            if !self.delack {
                self.acks.push(Reverse((at, seq, seq, false)));
            } else {
                match self.pending.take() {
                    Some((ps, pa)) if at <= pa + DELACK_NS => {
                        self.acks.push(Reverse((at, ps, seq, false)));
                    }
                    Some((ps, pa)) => {
                        self.acks.push(Reverse((pa + DELACK_NS, ps, ps, true)));
                        self.last_ack_at = at.max(pa + DELACK_NS);
                        self.pending = Some((seq, self.last_ack_at));
                    }
                    None => self.pending = Some((seq, at)),
                }
            }
        }
        self.out.insert(seq, info);
        if self.sk.pacing_enabled && self.sk.pacing_rate > 0 {
            let gap = (1448u128 * 1_000_000_000 / self.sk.pacing_rate as u128) as u64;
            self.next_send_ns = self.now.max(self.next_send_ns) + gap;
        } else {
            self.next_send_ns = self.now;
        }
        self.sk.wstamp_ns = self.next_send_ns;
        self.sk.in_flight = self.in_flight();
    }

    fn ack(&mut self, lo: u64, seq: u64, delayed: bool) {
        // `seq` is the newest packet this ACK covers; `lo` an older one it also covers.
        let prior_in_flight = self.out.len() as u32;
        let mut acked = 1u32;
        let mut older: Option<TxInfo> = None;
        if lo != seq {
            older = self.out.remove(&lo);
            acked += older.is_some() as u32;
        }
        let info = self.out.remove(&seq).expect("acked packet outstanding");
        // Earlier dropped packets are now known lost (a RACK-like shortcut).
        let lost: Vec<u64> = self.out.range(..seq).filter(|(_, i)| i.dropped).map(|(s, _)| *s).collect();
        for s in &lost {
            self.out.remove(s);
        }
        self.sk.lost += lost.len() as u64;
        self.sk.delivered += acked as u64;
        let _ = older;
        self.sk.delivered_mstamp_ns = self.now;
        self.sk.snd_una = self.out.keys().next().copied().unwrap_or(self.sk.snd_nxt);
        let rtt_us = ((self.now - info.sent_ns) / 1000) as i64;
        self.sk.srtt_us = if self.sk.srtt_us == 0 { rtt_us as u64 } else { (self.sk.srtt_us * 7 + rtt_us as u64) / 8 };
        self.sk.min_rtt_us = self.sk.min_rtt_us.min(rtt_us as u32);
        if self.sk.app_limited != 0 && self.sk.delivered > self.sk.app_limited {
            self.sk.app_limited = 0;
        }
        self.first_tx_ns = info.sent_ns;
        let snd_us = (info.sent_ns - info.first_tx_ns) / 1000;
        let ack_us = (self.now - info.delivered_mstamp_ns) / 1000;
        let mut interval_us = snd_us.max(ack_us) as i64;
        if interval_us < self.sk.min_rtt_us as i64 {
            interval_us = -1;
        }
        let rs = RateSample {
            prior_mstamp_ns: info.delivered_mstamp_ns,
            prior_delivered: info.delivered,
            delivered: (self.sk.delivered - info.delivered) as i64,
            interval_us,
            snd_interval_us: snd_us,
            rcv_interval_us: ack_us,
            rtt_us,
            losses: lost.len() as u32,
            acked_sacked: acked,
            prior_in_flight,
            is_app_limited: info.app_limited,
            is_retrans: false,
            is_ack_delayed: delayed,
            ece_delta: 0,
            ..RateSample::default()
        };
        self.sk.in_flight = self.in_flight();
        self.cc.pkts_acked(&mut self.sk, &AckSample { pkts_acked: acked, rtt_us, in_flight: prior_in_flight });
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.sk, &rs);
        } else {
            let una = self.sk.snd_una;
            self.cc.cong_avoid(&mut self.sk, una, acked);
        }
        let q = self.queue_len();
        self.rows.push(Row {
            t_ns: self.now,
            cwnd: self.sk.cwnd,
            pacing_rate: self.sk.pacing_rate,
            in_flight: self.sk.in_flight,
            queue_pkts: q,
            rtt_us,
            label: self.cc.state_label(),
            bw_bps: self.cc.bw_estimate_bps(),
            min_rtt_us: self.cc.min_rtt_estimate_us(),
            delivered: self.sk.delivered,
            obs: (self.observe)(&self.cc),
        });
    }

    /// Run until `t_end_ns`.
    pub fn run_until(&mut self, t_end_ns: u64) {
        loop {
            if let Some((ps, pa)) = self.pending {
                // The delayed-ACK timer of a lone packet, if nothing pairs it sooner.
                let next_ack = self.acks.peek().map(|r| r.0 .0).unwrap_or(u64::MAX);
                let t_send = if self.in_flight() < self.sk.cwnd { self.now.max(self.next_send_ns) } else { u64::MAX };
                let t_timer = pa + DELACK_NS;
                if t_timer < next_ack && t_timer < t_send {
                    self.pending = None;
                    self.last_ack_at = self.last_ack_at.max(t_timer);
                    self.acks.push(Reverse((t_timer, ps, ps, true)));
                }
            }
            let next_ack = self.acks.peek().map(|r| r.0 .0).unwrap_or(u64::MAX);
            let t_send = if self.in_flight() < self.sk.cwnd { self.now.max(self.next_send_ns) } else { u64::MAX };
            let t = next_ack.min(t_send);
            if t > t_end_ns {
                self.now = t_end_ns;
                return;
            }
            self.now = t;
            self.sk.now_ns = t;
            if next_ack <= t_send {
                let Reverse((_, lo, seq, delayed)) = self.acks.pop().unwrap();
                self.ack(lo, seq, delayed);
            } else {
                self.send();
            }
        }
    }
}
