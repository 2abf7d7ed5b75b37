//! The scenario's queue discipline (`bottleneck.aqm` + `bottleneck.aqm_params`) turned into a
//! [`Qdisc`]. Drop-tail is not built here: each backend keeps it on the departure-on-arrival
//! fast path ([`crate::ScheduledDropTail`]) unless it asks for [`droptail_served`].
//!
//! Every parameter is optional; a missing one takes the Linux default of the discipline
//! (sch_codel.c, sch_fq_codel.c, sch_pie.c, sch_fq.c: the defaults live in ccbench-queue), and
//! RED's thresholds are derived from the scenario buffer (`RedConfig::for_buffer`); step's
//! limit is the scenario buffer and its K 65 packets ([`StepConfig::DEFAULT_K_PACKETS`]). The Python
//! side sends every parameter resolved; [`resolved`] gives the same table back for the report,
//! so the results show exactly what ran.
use crate::red::ewma_weight;
use crate::{
    BufferConfig, Codel, CodelConfig, CodelParams, DropTail, DualPi2, DualPi2Config, Fq, FqCodel, FqCodelConfig,
    FqConfig, Limit, Pie, PieConfig, Qdisc, Red, RedConfig, Step, StepConfig, StepThresh, Threshold,
};
use serde::{Deserialize, Serialize};

/// The disciplines a scenario may name.
pub const NAMES: [&str; 8] = ["droptail", "codel", "fq_codel", "pie", "red", "fq", "step", "dualpi2"];

/// Parameters of the queue discipline, in SI integers (ns, bytes, packets, bit/s). Which ones
/// a discipline takes: [`params_of`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AqmParams {
    /// codel, fq_codel, pie: the queueing-delay target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ns: Option<u64>,
    /// codel, fq_codel: the interval of the control law.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
    /// pie: period of the drop-probability update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tupdate_ns: Option<u64>,
    /// codel, fq_codel, pie, fq, step: the tail-drop limit in packets (`limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_packets: Option<u64>,
    /// red, step: the tail-drop limit in bytes (`limit`); default the scenario buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<u64>,
    /// codel, fq_codel, pie, red: CE-mark ECT packets instead of dropping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// fq_codel: hash buckets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    /// fq_codel, fq: bytes a queue may send per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u32>,
    /// fq: the credit of a new flow, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_quantum: Option<u32>,
    /// fq_codel: memory limit in bytes (packets cost their length plus skb overhead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    /// fq_codel: packets dropped at most from the fattest flow at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_batch: Option<u32>,
    /// pie: gains in units of 1/16 (tc pie `alpha`, `beta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<u32>,
    /// pie: scale the drop probability by packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytemode: Option<bool>,
    /// red: thresholds on the average queue, bytes (tc red `min`, `max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// red: signal probability at `max` (tc red `probability`), 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// red: typical packet size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avpkt: Option<u32>,
    /// red: burst in packets that passes an empty queue (sets the EWMA weight, as tc red).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u64>,
    /// red: the gentle ramp from max_p to 1 between max and 2 × max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// red: drop instead of mark above max even with ECN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harddrop: Option<bool>,
    /// fq: packets one flow may queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_limit: Option<u64>,
    /// fq: per-flow rate cap, bit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maxrate_bps: Option<u64>,
    /// fq: packets timestamped further ahead are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_ns: Option<u64>,
    /// fq: CE-mark packets sent this late after their time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ns: Option<u64>,
    /// step: CE-mark ECT packets arriving at a queue of more than this many packets (`k`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k_packets: Option<u64>,
    /// step: the same threshold in bytes (`k` given as a size); at most one of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k_bytes: Option<u64>,
    /// dualpi2: the L queue's step, as a sojourn time (`step_thresh` in time units)...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_thresh_ns: Option<u64>,
    /// ... or as an L-queue length in packets; at most one of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_thresh_packets: Option<u64>,
    /// dualpi2: the step applies to packets finding at least this many in the L queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_qlen_step: Option<u64>,
    /// dualpi2: the coupling factor k (L probability = k · p').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupling: Option<u32>,
    /// dualpi2: the C queue's scheduler weight in % (tc `c_protection`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_protection: Option<u32>,
    /// dualpi2: on overload drop L4S packets with p'² rather than mark them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_overload: Option<bool>,
    /// dualpi2: take the AQM decision at enqueue instead of dequeue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_early: Option<bool>,
}

