//! The simulator against theory: link utilisation, queueing delay = queue bytes / rate, the
//! Mathis formula for Reno, CUBIC's response function (RFC 9438 §5), packet conservation,
//! determinism and fairness. Each expected value is derived from the formula named next to it.
use ccbench_sim::config::*;
use ccbench_sim::rng::Rng;
use ccbench_sim::{run, SimReport};

const MSS_BITS: f64 = 1448.0 * 8.0;

/// Bottleneck queue at sample instant `t` (the link series shares the flows' sample instants).
fn queue_at(r: &SimReport, t: f64) -> u64 {
    let ls = &r.link_series;
    let k = ls.t_s.partition_point(|&x| x < t);
    assert!(k < ls.t_s.len() && ls.t_s[k] == t, "no link sample at t = {t}");
    ls.queue_bytes[k]
}

fn scenario(cc: &str, rate_bps: u64, rtt_ms: u64, buffer_bdp: f64, loss: f64, secs: u64) -> SimConfig {
    let mut b = BottleneckConfig::droptail(rate_bps, rtt_ms * 1_000_000, buffer_bdp);
    if loss > 0.0 {
        b.loss = LossConfig::Bernoulli { p: loss };
    }
    SimConfig::new("theory", secs * 1_000_000_000, b, vec![flow(0, cc)])
}

fn flow(id: u32, cc: &str) -> FlowConfig {
    FlowConfig::bulk(id, cc, 32 << 20)
}

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// Steady-state goodput: the mean of the sampled goodput after `warmup_s`, over a few seeds.
/// The response functions describe the long-run average; the first seconds after slow start
/// (cwnd far above its equilibrium, a large W_max remembered by CUBIC) would bias a short run
/// upwards — a 60 s CUBIC run at 0.1 % is 35 % above its long-run mean for that reason alone.
fn steady_goodput(cfg: &SimConfig, seeds: &[u64], warmup_s: f64) -> f64 {
    let sum: f64 = seeds
        .iter()
        .map(|&s| {
            let mut c = cfg.clone();
            c.seed = s;
            let r = run(&c).unwrap();
            let xs: Vec<f64> = (0..r.series.t_s.len())
                .filter(|&i| r.series.t_s[i] > warmup_s)
                .map(|i| r.series.goodput_bps[i])
                .collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        })
        .sum();
    sum / seeds.len() as f64
}

#[test]
fn reno_fills_the_link_and_rtt_is_base_plus_queue_over_rate() {
    let cfg = scenario("reno", 50_000_000, 50, 1.0, 0.0, 30);
    let r = run(&cfg).unwrap();
    // With a 1-BDP buffer, Reno's halved window still fills the pipe: utilisation ~100 %.
    assert!(r.run.link_utilisation >= 0.95, "utilisation {}", r.run.link_utilisation);
    // Goodput cannot exceed rate × MSS / packet size.
    let ceiling = 50e6 * 1448.0 / 1500.0;
    assert!(r.flows[0].goodput_bps <= ceiling * 1.001);
    assert!(r.flows[0].goodput_bps >= 0.95 * ceiling);
    // Queueing delay = queue bytes / rate: compare the sampled smoothed RTT with
    // base RTT + queue × 8 / rate (+ one packet's serialisation and ≤ 1 delayed-ACK gap).
    let s = &r.series;
    let mut checked = 0;
    let mut off = 0;
    for i in 0..s.t_s.len() {
        if s.t_s[i] < 2.0 {
            continue; // slow start: srtt lags a fast-moving queue
        }
        let model = 50.0 + queue_at(&r, s.t_s[i]) as f64 * 8.0 / 50e6 * 1e3 + 0.24;
        let srtt = s.rtt_ms[i].unwrap();
        checked += 1;
        if (srtt - model).abs() > 1.0 + 0.02 * model {
            off += 1;
        }
    }
    assert!(checked > 250);
    // Samples right after a loss (queue drains while srtt still remembers it) may differ.
    assert!((off as f64) < 0.05 * checked as f64, "{off} of {checked} samples off the model");
}

