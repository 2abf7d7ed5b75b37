//! The bottleneck's queue disciplines end to end: bufferbloat on a deep drop-tail buffer and what CoDel, FQ-CoDel and PIE do about it, flow isolation and
//! fairness under FQ-CoDel, the served-queue arm against the drop-tail fast path, and packet
//! conservation with every discipline.
//!
//! Link: 20 Mbit/s, 40 ms base RTT (BDP 100 kB, 67 full-size packets); 30 s runs with a ping
//! every 100 ms. Thresholds come from the issue or from the discipline's target.
use ccbench_queue::aqm::{AqmParams, NAMES};
use ccbench_sim::config::*;
use ccbench_sim::{run, SimReport};

const MS: u64 = 1_000_000;
const RATE: u64 = 20_000_000;
const RTT_MS: f64 = 40.0;
/// Goodput of a link fully used by full-size segments: rate × MSS / IP packet.
const MAX_GOODPUT: f64 = RATE as f64 * 1448.0 / 1500.0;

fn scenario(aqm: &str, buffer_bdp: f64, ccs: &[&str]) -> SimConfig {
    let mut b = BottleneckConfig::droptail(RATE, (RTT_MS as u64) * MS, buffer_bdp);
    b.aqm = aqm.into();
    let flows = ccs
        .iter()
        .enumerate()
        .map(|(i, cc)| FlowConfig { group: i as u32, ..FlowConfig::bulk(i as u32, cc, 32 << 20) })
        .collect();
    let mut c = SimConfig::new("aqm", 30_000 * MS, b, flows);
    c.probe.ping_interval_ns = 100 * MS;
    c
}

fn goodputs(r: &SimReport) -> Vec<f64> {
    r.flows.iter().map(|f| f.goodput_bps).collect()
}

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

fn assert_conserved(r: &SimReport, what: &str) {
    for l in &r.links {
        assert_eq!(l.arrived, l.departed + l.dropped_queue + l.dropped_loss + l.held, "{what}: link {}", l.name);
    }
    for f in &r.flows {
        assert_eq!(
            f.data_sent,
            f.data_received + f.data_dropped + f.data_in_network,
            "{what}: flow {} data segments",
            f.flow_id
        );
    }
}

#[test]
fn deep_droptail_bloats_and_fq_codel_keeps_the_probe_at_base_rtt_at_full_rate() {
    // 16 BDP of drop-tail: one CUBIC flow keeps most of it full, so the probe waits many RTTs.
    let r = run(&scenario("droptail", 16.0, &["cubic"])).unwrap();
    let p50 = r.run.probe_rtt_p50_ms.unwrap();
    assert!(p50 >= 8.0 * RTT_MS, "drop-tail 16 BDP: probe p50 {p50} ms < 8 × base RTT");

    // The same link with FQ-CoDel: the ping is a sparse flow served first, the bulk flow's
    // queue is held near 5 ms, and the link stays busy.
    let r = run(&scenario("fq_codel", 16.0, &["cubic"])).unwrap();
    let p95 = r.run.probe_rtt_p95_ms.unwrap();
    assert!(p95 <= RTT_MS + 10.0, "fq_codel: probe p95 {p95} ms > base RTT + 10 ms");
    let g = r.flows[0].goodput_bps;
    assert!(g >= 0.9 * RATE as f64, "fq_codel: goodput {g} below 90 % of the rate");
    assert!(r.run.drops > 0, "CoDel signals by dropping (no ECN): some drops");
}

#[test]
fn codel_holds_the_median_sojourn_between_2_and_15_ms_under_cubic() {
    let r = run(&scenario("codel", 16.0, &["cubic"; 4])).unwrap();
    let s = r.run.sojourn_p50_ms.unwrap();
    assert!((2.0..=15.0).contains(&s), "codel: median sojourn {s} ms");
    // Against the 16-BDP drop-tail the same load sees (hundreds of ms):
    let d = run(&scenario("droptail", 16.0, &["cubic"; 4])).unwrap();
    assert!(d.run.sojourn_p50_ms.unwrap() > 10.0 * s, "drop-tail sojourn {:?}", d.run.sojourn_p50_ms);
    assert_conserved(&r, "codel");
}

