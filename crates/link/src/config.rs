//! Configuration: the normalised scenario JSON of `crates/sim/src/config/mod.rs` (the whole
//! `SimConfig`, of which only `seed`, `sample_interval_ns`, `bottleneck`, `access` and
//! `measured_tcp_ports` are read), or just its `bottleneck` object. Both backends therefore read
//! one format, and the bottleneck's `aqm` / `aqm_params` are validated and resolved by the same
//! code as the simulator's (`ccbench_queue::aqm`).
use crate::access::AccessSpec;
use ccbench_queue::Trace;
use serde_json::Value;
use std::sync::Arc;
// The scenario's bottleneck types are the simulator's (crates/sim/src/config/), its buffer and
// queue-discipline parameters ccbench-queue's: one definition, one validation, for both backends.
pub use ccbench_queue::{AqmParams, BufferConfig};
pub use ccbench_sim::config::{AccessConfig, BottleneckConfig as Bottleneck, Impair, JitterDist, LossConfig};
pub use ccbench_wifi::WifiConfig;

/// Everything the emulator needs.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    pub bottleneck: Bottleneck,
    pub seed: u64,
    pub sample_interval_ns: u64,
    /// Each host's access links: one-way delay (sender side and receiver side alike; base
    /// RTT = rtt + 4 × delay, as the simulator) and, if set, their rate (access.rs).
    pub access: AccessConfig,
    /// Flow f's own access rate (its hosts' links), where the scenario gives one.
    pub flow_access_rates_bps: Vec<Option<u64>>,
    /// The measured TCP connections' client ports (`measured_tcp_ports`, set by the kernel
    /// backend): only their data segments and ACKs meet loss and jitter (measured.rs). Empty:
    /// every packet does.
    pub measured_tcp_ports: Vec<u16>,
}

/// One direction of the path, after `impair` has been resolved.
#[derive(Debug, Clone)]
pub struct DirConfig {
    pub name: &'static str,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub jitter_ns: u64,
    pub jitter_dist: JitterDist,
    pub reorder: bool,
    pub loss: LossConfig,
    pub buffer: BufferConfig,
    /// The queue discipline (`droptail`: the fast path) and its parameters; the same in both
    /// directions, as the simulator runs it on both bottleneck directions.
    pub aqm: String,
    pub aqm_params: AqmParams,
    /// Test hook: drop-tail as a FIFO discipline through the AQM arm instead of the fast path.
    pub serve_droptail_at_dequeue: bool,
    /// Deliver at this Mahimahi trace's opportunities instead of at `rate_bps` (which then
    /// holds the forward trace's mean); the queue takes the served arm.
    pub trace: Option<Arc<Trace>>,
    pub seed: u64,
    pub sample_interval_ns: u64,
    /// See `LinkConfig::measured_tcp_ports`.
    pub measured_tcp_ports: Vec<u16>,
    /// The hosts' access links around this direction's bottleneck (None: no access rate, the
    /// access delays are part of `delay_ns`).
    pub access: Option<AccessSpec>,
}

impl DirConfig {
    /// The simulator's name for this direction's bottleneck link ("bottleneck/fwd" for data,
    /// "bottleneck/rev" for ACKs). Loss, jitter and AQM random streams are named after it, so
    /// that with the same seed the n-th packet crossing a direction gets the same draws on both
    /// backends (common random numbers: a sim/kernel comparison then sees the same realised
    /// loss rate instead of two independent samples of it).
    pub fn stream(&self) -> &'static str {
        if self.name == "data" {
            "bottleneck/fwd"
        } else {
            "bottleneck/rev"
        }
    }
}

