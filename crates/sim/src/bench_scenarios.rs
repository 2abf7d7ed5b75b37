//! The scenarios `make bench` times (shared by the criterion benchmark and the whole-run
//! harness, which reads them through `ccbench_sim::bench_scenarios::by_name`).
use crate::config::*;

/// One drop-tail bottleneck with a 1-BDP buffer, `n` bulk flows of `cc`.
fn base(rate_bps: u64, rtt_ns: u64, secs: u64, cc: &str, n: u32) -> SimConfig {
    let flows = (0..n).map(|id| FlowConfig::bulk(id, cc, 32 << 20)).collect();
    SimConfig::new("bench", secs * 1_000_000_000, BottleneckConfig::droptail(rate_bps, rtt_ns, 1.0), flows)
}

/// (name, description, scenario)
pub fn all() -> Vec<(&'static str, &'static str, SimConfig)> {
    vec![
        (
            "a_1flow_10M_100ms_60s",
            "1 CUBIC flow, 10 Mbit/s, 100 ms RTT, 60 s",
            base(10_000_000, 100_000_000, 60, "cubic", 1),
        ),
        (
            "b_10cubic_1G_1ms_10s",
            "10 CUBIC flows, 1 Gbit/s, 1 ms RTT, 1 BDP, 10 s",
            base(1_000_000_000, 1_000_000, 10, "cubic", 10),
        ),
        (
            "c_10bbr_1G_1ms_10s",
            "10 BBR flows (paced), 1 Gbit/s, 1 ms RTT, 1 BDP, 10 s",
            base(1_000_000_000, 1_000_000, 10, "bbr", 10),
        ),
    ]
}

pub fn by_name(name: &str) -> Option<SimConfig> {
    all().into_iter().find(|(n, _, _)| *n == name).map(|(_, _, c)| c)
}