#[test]
fn codel_target_parameter_moves_the_sojourn() {
    // A 20 ms target lets a standing queue four times as long build before CoDel drops.
    let mut c = scenario("codel", 16.0, &["cubic"; 4]);
    let base = run(&c).unwrap().run.sojourn_p50_ms.unwrap();
    c.bottleneck.aqm_params = AqmParams { target_ns: Some(20 * MS), ..AqmParams::default() };
    let r = run(&c).unwrap();
    let s = r.run.sojourn_p50_ms.unwrap();
    assert!(s > 2.0 * base, "target 20 ms: median sojourn {s} ms vs {base} ms at 5 ms");
    assert_eq!(r.run.aqm_params.target_ns, Some(20 * MS), "the report shows the parameter used");
    assert_eq!(r.run.aqm_params.interval_ns, Some(100 * MS), "and the defaults of the others");
}

#[test]
fn pie_keeps_queueing_delay_around_its_15_ms_target() {
    for flows in [1, 4] {
        let r = run(&scenario("pie", 16.0, &vec!["cubic"; flows])).unwrap();
        let s = r.run.sojourn_p50_ms.unwrap();
        // RFC 8033 controls the delay to the target on average; the median within ±50 %.
        assert!((7.5..=22.5).contains(&s), "pie, {flows} flows: median sojourn {s} ms (target 15)");
        // Steady state: the mean sojourn of each second after the first 5 s stays below 3 ×
        // target (a 16-BDP drop-tail would sit at ~500 ms).
        let ls = &r.link_series;
        for (i, &t) in ls.t_s.iter().enumerate() {
            if let (true, Some(m)) = (t > 5.0, ls.sojourn_ms[i]) {
                assert!(m < 45.0, "pie, {flows} flows: mean sojourn {m} ms at t = {t}");
            }
        }
    }
}

#[test]
fn fq_codel_isolates_the_probe_from_four_bulk_flows() {
    let r = run(&scenario("fq_codel", 16.0, &["cubic"; 4])).unwrap();
    let (p50, p95) = (r.run.probe_rtt_p50_ms.unwrap(), r.run.probe_rtt_p95_ms.unwrap());
    // Near the base RTT: at most a packet or two being serialised ahead of it (0.6 ms each).
    assert!(p50 <= RTT_MS + 2.0 && p95 <= RTT_MS + 5.0, "probe p50 {p50} p95 {p95} ms");
    // while the bulk flows share the link evenly and fill it.
    let g = goodputs(&r);
    assert!(jain(&g) >= 0.95, "shares {g:?}");
    assert!(g.iter().sum::<f64>() >= 0.9 * MAX_GOODPUT, "aggregate {}", g.iter().sum::<f64>());
}

#[test]
fn cubic_and_bbr_share_fairly_under_fq_codel_not_on_a_shallow_droptail() {
    let fq = run(&scenario("fq_codel", 1.0, &["cubic", "bbr"])).unwrap();
    let j = jain(&goodputs(&fq));
    assert!(j >= 0.9, "fq_codel: Jain {j}, goodputs {:?}", goodputs(&fq));
    // A quarter-BDP drop-tail: BBR's probing keeps the queue full and CUBIC backs off.
    let dt = run(&scenario("droptail", 0.25, &["cubic", "bbr"])).unwrap();
    let j = jain(&goodputs(&dt));
    assert!(j <= 0.6, "droptail 0.25 BDP: Jain {j}, goodputs {:?}", goodputs(&dt));
}

