//! Scenario-level tests of DCTCP (cc/dctcp.rs), run through `ccbench_sim::run`. Each test
//! prints what it measured (run with `--nocapture`); docs/algorithms.md records the figures.
//!
//! The main scenario is the one the kernel backend's BPF port of DCTCP was run on: one flow,
//! 50 Mbit/s, 20 ms, a 2 BDP buffer, CoDel with ECN, 8 s. There the port kept 47.7–47.8 Mbit/s
//! with 707–838 CE marks and no drops. The thresholds below are DCTCP's design goals (full link,
//! marks instead of drops, small cuts), not those figures.
use ccbench_queue::AqmParams;
use ccbench_sim::config::{BottleneckConfig, FlowConfig, LossConfig};
use ccbench_sim::report::LinkCounters;
use ccbench_sim::{SimConfig, SimReport};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const RATE: u64 = 50_000_000;

/// One flow of `cc` (`ecn` as the flow's setting) through CoDel with ECN at 50 Mbit/s, 20 ms,
/// a 2 BDP buffer, for `secs`, sampled every 10 ms.
fn codel_ecn(cc: &str, ecn: bool, secs: u64) -> SimConfig {
    let mut b = BottleneckConfig::droptail(RATE, 20 * MS, 2.0);
    b.aqm = "codel".into();
    b.aqm_params = AqmParams { ecn: Some(true), ..AqmParams::default() };
    let flows = vec![FlowConfig { ecn, ..FlowConfig::bulk(0, cc, 64 << 20) }];
    let mut c = SimConfig::new("cc_dctcp", secs * S, b, flows);
    c.sample_interval_ns = 10 * MS;
    c
}

