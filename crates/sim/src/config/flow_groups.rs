//! Flow groups: the scenario's `[[flows]]` tables as the Python side sends them (a `count` of
//! connections with one start, stagger and set of parameters), expanded into one `FlowConfig`
//! per connection exactly as python/ccbench/scenario/model.py `Scenario._flow_starts` numbers and
//! starts them:
//!
//! * ids run 0..n group by group, `count` connections each, in the groups' order;
//! * connection `i` of a group starts at `start_ns + i × stagger_ns + offset`, where `offset`
//!   is the scenario's start jitter: a deterministic draw from `[0, start_jitter_ns)` keyed by
//!   the seed and the flow id (`start_offset_ns`, the same BLAKE2b draw as Python's
//!   `_start_offset_ns`).
use super::{Direction, FlowConfig};
use crate::blake2b::blake2b;
use serde::{Deserialize, Serialize};

/// One `[[flows]]` table: `count` connections sharing their parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupConfig {
    /// Connections in the group (at least 1).
    pub count: u32,
    pub cc: String,
    /// Start of the group's first connection.
    #[serde(default)]
    pub start_ns: u64,
    /// Added to the start of each further connection of the group.
    #[serde(default)]
    pub stagger_ns: u64,
    /// As `FlowConfig`: receive window cap, bytes to send (None = bulk), pacing, timestamps, ECN,
    /// direction.
    pub rwnd_bytes: u64,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub pacing: bool,
    #[serde(default = "default_true")]
    pub timestamps: bool,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default, skip_serializing_if = "Direction::is_forward")]
    pub direction: Direction,
    /// As `FlowConfig::access_rate_bps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_rate_bps: Option<u64>,
}

fn default_true() -> bool {
    true
}

/// The start offset of flow `flow_id` under start jitter `span_ns`: the first 8 bytes of
/// BLAKE2b-64 of `"start_jitter/{seed}/{flow_id}"` as a little-endian integer, modulo the span
/// (64 random bits: the modulo bias is below span / 2^64). 0 when there is no jitter.
pub fn start_offset_ns(seed: u64, span_ns: u64, flow_id: u32) -> u64 {
    if span_ns == 0 {
        return 0;
    }
    let mut digest = [0u8; 8];
    blake2b(format!("start_jitter/{seed}/{flow_id}").as_bytes(), &mut digest);
    u64::from_le_bytes(digest) % span_ns
}

