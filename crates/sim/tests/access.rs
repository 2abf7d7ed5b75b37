//! Access links with a rate (crates/sim/src/topology.rs): each flow's own links limit it to
//! its access rate's TCP payload share, whichever rate (the scenario's or the flow's own) they
//! have. A full segment is 1500 IP bytes with 1448 of payload, so goodput through a link of
//! rate R is at most R × 1448 / 1500.
use ccbench_sim::config::*;
use ccbench_sim::run;

const PAYLOAD_SHARE: f64 = 1448.0 / 1500.0;

/// CUBIC flows into a 50 Mbit/s, 40 ms drop-tail bottleneck of one BDP, for 10 s.
fn dumbbell(flows: Vec<FlowConfig>, access_rate_bps: Option<u64>) -> SimConfig {
    let b = BottleneckConfig::droptail(50_000_000, 40_000_000, 1.0);
    let mut cfg = SimConfig::new("access", 10_000_000_000, b, flows);
    cfg.access = AccessConfig { rate_bps: access_rate_bps, delay_ns: 0 };
    cfg
}

/// Each flow's goodput is within [90 %, 100.5 %] of its access rate's payload share: the
/// access link is the narrowest on its path (10 + 30 < 50 Mbit/s), its 1000-packet buffer
/// (15 BDPs at 10 Mbit/s × 40 ms) keeps it busy once slow start has filled the pipe, and
/// the flows do not meet in a queue.
fn assert_each_gets_its_rate(cfg: &SimConfig, rates_bps: &[f64]) {
    let r = run(cfg).unwrap();
    for (f, &rate) in r.flows.iter().zip(rates_bps) {
        let bound = rate * PAYLOAD_SHARE;
        eprintln!("goodput {:.2} Mbit/s, bound {:.2}", f.goodput_bps / 1e6, bound / 1e6);
        assert!(f.goodput_bps >= 0.9 * bound && f.goodput_bps <= 1.005 * bound, "{} vs {bound}", f.goodput_bps);
    }
}

#[test]
fn flows_with_their_own_access_rates_each_get_theirs() {
    let mut slow = FlowConfig::bulk(0, "cubic", 32 << 20);
    slow.access_rate_bps = Some(10_000_000);
    let mut fast = FlowConfig::bulk(1, "cubic", 32 << 20);
    fast.access_rate_bps = Some(30_000_000);
    fast.start_ns = 1_000_000;
    assert_each_gets_its_rate(&dumbbell(vec![slow, fast], None), &[10e6, 30e6]);
}

#[test]
fn a_flow_without_its_own_rate_takes_the_scenarios() {
    let mut own = FlowConfig::bulk(0, "cubic", 32 << 20);
    own.access_rate_bps = Some(30_000_000);
    let mut other = FlowConfig::bulk(1, "cubic", 32 << 20);
    other.start_ns = 1_000_000;
    assert_each_gets_its_rate(&dumbbell(vec![own, other], Some(10_000_000)), &[30e6, 10e6]);
}
