//! Equality check for refactorings: runs a fixed set of varied scenarios and writes the full
//! report JSON of each to DIR/<name>.json. Run it before and after a change that must not alter
//! behaviour and compare the two directories byte for byte (`cmp` / `diff -r`).
//!
//!     cargo run --release --example digest -- /tmp/ref
use ccbench_sim::config::*;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn flows(cc: &str, n: u32) -> Vec<FlowConfig> {
    (0..n).map(|id| FlowConfig::bulk(id, cc, 32 << 20)).collect()
}

fn scen(name: &str, secs: u64, rate: u64, rtt: u64, bdp: f64, fl: Vec<FlowConfig>) -> SimConfig {
    let mut c = SimConfig::new(name, secs * S, BottleneckConfig::droptail(rate, rtt, bdp), fl);
    c.seed = 7;
    c
}

fn all() -> Vec<SimConfig> {
    let mut v = Vec::new();
    v.push(scen("cubic_clean", 10, 50_000_000, 50 * MS, 1.0, flows("cubic", 1)));
    let mut c = scen("cubic_loss1", 10, 50_000_000, 50 * MS, 1.0, flows("cubic", 1));
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
    v.push(c);
    let mut c = scen("reno_loss5", 10, 20_000_000, 30 * MS, 1.0, flows("reno", 1));
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.05 };
    v.push(c);
    let mut c = scen("bbr_loss1", 10, 50_000_000, 50 * MS, 1.0, flows("bbr", 1));
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
    v.push(c);
    let mut c = scen("bbr_jitter_reorder", 10, 50_000_000, 50 * MS, 1.0, flows("bbr", 1));
    c.bottleneck.jitter_ns = 8 * MS;
    v.push(c);
    let mut c = scen("cubic_jitter_reorder", 10, 50_000_000, 50 * MS, 1.0, flows("cubic", 1));
    c.bottleneck.jitter_ns = 16 * MS;
    c.bottleneck.jitter_dist = JitterDist::Normal;
    v.push(c);
    let mut c = scen("vegas_gilbert", 10, 30_000_000, 40 * MS, 2.0, flows("vegas", 1));
    c.bottleneck.loss = LossConfig::Gilbert { p: 0.005, r: 0.3, h: 0.0, k: 1.0 };
    v.push(c);
    let mut c = scen("cubic_ackloss", 10, 50_000_000, 50 * MS, 1.0, flows("cubic", 1));
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.05 };
    c.bottleneck.impair = Impair::Ack;
    v.push(c);
    let mut fl = flows("cubic", 1);
    fl[0].pacing = true;
    let mut c = scen("cubic_paced_loss1", 10, 100_000_000, 20 * MS, 0.5, fl);
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
    v.push(c);
    let mut fl = flows("reno", 3);
    for (i, f) in fl.iter_mut().enumerate() {
        f.size_bytes = Some(200_000 * (i as u64 + 1));
        f.start_ns = i as u64 * 300 * MS;
        f.pacing = i == 1;
    }
    v.push(scen("reno_fixed_size", 5, 20_000_000, 40 * MS, 1.0, fl));
    let mut fl = vec![
        FlowConfig::bulk(0, "cubic", 32 << 20),
        FlowConfig::bulk(1, "bbr", 32 << 20),
        FlowConfig::bulk(2, "reno", 32 << 20),
        FlowConfig::bulk(3, "vegas", 32 << 20),
    ];
    for (i, f) in fl.iter_mut().enumerate() {
        f.group = i as u32;
        f.start_ns = i as u64 * 500 * MS;
    }
    let mut c = scen("mixed_compete", 10, 40_000_000, 60 * MS, 1.0, fl);
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.001 };
    c.probe.ping_interval_ns = 100 * MS;
    v.push(c);
    let mut c = scen("cubic_small_rwnd", 10, 100_000_000, 50 * MS, 1.0, vec![FlowConfig::bulk(0, "cubic", 64 << 10)]);
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.005 };
    v.push(c);
    let mut c = scen("bbr_both_pareto_pkts", 10, 20_000_000, 80 * MS, 1.0, flows("bbr", 2));
    c.bottleneck.jitter_ns = 4 * MS;
    c.bottleneck.jitter_dist = JitterDist::Pareto;
    c.bottleneck.impair = Impair::Both;
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.02 };
    c.bottleneck.buffer = BufferConfig::Packets(30);
    c.access = AccessConfig { rate_bps: Some(1_000_000_000), delay_ns: MS };
    v.push(c);
    let mut c = scen("reno_heavy_loss_rto", 10, 10_000_000, 100 * MS, 0.3, flows("reno", 2));
    c.bottleneck.loss = LossConfig::Gilbert { p: 0.05, r: 0.2, h: 0.1, k: 0.99 };
    v.push(c);
    // the served-queue arm (an AQM) and the Wi-Fi hop, each with competing flows and a ping
    let mut fl = vec![FlowConfig::bulk(0, "cubic", 32 << 20), FlowConfig::bulk(1, "bbr", 32 << 20)];
    fl[1].group = 1;
    let mut c = scen("fq_codel_cubic_bbr", 10, 20_000_000, 40 * MS, 16.0, fl);
    c.bottleneck.aqm = "fq_codel".into();
    c.probe.ping_interval_ns = 100 * MS;
    v.push(c);
    let mut c = scen(
        "wifi_cubic_vegas",
        5,
        130_000_000,
        20 * MS,
        1.0,
        vec![FlowConfig::bulk(0, "cubic", 32 << 20), FlowConfig::bulk(1, "vegas", 32 << 20)],
    );
    c.bottleneck.wifi = Some(ccbench_wifi::WifiConfig::default());
    c.probe.ping_interval_ns = 100 * MS;
    v.push(c);
    v
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: digest OUT_DIR");
    std::fs::create_dir_all(&dir).expect("create out dir");
    for cfg in all() {
        let report = ccbench_sim::run(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name));
        let json = serde_json::to_string_pretty(&report).expect("serialise");
        std::fs::write(format!("{dir}/{}.json", cfg.name), json).expect("write");
        eprintln!("{}: {} bytes", cfg.name, serde_json::to_string(&report).unwrap().len());
    }
}
