//! The dumbbell: N senders, a bottleneck link in each direction, N receivers, and optionally
//! one access link per host and direction.
//!
//! Link indices: 0 = bottleneck forward, 1 = bottleneck reverse. The forward link carries the
//! data of forward flows (and the ACKs of reverse flows), the reverse link the ACKs of forward
//! flows (and the data of reverse flows); a flow's "sender host" is always the left one, so a
//! reverse flow's sender sits on the right. With an access
//! rate (the scenario's, or a flow's own `access_rate_bps`), flow f also has 2+4f sender uplink, 3+4f receiver downlink, 4+4f receiver uplink,
//! 5+4f sender downlink. Without an access rate the access links are pure delays, which are
//! folded exactly into the bottleneck: a packet enters the bottleneck queue `access.delay`
//! after it leaves its host, and the bottleneck's delay line includes the far access delay.
//!
//! With `bottleneck.wifi` the two bottleneck links lose their queues: packets entering them go
//! to one Wi-Fi hop (link/wifi.rs) shared by both directions, and what it releases continues
//! through the link's delay line (the wired RTT, jitter, loss).
use crate::config::{BufferConfig, Impair, SimConfig};
use crate::link::jitter::Jitter;
use crate::link::loss::LossModel;
use crate::link::wifi::WifiHop;
use crate::link::{ImpairKinds, Link, LinkSpec};
use crate::rng::stream_seed;
use crate::tcp::Pkt;
use crate::time::Nanos;
use ccbench_queue::aqm;

pub const BN_FWD: u32 = 0;
pub const BN_REV: u32 = 1;

/// The flow id used by the latency probe (ping) packets.
pub const PING_FLOW: u32 = u32::MAX;

/// Where a packet goes when it leaves a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    Link(u32),
    /// The right host: receiver of forward flows, sender of reverse flows, ping responder.
    RightHost,
    /// The left host: sender of forward flows, receiver of reverse flows, ping source.
    LeftHost,
}

pub struct Dumbbell {
    pub links: Vec<Link>,
    /// Access links exist (access rate set).
    pub access: bool,
    /// Delay before a packet reaches the bottleneck queue when access links are folded.
    pub pre_delay: Nanos,
    /// The 802.11 hop that replaces the bottleneck links' queues (None: a wire).
    pub wifi: Option<WifiHop>,
}

/// Access buffer: a host's transmit queue (Linux txqueuelen default). ccbench-link's access
/// links (crates/link/src/access.rs) use the same.
pub const ACCESS_QUEUE_PKTS: u64 = 1000;