/// One `FlowConfig` per connection of `groups`, ids 0..n in group order (see the module
/// documentation). Errors name the group: an empty group, more than 2^32 connections, or a
/// start beyond the simulator's clock.
pub fn expand(groups: &[FlowGroupConfig], seed: u64, start_jitter_ns: u64) -> Result<Vec<FlowConfig>, String> {
    let total: u64 = groups.iter().map(|g| u64::from(g.count)).sum();
    if total > u64::from(u32::MAX) {
        return Err(format!("flow_groups: {total} connections, more than flow ids can number"));
    }
    let mut flows = Vec::with_capacity(total as usize);
    let mut id: u32 = 0;
    for (gi, g) in groups.iter().enumerate() {
        if g.count == 0 {
            return Err(format!("flow_groups[{gi}].count must be at least 1"));
        }
        for i in 0..u64::from(g.count) {
            let start_ns = i
                .checked_mul(g.stagger_ns)
                .and_then(|s| s.checked_add(g.start_ns))
                .and_then(|s| s.checked_add(start_offset_ns(seed, start_jitter_ns, id)))
                .ok_or_else(|| format!("flow_groups[{gi}]: the start of connection {i} overflows the clock"))?;
            flows.push(FlowConfig {
                id,
                group: gi as u32,
                cc: g.cc.clone(),
                start_ns,
                rwnd_bytes: g.rwnd_bytes,
                size_bytes: g.size_bytes,
                pacing: g.pacing,
                timestamps: g.timestamps,
                ecn: g.ecn,
                direction: g.direction,
                access_rate_bps: g.access_rate_bps,
            });
            id = id.wrapping_add(1);
        }
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;

    fn group(count: u32, cc: &str, start_ns: u64, stagger_ns: u64) -> FlowGroupConfig {
        FlowGroupConfig {
            count,
            cc: cc.into(),
            start_ns,
            stagger_ns,
            rwnd_bytes: 1 << 20,
            size_bytes: None,
            pacing: false,
            timestamps: true,
            ecn: false,
            direction: Direction::Forward,
            access_rate_bps: None,
        }
    }

    #[test]
    fn ids_groups_and_starts_follow_the_groups() {
        let mut second = group(3, "bbr", 5_000, 1_000);
        second.size_bytes = Some(10_000);
        second.pacing = true;
        second.timestamps = false;
        let flows = expand(&[group(2, "cubic", 0, 0), second], 7, 0).unwrap();
        assert_eq!(flows.iter().map(|f| f.id).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(flows.iter().map(|f| f.group).collect::<Vec<_>>(), [0, 0, 1, 1, 1]);
        assert_eq!(flows.iter().map(|f| f.start_ns).collect::<Vec<_>>(), [0, 0, 5_000, 6_000, 7_000]);
        assert!(flows[..2].iter().all(|f| f.cc == "cubic" && f.size_bytes.is_none() && !f.pacing && f.timestamps));
        assert!(flows[2..].iter().all(|f| f.cc == "bbr" && f.size_bytes == Some(10_000) && f.pacing && !f.timestamps));
    }

    #[test]
    fn start_jitter_adds_an_offset_below_the_span_that_depends_on_seed_and_id() {
        let span = 10_000_000;
        let flows = expand(&[group(200, "cubic", 1_000, 0)], 1, span).unwrap();
        let offsets: Vec<u64> = flows.iter().map(|f| f.start_ns - 1_000).collect();
        assert!(offsets.iter().all(|&o| o < span));
        // not one value: 200 draws from 10^7 values are nearly all distinct
        let mut distinct = offsets.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 190, "{} distinct offsets", distinct.len());
        let other_seed = expand(&[group(200, "cubic", 1_000, 0)], 2, span).unwrap();
        assert_ne!(
            flows.iter().map(|f| f.start_ns).collect::<Vec<_>>(),
            other_seed.iter().map(|f| f.start_ns).collect::<Vec<_>>()
        );
        // python: int.from_bytes(hashlib.blake2b(b"start_jitter/1/0", digest_size=8).digest(), "little") % 10**7
        assert_eq!(offsets[0], 0xecef837e5d9544b2 % span);
    }

    #[test]
    fn bad_groups_are_errors_that_name_the_group() {
        let e = expand(&[group(1, "cubic", 0, 0), group(0, "reno", 0, 0)], 1, 0).unwrap_err();
        assert!(e.contains("flow_groups[1].count"), "{e}");
        let e = expand(&[group(3, "cubic", 0, u64::MAX / 2 + 1)], 1, 0).unwrap_err();
        assert!(e.contains("flow_groups[0]") && e.contains("connection 2"), "{e}");
    }

    fn json(extra: &str) -> String {
        format!(
            r#"{{"duration_ns":1000000000,"seed":3,"sample_interval_ns":0,
               "bottleneck":{{"rate_bps":1000000,"rtt_ns":10000000,"buffer":{{"packets":10}}}}{extra}}}"#
        )
    }

    #[test]
    fn sim_config_json_takes_groups_or_flows_and_serialises_flows() {
        let groups = r#","flow_groups":[{"count":2,"cc":"reno","start_ns":5,"stagger_ns":7,"rwnd_bytes":65536}],"start_jitter_ns":0"#;
        let c: SimConfig = serde_json::from_str(&json(groups)).unwrap();
        assert_eq!(c.flows.iter().map(|f| f.start_ns).collect::<Vec<_>>(), [5, 12]);
        // the serialised form is the per-connection one, and reads back to the same flows
        let text = serde_json::to_string(&c).unwrap();
        assert!(text.contains("\"flows\"") && !text.contains("flow_groups"));
        let back: SimConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn sim_config_json_refuses_both_forms_none_and_jitter_on_flows() {
        let flows = r#","flows":[{"id":0,"cc":"reno","rwnd_bytes":65536}]"#;
        let groups = r#","flow_groups":[{"count":1,"cc":"reno","rwnd_bytes":65536}]"#;
        let both = serde_json::from_str::<SimConfig>(&json(&format!("{flows}{groups}"))).unwrap_err().to_string();
        assert!(both.contains("not both"), "{both}");
        let none = serde_json::from_str::<SimConfig>(&json("")).unwrap_err().to_string();
        assert!(none.contains("flow_groups"), "{none}");
        let jitter = serde_json::from_str::<SimConfig>(&json(&format!("{flows},\"start_jitter_ns\":5")))
            .unwrap_err()
            .to_string();
        assert!(jitter.contains("start_jitter_ns"), "{jitter}");
        let unknown =
            serde_json::from_str::<SimConfig>(&json(&format!("{groups},\"bogus\":1"))).unwrap_err().to_string();
        assert!(unknown.contains("bogus"), "{unknown}");
    }
}