impl LinkConfig {
    pub fn from_json(text: &str) -> Result<LinkConfig, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("config is not JSON: {e}"))?;
        let obj = v.as_object().ok_or("config must be a JSON object")?;
        let (bn, seed, sample, access) = if let Some(b) = obj.get("bottleneck") {
            let seed = obj.get("seed").and_then(Value::as_u64).unwrap_or(1);
            let sample = obj.get("sample_interval_ns").and_then(Value::as_u64).unwrap_or(100_000_000);
            let access: AccessConfig = match obj.get("access") {
                None | Some(Value::Null) => AccessConfig::default(),
                Some(a) => serde_json::from_value(a.clone()).map_err(|e| format!("access: {e}"))?,
            };
            (b.clone(), seed, sample, access)
        } else {
            (v.clone(), 1, 100_000_000, AccessConfig::default())
        };
        // flow f's own access rate (`flows[f].access_rate_bps`; flows are in id order)
        let no_flows = Vec::new();
        let flows = obj.get("flows").and_then(Value::as_array).unwrap_or(&no_flows);
        let flow_access_rates_bps = flows
            .iter()
            .enumerate()
            .map(|(i, f)| match f.get("access_rate_bps") {
                None | Some(Value::Null) => Ok(None),
                Some(r) => r.as_u64().map(Some).ok_or(format!("flows[{i}].access_rate_bps: an integer is expected")),
            })
            .collect::<Result<Vec<_>, String>>()?;
        let (bn, wifi) = take_wifi(bn)?;
        let mut bottleneck: Bottleneck = serde_json::from_value(bn).map_err(|e| format!("bottleneck: {e}"))?;
        bottleneck.wifi = wifi;
        let measured_tcp_ports = match obj.get("measured_tcp_ports") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| format!("measured_tcp_ports: a list of TCP ports is expected: {e}"))?,
        };
        let cfg = LinkConfig {
            bottleneck,
            seed,
            sample_interval_ns: sample,
            access,
            flow_access_rates_bps,
            measured_tcp_ports,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Every discipline of `ccbench_queue::aqm` runs here (the AQM arm of path.rs, or
    /// in front of each Wi-Fi station's driver queue).
    pub fn validate(&self) -> Result<(), String> {
        if self.access.rate_bps == Some(0) {
            return Err("access.rate_bps: must be positive (or null: no access rate)".into());
        }
        if let Some(i) = self.flow_access_rates_bps.iter().position(|r| *r == Some(0)) {
            return Err(format!("flows[{i}].access_rate_bps: must be positive (or null: access.rate_bps)"));
        }
        self.bottleneck.validate()
    }

    /// `bottleneck.wifi`: the hop is one 802.11n medium shared by both directions (wifi.rs)
    /// instead of two wires. None = wire.
    pub fn wifi(&self) -> Option<&WifiConfig> {
        self.bottleneck.wifi.as_ref()
    }

    /// The two directions: 0 = data (sender → receiver), 1 = ACK (receiver → sender).
    pub fn directions(&self) -> [DirConfig; 2] {
        let b = &self.bottleneck;
        let a = &self.access;
        let rated = a.rate_bps.is_some() || self.flow_access_rates_bps.iter().any(Option::is_some);
        let access = rated.then(|| AccessSpec {
            rate_bps: a.rate_bps,
            host_rates_bps: self.flow_access_rates_bps.clone(),
            delay_ns: a.delay_ns,
        });
        // Without an access rate both access links are pure delays folded into the bottleneck's
        // delay line (topology.rs does the same). With one, the entry link's delay is the access
        // stage's and the exit link's stays in the delay line (access.rs says why).
        let folded = if access.is_some() { a.delay_ns } else { 2 * a.delay_ns };
        let one_way = b.rtt_ns / 2 + folded;
        // validated with the config (BottleneckConfig::validate): [data, ack]
        let traces = b.trace.as_ref().map(|t| t.traces().expect("bottleneck.trace is validated"));
        let trace = |i: usize| traces.as_ref().map(|t| t[i].clone());
        let mk = |name: &'static str, impaired: bool, label_seed: u64, trace: Option<Arc<Trace>>| DirConfig {
            name,
            rate_bps: b.rate_bps,
            delay_ns: one_way,
            jitter_ns: if impaired { b.jitter_ns } else { 0 },
            jitter_dist: b.jitter_dist,
            reorder: b.reorder,
            loss: if impaired { b.loss } else { LossConfig::None },
            buffer: b.buffer,
            aqm: b.aqm.clone(),
            aqm_params: b.aqm_params.clone(),
            serve_droptail_at_dequeue: b.serve_droptail_at_dequeue,
            trace,
            seed: label_seed,
            sample_interval_ns: self.sample_interval_ns,
            measured_tcp_ports: self.measured_tcp_ports.clone(),
            access: access.clone(),
        };
        let data = matches!(b.impair, Impair::Data | Impair::Both);
        let ack = matches!(b.impair, Impair::Ack | Impair::Both);
        [mk("data", data, self.seed, trace(0)), mk("ack", ack, self.seed, trace(1))]
    }
}

