//! Scenario-level tests of BBR and Vegas, run through `ccbench_sim::run` with
//! `SimConfig` values built here. Each test prints the figures it measured (run with
//! `--nocapture`); docs/algorithms.md records them.
use ccbench_sim::config::{BottleneckConfig, FlowConfig, LossConfig};
use ccbench_sim::{SimConfig, SimReport};

const MSS: f64 = 1448.0;
const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// One bottleneck of `rate_bps`, `rtt_ms`, a drop-tail buffer of `buffer_bdp` BDPs, random
/// loss `loss` (0 = none), and one flow per entry of `ccs` (each its own group), 10 ms samples.
fn cfg(rate_bps: u64, rtt_ms: u64, buffer_bdp: f64, loss: f64, ccs: &[&str], secs: u64) -> SimConfig {
    let mut b = BottleneckConfig::droptail(rate_bps, rtt_ms * MS, buffer_bdp);
    if loss > 0.0 {
        b.loss = LossConfig::Bernoulli { p: loss };
    }
    let flows = ccs
        .iter()
        .enumerate()
        .map(|(i, cc)| FlowConfig { group: i as u32, ..FlowConfig::bulk(i as u32, cc, 64 << 20) })
        .collect();
    let mut c = SimConfig::new("cc_bbr_vegas", secs * S, b, flows);
    c.sample_interval_ns = 10 * MS;
    c
}

/// Bottleneck queue at sample instant `t` (the link series shares the flows' sample instants).
fn queue_at(r: &SimReport, t: f64) -> u64 {
    let ls = &r.link_series;
    let k = ls.t_s.partition_point(|&x| x < t);
    assert!(k < ls.t_s.len() && ls.t_s[k] == t, "no link sample at t = {t}");
    ls.queue_bytes[k]
}

fn run(c: &SimConfig) -> SimReport {
    ccbench_sim::run(c).unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// Indices of flow `id`'s series rows with t >= t_min.
fn rows(r: &SimReport, id: u32, t_min: f64) -> Vec<usize> {
    (0..r.series.t_s.len()).filter(|&i| r.series.flow_id[i] == id && r.series.t_s[i] >= t_min).collect()
}

// (a) Bufferbloat contrast: BBR keeps the RTT near the base, CUBIC fills a 10 BDP buffer.
#[test]
fn a_bbr_low_rtt_cubic_fills_deep_buffer() {
    let base_ms = 50.0;
    let r = run(&cfg(50_000_000, 50, 10.0, 0.0, &["bbr"], 30));
    let f = &r.flows[0];
    let rtt = f.rtt_mean_ms.unwrap();
    println!(
        "(a) BBR: utilisation {:.3}, goodput {:.2} Mbit/s, mean RTT {:.1} ms (base {base_ms})",
        r.run.link_utilisation,
        f.goodput_bps / 1e6,
        rtt
    );
    assert!(r.run.link_utilisation >= 0.90, "BBR utilisation {}", r.run.link_utilisation);
    assert!(rtt <= 1.3 * base_ms, "BBR mean RTT {rtt} ms");

    let r = run(&cfg(50_000_000, 50, 10.0, 0.0, &["cubic"], 30));
    let f = &r.flows[0];
    let rtt = f.rtt_mean_ms.unwrap();
    println!("(a) CUBIC: utilisation {:.3}, mean RTT {:.1} ms", r.run.link_utilisation, rtt);
    assert!(rtt >= 3.0 * base_ms, "CUBIC mean RTT {rtt} ms should fill the buffer");
}

// (b) Random loss at 50 Mbit/s, 50 ms, 1 BDP buffer.
#[test]
fn b_loss_tolerance() {
    let link = 50e6;
    let good = |cc: &str, p: f64| {
        let r = run(&cfg(50_000_000, 50, 1.0, p, &[cc], 30));
        let g = r.flows[0].goodput_bps;
        println!(
            "(b) {cc} at {:.0} % loss: goodput {:.2} Mbit/s = {:.1} % of link",
            p * 100.0,
            g / 1e6,
            100.0 * g / link
        );
        g
    };
    let b1 = good("bbr", 0.01);
    let b5 = good("bbr", 0.05);
    let b30 = good("bbr", 0.30);
    let c1 = good("cubic", 0.01);
    assert!(b1 >= 0.85 * link, "BBR at 1 %: {b1}");
    assert!(b5 >= 0.60 * link, "BBR at 5 %: {b5}");
    assert!(c1 < 0.25 * link, "CUBIC at 1 %: {c1}");
    assert!(b30 < 0.5 * b5, "BBR at 30 % ({b30}) should collapse below half of 5 % ({b5})");
}

/// Episodes (start s, duration s) during which cwnd <= 4 packets, from the series.
fn probe_rtt_episodes(r: &SimReport, id: u32) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut start: Option<f64> = None;
    let mut last_t = 0.0;
    for i in rows(r, id, 1.0) {
        let (t, low) = (r.series.t_s[i], r.series.cwnd_pkts[i] <= 4);
        match (low, start) {
            (true, None) => start = Some(t),
            (false, Some(s)) => {
                out.push((s, t - s));
                start = None;
            }
            _ => {}
        }
        last_t = t;
    }
    if let Some(s) = start {
        out.push((s, last_t - s));
    }
    out
}

