//! ECN end to end (RFC 3168): an ECN flow through an AQM that marks is
//! signalled by CE marks instead of drops and still fills the link with a short queue; the
//! same flow without ECN is signalled by drops; drop-tail never marks; runs are reproducible.
//!
//! Link: 20 Mbit/s, 40 ms base RTT, a deep buffer (16 BDP; CoDel keeps its own 1000-packet
//! limit); 30 s runs. Thresholds are fixed requirements (the queue's from CoDel's design),
//! not fitted to a run.
use ccbench_queue::AqmParams;
use ccbench_sim::config::*;
use ccbench_sim::report::LinkCounters;
use ccbench_sim::{run, SimReport};

const MS: u64 = 1_000_000;
const RATE: u64 = 20_000_000;
const RTT_MS: u64 = 40;

/// One CUBIC flow, `ecn` on or off, through `aqm` with its `ecn` parameter `aqm_ecn`.
fn scenario(aqm: &str, aqm_ecn: Option<bool>, buffer_bdp: f64, ecn: bool) -> SimConfig {
    let mut b = BottleneckConfig::droptail(RATE, RTT_MS * MS, buffer_bdp);
    b.aqm = aqm.into();
    b.aqm_params = AqmParams { ecn: aqm_ecn, ..AqmParams::default() };
    let flows = vec![FlowConfig { ecn, ..FlowConfig::bulk(0, "cubic", 32 << 20) }];
    SimConfig::new("ecn", 30_000 * MS, b, flows)
}

fn bottleneck(r: &SimReport) -> &LinkCounters {
    r.links.iter().find(|l| l.name == "bottleneck/fwd").expect("forward bottleneck")
}

#[test]
fn codel_with_ecn_marks_instead_of_dropping_and_keeps_rate_and_delay() {
    // tc qdisc ... codel ecn: CoDel marks ECT packets only when its ecn flag is set (Linux default off).
    let r = run(&scenario("codel", Some(true), 16.0, true)).unwrap();
    let bn = bottleneck(&r);
    assert!(bn.ce_marked > 0, "CoDel must signal an ECN flow with CE marks");
    // Every data packet is ECT and nothing is lost, so there is nothing to retransmit: a
    // drop could only be CoDel's 1000-packet limit, which a flow that reacts never reaches.
    assert!(bn.dropped_queue <= bn.ce_marked / 10, "drops {} vs marks {}", bn.dropped_queue, bn.ce_marked);
    let f = &r.flows[0];
    assert_eq!(f.retransmits, 0, "no loss, no retransmission");
    assert!(f.goodput_bps >= 0.9 * RATE as f64, "goodput {} below 90 % of the rate", f.goodput_bps);
    // The sender reacts to the echo: the standing queue stays in CoDel's range (median sojourn
    // ≤ 15 ms). Marks alone do not shorten a queue — without the CWR reaction
    // it would grow to CoDel's limit (1000 packets = 600 ms at this rate).
    let s = r.run.sojourn_p50_ms.unwrap();
    assert!(s <= 15.0, "median sojourn {s} ms");
    // The reduction ECN asks for is the CWR state (tcp_enter_cwr), not Recovery.
    let cwr_samples = r.series.cc_state.iter().filter(|s| s.as_str() == "Cwr").count();
    assert!(cwr_samples > 0, "the sender was seen in CWR state");
}

#[test]
fn the_same_flow_without_ecn_is_signalled_by_drops() {
    let r = run(&scenario("codel", Some(true), 16.0, false)).unwrap();
    let bn = bottleneck(&r);
    assert_eq!(bn.ce_marked, 0, "Not-ECT packets are never marked");
    assert!(bn.dropped_queue > 0, "CoDel drops instead");
    assert!(r.flows[0].retransmits > 0);
}

#[test]
fn every_marking_discipline_marks_and_drop_tail_never_does() {
    // FQ-CoDel marks by default (Linux fq_codel ecn on); PIE and RED when asked.
    for (aqm, aqm_ecn) in [("fq_codel", None), ("pie", Some(true)), ("red", Some(true))] {
        let r = run(&scenario(aqm, aqm_ecn, 16.0, true)).unwrap();
        let bn = bottleneck(&r);
        assert!(bn.ce_marked > 0, "{aqm}: no CE marks");
        assert_eq!(r.flows[0].retransmits, 0, "{aqm}: marks, not drops, signal the ECN flow");
    }
    // Drop-tail with one BDP of buffer: an ECN flow still loses packets; nothing is marked.
    let r = run(&scenario("droptail", None, 1.0, true)).unwrap();
    let bn = bottleneck(&r);
    assert_eq!(bn.ce_marked, 0);
    assert!(bn.dropped_queue > 0 && r.flows[0].retransmits > 0);
}

#[test]
fn ecn_runs_are_reproducible() {
    let a = run(&scenario("codel", Some(true), 16.0, true)).unwrap();
    let b = run(&scenario("codel", Some(true), 16.0, true)).unwrap();
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}