#[test]
fn droptail_served_at_dequeue_reproduces_the_fast_path() {
    // The served arm with a FIFO qdisc must give the fast path's results: same drops, same
    // goodput, same probe delays (up to the order of simultaneous events).
    let mut lossy = scenario("droptail", 1.0, &["cubic", "bbr"]);
    lossy.bottleneck.loss = LossConfig::Bernoulli { p: 0.005 };
    lossy.bottleneck.jitter_ns = 4 * MS; // reordering delay line: Arrive events
    let mut pkts = scenario("droptail", 1.0, &["reno"; 3]);
    pkts.bottleneck.buffer = BufferConfig::Packets(20);
    for (name, fast) in [("16bdp", scenario("droptail", 16.0, &["cubic"])), ("lossy", lossy), ("pkts", pkts)] {
        let mut served = fast.clone();
        served.bottleneck.serve_droptail_at_dequeue = true;
        let (a, b) = (run(&fast).unwrap(), run(&served).unwrap());
        let close = |x: f64, y: f64| (x - y).abs() <= 0.01 * x.abs().max(y.abs()) + 1e-9;
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            assert!(close(fa.goodput_bps, fb.goodput_bps), "{name}: goodput {} vs {}", fa.goodput_bps, fb.goodput_bps);
        }
        let (da, db) = (a.run.drops as f64, b.run.drops as f64);
        assert!((da - db).abs() <= 0.02 * da + 2.0, "{name}: drops {da} vs {db}");
        assert!(close(a.run.probe_rtt_p50_ms.unwrap(), b.run.probe_rtt_p50_ms.unwrap()), "{name}: probe p50");
        assert!(b.run.events > a.run.events, "{name}: the served arm costs events, the fast path none");
        assert_conserved(&b, name);
    }
}

#[test]
fn packets_are_conserved_with_every_discipline() {
    // Mixed algorithms, random loss and reordering jitter, access links (their own drop-tail
    // queues in front of the bottleneck), a probe; the run ends with packets in every queue.
    for aqm in NAMES {
        let mut c = scenario(aqm, 2.0, &["cubic", "bbr", "reno", "vegas"]);
        c.duration_ns = 5_000 * MS + 123_457; // not on a sample or ping boundary
        c.bottleneck.loss = LossConfig::Bernoulli { p: 0.002 };
        c.bottleneck.jitter_ns = 2 * MS;
        c.bottleneck.impair = Impair::Both;
        c.access = AccessConfig { rate_bps: Some(100_000_000), delay_ns: 2 * MS };
        let r = run(&c).unwrap();
        assert_conserved(&r, aqm);
        assert_eq!(r.run.aqm, aqm);
        let bn = &r.links[0];
        assert!(bn.held > 0, "{aqm}: packets in flight at the end ({bn:?})");
        assert!(r.run.drops + r.run.random_losses > 0, "{aqm}: something was dropped");
        assert!(r.run.sojourn_p50_ms.is_some(), "{aqm}: sojourn measured");
        assert_eq!(bn.ce_marked, 0, "{aqm}: no ECN-capable traffic yet, so no CE marks");
    }
}

#[test]
fn randomised_disciplines_are_reproducible_per_seed() {
    for aqm in ["pie", "red"] {
        let c = scenario(aqm, 2.0, &["cubic"; 3]);
        let a = serde_json::to_string(&run(&c).unwrap()).unwrap();
        let b = serde_json::to_string(&run(&c).unwrap()).unwrap();
        assert!(a == b, "{aqm}: same seed, same report");
        let mut c2 = c.clone();
        c2.seed += 1;
        assert_ne!(a, serde_json::to_string(&run(&c2).unwrap()).unwrap(), "{aqm}: another seed differs");
    }
}

#[test]
fn bad_disciplines_and_parameters_are_refused() {
    let mut c = scenario("sfq", 1.0, &["cubic"]);
    let e = run(&c).unwrap_err();
    assert!(e.contains("bottleneck.aqm") && e.contains("fq_codel"), "{e}");
    c.bottleneck.aqm = "pie".into();
    c.bottleneck.aqm_params = AqmParams { interval_ns: Some(MS), ..AqmParams::default() };
    let e = run(&c).unwrap_err();
    assert!(e.contains("aqm_params.interval_ns") && e.contains("tupdate_ns"), "{e}");
    assert!(scenario("fq_codel", 1.0, &["cubic"]).bottleneck.validate().is_ok());
}