/// cwnd <= 4 episodes of a 30 s single BBR flow at 50 Mbit/s, 50 ms, 1 BDP, with `jitter_us`
/// of uniform per-packet delay variation (in order).
fn probe_rtt_run(jitter_us: u64) -> Vec<(f64, f64)> {
    let mut c = cfg(50_000_000, 50, 1.0, 0.0, &["bbr"], 30);
    c.bottleneck.jitter_ns = jitter_us * 1000;
    c.bottleneck.reorder = false;
    let r = run(&c);
    let eps = probe_rtt_episodes(&r, 0);
    let labelled = rows(&r, 0, 0.0).into_iter().filter(|&i| r.series.cc_state[i] == "PROBE_RTT").count();
    println!(
        "(c) jitter {jitter_us} us: cwnd<=4 episodes (start s, duration s): {eps:?}; PROBE_RTT samples {labelled}; \
         BBR min_rtt {:?} ms, flow rtt_min {:?} ms",
        r.series.min_rtt_ms.last().unwrap(),
        r.flows[0].rtt_min_ms
    );
    eps
}

fn assert_probe_rtt_every_10s(eps: &[(f64, f64)]) {
    assert!((2..=3).contains(&eps.len()), "expected 2-3 PROBE_RTT episodes in 30 s: {eps:?}");
    for w in eps.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!((9.5..=11.0).contains(&gap), "PROBE_RTT spacing {gap} s");
    }
    for (_, d) in eps {
        assert!((0.18..=0.40).contains(d), "PROBE_RTT duration {d} s");
    }
}

// (c) PROBE_RTT: cwnd 4 about every 10 s for about 200 ms.
//
// On the jitter-free path this rests on the handshake's RTT sample: BBR's min RTT starts from
// tcp_min_rtt, which holds the handshake's small-packet RTT that data packets can never match.
// Taken from data packets alone, the minimum would be re-measured to the microsecond
// (50.248 ms) every ~420 ms, since PROBE_BW's cruise phases (0.99 × bw) empty the queue each
// gain cycle, and the 10 s filter would never expire. With 100 µs of jitter (below) or at
// 10 Mbit/s (where the 3 × TSO-goal budget keeps a small standing queue) PROBE_RTT comes every
// ~10.4 s either way.
#[test]
fn c_probe_rtt_every_10s() {
    assert_probe_rtt_every_10s(&probe_rtt_run(0));
}

// (c) with 100 µs of delay variation: the minimum is not re-matched to the microsecond.
#[test]
fn c_probe_rtt_every_10s_with_100us_jitter() {
    assert_probe_rtt_every_10s(&probe_rtt_run(100));
}

// (d) PROBE_BW: pacing = {1.25, 0.75, 1} × bw × 0.99, with an 8-round period.
#[test]
fn d_probe_bw_gain_cycle() {
    let r = run(&cfg(50_000_000, 50, 1.0, 0.0, &["bbr"], 12));
    let idx: Vec<usize> = rows(&r, 0, 2.0).into_iter().filter(|&i| r.series.cc_state[i] == "PROBE_BW").collect();
    assert!(idx.len() > 500);
    let mut levels = [0usize; 3]; // 1.25, 0.75, 1.0
                                  // Cycle periods are measured between 1.25 phases of one PROBE_BW stretch: after PROBE_RTT
                                  // BBR re-enters PROBE_BW at a random phase (bbr_reset_probe_bw_mode), so a period across
                                  // it says nothing about the 8-round cycle.
    let mut periods: Vec<f64> = Vec::new();
    let mut last_high: Option<f64> = None;
    let mut high_starts = Vec::new();
    let mut prev_high = false;
    let mut prev_i: Option<usize> = None;
    for &i in &idx {
        if prev_i.is_some_and(|p| p + 1 != i) {
            last_high = None; // left PROBE_BW in between
            prev_high = false;
        }
        prev_i = Some(i);
        let g = r.series.pacing_bps[i].unwrap() / r.series.bw_est_bps[i].unwrap() / 0.99;
        let lvl = if (g - 1.25).abs() < 0.01 {
            0
        } else if (g - 0.75).abs() < 0.01 {
            1
        } else if (g - 1.0).abs() < 0.01 {
            2
        } else {
            panic!("t={} pacing/bw = {g} is none of 1.25, 0.75, 1", r.series.t_s[i])
        };
        levels[lvl] += 1;
        if lvl == 0 && !prev_high {
            let t = r.series.t_s[i];
            if let Some(t0) = last_high {
                periods.push(t - t0);
            }
            last_high = Some(t);
            high_starts.push(t);
        }
        prev_high = lvl == 0;
    }
    let n = idx.len() as f64;
    let frac = levels.map(|c| c as f64 / n);
    let min_rtt = r.series.min_rtt_ms[*idx.last().unwrap()].unwrap() / 1e3;
    println!("(d) fractions 1.25/0.75/1: {frac:?}; periods {periods:?} s; min_rtt {min_rtt} s");
    // One phase in 8 at 1.25 (at least one min RTT long), at most one in 8 at 0.75.
    assert!((0.09..=0.25).contains(&frac[0]), "1.25 share {}", frac[0]);
    assert!(frac[1] > 0.0 && frac[1] <= 0.15, "0.75 share {}", frac[1]);
    assert!(frac[2] >= 0.6, "1.0 share {}", frac[2]);
    assert!(periods.len() >= 10);
    for p in &periods {
        assert!(*p >= 7.5 * min_rtt && *p <= 10.0 * min_rtt, "cycle period {p} s");
    }
}

