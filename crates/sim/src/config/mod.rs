//! The normalised scenario the simulator runs: every unit already converted to SI integers
//! (bits per second, nanoseconds, bytes) by the Python `Scenario` model. This struct *is* the
//! JSON contract between Python and Rust; unknown fields are refused so that a mismatch between
//! the two sides fails loudly.
//!
//! The connections arrive in one of two forms: `flows`, one entry per connection, or
//! `flow_groups` (the scenario's `[[flows]]` tables with their `count`, start and stagger) plus
//! `start_jitter_ns`, which `flow_groups::expand` turns into the same per-connection entries the
//! Python side would have sent (100 000 connections are one small JSON object, not 100 000).
//! Either way the `SimConfig` in memory holds the expanded `flows`; serialising it gives the
//! `flows` form.
// The bottleneck's buffer and queue-discipline parameters are ccbench-queue's (one definition
// for the simulator and ccbench-link).
pub use ccbench_queue::{AqmParams, BufferConfig};
use flow_groups::FlowGroupConfig;
use serde::{Deserialize, Serialize};

pub mod flow_groups;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SimConfigWire")]
pub struct SimConfig {
    pub name: String,
    pub duration_ns: u64,
    pub seed: u64,
    /// Interval of the time series (the `series` table of docs/results.md). 0 disables sampling.
    pub sample_interval_ns: u64,
    pub bottleneck: BottleneckConfig,
    pub access: AccessConfig,
    /// One entry per connection, ids 0..n (expanded from `flow_groups` when the JSON has those).
    pub flows: Vec<FlowConfig>,
    pub probe: ProbeConfig,
    /// Events one run may process before it ends as a failure (a scenario too large to finish
    /// in reasonable time, e.g. a huge duration at a high rate). Normal runs never come near
    /// the default; the Python side does not send it.
    pub max_events: u64,
    /// Scenario `[output] pcap`: write flow 0's packets as its sender sees them to this file
    /// (pcap.rs). Serialised only when set, so configs without it read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_path: Option<String>,
}

/// `SimConfig` as JSON carries it: the connections as `flows` or as `flow_groups` (see the
/// module documentation), never both.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimConfigWire {
    #[serde(default)]
    name: String,
    duration_ns: u64,
    seed: u64,
    sample_interval_ns: u64,
    bottleneck: BottleneckConfig,
    #[serde(default)]
    access: AccessConfig,
    #[serde(default)]
    flows: Option<Vec<FlowConfig>>,
    #[serde(default)]
    flow_groups: Option<Vec<FlowGroupConfig>>,
    /// Span of the per-connection start offsets of `flow_groups` (scenario `start_jitter`).
    #[serde(default)]
    start_jitter_ns: u64,
    #[serde(default)]
    probe: ProbeConfig,
    #[serde(default = "default_max_events")]
    max_events: u64,
    #[serde(default)]
    pcap_path: Option<String>,
}

impl TryFrom<SimConfigWire> for SimConfig {
    type Error = String;

    fn try_from(w: SimConfigWire) -> Result<Self, String> {
        let flows = match (w.flows, w.flow_groups) {
            (Some(_), Some(_)) => return Err("give either flows or flow_groups, not both".into()),
            (None, None) => return Err("missing field `flows` (or `flow_groups`)".into()),
            (Some(_), None) if w.start_jitter_ns > 0 => {
                return Err("start_jitter_ns applies to flow_groups only (flows carry their starts)".into())
            }
            (Some(flows), None) => flows,
            (None, Some(groups)) => flow_groups::expand(&groups, w.seed, w.start_jitter_ns)?,
        };
        Ok(SimConfig {
            name: w.name,
            duration_ns: w.duration_ns,
            seed: w.seed,
            sample_interval_ns: w.sample_interval_ns,
            bottleneck: w.bottleneck,
            access: w.access,
            flows,
            probe: w.probe,
            max_events: w.max_events,
            pcap_path: w.pcap_path,
        })
    }
}

/// Default of `SimConfig::max_events`: 10^10 events, roughly 30-60 minutes of one core.
pub const DEFAULT_MAX_EVENTS: u64 = 10_000_000_000;

fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JitterDist {
    /// Uniform in [-jitter, +jitter] around the base delay (netem `delay D J`).
    Uniform,
    /// Normal with standard deviation = jitter (netem `distribution normal`).
    Normal,
    /// Pareto-shaped with standard deviation = jitter, mean delay unchanged.
    Pareto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Impair {
    Data,
    Ack,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum LossConfig {
    None,
    /// Independent loss with probability `p` (0..1) per packet.
    Bernoulli {
        p: f64,
    },
    /// Gilbert–Elliott two-state model. `p`: P(good→bad), `r`: P(bad→good) per packet;
    /// `h`: P(delivery | bad), `k`: P(delivery | good). Simple Gilbert is h = 0, k = 1.
    /// (netem's `loss gemodel p r 1-h 1-k` uses the same four numbers.)
    Gilbert {
        p: f64,
        r: f64,
        h: f64,
        k: f64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BottleneckConfig {
    pub rate_bps: u64,
    /// Round-trip propagation delay of the bottleneck path, split evenly between the two
    /// directions (the forward half carries the jitter when impair includes data).
    pub rtt_ns: u64,
    #[serde(default)]
    pub jitter_ns: u64,
    #[serde(default = "default_jitter_dist")]
    pub jitter_dist: JitterDist,
    #[serde(default = "default_true")]
    pub reorder: bool,
    #[serde(default = "default_loss")]
    pub loss: LossConfig,
    #[serde(default = "default_impair")]
    pub impair: Impair,
    pub buffer: BufferConfig,
    #[serde(default = "default_aqm")]
    pub aqm: String,
    /// Parameters of the discipline (`ccbench_queue::aqm`); missing ones take the Linux defaults.
    #[serde(default)]
    pub aqm_params: AqmParams,
    /// Rust-only cross-check of the served-queue arm: run drop-tail as a FIFO qdisc served at
    /// dequeue time instead of the departure-on-arrival fast path (same results expected).
    #[serde(skip)]
    pub serve_droptail_at_dequeue: bool,
    /// Mahimahi delivery traces of the two bottleneck directions (scenario keys `trace` /
    /// `trace_reverse`): the links deliver at the traces' opportunities instead of at
    /// `rate_bps`, which then holds the forward trace's mean capacity (for BDP-sized buffers and
    /// reports). Serialised only when set, so configs without a trace read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<ccbench_queue::TraceConfig>,
    /// The hop is an 802.11n link between two stations (ccbench-wifi's shared medium) instead
    /// of a wire: None = wire. `rate_bps` is then the PHY rate of the configured MCS (nominal,
    /// for BDP buffers and utilisation); `buffer`/`aqm` configure the qdisc in front of each
    /// station's driver queue; `rtt_ns`, jitter and loss stay the wired path's, after the hop.
    /// Serialised only when set, so wire configs read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<ccbench_wifi::WifiConfig>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessConfig {
    /// Serialisation rate of each host's access link; None = no serialisation (veth-like).
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// One-way delay of each host's access link (sender side and receiver side alike).
    #[serde(default)]
    pub delay_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Unique flow id within the run (0..n).
    pub id: u32,
    /// Index of the `[[flows]]` entry this connection came from.
    #[serde(default)]
    pub group: u32,
    pub cc: String,
    #[serde(default)]
    pub start_ns: u64,
    /// Receive window cap in bytes (Linux: the largest window the receiver advertises).
    pub rwnd_bytes: u64,
    /// Bytes to transfer; None = bulk sender for the whole run.
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Pace a flow whose algorithm does not set a pacing rate itself the Linux way
    /// (tcp_update_pacing_rate: 200 % of cwnd/srtt in slow start, 120 % after), as on a host
    /// with the fq qdisc. BBR always paces.
    #[serde(default)]
    pub pacing: bool,
    /// TCP timestamps (RFC 7323) negotiated on this connection, as sysctl tcp_timestamps = 1 on
    /// both hosts (Linux's default). Off: no PAWS, no Eifel undo, RTT samples from ACKed
    /// segments only. (The simulator keeps MSS 1448 either way; Linux would use 1460 without.)
    #[serde(default = "default_true")]
    pub timestamps: bool,
    /// ECN (RFC 3168) negotiated on this connection: ECT(0) on new data, a queue discipline with
    /// ECN on marks CE instead of dropping, the receiver echoes ECE, the sender enters CWR.
    /// Serialised only when on, so configs without ECN read and write as before.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ecn: bool,
    /// Which way the flow's data crosses the bottleneck: `forward` (sender → receiver on the
    /// forward bottleneck link, ACKs back on the reverse one) or `reverse` (data on the reverse
    /// link, ACKs on the forward one: the upload half of an RRUL-style load). Serialised only
    /// when reverse, so configs without reverse flows read and write as before.
    #[serde(default, skip_serializing_if = "Direction::is_forward")]
    pub direction: Direction,
    /// The rate of this connection's hosts' access links instead of `access.rate_bps` (None:
    /// that one). Serialised only when set, so configs without it read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_rate_bps: Option<u64>,
}

/// The direction of a flow's data across the dumbbell (`FlowConfig::direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

impl Direction {
    pub fn is_forward(&self) -> bool {
        *self == Direction::Forward
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    /// Interval of the latency-under-load ping probe; 0 = off.
    #[serde(default)]
    pub ping_interval_ns: u64,
}

impl SimConfig {
    /// A scenario with seed 1, 100 ms sampling, no access links and no probe.
    pub fn new(name: &str, duration_ns: u64, bottleneck: BottleneckConfig, flows: Vec<FlowConfig>) -> Self {
        SimConfig {
            name: name.into(),
            duration_ns,
            seed: 1,
            sample_interval_ns: 100_000_000,
            bottleneck,
            access: AccessConfig::default(),
            flows,
            probe: ProbeConfig::default(),
            max_events: DEFAULT_MAX_EVENTS,
            pcap_path: None,
        }
    }
}

impl FlowConfig {
    /// A bulk flow in group 0, starting at time 0, unpaced, with receive window `rwnd_bytes`.
    pub fn bulk(id: u32, cc: &str, rwnd_bytes: u64) -> Self {
        FlowConfig {
            id,
            group: 0,
            cc: cc.into(),
            start_ns: 0,
            rwnd_bytes,
            size_bytes: None,
            pacing: false,
            timestamps: true,
            ecn: false,
            direction: Direction::Forward,
            access_rate_bps: None,
        }
    }
}

impl BottleneckConfig {
    /// A drop-tail bottleneck without jitter or loss whose buffer holds `buffer_bdp`
    /// bandwidth-delay products of its own RTT (at least one 1500-byte packet).
    pub fn droptail(rate_bps: u64, rtt_ns: u64, buffer_bdp: f64) -> Self {
        let bdp = rate_bps as f64 * rtt_ns as f64 / 8e9;
        BottleneckConfig {
            rate_bps,
            rtt_ns,
            jitter_ns: 0,
            jitter_dist: JitterDist::Uniform,
            reorder: true,
            loss: LossConfig::None,
            impair: Impair::Data,
            buffer: BufferConfig::Bytes(((buffer_bdp * bdp) as u64).max(1500)),
            aqm: "droptail".into(),
            aqm_params: Default::default(),
            serve_droptail_at_dequeue: false,
            trace: None,
            wifi: None,
        }
    }

    /// Ranges serde cannot check, with every queue discipline of `ccbench_queue::aqm` (both
    /// backends serve them all).
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("bottleneck.rate_bps must be > 0".into());
        }
        ccbench_queue::aqm::validate(&self.aqm, &self.aqm_params, self.buffer)?;
        if let Some(t) = &self.trace {
            t.traces()?;
        }
        let prob = |name: &str, v: f64| -> Result<(), String> {
            if !(0.0..=1.0).contains(&v) || v.is_nan() {
                Err(format!("bottleneck.loss.{name} must be within [0, 1], got {v}"))
            } else {
                Ok(())
            }
        };
        match self.loss {
            LossConfig::None => {}
            LossConfig::Bernoulli { p } => prob("p", p)?,
            LossConfig::Gilbert { p, r, h, k } => {
                prob("p", p)?;
                prob("r", r)?;
                prob("h", h)?;
                prob("k", k)?;
            }
        }
        if let BufferConfig::Packets(0) | BufferConfig::Bytes(0) = self.buffer {
            return Err("bottleneck.buffer must hold at least one packet".into());
        }
        if let Some(w) = &self.wifi {
            if self.trace.is_some() {
                return Err("bottleneck.trace: a trace link and a Wi-Fi hop cannot go together".into());
            }
            w.validate()?;
        }
        Ok(())
    }
}

fn default_true() -> bool {
    true
}
fn default_jitter_dist() -> JitterDist {
    JitterDist::Uniform
}
fn default_loss() -> LossConfig {
    LossConfig::None
}
fn default_impair() -> Impair {
    Impair::Data
}
fn default_aqm() -> String {
    "droptail".to_string()
}

impl SimConfig {
    /// Check what serde cannot: ranges and cross-field rules. The Python side validates the
    /// same things with friendlier messages; this guards direct Rust users.
    pub fn validate(&self) -> Result<(), String> {
        if self.duration_ns == 0 {
            return Err("duration_ns must be > 0".into());
        }
        self.bottleneck.validate()?;
        if self.flows.is_empty() {
            return Err("flows: at least one flow is needed".into());
        }
        if self.max_events == 0 {
            return Err("max_events must be > 0".into());
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.id as usize != i {
                return Err(format!("flows[{i}].id must be {i}"));
            }
            if crate::cc::make(&f.cc, 0).is_none() {
                return Err(format!(
                    "flows[{i}].cc: unknown algorithm '{}' (simulator has: {})",
                    f.cc,
                    crate::cc::NAMES.join(", ")
                ));
            }
            if f.rwnd_bytes < 2 * crate::tcp::MSS as u64 {
                return Err(format!("flows[{i}].rwnd_bytes must be at least 2 MSS"));
            }
        }
        Ok(())
    }
}
