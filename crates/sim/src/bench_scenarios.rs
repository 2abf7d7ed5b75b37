//! The scenarios `make bench` times (shared by the criterion benchmark and the whole-run
//! harness, which reads them through `ccbench_sim::bench_scenarios::by_name`).
use crate::config::*;

fn base(rate_bps: u64, rtt_ns: u64, secs: u64, flows: Vec<FlowConfig>) -> SimConfig {
    SimConfig {
        name: "bench".into(),
        duration_ns: secs * 1_000_000_000,
        seed: 1,
        sample_interval_ns: 100_000_000,
        bottleneck: BottleneckConfig {
            rate_bps,
            rtt_ns,
            jitter_ns: 0,
            jitter_dist: JitterDist::Uniform,
            reorder: true,
            loss: LossConfig::None,
            impair: Impair::Data,
            // 1 BDP of drop-tail buffer.
            buffer: BufferConfig::Bytes(rate_bps * rtt_ns / 8 / 1_000_000_000),
            aqm: "droptail".into(),
        },
        access: AccessConfig::default(),
        flows,
        probe: ProbeConfig::default(),
    }
}

fn flows(cc: &str, n: u32) -> Vec<FlowConfig> {
    (0..n)
        .map(|id| FlowConfig {
            id,
            group: 0,
            cc: cc.into(),
            start_ns: 0,
            rwnd_bytes: 32 << 20,
            size_bytes: None,
            pacing: false,
        })
        .collect()
}

/// (name, description, scenario)
pub fn all() -> Vec<(&'static str, &'static str, SimConfig)> {
    vec![
        ("a_1flow_10M_100ms_60s", "1 CUBIC flow, 10 Mbit/s, 100 ms RTT, 60 s", base(10_000_000, 100_000_000, 60, flows("cubic", 1))),
        ("b_10cubic_1G_1ms_10s", "10 CUBIC flows, 1 Gbit/s, 1 ms RTT, 1 BDP, 10 s", base(1_000_000_000, 1_000_000, 10, flows("cubic", 10))),
        ("c_10bbr_1G_1ms_10s", "10 BBR flows (paced), 1 Gbit/s, 1 ms RTT, 1 BDP, 10 s", base(1_000_000_000, 1_000_000, 10, flows("bbr", 10))),
    ]
}

pub fn by_name(name: &str) -> Option<SimConfig> {
    all().into_iter().find(|(n, _, _)| *n == name).map(|(_, _, c)| c)
}