// (e) Vegas alone: 1..6 packets queued in steady state; report its utilisation.
fn vegas_steady(rate_bps: u64, rtt_ms: u64, secs: u64, from_s: f64) -> f64 {
    let r = run(&cfg(rate_bps, rtt_ms, 4.0, 0.0, &["vegas"], secs));
    let idx = rows(&r, 0, from_s);
    let q: Vec<f64> = idx.iter().map(|&i| queue_at(&r, r.series.t_s[i]) as f64 / MSS).collect();
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let cw: f64 = idx.iter().map(|&i| r.series.cwnd_pkts[i] as f64).sum::<f64>() / idx.len() as f64;
    println!(
        "(e) Vegas {} Mbit/s {rtt_ms} ms: from {from_s} s mean queue {mean:.2} pkts (min {:.1}, max {:.1}), mean cwnd {cw:.1}; \
         run: utilisation {:.3}, goodput {:.2} Mbit/s, mean RTT {:.1} ms",
        rate_bps / 1_000_000,
        q.iter().cloned().fold(f64::MAX, f64::min),
        q.iter().cloned().fold(0.0, f64::max),
        r.run.link_utilisation,
        r.flows[0].goodput_bps / 1e6,
        r.flows[0].rtt_mean_ms.unwrap()
    );
    mean
}

#[test]
fn e_vegas_queue_alpha_beta() {
    // Small BDP (33 packets): slow start ends close to the BDP, steady within seconds.
    let mean = vegas_steady(10_000_000, 40, 30, 10.0);
    assert!((1.0..=6.0).contains(&mean), "Vegas mean queue {mean} packets");
    // 50 Mbit/s, 50 ms (BDP 208): slow start overshoots to ~3 BDP on the 4 BDP buffer and
    // congestion avoidance drains one packet per RTT (docs/algorithms.md), so the steady
    // state is only reached after about a minute.
    let mean = vegas_steady(50_000_000, 50, 100, 80.0);
    assert!((1.0..=6.0).contains(&mean), "Vegas mean queue {mean} packets");
}

// (f) 1 CUBIC + 1 BBR: CUBIC wins on a deep buffer, BBR on a shallow one.
#[test]
fn f_cubic_vs_bbr_buffer_depth() {
    for (bdp, cubic_should_win) in [(8.0, true), (0.25, false)] {
        let r = run(&cfg(50_000_000, 50, bdp, 0.0, &["cubic", "bbr"], 60));
        let (c, b) = (r.flows[0].goodput_bps, r.flows[1].goodput_bps);
        let share_c = c / (c + b);
        println!(
            "(f) buffer {bdp} BDP: CUBIC {:.2} Mbit/s ({:.0} %), BBR {:.2} Mbit/s ({:.0} %)",
            c / 1e6,
            100.0 * share_c,
            b / 1e6,
            100.0 * (1.0 - share_c)
        );
        if cubic_should_win {
            assert!(c > b, "deep buffer: CUBIC should get the larger share");
        } else {
            assert!(b > c, "shallow buffer: BBR should get the larger share");
        }
    }
}

// (g) Determinism with BBR's random start phase.
#[test]
fn g_bbr_deterministic() {
    let mut c = cfg(20_000_000, 30, 1.0, 0.01, &["bbr", "bbr"], 10);
    let a = serde_json::to_string(&run(&c)).unwrap();
    let b = serde_json::to_string(&run(&c)).unwrap();
    assert_eq!(a, b, "same scenario and seed must give the same report");
    c.seed = 2;
    let d = serde_json::to_string(&run(&c)).unwrap();
    assert_ne!(a, d, "another seed should change the run");
}