fn run(c: &SimConfig) -> SimReport {
    ccbench_sim::run(c).unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn bottleneck(r: &SimReport) -> &LinkCounters {
    r.links.iter().find(|l| l.name == "bottleneck/fwd").expect("forward bottleneck")
}

/// (min, max) of flow 0's cwnd over the samples at or after `t_min` seconds.
fn cwnd_range(r: &SimReport, t_min: f64) -> (f64, f64) {
    let s = &r.series;
    let w: Vec<f64> =
        (0..s.t_s.len()).filter(|&i| s.flow_id[i] == 0 && s.t_s[i] >= t_min).map(|i| s.cwnd_pkts[i] as f64).collect();
    assert!(!w.is_empty());
    (w.iter().cloned().fold(f64::MAX, f64::min), w.iter().cloned().fold(0.0, f64::max))
}

/// DCTCP through CoDel with ECN: CE marks are its only signal (no drops, no retransmissions)
/// and it keeps the link full. The flow does not ask for ECN: DCTCP negotiates it anyway
/// (TCP_CONG_NEEDS_ECN), or CoDel would drop instead of marking.
#[test]
fn dctcp_through_codel_ecn_fills_the_link_with_marks_and_no_drops() {
    let r = run(&codel_ecn("dctcp", false, 8));
    let bn = bottleneck(&r);
    let f = &r.flows[0];
    let (lo, hi) = cwnd_range(&r, 2.0);
    println!(
        "dctcp: goodput {:.2} Mbit/s, utilisation {:.3}, CE marks {}, queue drops {}, retransmits {}, \
         mean RTT {:.1} ms, median sojourn {:.2} ms, cwnd after 2 s {lo}..{hi}",
        f.goodput_bps / 1e6,
        r.run.link_utilisation,
        bn.ce_marked,
        bn.dropped_queue,
        f.retransmits,
        f.rtt_mean_ms.unwrap(),
        r.run.sojourn_p50_ms.unwrap()
    );
    assert!(bn.ce_marked > 0, "CoDel must mark a DCTCP flow");
    // Not even slow start overflows: CoDel marks instead of dropping and the 2 BDP buffer is
    // deeper than DCTCP's first overshoot.
    assert_eq!(bn.dropped_queue, 0, "queue drops");
    assert_eq!(f.retransmits, 0);
    assert!(r.run.link_utilisation >= 0.90, "utilisation {}", r.run.link_utilisation);
    // Every segment the sender marked ECT that CoDel marked reached the sender as an ECE ACK.
    let sender = r.counters.iter().find(|c| c.side == "sender").expect("sender counters");
    assert!(sender.mib.delivered_ce > 0);
    // Asking for ECN changes nothing: DCTCP had it already.
    let r2 = run(&codel_ecn("dctcp", true, 8));
    assert_eq!(r2.flows[0].bytes_acked, f.bytes_acked);
    assert_eq!(bottleneck(&r2).ce_marked, bn.ce_marked);
}

/// The same flow as Reno with ECN halves on every echo (one cut per window, tcp_enter_cwr),
/// DCTCP cuts by alpha/2 with alpha the fraction of marked packets, which CoDel keeps small.
/// So DCTCP's window swings much less (after slow start: never below 3/4 of its peak, against
/// Reno's sawtooth reaching below 60 %) and it delivers at least as much.
#[test]
fn dctcp_cuts_less_than_reno_ecn() {
    let d = run(&codel_ecn("dctcp", false, 8));
    let n = run(&codel_ecn("reno", true, 8));
    let (dlo, dhi) = cwnd_range(&d, 2.0);
    let (nlo, nhi) = cwnd_range(&n, 2.0);
    let (dg, ng) = (d.flows[0].goodput_bps, n.flows[0].goodput_bps);
    println!(
        "dctcp: goodput {:.2} Mbit/s, cwnd {dlo}..{dhi}, marks {}; reno-ecn: goodput {:.2} Mbit/s, \
         cwnd {nlo}..{nhi}, marks {}",
        dg / 1e6,
        bottleneck(&d).ce_marked,
        ng / 1e6,
        bottleneck(&n).ce_marked
    );
    assert!(bottleneck(&n).ce_marked > 0, "Reno-ECN must be marked too");
    assert!(dlo >= 0.75 * dhi, "DCTCP cwnd {dlo}..{dhi}");
    assert!(nlo <= 0.6 * nhi, "Reno-ECN cwnd {nlo}..{nhi}: expected a halving sawtooth");
    assert!(dg >= ng, "DCTCP goodput {dg} below Reno-ECN's {ng}");
}

/// Without marks DCTCP is Reno: a loss halves the window (dctcp_react_to_loss), whatever
/// alpha is. On a drop-tail link with 0.5 % random loss both get close to the same goodput.
#[test]
fn dctcp_halves_on_loss_like_reno() {
    let lossy = |cc: &str| {
        let mut b = BottleneckConfig::droptail(RATE, 20 * MS, 1.0);
        b.loss = LossConfig::Bernoulli { p: 0.005 };
        let mut c = SimConfig::new("cc_dctcp_loss", 10 * S, b, vec![FlowConfig::bulk(0, cc, 64 << 20)]);
        c.seed = 3;
        run(&c)
    };
    let d = lossy("dctcp");
    let n = lossy("reno");
    let (df, nf) = (&d.flows[0], &n.flows[0]);
    println!(
        "0.5 % loss: dctcp {:.2} Mbit/s, {} loss events, mean cwnd {:.1}; reno {:.2} Mbit/s, {} loss events, \
         mean cwnd {:.1}",
        df.goodput_bps / 1e6,
        df.loss_events,
        df.cwnd_mean,
        nf.goodput_bps / 1e6,
        nf.loss_events,
        nf.cwnd_mean
    );
    assert!(df.loss_events > 0);
    assert_eq!(bottleneck(&d).ce_marked, 0, "drop-tail never marks");
    let ratio = df.goodput_bps / nf.goodput_bps;
    assert!((0.85..=1.15).contains(&ratio), "DCTCP / Reno goodput {ratio}");
}

/// DCTCP's own switch marking (RFC 8257 §3.1, aqm "step"): CE on every ECT packet that arrives
/// to a queue longer than K. With K = 20 packets, about 0.23 BDP (86 packets) — above the
/// 0.17 BDP the DCTCP analysis (Alizadeh et al. 2010, §3.3) asks for to keep the link busy —
/// the queue oscillates around K and never empties, so the link stays full; Reno with ECN
/// halves on each echo, empties the queue and loses capacity.
#[test]
fn dctcp_holds_the_queue_near_the_step_threshold() {
    const K: u64 = 20;
    let step = |cc: &str, ecn: bool| {
        let mut b = BottleneckConfig::droptail(RATE, 20 * MS, 2.0);
        b.aqm = "step".into();
        b.aqm_params = AqmParams { k_packets: Some(K), ..AqmParams::default() };
        let mut c =
            SimConfig::new("cc_dctcp_step", 8 * S, b, vec![FlowConfig { ecn, ..FlowConfig::bulk(0, cc, 64 << 20) }]);
        c.sample_interval_ns = 10 * MS;
        run(&c)
    };
    let d = step("dctcp", false);
    let n = step("reno", true);
    // Queue in packets (1500 bytes on the wire) at the samples after slow start.
    let queue = |r: &SimReport| -> Vec<f64> {
        let ls = &r.link_series;
        (0..ls.t_s.len()).filter(|&i| ls.t_s[i] >= 2.0).map(|i| ls.queue_bytes[i] as f64 / 1500.0).collect()
    };
    let q = queue(&d);
    let (qmin, qmax) = (q.iter().cloned().fold(f64::MAX, f64::min), q.iter().cloned().fold(0.0, f64::max));
    let qmean = q.iter().sum::<f64>() / q.len() as f64;
    println!(
        "step K = {K}: dctcp utilisation {:.3}, {} marks, {} drops, queue {qmin:.0}..{qmax:.0} (mean {qmean:.1}); \
         reno-ecn utilisation {:.3}, {} marks",
        d.run.link_utilisation,
        bottleneck(&d).ce_marked,
        bottleneck(&d).dropped_queue,
        n.run.link_utilisation,
        bottleneck(&n).ce_marked
    );
    assert_eq!(bottleneck(&d).dropped_queue, 0);
    assert!(qmin > 0.0, "the queue emptied: the link went idle");
    assert!(qmax <= 2.0 * K as f64, "queue up to {qmax} packets");
    assert!((0.5 * K as f64..=1.5 * K as f64).contains(&qmean), "mean queue {qmean}");
    assert!(d.run.link_utilisation >= 0.93, "DCTCP utilisation {}", d.run.link_utilisation);
    assert!(
        d.run.link_utilisation >= n.run.link_utilisation + 0.05,
        "DCTCP {} vs Reno-ECN {}",
        d.run.link_utilisation,
        n.run.link_utilisation
    );
}
