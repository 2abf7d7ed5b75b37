//! Latency under load, RRUL-style: flows whose data crosses the bottleneck in
//! the reverse direction, on the same symmetric dumbbell (both bottleneck directions have the
//! scenario's rate, buffer and queue discipline).
//!
//! Link: 20 Mbit/s, 40 ms base RTT (BDP 100 kB, 67 full-size packets); 30 s runs.
//!
//! The bound for a direction shared by one flow's data and the other flow's ACKs: a data packet
//! is 1500 IP bytes, an ACK 52 (20 IP + 20 TCP + 12 timestamp option bytes; the simulator's ACKs
//! carry no SACK bytes). A receiver ACKs at least every second full segment (RFC 9293
//! 3.8.6.3; Linux quick-ACKs every segment at times), so the ACKs take at most
//! 52 / (1500 + 52) = 3.4 % of a direction, and the data at least 96.6 %; with the 1448-byte
//! payload of a 1500-byte packet a busy direction gives a flow at least
//! 0.966 × 1448 / 1500 = 93 % of the rate as goodput. The test asks for 85 % under FQ-CoDel,
//! which puts each direction's ACKs in their own (sparse) queue. On a shared drop-tail FIFO
//! two-way traffic also suffers ACK compression and phase effects (Zhang, Shenker & Clark,
//! "Observations on the dynamics of a congestion control algorithm: the effects of two-way
//! traffic", SIGCOMM 1991): how much it costs there depends on the flows' relative phase, so
//! the drop-tail tests below compare or look at latency instead.
use ccbench_sim::config::*;
use ccbench_sim::{run, SimReport};

const MS: u64 = 1_000_000;
const RATE: u64 = 20_000_000;
const RTT_MS: f64 = 40.0;

fn scenario(aqm: &str, buffer_bdp: f64, dirs: &[Direction]) -> SimConfig {
    let mut b = BottleneckConfig::droptail(RATE, (RTT_MS as u64) * MS, buffer_bdp);
    b.aqm = aqm.into();
    let flows = dirs
        .iter()
        .enumerate()
        .map(|(i, &d)| FlowConfig { group: i as u32, direction: d, ..FlowConfig::bulk(i as u32, "cubic", 32 << 20) })
        .collect();
    SimConfig::new("rrul", 30_000 * MS, b, flows)
}

fn link<'a>(r: &'a SimReport, name: &str) -> &'a ccbench_sim::report::LinkCounters {
    r.links.iter().find(|l| l.name == name).unwrap()
}

fn assert_conserved(r: &SimReport, what: &str) {
    for l in &r.links {
        assert_eq!(l.arrived, l.departed + l.dropped_queue + l.dropped_loss + l.held, "{what}: link {}", l.name);
    }
    for f in &r.flows {
        assert_eq!(f.data_sent, f.data_received + f.data_dropped + f.data_in_network, "{what}: flow {}", f.flow_id);
    }
}

#[test]
fn one_forward_and_one_reverse_cubic_flow_each_get_most_of_their_direction() {
    // The reverse flow starts at several phases against the forward one.
    for rev_start_ms in [0, 13, 170, 1000] {
        let mut c = scenario("fq_codel", 1.0, &[Direction::Forward, Direction::Reverse]);
        c.flows[1].start_ns = rev_start_ms * MS;
        let r = run(&c).unwrap();
        for f in &r.flows {
            let share = f.goodput_bps / RATE as f64;
            let what = format!("reverse start {rev_start_ms} ms, flow {}", f.flow_id);
            assert!(share >= 0.85, "{what}: goodput {:.1} % of the rate", share * 100.0);
            assert!(share <= 0.933, "{what}: {:.1} % is above what a direction carrying ACKs gives", share * 100.0);
        }
        assert_conserved(&r, "forward + reverse, fq_codel");
    }
    let r = run(&scenario("droptail", 1.0, &[Direction::Forward, Direction::Reverse])).unwrap();
    // Each bottleneck direction carried one flow's data and the other's ACKs.
    let (fwd, rev) = (link(&r, "bottleneck/fwd"), link(&r, "bottleneck/rev"));
    let data = |i: usize| r.flows[i].data_sent;
    assert!(fwd.arrived > data(0) && fwd.arrived < data(0) + data(1), "fwd: {} packets", fwd.arrived);
    assert!(rev.arrived > data(1) && rev.arrived < data(1) + data(0), "rev: {} packets", rev.arrived);
    assert_conserved(&r, "forward + reverse");
}

#[test]
fn a_reverse_only_flow_gets_the_goodput_of_the_same_flow_forward() {
    // The dumbbell is symmetric: the reverse flow is the forward one mirrored.
    let f = run(&scenario("droptail", 1.0, &[Direction::Forward])).unwrap();
    let r = run(&scenario("droptail", 1.0, &[Direction::Reverse])).unwrap();
    let (gf, gr) = (f.flows[0].goodput_bps, r.flows[0].goodput_bps);
    assert!((gf - gr).abs() <= 0.02 * gf, "forward {gf} vs reverse {gr}");
    // Its data went the other way: the reverse link carried it, the forward link only ACKs.
    let data = r.flows[0].data_sent;
    assert!(link(&r, "bottleneck/rev").arrived >= data);
    assert!(link(&r, "bottleneck/fwd").arrived < data);
    // The run's utilisation and sojourn are about the forward link, which carried only ACKs.
    assert!(r.run.link_utilisation < 0.05, "forward link utilisation {}", r.run.link_utilisation);
    assert_conserved(&r, "reverse only");
}

