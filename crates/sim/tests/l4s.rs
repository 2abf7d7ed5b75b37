//! Scenario-level tests of L4S in the simulator: DualPI2 (ccbench-queue dualpi2.rs) with TCP
//! Prague (cc/prague.rs) and classic CUBIC, run through `ccbench_sim::run`. Each test prints what
//! it measured (run with `--nocapture`); the assertions are the designs' own predictions (RFC
//! 9332's coupling law, the step and the PI2 target), each derived in its comment.
use ccbench_queue::AqmParams;
use ccbench_sim::config::{BottleneckConfig, FlowConfig};
use ccbench_sim::report::LinkCounters;
use ccbench_sim::{SimConfig, SimReport};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const RATE: u64 = 50_000_000;
const RTT: u64 = 20 * MS;

/// Flows of (cc, ecn) through DualPI2 with its defaults at 50 Mbit/s, 20 ms, for `secs`.
fn dualpi2(flows: &[(&str, bool)], secs: u64) -> SimConfig {
    let mut b = BottleneckConfig::droptail(RATE, RTT, 2.0);
    b.aqm = "dualpi2".into();
    b.aqm_params = AqmParams::default();
    let flows =
        flows.iter().enumerate().map(|(i, &(cc, ecn))| FlowConfig { ecn, ..FlowConfig::bulk(i as u32, cc, 64 << 20) });
    let mut c = SimConfig::new("l4s", secs * S, b, flows.collect());
    c.sample_interval_ns = 10 * MS;
    c
}