/// The parameters (JSON names of [`AqmParams`]) discipline `aqm` takes.
pub fn params_of(aqm: &str) -> &'static [&'static str] {
    match aqm {
        "codel" => &["target_ns", "interval_ns", "limit_packets", "ecn"],
        "fq_codel" => {
            &["target_ns", "interval_ns", "limit_packets", "ecn", "flows", "quantum", "memory_limit", "drop_batch"]
        }
        "pie" => &["target_ns", "tupdate_ns", "limit_packets", "ecn", "alpha", "beta", "bytemode"],
        "red" => {
            &["limit_bytes", "min_bytes", "max_bytes", "probability", "avpkt", "burst", "gentle", "ecn", "harddrop"]
        }
        "fq" => &[
            "limit_packets",
            "flow_limit",
            "quantum",
            "initial_quantum",
            "maxrate_bps",
            "horizon_ns",
            "ce_threshold_ns",
        ],
        "step" => &["k_packets", "k_bytes", "limit_packets", "limit_bytes"],
        "dualpi2" => &[
            "target_ns",
            "tupdate_ns",
            "alpha",
            "beta",
            "step_thresh_ns",
            "step_thresh_packets",
            "min_qlen_step",
            "coupling",
            "c_protection",
            "limit_packets",
            "memory_limit",
            "drop_overload",
            "drop_early",
        ],
        _ => &[],
    }
}