#[test]
fn impair_applies_by_packet_kind_on_either_direction() {
    // impair = "data": a reverse flow's data is lost on the reverse link; the forward link
    // carries only its ACKs and loses none of them.
    let mut c = scenario("droptail", 1.0, &[Direction::Reverse]);
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
    let r = run(&c).unwrap();
    assert!(link(&r, "bottleneck/rev").dropped_loss > 0, "data lost on the reverse link");
    assert_eq!(link(&r, "bottleneck/fwd").dropped_loss, 0, "ACKs are not impaired under impair = data");
    assert!(r.flows[0].retransmits > 0);
    // The counters are per host, as the kernel's per-namespace ones: the reverse flow's sender
    // is the right host ("receiver" side), which retransmitted; the left host only ACKed.
    let side = |name: &str| &r.counters.iter().find(|c| c.side == name).unwrap().mib;
    assert_eq!(side("receiver").retrans_segs, r.flows[0].retransmits);
    assert_eq!(side("sender").retrans_segs, 0);
    assert!(side("sender").out_segs < side("receiver").out_segs, "the left host sends only ACKs");
    // impair = "ack": the ACKs (on the forward link) are lost, the data never.
    c.bottleneck.impair = Impair::Ack;
    let r = run(&c).unwrap();
    assert!(link(&r, "bottleneck/fwd").dropped_loss > 0, "ACKs lost on the forward link");
    assert_eq!(link(&r, "bottleneck/rev").dropped_loss, 0, "data is not impaired under impair = ack");
    // Both directions at once, impair = "data": each link loses data (of its own flow) only.
    let mut c = scenario("droptail", 1.0, &[Direction::Forward, Direction::Reverse]);
    c.bottleneck.loss = LossConfig::Bernoulli { p: 0.01 };
    let r = run(&c).unwrap();
    for (i, f) in r.flows.iter().enumerate() {
        assert!(f.retransmits > 0, "flow {i} sees data loss");
    }
    let lost = link(&r, "bottleneck/fwd").dropped_loss + link(&r, "bottleneck/rev").dropped_loss;
    let data_lost: u64 = r.flows.iter().map(|f| f.data_dropped).sum();
    assert!(lost <= data_lost, "every random loss was a data segment: {lost} losses, {data_lost} data dropped");
    assert_conserved(&r, "loss both ways");
}

#[test]
fn reverse_load_alone_bloats_the_probe_and_fq_codel_brings_it_back() {
    // The ping's reply crosses the reverse queue, which a reverse CUBIC flow keeps full on a
    // 16-BDP drop-tail buffer: as the forward test of tests/aqm.rs, mirrored (p50 ≥ 8 × base).
    let mut c = scenario("droptail", 16.0, &[Direction::Reverse]);
    c.probe.ping_interval_ns = 100 * MS;
    let r = run(&c).unwrap();
    let p50 = r.run.probe_rtt_p50_ms.unwrap();
    assert!(p50 >= 8.0 * RTT_MS, "drop-tail 16 BDP, reverse load: probe p50 {p50} ms < 8 × base RTT");
    // The forward queue stays empty: the bloat is all on the reverse link.
    assert!(r.run.sojourn_p95_ms.unwrap_or(0.0) < 1.0, "forward sojourn p95 {:?}", r.run.sojourn_p95_ms);
    // FQ-CoDel on both directions: the reply is a sparse flow on the reverse link.
    c.bottleneck.aqm = "fq_codel".into();
    let r = run(&c).unwrap();
    let p95 = r.run.probe_rtt_p95_ms.unwrap();
    assert!(p95 <= RTT_MS + 10.0, "fq_codel, reverse load: probe p95 {p95} ms > base RTT + 10 ms");
    assert!(r.flows[0].goodput_bps >= 0.85 * RATE as f64, "fq_codel reverse goodput {}", r.flows[0].goodput_bps);
}

#[test]
fn interval_percentiles_of_the_probe() {
    // Four pings per 100 ms sample: each interval's p50 ≤ p95, both within the RTTs of the run,
    // null exactly where no reply arrived (before the first reply returns, 40 ms in).
    let mut c = scenario("droptail", 4.0, &[Direction::Forward, Direction::Reverse]);
    c.probe.ping_interval_ns = 25 * MS;
    c.duration_ns = 5_000 * MS;
    let r = run(&c).unwrap();
    let ls = &r.link_series;
    let lo = RTT_MS - 1e-9;
    for i in 0..ls.t_s.len() {
        match (ls.probe_rtt_p50_ms[i], ls.probe_rtt_p95_ms[i], ls.probe_rtt_ms[i]) {
            (Some(a), Some(b), Some(last)) => {
                assert!(lo <= a && a <= b, "t {}: p50 {a} p95 {b}", ls.t_s[i]);
                assert!(last >= lo);
            }
            (None, None, None) => {}
            other => panic!("t {}: percentiles and latest reply disagree on a reply: {other:?}", ls.t_s[i]),
        }
    }
    assert!(ls.probe_rtt_p50_ms.iter().flatten().count() >= ls.t_s.len() - 1, "a reply in almost every interval");
    // The medians of the intervals centre on the run's median (the same replies, regrouped).
    let mut meds: Vec<f64> = ls.probe_rtt_p50_ms.iter().flatten().copied().collect();
    meds.sort_by(f64::total_cmp);
    let (m, run_p50) = (meds[meds.len() / 2], r.run.probe_rtt_p50_ms.unwrap());
    assert!((m - run_p50).abs() <= 0.25 * run_p50, "median of interval medians {m} vs run p50 {run_p50}");
    // The bloat shows over time: a later interval's median is well above the base RTT.
    assert!(ls.probe_rtt_p50_ms.iter().flatten().any(|&v| v > 2.0 * RTT_MS), "the queues fill");
}