fn run(c: &SimConfig) -> SimReport {
    ccbench_sim::run(c).unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn bottleneck(r: &SimReport) -> &LinkCounters {
    r.links.iter().find(|l| l.name == "bottleneck/fwd").expect("forward bottleneck")
}

/// Mean of the per-interval mean sojourn (ms) over the samples at or after `t_min` seconds.
fn mean_sojourn_after(r: &SimReport, t_min: f64) -> f64 {
    let ls = &r.link_series;
    let v: Vec<f64> = (0..ls.t_s.len()).filter(|&i| ls.t_s[i] >= t_min).filter_map(|i| ls.sojourn_ms[i]).collect();
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

/// One Prague flow alone: the L queue's step (1 ms of sojourn) marks it, it reacts to every
/// round's marks by alpha/2, and nothing else queues, so the queue stays at the step.
#[test]
fn prague_alone_keeps_the_l_queue_at_the_step_with_a_full_link() {
    let r = run(&dualpi2(&[("prague", false)], 20));
    let (bn, f) = (bottleneck(&r), &r.flows[0]);
    println!(
        "prague alone: goodput {:.2} Mbit/s, utilisation {:.3}, CE {}, drops {}, retransmits {}, \
         sojourn p50/p95/p99 {:.2}/{:.2}/{:.2} ms",
        f.goodput_bps / 1e6,
        r.run.link_utilisation,
        bn.ce_marked,
        bn.dropped_queue,
        f.retransmits,
        r.run.sojourn_p50_ms.unwrap(),
        r.run.sojourn_p95_ms.unwrap(),
        r.run.sojourn_p99_ms.unwrap()
    );
    assert!(bn.ce_marked > 0, "the step marks the L4S flow");
    // No loss: the only drops DualPI2 makes are its limit (10 000 packets) and overload
    // (k·p' > 1), and p' grows only while the larger queue's delay exceeds 15 ms.
    assert_eq!((bn.dropped_queue, f.retransmits), (0, 0));
    // A packet marked at the step took 1 ms to be dequeued; the sender reacts an RTT later, so
    // the queue overshoots the step by what one round adds: a scalable flow's window grows by
    // at most one packet per round (0.24 ms at 50 Mbit/s) and its paced packets do not bunch.
    // The 99th percentile over the whole run (slow start's first round included) within 2 ms.
    assert!(r.run.sojourn_p99_ms.unwrap() <= 2.0, "p99 {:?}", r.run.sojourn_p99_ms);
    // Utilisation: with a queue kept at about the step a cut of alpha/2 (alpha ≈ the small
    // marking fraction) never empties it for long: at least 90 % of the link.
    assert!(r.run.link_utilisation >= 0.90, "utilisation {}", r.run.link_utilisation);
}

/// Classic CUBIC alone, with ECN (marked) and without (dropped): only the PI2 controller acts
/// (p_C = p'²), holding the C queue's delay at the 15 ms target when the signal comes: CUBIC's
/// window then peaks at W_max = C·(R + 15 ms), about 146 packets at 50 Mbit/s and 20 ms. Over
/// the following epoch CUBIC's concave growth W(t) = W_max − 0.3·W_max·(1 − t/K)³ averages
/// W_max·(1 − 0.3/4) = 0.925·W_max, so the queue averages 0.925·(R + 15 ms) − R =
/// 15 − 0.075·35 = 12.4 ms: below the target, because p' is clamped at 0 while the queue is
/// short after each cut, so the integral term cannot pull the mean up to 15 ms with one flow.
/// Tolerance ±3 ms: the signal arrives when p' has built up, a little above or below the target.
#[test]
fn classic_cubic_alone_is_held_near_the_pi2_target() {
    let predicted = 15.0 - 0.075 * (20.0 + 15.0);
    let mut means = vec![];
    for ecn in [true, false] {
        let r = run(&dualpi2(&[("cubic", ecn)], 30));
        let bn = bottleneck(&r);
        let mean = mean_sojourn_after(&r, 5.0);
        println!(
            "cubic ecn={ecn}: utilisation {:.3}, CE {}, drops {}, mean sojourn after 5 s {mean:.2} ms \
             (predicted {predicted:.1}), p50 {:.2}",
            r.run.link_utilisation,
            bn.ce_marked,
            bn.dropped_queue,
            r.run.sojourn_p50_ms.unwrap()
        );
        if ecn {
            assert!(bn.ce_marked > 0 && bn.dropped_queue == 0, "ECN classic traffic is marked, not dropped");
        } else {
            assert!(bn.ce_marked == 0 && bn.dropped_queue > 0, "Not-ECT classic traffic is dropped");
        }
        means.push(mean);
        assert!(r.run.link_utilisation >= 0.90, "utilisation {}", r.run.link_utilisation);
    }
    for mean in means {
        assert!((mean - predicted).abs() <= 3.0, "mean sojourn {mean:.2} ms, predicted {predicted:.1}");
    }
}

/// Prague beside CUBIC (ECN) at equal base RTT (20 ms). The coupling p_C = (p_L/k)², k = 2
/// (RFC 9332 §2.1), is built to give equal windows to a Reno-friendly classic flow and a
/// DCTCP-like one. Each flow's window from its response function at the probability it sees:
/// * CUBIC here is in its Reno-friendly region (AIMD with a = 3(1−β)/(1+β), β = 0.7, whose
///   mean window is Reno's): W_C = 1.22/√p_C = 1.22·k/p_L = 2.44/p_L;
/// * Prague cuts W·alpha/2 with alpha ≈ p_L, but, being RTT-independent, at most every 25 ms:
///   with an RTT of R_L ≈ 20.6 ms (base plus about half the 1 ms step) that is every second
///   round, against an increase of a = (R_L/25 ms)² = 0.68 per round: W_L = 4a/p_L = 2.72/p_L.
///
/// So W_C/W_L = 0.90: windows near equal, as the coupling law intends. Rates are windows over
/// RTTs, and the classic flow's RTT includes the C queue's 15 ms target:
/// r_C/r_L = 0.90 · 20.6/35 = 0.53.
///
/// Tolerance: a factor 1.5 either way on both ratios. The response functions are fluid
/// approximations (CUBIC's sawtooth, Prague's cut spacing of about two rounds), and the step
/// adds marks to the L flow beyond k·p' whenever its queue passes 1 ms.
#[test]
fn prague_and_cubic_share_as_the_coupling_law_predicts() {
    let r = run(&dualpi2(&[("prague", false), ("cubic", true)], 40));
    let (l, c) = (&r.flows[0], &r.flows[1]);
    let (r_l, r_c) = (l.rtt_mean_ms.unwrap(), c.rtt_mean_ms.unwrap());
    // Mean windows from rate × RTT (full-size packets of 1448 B payload).
    let w = |f: &ccbench_sim::report::FlowSummary, rtt_ms: f64| f.goodput_bps * rtt_ms / 1e3 / (1448.0 * 8.0);
    let (w_l, w_c) = (w(l, r_l), w(c, r_c));
    let rate_ratio = c.goodput_bps / l.goodput_bps;
    let window_ratio = w_c / w_l;
    println!(
        "prague {:.2} Mbit/s (W {w_l:.1}, rtt {r_l:.1} ms), cubic {:.2} Mbit/s (W {w_c:.1}, rtt {r_c:.1} ms): \
         W_C/W_L {window_ratio:.2}, r_C/r_L {rate_ratio:.2}; utilisation {:.3}, CE {}, drops {}",
        l.goodput_bps / 1e6,
        c.goodput_bps / 1e6,
        r.run.link_utilisation,
        bottleneck(&r).ce_marked,
        bottleneck(&r).dropped_queue,
    );
    let a: f64 = (20.6f64 / 25.0).powi(2);
    let predicted_w = 2.44 / (4.0 * a);
    let predicted_r = predicted_w * 20.6 / 35.0;
    assert!(
        window_ratio >= predicted_w / 1.5 && window_ratio <= predicted_w * 1.5,
        "W_C/W_L {window_ratio:.2}, predicted {predicted_w:.2}"
    );
    assert!(
        rate_ratio >= predicted_r / 1.5 && rate_ratio <= predicted_r * 1.5,
        "r_C/r_L {rate_ratio:.2}, predicted {predicted_r:.2}"
    );
    assert_eq!(bottleneck(&r).dropped_queue, 0, "both flows are ECN-capable: marks only");
    assert!(r.run.link_utilisation >= 0.90, "utilisation {}", r.run.link_utilisation);
    // The L4S flow keeps its low delay beside the classic one: its RTT stays within 2 ms of the
    // base 20 ms (the step at 1 ms) while CUBIC's includes the C queue's ~15 ms.
    assert!(r_l <= 22.0 && r_c >= r_l + 8.0, "rtt L {r_l:.1}, C {r_c:.1}");
}

/// Prague beside CUBIC without ECN at 100 Mbit/s and 10 ms, each flow's rate from its
/// response function at the probability DualPI2 gives it (base probability p', k = 2):
/// * CUBIC, Reno-friendly: W_C = 1.22/√(p'²) = 1.22/p', over an RTT of 10 ms plus the C
///   queue's 15 ms target: r_C = 1.22/(0.025·p') = 48.8/p' packets/s;
/// * Prague, RTT-independent below 25 ms: its srtt R_L ≈ 11 ms (10 ms base, about one packet
///   gap of delayed ACK); it cuts only on entering CWR and at most every 25 ms, so every third
///   round (33 ms); it grows a = (11/25)² = 0.19 packets per round; cut W·alpha/2 with alpha ≈
///   p_L = 2p': W_L = 2·3·a/p_L = 0.58/p', r_L = W_L/R_L = 52.8/p' packets/s.
///
/// So r_C/r_L ≈ 0.92 (Sarpkaya et al., real Linux, same link: 52.7/42.3 = 1.25). Tolerance:
/// a factor 2 either way (fluid approximations, cut spacing, the step's extra marks).
///
/// This holds only with the sending host's fq/EDT model (tcp/sender/host_queue.rs). Prague
/// paces at ⌊frac_cwnd⌋/srtt (`prague_update_pacing_rate`) while its srtt exceeds the path RTT
/// by the delayed-ACK gap; pacing inside TCP would keep in flight 2–3 packets below cwnd =
/// ⌈frac_cwnd⌉, so the flow would never be cwnd-limited and `prague_update_cwnd` would never
/// grow it. With fq, packets waiting for their departure time already count in flight (TSQ
/// lets at least two wait), so the window fills and is cwnd-limited.
#[test]
fn prague_and_classic_cubic_share_near_equally_at_10ms() {
    let mut b = BottleneckConfig::droptail(100_000_000, 10 * MS, 2.0);
    b.aqm = "dualpi2".into();
    b.aqm_params = AqmParams::default();
    let flows = vec![
        FlowConfig::bulk(0, "prague", 64 << 20),
        FlowConfig { ecn: false, ..FlowConfig::bulk(1, "cubic", 64 << 20) },
    ];
    let mut c = SimConfig::new("l4s-10ms", 20 * S, b, flows);
    c.sample_interval_ns = 10 * MS;
    let r = run(&c);
    let (l, cl) = (&r.flows[0], &r.flows[1]);
    let ratio = cl.goodput_bps / l.goodput_bps;
    println!("prague {:.2} Mbit/s, cubic {:.2} Mbit/s: r_C/r_L {ratio:.2}", l.goodput_bps / 1e6, cl.goodput_bps / 1e6);
    let predicted = (1.22 / 0.025) / (2.0 * 3.0 * (11.0f64 / 25.0).powi(2) / 2.0 / 0.011);
    assert!(ratio >= predicted / 2.0 && ratio <= predicted * 2.0, "r_C/r_L {ratio:.2}, predicted {predicted:.2}");
}