/// Split `wifi` off the bottleneck object (null or absent = a wire) and read it on its own as
/// ccbench-wifi's `WifiConfig`, so that an error in it names `bottleneck.wifi`.
fn take_wifi(mut bn: Value) -> Result<(Value, Option<WifiConfig>), String> {
    let w = bn.as_object_mut().and_then(|o| o.remove("wifi")).filter(|w| !w.is_null());
    let wifi = match w {
        Some(w) => Some(serde_json::from_value(w).map_err(|e| format!("bottleneck.wifi: {e}"))?),
        None => None,
    };
    Ok((bn, wifi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_full_scenario_and_bare_bottleneck() {
        let full = r#"{"name":"x","duration_ns":1,"seed":7,"sample_interval_ns":5000000,
            "bottleneck":{"rate_bps":50000000,"rtt_ns":50000000,"jitter_ns":1000,
              "jitter_dist":"normal","reorder":false,"loss":{"model":"bernoulli","p":0.01},
              "impair":"both","buffer":{"bytes":312500},"aqm":"droptail"},
            "access":{"rate_bps":null,"delay_ns":1000000},"flows":[],"probe":{"ping_interval_ns":0}}"#;
        let c = LinkConfig::from_json(full).unwrap();
        assert_eq!(c.seed, 7);
        let d = c.directions();
        assert_eq!(d[0].delay_ns, 25_000_000 + 2_000_000);
        assert_eq!(d[1].jitter_ns, 1000);
        let bare = r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10}}"#;
        let c = LinkConfig::from_json(bare).unwrap();
        assert_eq!(c.bottleneck.buffer, BufferConfig::Packets(10));
        let d = c.directions();
        assert_eq!(d[1].loss, LossConfig::None);
        // every discipline with its parameters, in both directions; unknown ones refused
        let c = LinkConfig::from_json(
            r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"aqm":"codel","aqm_params":{"target_ns":2000000,"ecn":true}}"#,
        )
        .unwrap();
        for d in c.directions() {
            assert_eq!(
                (d.aqm.as_str(), d.aqm_params.target_ns, d.aqm_params.ecn),
                ("codel", Some(2_000_000), Some(true))
            );
        }
        for aqm in ["fq_codel", "pie", "red", "fq"] {
            let j = format!(r#"{{"rate_bps":1,"rtt_ns":2,"buffer":{{"packets":10}},"aqm":"{aqm}"}}"#);
            assert!(LinkConfig::from_json(&j).is_ok(), "{aqm}");
        }
        assert!(LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"aqm":"sfq"}"#).is_err());
        let e = LinkConfig::from_json(
            r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"aqm":"codel","aqm_params":{"quantum":300}}"#,
        )
        .unwrap_err();
        assert!(e.contains("quantum"), "{e}");
        assert!(LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"bogus":1}"#).is_err());
    }

    #[test]
    fn an_access_rate_gives_both_directions_access_links_and_keeps_base_rtt() {
        // rtt 40 ms, access delay 1 ms: base RTT = 40 + 4 × 1 = 44 ms, i.e. 22 ms one way, of
        // which the entry link's 1 ms is the access stage's and 21 ms the delay line's.
        let j = r#"{"seed":3,"bottleneck":{"rate_bps":50000000,"rtt_ns":40000000,"buffer":{"packets":100}},
            "access":{"rate_bps":20000000,"delay_ns":1000000}}"#;
        let c = LinkConfig::from_json(j).unwrap();
        for d in c.directions() {
            let spec = AccessSpec { rate_bps: Some(20_000_000), host_rates_bps: vec![], delay_ns: 1_000_000 };
            assert_eq!(d.access, Some(spec));
            assert_eq!(d.delay_ns + d.access.unwrap().delay_ns, 22_000_000);
        }
        // a flow's own rate: access links without a scenario rate, per host
        let own = j
            .replace("20000000,", "null,")
            .replace(r#""access":"#, r#""flows":[{"id":0,"access_rate_bps":10000000},{"id":1}],"access":"#);
        let c = LinkConfig::from_json(&own).unwrap();
        let spec = c.directions()[0].access.clone().unwrap();
        assert_eq!((spec.rate_of(0), spec.rate_of(1), spec.rate_of(5)), (Some(10_000_000), None, None));
        let e = LinkConfig::from_json(&own.replace("10000000}", "0}")).unwrap_err();
        assert!(e.contains("flows[0].access_rate_bps"), "{e}");
        // without a rate: no access links, both delays folded (20 + 2 × 1 ms)
        let c = LinkConfig::from_json(&j.replace("20000000,", "null,")).unwrap();
        assert!(c.directions().iter().all(|d| d.access.is_none() && d.delay_ns == 22_000_000));
        let e = LinkConfig::from_json(&j.replace("20000000,", "0,")).unwrap_err();
        assert!(e.contains("access.rate_bps"), "{e}");
        let e = LinkConfig::from_json(&j.replace("\"delay_ns\"", "\"dly\"")).unwrap_err();
        assert!(e.starts_with("access:"), "{e}");
    }

    #[test]
    fn reads_wifi_with_defaults_and_names_bad_keys() {
        let c = LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10}}"#).unwrap();
        assert!(c.wifi().is_none());
        let c = LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"wifi":null}"#).unwrap();
        assert!(c.wifi().is_none());
        let c = LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"wifi":{"mcs":3}}"#).unwrap();
        assert_eq!(c.wifi(), Some(&WifiConfig { mcs: 3, ..WifiConfig::default() }));
        let e = LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"wifi":{"mcs":40}}"#)
            .unwrap_err();
        assert!(e.contains("wifi.mcs"), "{e}");
        let e = LinkConfig::from_json(r#"{"rate_bps":1,"rtt_ns":2,"buffer":{"packets":10},"wifi":{"bogus":1}}"#)
            .unwrap_err();
        assert!(e.contains("bottleneck.wifi") && e.contains("bogus"), "{e}");
    }
}