impl AqmParams {
    /// Names of the parameters that are set.
    fn given(&self) -> Vec<String> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

/// Check the discipline's name and that every parameter given belongs to it and is in range.
pub fn validate(aqm: &str, p: &AqmParams, buffer: BufferConfig) -> Result<(), String> {
    if !NAMES.contains(&aqm) {
        return Err(format!("bottleneck.aqm: unknown discipline '{aqm}' (one of {})", NAMES.join(", ")));
    }
    let allowed = params_of(aqm);
    for name in p.given() {
        if !allowed.contains(&name.as_str()) {
            let takes = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
            return Err(format!("bottleneck.aqm_params.{name}: not a parameter of {aqm} (it takes: {takes})"));
        }
    }
    let positive = |name: &str, v: Option<u64>| match v {
        Some(0) => Err(format!("bottleneck.aqm_params.{name} must be > 0")),
        _ => Ok(()),
    };
    positive("target_ns", p.target_ns)?;
    positive("interval_ns", p.interval_ns)?;
    positive("tupdate_ns", p.tupdate_ns)?;
    positive("limit_packets", p.limit_packets)?;
    positive("limit_bytes", p.limit_bytes)?;
    positive("memory_limit", p.memory_limit)?;
    positive("flow_limit", p.flow_limit)?;
    positive("quantum", p.quantum.map(u64::from))?;
    positive("initial_quantum", p.initial_quantum.map(u64::from))?;
    positive("drop_batch", p.drop_batch.map(u64::from))?;
    positive("avpkt", p.avpkt.map(u64::from))?;
    positive("burst", p.burst)?;
    positive("k_packets", p.k_packets)?;
    positive("k_bytes", p.k_bytes)?;
    if let Some(f) = p.flows {
        if !(1..=65536).contains(&f) {
            return Err("bottleneck.aqm_params.flows must be within 1..=65536".into());
        }
    }
    for (name, v) in [("alpha", p.alpha), ("beta", p.beta)] {
        if aqm == "dualpi2" {
            // sch_dualpi2.c dualpi2_alpha_beta_range: 1 ..= 2^31 − 1, in 1/256 Hz.
            if v.is_some_and(|v| !(1..=DUALPI2_GAIN_MAX).contains(&v)) {
                return Err(format!(
                    "bottleneck.aqm_params.{name} must be within 1..={DUALPI2_GAIN_MAX} (units of 1/256 Hz)"
                ));
            }
        } else if v.is_some_and(|v| v > 32) {
            return Err(format!("bottleneck.aqm_params.{name} must be within 0..=32 (units of 1/16)"));
        }
    }
    if p.step_thresh_ns.is_some() && p.step_thresh_packets.is_some() {
        return Err("bottleneck.aqm_params.step_thresh: a time or a packet count, not both".into());
    }
    if p.coupling.is_some_and(|k| !(1..=255).contains(&k)) {
        return Err("bottleneck.aqm_params.coupling must be within 1..=255".into());
    }
    if p.c_protection.is_some_and(|w| w > 100) {
        return Err("bottleneck.aqm_params.c_protection must be within 0..=100 (%)".into());
    }
    if let Some(pr) = p.probability {
        if !(pr > 0.0 && pr <= 1.0) {
            return Err(format!("bottleneck.aqm_params.probability must be within (0, 1], got {pr}"));
        }
    }
    if aqm == "red" {
        let r = red_config(p, buffer, 1, 0);
        if r.max_th <= r.min_th {
            return Err(format!("bottleneck.aqm_params: red needs min < max (min {} B, max {} B)", r.min_th, r.max_th));
        }
    }
    if aqm == "step" {
        if p.k_packets.is_some() && p.k_bytes.is_some() {
            return Err("bottleneck.aqm_params: step takes k in packets or in bytes, not both".into());
        }
        if p.limit_packets.is_some() && p.limit_bytes.is_some() {
            return Err("bottleneck.aqm_params: step takes limit in packets or in bytes, not both".into());
        }
        let c = step_config(p, buffer);
        if threshold_bytes(c.k) >= limit_bytes(c.limit) {
            return Err(format!(
                "bottleneck.aqm_params.k: step needs k below the limit (k {}, limit {}; packets count as 1500 B)",
                show_threshold(c.k),
                show_limit(c.limit)
            ));
        }
    }
    Ok(())
}

/// The largest DualPI2 gain netlink accepts (ALPHA_BETA_MAX).
const DUALPI2_GAIN_MAX: u32 = (1 << 31) - 1;

/// DualPI2 over Linux's defaults (`dualpi2_reset_default`); the memory limit follows a given
/// packet limit (`get_memory_limit`) unless given itself.
fn dualpi2_config(p: &AqmParams, seed: u64) -> DualPi2Config {
    let d = DualPi2Config::default();
    let limit_packets = p.limit_packets.unwrap_or(d.limit_packets);
    let step_thresh = match (p.step_thresh_ns, p.step_thresh_packets) {
        (_, Some(n)) => StepThresh::Packets(n),
        (Some(t), None) => StepThresh::Time(t),
        (None, None) => d.step_thresh,
    };
    DualPi2Config {
        target_ns: p.target_ns.unwrap_or(d.target_ns),
        tupdate_ns: p.tupdate_ns.unwrap_or(d.tupdate_ns),
        alpha: p.alpha.unwrap_or(d.alpha),
        beta: p.beta.unwrap_or(d.beta),
        step_thresh,
        min_qlen_step: p.min_qlen_step.unwrap_or(d.min_qlen_step),
        coupling: p.coupling.map_or(d.coupling, |k| k.clamp(1, 255) as u8),
        c_protection: p.c_protection.map_or(d.c_protection, |w| w.min(100) as u8),
        limit_packets,
        memory_limit: p.memory_limit.unwrap_or_else(|| DualPi2Config::memory_limit_for(limit_packets, d.mtu)),
        drop_overload: p.drop_overload.unwrap_or(d.drop_overload),
        drop_early: p.drop_early.unwrap_or(d.drop_early),
        seed,
        ..d
    }
}

/// Buffer in bytes (packets count as 1500 bytes), for RED's byte limit.
fn buffer_bytes(buffer: BufferConfig) -> u64 {
    match buffer {
        BufferConfig::Bytes(b) => b,
        BufferConfig::Packets(n) => n * 1500,
    }
}

/// The CoDel parameters a scenario sets (target, interval, ecn) over a discipline's defaults:
/// the same keys for codel and for fq_codel's per-flow CoDel.
fn overlay_codel(p: &AqmParams, c: &mut CodelParams) {
    c.target_ns = p.target_ns.unwrap_or(c.target_ns);
    c.interval_ns = p.interval_ns.unwrap_or(c.interval_ns);
    c.ecn = p.ecn.unwrap_or(c.ecn);
}

fn codel_config(p: &AqmParams) -> CodelConfig {
    let mut c = CodelConfig::default();
    overlay_codel(p, &mut c.params);
    c.limit_packets = p.limit_packets.unwrap_or(c.limit_packets);
    c
}

fn fq_codel_config(p: &AqmParams) -> FqCodelConfig {
    let mut c = FqCodelConfig::default();
    overlay_codel(p, &mut c.codel);
    c.limit_packets = p.limit_packets.unwrap_or(c.limit_packets);
    c.flows = p.flows.unwrap_or(c.flows);
    c.quantum = p.quantum.unwrap_or(c.quantum);
    c.memory_limit = p.memory_limit.unwrap_or(c.memory_limit);
    c.drop_batch = p.drop_batch.unwrap_or(c.drop_batch);
    c
}

fn pie_config(p: &AqmParams, seed: u64) -> PieConfig {
    let d = PieConfig::default();
    PieConfig {
        target_ns: p.target_ns.unwrap_or(d.target_ns),
        tupdate_ns: p.tupdate_ns.unwrap_or(d.tupdate_ns),
        limit_packets: p.limit_packets.unwrap_or(d.limit_packets),
        alpha: p.alpha.unwrap_or(d.alpha),
        beta: p.beta.unwrap_or(d.beta),
        ecn: p.ecn.unwrap_or(d.ecn),
        bytemode: p.bytemode.unwrap_or(d.bytemode),
        seed,
        ..d
    }
}

/// RED from the buffer (`RedConfig::for_buffer`), then the parameters given. The EWMA weight
/// follows tc red: from `burst` (default (2·min + max) / (3·avpkt)) by tc_red_eval_ewma.
fn red_config(p: &AqmParams, buffer: BufferConfig, rate_bps: u64, seed: u64) -> RedConfig {
    let limit = p.limit_bytes.unwrap_or_else(|| buffer_bytes(buffer));
    let mut c = RedConfig::for_buffer(limit, rate_bps);
    c.avpkt = p.avpkt.unwrap_or(c.avpkt);
    c.min_th = p.min_bytes.unwrap_or(c.min_th);
    c.max_th = p.max_bytes.unwrap_or(if p.min_bytes.is_some() { 3 * c.min_th } else { c.max_th });
    c.max_p = p.probability.unwrap_or(c.max_p);
    c.gentle = p.gentle.unwrap_or(c.gentle);
    c.ecn = p.ecn.unwrap_or(c.ecn);
    c.harddrop = p.harddrop.unwrap_or(c.harddrop);
    let burst = p.burst.unwrap_or_else(|| red_default_burst(c.min_th, c.max_th, c.avpkt));
    c.wq = ewma_weight(c.min_th, burst, c.avpkt);
    c.seed = seed;
    c
}

/// tc red's default burst: (2 · min + max) / (3 · avpkt) packets, at least 1.
fn red_default_burst(min_th: u64, max_th: u64, avpkt: u32) -> u64 {
    ((2 * min_th + max_th) / (3 * avpkt as u64)).max(1)
}

fn fq_config(p: &AqmParams) -> FqConfig {
    let d = FqConfig::default();
    FqConfig {
        plimit: p.limit_packets.unwrap_or(d.plimit),
        flow_plimit: p.flow_limit.unwrap_or(d.flow_plimit),
        quantum: p.quantum.unwrap_or(d.quantum),
        initial_quantum: p.initial_quantum.unwrap_or(d.initial_quantum),
        flow_max_rate: p.maxrate_bps.map(|b| b / 8).or(d.flow_max_rate),
        horizon_ns: p.horizon_ns.unwrap_or(d.horizon_ns),
        ce_threshold_ns: p.ce_threshold_ns.or(d.ce_threshold_ns),
        ..d
    }
}

/// Step marking: K as given (packets or bytes), else [`StepConfig::DEFAULT_K_PACKETS`]; the
/// limit as given, else the scenario buffer in bytes (packets count as 1500 bytes, as RED's).
fn step_config(p: &AqmParams, buffer: BufferConfig) -> StepConfig {
    let k = match (p.k_packets, p.k_bytes) {
        (_, Some(b)) => Threshold::Bytes(b),
        (Some(n), None) => Threshold::Packets(n),
        (None, None) => Threshold::Packets(StepConfig::DEFAULT_K_PACKETS),
    };
    let limit = match (p.limit_packets, p.limit_bytes) {
        (_, Some(b)) => Limit::Bytes(b),
        (Some(n), None) => Limit::Packets(n),
        (None, None) => Limit::Bytes(buffer_bytes(buffer)),
    };
    StepConfig { k, limit }
}

/// K and the limit in bytes, packets counting as 1500 bytes, to check K < limit across units.
fn threshold_bytes(k: Threshold) -> u64 {
    match k {
        Threshold::Packets(n) => n.saturating_mul(1500),
        Threshold::Bytes(b) => b,
    }
}

fn limit_bytes(l: Limit) -> u64 {
    match l {
        Limit::Packets(n) => n.saturating_mul(1500),
        Limit::Bytes(b) => b,
    }
}

fn show_threshold(k: Threshold) -> String {
    match k {
        Threshold::Packets(n) => format!("{n} packets"),
        Threshold::Bytes(b) => format!("{b} B"),
    }
}

fn show_limit(l: Limit) -> String {
    match l {
        Limit::Packets(n) => format!("{n} packets"),
        Limit::Bytes(b) => format!("{b} B"),
    }
}

/// The discipline as a dequeue-driven queue, or None for drop-tail (the fast path). `seed`
/// drives PIE's and RED's random decisions. Call [`validate`] first.
pub fn build(aqm: &str, p: &AqmParams, buffer: BufferConfig, rate_bps: u64, seed: u64) -> Option<Box<dyn Qdisc>> {
    Some(match aqm {
        "codel" => Box::new(Codel::new(codel_config(p))),
        "fq_codel" => Box::new(FqCodel::new(fq_codel_config(p))),
        "pie" => Box::new(Pie::new(pie_config(p, seed), 0)),
        "red" => Box::new(Red::new(red_config(p, buffer, rate_bps, seed))),
        "fq" => Box::new(Fq::new(fq_config(p))),
        "step" => Box::new(Step::new(step_config(p, buffer))),
        "dualpi2" => Box::new(DualPi2::new(dualpi2_config(p, seed), 0)),
        _ => return None,
    })
}

/// Drop-tail as a FIFO qdisc served at dequeue time (pfifo / bfifo on the scenario buffer),
/// for cross-checking the served arm against the fast path.
pub fn droptail_served(buffer: BufferConfig) -> Box<dyn Qdisc> {
    Box::new(DropTail::new(buffer.into()))
}

/// Every parameter of `aqm` with the value the run uses (given or default), for the report.
pub fn resolved(aqm: &str, p: &AqmParams, buffer: BufferConfig, rate_bps: u64) -> AqmParams {
    match aqm {
        "codel" => {
            let c = codel_config(p);
            AqmParams {
                target_ns: Some(c.params.target_ns),
                interval_ns: Some(c.params.interval_ns),
                limit_packets: Some(c.limit_packets),
                ecn: Some(c.params.ecn),
                ..AqmParams::default()
            }
        }
        "fq_codel" => {
            let c = fq_codel_config(p);
            AqmParams {
                target_ns: Some(c.codel.target_ns),
                interval_ns: Some(c.codel.interval_ns),
                limit_packets: Some(c.limit_packets),
                ecn: Some(c.codel.ecn),
                flows: Some(c.flows),
                quantum: Some(c.quantum),
                memory_limit: Some(c.memory_limit),
                drop_batch: Some(c.drop_batch),
                ..AqmParams::default()
            }
        }
        "pie" => {
            let c = pie_config(p, 0);
            AqmParams {
                target_ns: Some(c.target_ns),
                tupdate_ns: Some(c.tupdate_ns),
                limit_packets: Some(c.limit_packets),
                ecn: Some(c.ecn),
                alpha: Some(c.alpha),
                beta: Some(c.beta),
                bytemode: Some(c.bytemode),
                ..AqmParams::default()
            }
        }
        "red" => {
            let c = red_config(p, buffer, rate_bps, 0);
            AqmParams {
                limit_bytes: Some(c.limit_bytes),
                min_bytes: Some(c.min_th),
                max_bytes: Some(c.max_th),
                probability: Some(c.max_p),
                avpkt: Some(c.avpkt),
                burst: Some(p.burst.unwrap_or_else(|| red_default_burst(c.min_th, c.max_th, c.avpkt))),
                gentle: Some(c.gentle),
                ecn: Some(c.ecn),
                harddrop: Some(c.harddrop),
                ..AqmParams::default()
            }
        }
        "fq" => {
            let c = fq_config(p);
            AqmParams {
                limit_packets: Some(c.plimit),
                flow_limit: Some(c.flow_plimit),
                quantum: Some(c.quantum),
                initial_quantum: Some(c.initial_quantum),
                maxrate_bps: c.flow_max_rate.map(|b| b * 8),
                horizon_ns: Some(c.horizon_ns),
                ce_threshold_ns: c.ce_threshold_ns,
                ..AqmParams::default()
            }
        }
        "step" => {
            let c = step_config(p, buffer);
            let (k_packets, k_bytes) = match c.k {
                Threshold::Packets(n) => (Some(n), None),
                Threshold::Bytes(b) => (None, Some(b)),
            };
            let (limit_packets, limit_bytes) = match c.limit {
                Limit::Packets(n) => (Some(n), None),
                Limit::Bytes(b) => (None, Some(b)),
            };
            AqmParams { k_packets, k_bytes, limit_packets, limit_bytes, ..AqmParams::default() }
        }
        "dualpi2" => {
            let c = dualpi2_config(p, 0);
            let (step_thresh_ns, step_thresh_packets) = match c.step_thresh {
                StepThresh::Time(t) => (Some(t), None),
                StepThresh::Packets(n) => (None, Some(n)),
            };
            AqmParams {
                target_ns: Some(c.target_ns),
                tupdate_ns: Some(c.tupdate_ns),
                alpha: Some(c.alpha),
                beta: Some(c.beta),
                step_thresh_ns,
                step_thresh_packets,
                min_qlen_step: Some(c.min_qlen_step),
                coupling: Some(c.coupling as u32),
                c_protection: Some(c.c_protection as u32),
                limit_packets: Some(c.limit_packets),
                memory_limit: Some(c.memory_limit),
                drop_overload: Some(c.drop_overload),
                drop_early: Some(c.drop_early),
                ..AqmParams::default()
            }
        }
        _ => AqmParams::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUF: BufferConfig = BufferConfig::Bytes(150_000);

    #[test]
    fn defaults_are_linuxs() {
        let c = resolved("codel", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (c.target_ns, c.interval_ns, c.limit_packets, c.ecn),
            (Some(5_000_000), Some(100_000_000), Some(1000), Some(false))
        );
        let f = resolved("fq_codel", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (f.flows, f.quantum, f.limit_packets, f.memory_limit, f.ecn),
            (Some(1024), Some(1514), Some(10240), Some(32 << 20), Some(true))
        );
        let p = resolved("pie", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (p.target_ns, p.tupdate_ns, p.limit_packets, p.alpha, p.beta),
            (Some(15_000_000), Some(15_000_000), Some(1000), Some(2), Some(20))
        );
        let q = resolved("fq", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (q.limit_packets, q.flow_limit, q.quantum, q.initial_quantum),
            (Some(10_000), Some(100), Some(3028), Some(15_140))
        );
        // RED from the buffer: min = limit/10, max = 3 min (RedConfig::for_buffer).
        let r = resolved("red", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (r.limit_bytes, r.min_bytes, r.max_bytes, r.probability),
            (Some(150_000), Some(15_000), Some(45_000), Some(0.1))
        );
        assert_eq!(resolved("droptail", &AqmParams::default(), BUF, 1), AqmParams::default());
        // step: K = 65 packets, the limit the buffer in bytes (packets count as 1500 B).
        let s = resolved("step", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!((s.k_packets, s.k_bytes, s.limit_packets, s.limit_bytes), (Some(65), None, None, Some(150_000)));
        let s = resolved("step", &AqmParams::default(), BufferConfig::Packets(300), 1);
        assert_eq!(s.limit_bytes, Some(450_000));
    }

    #[test]
    fn step_takes_k_and_limit_in_packets_or_bytes_with_k_below_the_limit() {
        let p = AqmParams { k_bytes: Some(30_000), limit_packets: Some(50), ..AqmParams::default() };
        assert!(validate("step", &p, BUF).is_ok());
        let r = resolved("step", &p, BUF, 1);
        assert_eq!((r.k_packets, r.k_bytes, r.limit_packets, r.limit_bytes), (None, Some(30_000), Some(50), None));
        let both = AqmParams { k_bytes: Some(30_000), k_packets: Some(20), ..AqmParams::default() };
        assert!(validate("step", &both, BUF).unwrap_err().contains("not both"));
        // K at or above the limit would never mark: refused, the default K against the buffer too.
        let high = AqmParams { k_packets: Some(50), limit_packets: Some(50), ..AqmParams::default() };
        let e = validate("step", &high, BUF).unwrap_err();
        assert!(e.contains("aqm_params.k") && e.contains("k 50 packets, limit 50 packets"), "{e}");
        let e = validate("step", &AqmParams::default(), BufferConfig::Bytes(90_000)).unwrap_err();
        assert!(e.contains("k 65 packets, limit 90000 B"), "{e}");
        assert!(validate("step", &AqmParams { k_packets: Some(0), ..AqmParams::default() }, BUF).is_err());
        let foreign = AqmParams { ecn: Some(true), ..AqmParams::default() };
        assert!(validate("step", &foreign, BUF).unwrap_err().contains("it takes: k_packets, k_bytes"));
    }

    #[test]
    fn dualpi2_defaults_are_linuxs_and_its_keys_are_checked() {
        // dualpi2_reset_default: target 15 ms, tupdate 16 ms, alpha 41 and beta 819 (1/256 Hz),
        // step 1 ms, k = 2, wc 10 %, limit 10 000 packets, memory 10 000 · 2 · 1514 B.
        let r = resolved("dualpi2", &AqmParams::default(), BUF, 10_000_000);
        assert_eq!(
            (r.target_ns, r.tupdate_ns, r.alpha, r.beta, r.step_thresh_ns, r.step_thresh_packets),
            (Some(15_000_000), Some(16_000_000), Some(41), Some(819), Some(1_000_000), None)
        );
        assert_eq!(
            (r.coupling, r.c_protection, r.limit_packets, r.memory_limit, r.drop_overload, r.drop_early),
            (Some(2), Some(10), Some(10_000), Some(30_280_000), Some(true), Some(false))
        );
        // A packet limit carries the memory limit with it.
        let p = AqmParams { limit_packets: Some(100), step_thresh_packets: Some(5), ..AqmParams::default() };
        assert!(validate("dualpi2", &p, BUF).is_ok());
        let r = resolved("dualpi2", &p, BUF, 1);
        assert_eq!((r.memory_limit, r.step_thresh_ns, r.step_thresh_packets), (Some(302_800), None, Some(5)));
        let both = AqmParams { step_thresh_ns: Some(1), step_thresh_packets: Some(1), ..AqmParams::default() };
        assert!(validate("dualpi2", &both, BUF).unwrap_err().contains("not both"));
        let k0 = AqmParams { coupling: Some(0), ..AqmParams::default() };
        assert!(validate("dualpi2", &k0, BUF).unwrap_err().contains("coupling"));
        let wc = AqmParams { c_protection: Some(101), ..AqmParams::default() };
        assert!(validate("dualpi2", &wc, BUF).unwrap_err().contains("c_protection"));
        // alpha in 1/256 Hz for dualpi2 (41 is fine), in 1/16 for pie (41 is not).
        let a = AqmParams { alpha: Some(41), ..AqmParams::default() };
        assert!(validate("dualpi2", &a, BUF).is_ok());
        assert!(validate("pie", &a, BUF).is_err());
        assert!(validate("dualpi2", &AqmParams { alpha: Some(0), ..AqmParams::default() }, BUF).is_err());
        let foreign = AqmParams { k_packets: Some(3), ..AqmParams::default() };
        assert!(validate("dualpi2", &foreign, BUF).unwrap_err().contains("step_thresh_ns"));
    }

    #[test]
    fn given_parameters_override_and_foreign_ones_are_refused() {
        let p = AqmParams { target_ns: Some(2_000_000), ecn: Some(true), ..AqmParams::default() };
        assert!(validate("codel", &p, BUF).is_ok());
        assert_eq!(resolved("codel", &p, BUF, 1).target_ns, Some(2_000_000));
        let q = AqmParams { quantum: Some(300), ..AqmParams::default() };
        let e = validate("codel", &q, BUF).unwrap_err();
        assert!(e.contains("aqm_params.quantum") && e.contains("codel") && e.contains("interval_ns"), "{e}");
        let e = validate("droptail", &q, BUF).unwrap_err();
        assert!(e.contains("it takes: none"), "{e}");
        assert!(validate("sfq", &AqmParams::default(), BUF).unwrap_err().contains("fq_codel"));
        let bad = AqmParams { min_bytes: Some(50_000), max_bytes: Some(40_000), ..AqmParams::default() };
        assert!(validate("red", &bad, BUF).unwrap_err().contains("min < max"));
        let zero = AqmParams { limit_packets: Some(0), ..AqmParams::default() };
        assert!(validate("pie", &zero, BUF).is_err());
    }

    #[test]
    fn every_discipline_but_droptail_builds_a_qdisc() {
        for name in NAMES {
            let q = build(name, &AqmParams::default(), BUF, 10_000_000, 1);
            assert_eq!(q.is_some(), name != "droptail", "{name}");
        }
    }
}