impl Dumbbell {
    pub fn build(cfg: &SimConfig) -> Self {
        let b = &cfg.bottleneck;
        let a = &cfg.access;
        // a flow's own access rate, else the scenario's; links for every flow if any has one (a
        // flow with neither gets links without a rate: its access delays alone)
        let access = a.rate_bps.is_some() || cfg.flows.iter().any(|f| f.access_rate_bps.is_some());
        let half = b.rtt_ns / 2;
        let fold = if access { 0 } else { a.delay_ns };
        let jitter = Jitter { dist: b.jitter_dist, jitter_ns: b.jitter_ns };
        let loss = LossModel::from_config(&b.loss);
        // `impair` picks packet kinds (data | ack | both), whichever link they cross: the
        // forward link carries data of forward flows and ping requests, plus ACKs of reverse
        // flows; the reverse link the other way round. A link gets jitter and loss only if a
        // kind it carries is impaired, so without reverse flows each link is exactly as it was
        // (forward: data and pings, reverse: ACKs and replies).
        let on_data = matches!(b.impair, Impair::Data | Impair::Both);
        let on_ack = matches!(b.impair, Impair::Ack | Impair::Both);
        let reverse_flows = cfg.flows.iter().any(|f| !f.direction.is_forward());
        let kinds = ImpairKinds { data: on_data, ack: on_ack };
        let fwd_impaired = on_data || (on_ack && reverse_flows);
        let rev_impaired = on_ack || (on_data && reverse_flows);
        // The scenario's discipline runs on both bottleneck directions (drop-tail: None, the
        // fast path); PIE's and RED's random streams are named after the link.
        let qdisc = |name: &str| {
            let q = aqm::build(&b.aqm, &b.aqm_params, b.buffer, b.rate_bps, stream_seed(cfg.seed, name));
            match q {
                None if b.serve_droptail_at_dequeue => Some(aqm::droptail_served(b.buffer)),
                q => q,
            }
        };
        // Trace-driven bottleneck (validated with the config): [forward, reverse] schedules.
        let traces = b.trace.as_ref().map(|t| t.traces().expect("bottleneck.trace is validated before the run"));
        let trace = |dir: usize| traces.as_ref().map(|t| t[dir].clone());
        // A Wi-Fi hop takes the queues and transmitters; the links keep the delay lines.
        let wire_rate = b.wifi.is_none().then_some(b.rate_bps);
        let wire_qdisc = |name: &str| if b.wifi.is_none() { qdisc(name) } else { None };
        let mut links = vec![
            Link::new(
                LinkSpec {
                    name: "bottleneck/fwd".into(),
                    rate_bps: wire_rate,
                    buffer: b.buffer,
                    delay_ns: half + fold,
                    jitter: fwd_impaired.then(|| jitter.clone()),
                    reorder: b.reorder,
                    loss: if fwd_impaired { loss.clone() } else { LossModel::None },
                    impair: kinds,
                    qdisc: wire_qdisc("bottleneck/fwd/aqm"),
                    measure_sojourn: true,
                    trace: trace(0),
                },
                cfg.seed,
            ),
            Link::new(
                LinkSpec {
                    name: "bottleneck/rev".into(),
                    rate_bps: wire_rate,
                    buffer: b.buffer,
                    delay_ns: b.rtt_ns - half + fold,
                    jitter: rev_impaired.then(|| jitter.clone()),
                    reorder: b.reorder,
                    loss: if rev_impaired { loss } else { LossModel::None },
                    impair: kinds,
                    qdisc: wire_qdisc("bottleneck/rev/aqm"),
                    measure_sojourn: false,
                    trace: trace(1),
                },
                cfg.seed,
            ),
        ];
        if access {
            for f in &cfg.flows {
                for side in ["snd-up", "rcv-down", "rcv-up", "snd-down"] {
                    links.push(Link::new(
                        LinkSpec {
                            name: format!("access/{}/{side}", f.id),
                            rate_bps: f.access_rate_bps.or(a.rate_bps),
                            buffer: BufferConfig::Packets(ACCESS_QUEUE_PKTS),
                            delay_ns: a.delay_ns,
                            jitter: None,
                            reorder: false,
                            loss: LossModel::None,
                            impair: ImpairKinds::default(),
                            qdisc: None,
                            measure_sojourn: false,
                            trace: None,
                        },
                        cfg.seed,
                    ));
                }
            }
        }
        // The scenario's discipline in front of each station's driver queue (drop-tail as a
        // served FIFO of the scenario's buffer), each with its own random stream.
        let wifi = b.wifi.as_ref().map(|w| {
            let station = |name: &str| {
                aqm::build(&b.aqm, &b.aqm_params, b.buffer, b.rate_bps, stream_seed(cfg.seed, name))
                    .unwrap_or_else(|| aqm::droptail_served(b.buffer))
            };
            let qdiscs = [station("bottleneck/wifi/fwd/aqm"), station("bottleneck/wifi/rev/aqm")];
            WifiHop::new(w, qdiscs, stream_seed(cfg.seed, "bottleneck/wifi"))
        });
        Dumbbell { links, access, pre_delay: fold, wifi }
    }

    #[inline]
    fn host(pkt: &Pkt) -> u32 {
        if pkt.flow == PING_FLOW {
            0
        } else {
            pkt.flow
        }
    }

    /// First link of the forward direction for a packet leaving the left host (a forward flow's
    /// data, a reverse flow's ACKs, a ping request).
    #[inline]
    pub fn fwd_entry(&self, pkt: &Pkt) -> (u32, Nanos) {
        if self.access {
            (2 + 4 * Self::host(pkt), 0)
        } else {
            (BN_FWD, self.pre_delay)
        }
    }

    /// First link of the reverse direction for a packet leaving the right host (a forward flow's
    /// ACKs, a reverse flow's data, a ping reply).
    #[inline]
    pub fn rev_entry(&self, pkt: &Pkt) -> (u32, Nanos) {
        if self.access {
            (4 + 4 * Self::host(pkt), 0)
        } else {
            (BN_REV, self.pre_delay)
        }
    }

    /// Where a packet leaving `link` goes next.
    #[inline]
    pub fn next(&self, link: u32, pkt: &Pkt) -> Dest {
        let h = Self::host(pkt);
        match link {
            BN_FWD if self.access => Dest::Link(3 + 4 * h),
            BN_FWD => Dest::RightHost,
            BN_REV if self.access => Dest::Link(5 + 4 * h),
            BN_REV => Dest::LeftHost,
            l => match (l - 2) % 4 {
                0 => Dest::Link(BN_FWD),
                1 => Dest::RightHost,
                2 => Dest::Link(BN_REV),
                _ => Dest::LeftHost,
            },
        }
    }
}