#[test]
fn reno_matches_mathis_under_random_loss() {
    for p in [0.001, 0.01] {
        let cfg = scenario("reno", 50_000_000, 50, 4.0, p, 120);
        let got = steady_goodput(&cfg, &[1, 2, 3], 20.0);
        // Mathis et al. 1997: MSS/RTT · sqrt(3/(2p)). Linux grows cwnd per acked segment, so
        // delayed ACKs do not halve the growth and the constant is sqrt(3/2).
        let mathis = MSS_BITS / 0.050 * (1.5 / p).sqrt();
        let ratio = got / mathis;
        eprintln!("reno p={p}: {:.2} Mbit/s, Mathis {:.2}, ratio {ratio:.2}", got / 1e6, mathis / 1e6);
        assert!(
            (0.65..=1.35).contains(&ratio),
            "p={p}: {:.2} Mbit/s vs Mathis {:.2} ({ratio:.2})",
            got / 1e6,
            mathis / 1e6
        );
    }
}

/// RFC 9438 §5: average CUBIC window = max(cubic region, Reno-friendly region), in packets:
/// cubic: (C·(3+β)/(4·(1−β)))^¼ · RTT^¾ / p^¾, Reno-friendly: sqrt(3/(2p)) (AIMD with
/// α = 3(1−β)/(1+β) has Reno's response).
fn cubic_response_bps(p: f64, rtt_s: f64) -> (f64, &'static str) {
    let (c, beta): (f64, f64) = (0.4, 0.7);
    let cubic = (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * rtt_s.powf(0.75) / p.powf(0.75);
    let reno = (1.5 / p).sqrt();
    if cubic >= reno {
        (cubic * MSS_BITS / rtt_s, "cubic")
    } else {
        (reno * MSS_BITS / rtt_s, "reno-friendly")
    }
}

#[test]
fn cubic_matches_its_response_function() {
    // At 100 ms RTT and p = 0.1 % / 1 % the Reno-friendly region applies (W_reno > W_cubic);
    // at p = 0.01 % and 200 ms the cubic region applies. The issue asks for 100 ms at
    // 0.1 % and 1 %; the third case checks the cubic region itself.
    let cases = [
        (0.001, 100, 50_000_000u64, 200u64, "reno-friendly"),
        (0.01, 100, 50_000_000, 120, "reno-friendly"),
        (0.0001, 200, 200_000_000, 300, "cubic"),
    ];
    for (p, rtt_ms, rate, secs, region) in cases {
        let cfg = scenario("cubic", rate, rtt_ms, 4.0, p, secs);
        let got = steady_goodput(&cfg, &[1, 2, 3], 30.0);
        let (expect, which) = cubic_response_bps(p, rtt_ms as f64 / 1e3);
        assert_eq!(which, region, "p={p} rtt={rtt_ms}");
        let ratio = got / expect;
        eprintln!(
            "cubic p={p} rtt={rtt_ms}ms ({which}): {:.2} Mbit/s vs {:.2}, ratio {ratio:.2}",
            got / 1e6,
            expect / 1e6
        );
        assert!(
            (0.65..=1.35).contains(&ratio),
            "p={p} rtt={rtt_ms}ms ({which}): {:.2} Mbit/s vs {:.2} ({ratio:.2})",
            got / 1e6,
            expect / 1e6
        );
    }
}

fn check_conservation(r: &SimReport, what: &str) {
    for f in &r.flows {
        assert_eq!(
            f.data_sent,
            f.data_received + f.data_dropped + f.data_in_network,
            "{what}: flow {} sent {} != received {} + dropped {} + in network {}",
            f.flow_id,
            f.data_sent,
            f.data_received,
            f.data_dropped,
            f.data_in_network
        );
    }
    for l in &r.links {
        assert_eq!(
            l.arrived,
            l.departed + l.dropped_queue + l.dropped_loss + l.held,
            "{what}: link {} does not conserve packets: {:?}",
            l.name,
            l
        );
    }
}

#[test]
fn packet_conservation_in_random_scenarios() {
    let mut rng = Rng::new(2024);
    let algos = ["reno", "cubic", "bbr", "vegas"];
    for case in 0..40 {
        let rate = [1_000_000u64, 10_000_000, 50_000_000, 200_000_000][rng.below(4) as usize];
        let rtt = [1u64, 10, 50, 120][rng.below(4) as usize];
        let mut cfg = scenario("reno", rate, rtt, [0.1, 0.5, 1.0, 4.0][rng.below(4) as usize], 0.0, 1 + rng.below(4));
        cfg.seed = rng.next_u64();
        cfg.bottleneck.loss = match rng.below(3) {
            0 => LossConfig::None,
            1 => LossConfig::Bernoulli { p: rng.next_f64() * 0.08 },
            _ => LossConfig::Gilbert { p: 0.01, r: 0.3, h: 0.0, k: 1.0 },
        };
        cfg.bottleneck.impair = [Impair::Data, Impair::Ack, Impair::Both][rng.below(3) as usize];
        if rng.chance(0.5) {
            cfg.bottleneck.jitter_ns = rng.below(rtt * 1_000_000 / 2 + 1);
            cfg.bottleneck.jitter_dist =
                [JitterDist::Uniform, JitterDist::Normal, JitterDist::Pareto][rng.below(3) as usize];
            cfg.bottleneck.reorder = rng.chance(0.5);
        }
        if rng.chance(0.3) {
            cfg.bottleneck.buffer = BufferConfig::Packets(1 + rng.below(200));
        }
        if rng.chance(0.4) {
            cfg.access = AccessConfig { rate_bps: Some(rate * (1 + rng.below(20))), delay_ns: rng.below(2_000_000) };
        } else if rng.chance(0.5) {
            cfg.access.delay_ns = rng.below(5_000_000);
        }
        let n = 1 + rng.below(5) as u32;
        cfg.flows = (0..n)
            .map(|i| {
                let mut f = flow(i, algos[rng.below(4) as usize]);
                f.start_ns = rng.below(500_000_000);
                if rng.chance(0.3) {
                    f.size_bytes = Some(1 + rng.below(3_000_000));
                }
                f.pacing = rng.chance(0.2);
                f
            })
            .collect();
        if rng.chance(0.3) {
            cfg.probe.ping_interval_ns = 10_000_000;
        }
        let r = run(&cfg).unwrap();
        check_conservation(&r, &format!("case {case}: {cfg:?}"));
    }
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let mut cfg = scenario("cubic", 20_000_000, 40, 1.0, 0.01, 10);
    cfg.bottleneck.jitter_ns = 3_000_000;
    cfg.flows.push(flow(1, "bbr"));
    let a = serde_json::to_string(&run(&cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&cfg).unwrap()).unwrap();
    assert_eq!(a, b, "same scenario and seed must give identical output");
    cfg.seed = 2;
    let c = serde_json::to_string(&run(&cfg).unwrap()).unwrap();
    assert_ne!(a, c, "another seed under random loss must change the result");
}

#[test]
fn adding_a_flow_does_not_change_the_loss_draws_of_a_link_stream() {
    // RNG streams are per component: the bottleneck's loss stream is the same sequence
    // whatever the flows are (the draws are consumed in arrival order).
    let a = Rng::stream(7, "bottleneck/fwd/loss").next_u64();
    let b = Rng::stream(7, "bottleneck/fwd/loss").next_u64();
    let c = Rng::stream(7, "cc/1").next_u64();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn two_cubic_flows_share_fairly() {
    // Two connections never start in the same nanosecond on real hosts (iperf3 opens them one
    // after the other); the second starts 0.1–20 ms after the first here. With *exactly* equal
    // start times and no loss or jitter the deterministic simulation locks the two flows into
    // a fixed phase at the drop-tail queue (Floyd & Jacobson's phase effect): flow 1's packets
    // always arrive just behind flow 0's and take the drops, and Jain's index over 60 s is
    // 0.949. The path carries the 100 µs of timing noise real hosts add, but a single 60 s run
    // still depends on which flow the few overflow drops happen to hit: before the receiver's
    // SACK list followed Linux's (tcp_sack_new_ofo_skb, tcp_sack_compress_send_ack) the 18 runs
    // below ranged 0.907–1.000 (mean 0.977), after it 0.797–1.000 (mean 0.959), and with the
    // receive-window model too 0.897–1.000 (mean 0.974): one seed alone passes or fails a
    // per-run threshold by luck. So the test asks for fairness on
    // average over seeds and start offsets, and for no run badly unfair.
    let mut js = Vec::new();
    for seed in 1..=6u64 {
        for offset_us in [100u64, 2_000, 20_000] {
            let mut cfg = scenario("cubic", 50_000_000, 50, 1.0, 0.0, 60);
            cfg.seed = seed;
            // 100 µs of delay variation without reordering: the timing noise of real hosts.
            cfg.bottleneck.jitter_ns = 100_000;
            cfg.bottleneck.reorder = false;
            let mut second = flow(1, "cubic");
            second.start_ns = offset_us * 1000;
            cfg.flows.push(second);
            let r = run(&cfg).unwrap();
            let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
            let j = jain(&g);
            eprintln!("seed {seed} offset {offset_us} us: Jain {j:.3} {g:?}");
            assert!(j >= 0.75, "seed {seed} offset {offset_us} us: Jain {j:.3} for {g:?}");
            assert!(r.run.link_utilisation > 0.95);
            js.push(j);
        }
    }
    let mean = js.iter().sum::<f64>() / js.len() as f64;
    assert!(mean >= 0.95, "mean Jain {mean:.3} over {} runs", js.len());
}

#[test]
fn fixed_size_transfer_completes_with_plausible_fct() {
    // 1 MB over 50 Mbit/s, 50 ms: slow start from IW10 needs ~4 RTTs plus serialisation.
    let mut cfg = scenario("cubic", 50_000_000, 50, 1.0, 0.0, 5);
    cfg.flows[0].size_bytes = Some(1_000_000);
    let r = run(&cfg).unwrap();
    let f = &r.flows[0];
    assert!(f.completed);
    let fct = f.fct_s.unwrap();
    // Lower bound: 1 MB / 48.27 Mbit/s + one RTT; IW10 doubling: 10+20+40+80+160 ≥ 691 segs
    // after 5 rounds, so at most ~6 RTTs (0.3 s) plus queueing.
    assert!(fct > 0.05 + 8e6 / 48.27e6 && fct < 0.45, "fct {fct}");
    assert_eq!(f.bytes_acked, 1_000_000);
}

#[test]
fn rwnd_caps_throughput_at_window_over_rtt() {
    // rwnd 64 KiB at 100 ms RTT: at most 45 segments per RTT = 45·1448·8/0.1 ≈ 5.2 Mbit/s.
    let mut cfg = scenario("cubic", 50_000_000, 100, 1.0, 0.0, 20);
    cfg.flows[0].rwnd_bytes = 65536;
    let r = run(&cfg).unwrap();
    let cap = (65536 / 1448) as f64 * MSS_BITS / 0.1;
    let g = r.flows[0].goodput_bps;
    assert!(g <= cap * 1.01 && g >= cap * 0.9, "goodput {g} vs cap {cap}");
}

#[test]
fn order_kept_jitter_keeps_the_link_full() {
    // ±8 ms uniform jitter at 50 ms with reorder = false: no packet overtakes another, so TCP
    // sees no reordering and only a slightly longer path; CUBIC still fills the link.
    let mut cfg = scenario("cubic", 50_000_000, 50, 1.0, 0.0, 20);
    cfg.bottleneck.jitter_ns = 8_000_000;
    cfg.bottleneck.reorder = false;
    let kept = run(&cfg).unwrap();
    assert!(kept.flows[0].goodput_bps > 0.9 * 50e6 * 1448.0 / 1500.0, "order-kept jitter keeps the link full");
}

#[test]
fn pacing_flag_paces_cubic_the_linux_way() {
    // tcp_update_pacing_rate: rate = ratio × cwnd × MSS / srtt with ratio 200 % while
    // cwnd < ssthresh/2 and 120 % otherwise. The series' pacing rate must sit on one of the two.
    let mut cfg = scenario("cubic", 50_000_000, 50, 2.0, 0.0, 20);
    cfg.flows[0].pacing = true;
    let r = run(&cfg).unwrap();
    let s = &r.series;
    let mut on_ratio = 0;
    for i in 0..s.t_s.len() {
        let pacing = s.pacing_bps[i].expect("a paced flow reports its pacing rate");
        let cwnd_rate = s.cwnd_pkts[i] as f64 * MSS_BITS / (s.rtt_ms[i].unwrap() / 1e3);
        let ratio = pacing / cwnd_rate;
        // srtt in the series is the value at the sampling instant; the rate was computed at
        // the last ACK, one packet time earlier, so allow 3 %.
        if (ratio - 1.2).abs() < 0.036 || (ratio - 2.0).abs() < 0.06 {
            on_ratio += 1;
        }
    }
    assert!(on_ratio as f64 >= 0.95 * s.t_s.len() as f64, "{on_ratio} of {} samples at 1.2x or 2x", s.t_s.len());
    // A paced flow still fills the link.
    assert!(r.run.link_utilisation > 0.95);
    // Unpaced CUBIC (the default, a host without fq) reports no pacing rate.
    cfg.flows[0].pacing = false;
    let r = run(&cfg).unwrap();
    assert!(r.series.pacing_bps.iter().all(|p| p.is_none()));
}

#[test]
fn delivery_rate_is_the_bottleneck_rate_while_the_queue_is_busy() {
    // tcp_rate.c measures packets delivered over max(send interval, ACK interval). While the
    // bottleneck queue is non-empty the link delivers back to back, so a sample equals its
    // payload rate: 50 Mbit/s × 1448/1500.
    let r = run(&scenario("cubic", 50_000_000, 50, 1.0, 0.0, 20)).unwrap();
    let ideal = 50e6 * 1448.0 / 1500.0;
    let s = &r.series;
    let busy: Vec<f64> = (0..s.t_s.len())
        .filter(|&i| s.t_s[i] > 2.0 && queue_at(&r, s.t_s[i]) >= 30_000)
        .map(|i| s.delivery_rate_bps[i].expect("a rate sample exists"))
        .collect();
    assert!(busy.len() > 100);
    let close = busy.iter().filter(|&&d| (d - ideal).abs() / ideal < 0.03).count();
    assert!(close as f64 >= 0.9 * busy.len() as f64, "{close} of {} samples within 3 % of {ideal}", busy.len());
    // The cumulative retransmission count never decreases and ends at the flow's total.
    assert!(s.retransmits.windows(2).all(|w| w[1] >= w[0]));
    assert_eq!(*s.retransmits.last().unwrap(), r.flows[0].retransmits);
}

#[test]
fn link_series_samples_the_queue_and_the_latest_probe_reply() {
    // An idle path (the only flow starts after the end): the probe sees the base RTT plus the
    // serialisation of its 84-byte request and reply at 10 Mbit/s (2 × 67.2 µs), the queue is
    // empty, and the link is sampled every 100 ms although no flow is.
    let mut cfg = scenario("cubic", 10_000_000, 40, 1.0, 0.0, 5);
    cfg.flows[0].start_ns = 10_000_000_000;
    cfg.probe.ping_interval_ns = 250_000_000;
    let r = run(&cfg).unwrap();
    let ls = &r.link_series;
    assert!(r.series.t_s.is_empty());
    assert_eq!(ls.t_s.len(), 50);
    assert!((ls.t_s[0] - 0.1).abs() < 1e-12 && (ls.t_s[49] - 5.0).abs() < 1e-12);
    assert!(ls.queue_bytes.iter().all(|&q| q == 0));
    // One reply every 250 ms (sent at 0, 0.25, ... arriving 40.13 ms later): at most one per
    // 100 ms interval, so 20 of the 50 intervals hold a reply and the others are null.
    let got: Vec<f64> = ls.probe_rtt_ms.iter().flatten().copied().collect();
    assert_eq!(got.len(), 20, "{:?}", ls.probe_rtt_ms);
    let expect = 40.0 + 2.0 * 84.0 * 8.0 / 10e6 * 1e3;
    assert!(got.iter().all(|&v| (v - expect).abs() < 0.002), "{got:?} vs {expect}");
    // The interval (0.1, 0.2] holds no send-plus-RTT instant; (0.2, 0.3] holds 0.29013.
    assert!(ls.probe_rtt_ms[1].is_none() && ls.probe_rtt_ms[2].is_some());
}

#[test]
fn probe_rtt_follows_the_standing_queue() {
    // Under load the probe waits behind the queue: its RTT is base + queue / rate, measured
    // against the queue its request met about one RTT before the sample (so compare the
    // medians over the steady state, not sample by sample).
    let mut cfg = scenario("cubic", 20_000_000, 40, 4.0, 0.0, 20);
    cfg.probe.ping_interval_ns = 20_000_000;
    let r = run(&cfg).unwrap();
    let ls = &r.link_series;
    let mut model = Vec::new();
    let mut probe = Vec::new();
    for k in 0..ls.t_s.len() {
        if ls.t_s[k] < 5.0 {
            continue;
        }
        model.push(40.0 + ls.queue_bytes[k] as f64 * 8.0 / 20e6 * 1e3);
        probe.push(ls.probe_rtt_ms[k].expect("a reply every 20 ms lands in every 100 ms interval"));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (m, p) = (median(&mut model), median(&mut probe));
    assert!(m > 60.0, "a 4 BDP buffer holds a standing queue under CUBIC: {m} ms");
    assert!((p - m).abs() < 0.1 * m, "probe median {p} ms vs base + queue / rate {m} ms");
}
