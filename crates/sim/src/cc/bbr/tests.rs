//! BBR unit tests: the state machine on a closed-loop test path (test_support) and fed
//! crafted ACKs, each against the tcp_bbr.c behaviour it names.
use super::*;
use crate::test_support::{Path, Row};

fn bbr(seed: u64) -> Bbr {
    Bbr::new(Rng::new(seed))
}

/// [rtt_cnt, cycle_idx, pacing_gain, mode as number]
fn obs(b: &Bbr) -> [u64; 4] {
    [b.rtt_cnt as u64, b.cycle_idx as u64, b.pacing_gain as u64, b.mode as u64]
}

/// Path of `mbit` Mbit/s (1500-byte packets), `rtt_ms`, `buf` packets, BBR seeded `seed`.
fn path(mbit: f64, rtt_ms: f64, buf: usize, seed: u64) -> Path<Bbr> {
    let mut p = Path::new(bbr(seed), mbit * 1e6 / 12_000.0, rtt_ms, buf);
    p.observe = obs;
    p
}

/// Payload bit/s of a link of `mbit` Mbit/s carrying 1500-byte packets.
fn payload_bps(mbit: f64) -> f64 {
    mbit * 1e6 * 1448.0 / 1500.0
}

fn rounds(rows: &[Row]) -> Vec<&Row> {
    // The first row of every packet-timed round.
    let mut out = Vec::new();
    let mut last = u64::MAX;
    for r in rows {
        if r.obs[0] != last {
            out.push(r);
            last = r.obs[0];
        }
    }
    out
}

#[test]
fn startup_doubles_per_round_then_drain_then_probe_bw() {
    let mut p = path(100.0, 40.0, 3000, 1);
    p.run_until(2_000_000_000);
    let link = payload_bps(100.0);
    let rs = rounds(&p.rows);
    // Per-round growth of the pacing rate in STARTUP while far below the link rate:
    // highest pacing rate of each round, compared round to round (round 1 still paces at
    // the initial 2.89 × 10 packets / srtt, so the comparison starts at round 2).
    let mut per_round: Vec<(u64, u64, f64)> = Vec::new(); // (round, max pacing, bw at end)
    for r in p.rows.iter().filter(|r| r.label == "STARTUP") {
        match per_round.last_mut() {
            Some(l) if l.0 == r.obs[0] => {
                l.1 = l.1.max(r.pacing_rate);
                l.2 = r.bw_bps.unwrap();
            }
            _ => per_round.push((r.obs[0], r.pacing_rate, r.bw_bps.unwrap())),
        }
    }
    let ratios: Vec<f64> = per_round
        .windows(2)
        .filter(|w| w[0].0 >= 2 && w[1].2 < 0.4 * link)
        .map(|w| w[1].1 as f64 / w[0].1 as f64)
        .collect();
    println!("startup pacing growth per round: {ratios:?}");
    assert!(ratios.len() >= 3, "too few startup rounds: {ratios:?}");
    let geo = ratios.iter().product::<f64>().powf(1.0 / ratios.len() as f64);
    assert!((1.8..=2.2).contains(&geo), "pacing should double per round: {ratios:?}");
    for r in &ratios {
        assert!((1.4..=2.6).contains(r), "pacing growth per round: {ratios:?}");
    }
    // Full-pipe detection: DRAIN starts 3 rounds after the estimate stopped growing 25 %.
    let first_full = rs.iter().find(|r| r.bw_bps.unwrap() >= 0.9 * link).unwrap().obs[0];
    let drain = p.rows.iter().find(|r| r.label == "DRAIN").expect("DRAIN reached");
    let probe = p.rows.iter().find(|r| r.label == "PROBE_BW").expect("PROBE_BW reached");
    println!("bw>=90% in round {first_full}, DRAIN in {}, PROBE_BW in {}", drain.obs[0], probe.obs[0]);
    assert!((2..=4).contains(&(drain.obs[0] - first_full)), "drain round {}", drain.obs[0]);
    assert!(probe.obs[0] - drain.obs[0] <= 2, "drain took {} rounds", probe.obs[0] - drain.obs[0]);
    assert_eq!(drain.obs[2], DRAIN_GAIN as u64);
    // Leaving DRAIN happens once in-flight is back at about one BDP (+ budget): BDP of
    // 8333 pkt/s × 40.12 ms = 335 packets.
    assert!(probe.in_flight <= 335 + 80, "in flight at PROBE_BW entry {}", probe.in_flight);
    // ssthresh was set on DRAIN entry to the 1×BDP in-flight target: 335 + 3 × TSO goal
    // (pacing ≈ 34 MB/s → 23 segments) rounded up to even = 404.
    assert!((400..=408).contains(&p.sk.ssthresh), "ssthresh {}", p.sk.ssthresh);
    // Estimate equals the payload rate of the link.
    let bw = p.rows.last().unwrap().bw_bps.unwrap();
    assert!((bw / link - 1.0).abs() < 0.01, "bw {bw} vs link {link}");
    // Min RTT = 40 ms propagation + 0.12 ms serialisation.
    assert_eq!(p.cc.min_rtt_us, 40_120);
}

#[test]
fn probe_bw_gain_cycle_period_and_pacing_levels() {
    let mut p = path(100.0, 40.0, 3000, 7);
    p.run_until(6_000_000_000);
    let min_rtt_ms = p.cc.min_rtt_us as f64 / 1e3;
    let rows: Vec<&Row> = p.rows.iter().filter(|r| r.label == "PROBE_BW" && r.t_ns >= 2_000_000_000).collect();
    assert!(rows.len() > 10_000);
    // Pacing rate = gain × bw × 0.99 on every ACK (bw in payload bytes/s).
    for r in &rows {
        let gain = r.obs[2] as f64 / 256.0;
        let bw_bytes = r.bw_bps.unwrap() / 8.0;
        let ratio = r.pacing_rate as f64 / bw_bytes;
        assert!((ratio - gain * 0.99).abs() < 0.002, "t={} gain {gain} ratio {ratio}", r.t_ns);
    }
    // Phase changes: always to the next index, in gains 1.25 → 0.75 → 1 ×6.
    let mut changes: Vec<(u64, u64, u64)> = Vec::new(); // (t_ns, new idx, rtt_cnt)
    for w in rows.windows(2) {
        if w[1].obs[1] != w[0].obs[1] {
            assert_eq!(w[1].obs[1], (w[0].obs[1] + 1) % 8, "phase skipped at {}", w[1].t_ns);
            changes.push((w[1].t_ns, w[1].obs[1], w[1].obs[0]));
        }
    }
    let gains: Vec<u64> = (0..8).map(|i| PACING_GAIN[i] as u64).collect();
    assert_eq!(gains, vec![320, 192, 256, 256, 256, 256, 256, 256]);
    let mut periods_ms = Vec::new();
    let mut period_rounds = Vec::new();
    for w in changes.windows(2) {
        let dur_ms = (w[1].0 - w[0].0) as f64 / 1e6;
        match w[0].1 {
            // 1.25: at least min_rtt, until in-flight reaches 1.25 BDP (about one more RTT).
            0 => assert!(dur_ms > min_rtt_ms && dur_ms < 2.5 * min_rtt_ms, "1.25 phase {dur_ms} ms"),
            // 0.75: at most min_rtt (early exit once in-flight <= BDP).
            1 => assert!(dur_ms <= min_rtt_ms + 1.0, "0.75 phase {dur_ms} ms"),
            // 1.0: exactly one min_rtt of delivery time (to ACK granularity, 0.12 ms).
            _ => assert!(dur_ms > min_rtt_ms && dur_ms < min_rtt_ms + 0.5, "1.0 phase {dur_ms} ms"),
        }
    }
    let starts: Vec<&(u64, u64, u64)> = changes.iter().filter(|c| c.1 == 0).collect();
    for w in starts.windows(2) {
        periods_ms.push((w[1].0 - w[0].0) as f64 / 1e6);
        period_rounds.push(w[1].2 - w[0].2);
    }
    println!("min_rtt {min_rtt_ms} ms; cycle periods {periods_ms:?} ms, rounds {period_rounds:?}");
    assert!(periods_ms.len() >= 8, "cycles seen: {}", periods_ms.len());
    for (ms, rounds) in periods_ms.iter().zip(&period_rounds) {
        assert!(*ms >= 7.0 * min_rtt_ms && *ms <= 9.5 * min_rtt_ms, "period {ms} ms");
        assert!((7..=9).contains(rounds), "rounds per cycle {rounds}");
    }
    // The 1.25 probe and the 0.75 drain leave the queue small: RTT stays within 1.3× base.
    let mean_rtt = rows.iter().map(|r| r.rtt_us as f64).sum::<f64>() / rows.len() as f64;
    assert!(mean_rtt < 1.3 * p.cc.min_rtt_us as f64, "mean rtt {mean_rtt}");
}

#[test]
fn probe_rtt_after_10s_without_new_min_rtt() {
    // The path RTT rises from 40 to 45 ms at t = 1 s (a route change): from then on no
    // sample matches the 40.12 ms minimum, so the filter expires 10 s after the last one.
    let mut p = path(10.0, 40.0, 1000, 3);
    p.rtt_step = Some((1_000_000_000, 45_000_000));
    p.run_until(14_000_000_000);
    // The window restarts only on a strictly lower sample (Linux bbr_update_min_rtt).
    let mut running = u64::MAX;
    let mut last_min = 0;
    for r in &p.rows {
        if (r.rtt_us as u64) < running {
            running = r.rtt_us as u64;
            last_min = r.t_ns;
        }
    }
    assert!(running <= 41_200, "samples at the old minimum");
    let enter = p.rows.iter().position(|r| r.label == "PROBE_RTT").expect("PROBE_RTT");
    let exit = enter + p.rows[enter..].iter().position(|r| r.label != "PROBE_RTT").unwrap();
    let (t_in, t_out) = (p.rows[enter].t_ns, p.rows[exit].t_ns);
    let waited_ms = (t_in - last_min) as f64 / 1e6;
    println!("last min at {last_min}, PROBE_RTT {t_in}..{t_out}");
    // Entered on the first ACK more than 10 s (2500 jiffies of 4 ms) after the jiffy of the
    // last min sample: between 10 s and 10 s + one jiffy + one ACK gap (1.2 ms).
    assert!(waited_ms > 10_000.0 && waited_ms < 10_005.3, "waited {waited_ms} ms");
    let cwnd_before = p.rows[enter - 1].cwnd;
    // cwnd capped at 4 packets for the whole mode.
    for r in &p.rows[enter..exit] {
        assert!(r.cwnd <= CWND_MIN_TARGET, "cwnd {} in PROBE_RTT", r.cwnd);
    }
    // Duration: drain to 4 in flight (< 1 RTT at 0.75+ drain), then max(200 ms, 1 round).
    let dur_ms = (t_out - t_in) as f64 / 1e6;
    assert!((200.0..=200.0 + 2.0 * 45.2).contains(&dur_ms), "PROBE_RTT lasted {dur_ms} ms");
    // The expired filter took the new path RTT (45 ms + 1.2 ms serialisation).
    assert_eq!(p.rows[exit].min_rtt_us, Some(46_200));
    // Back to PROBE_BW with the saved cwnd restored.
    assert_eq!(p.rows[exit].label, "PROBE_BW");
    assert!(p.rows[exit].cwnd >= cwnd_before, "cwnd {} < {}", p.rows[exit].cwnd, cwnd_before);
    // While in PROBE_RTT the socket is marked app-limited (samples ignored for bw).
    let bw_before = p.rows[enter - 1].bw_bps.unwrap();
    assert!((p.rows[exit].bw_bps.unwrap() / bw_before - 1.0).abs() < 0.01);
    // Only one PROBE_RTT in this run (the new minimum keeps being matched).
    assert!(p.rows[exit..].iter().all(|r| r.label != "PROBE_RTT"));
}

#[test]
fn random_start_phase_never_drain_and_reproducible() {
    let sk = CcSock::new(1448, 10, 10_000);
    let draw = |seed: u64, n: usize| -> Vec<u32> {
        let mut b = bbr(seed);
        (0..n)
            .map(|_| {
                b.reset_probe_bw_mode(&sk);
                b.cycle_idx
            })
            .collect()
    };
    let mut counts = [0u32; 8];
    for seed in 0..2000 {
        let first = draw(seed, 1)[0];
        counts[first as usize] += 1;
    }
    assert_eq!(counts[1], 0, "the 3/4 phase must never be the start phase");
    for (i, c) in counts.iter().enumerate() {
        if i != 1 {
            // Uniform over the 7 other phases: 2000/7 = 286 each.
            assert!((200..=370).contains(c), "phase {i} drawn {c} times: {counts:?}");
        }
    }
    assert_eq!(draw(42, 50), draw(42, 50));
    assert_ne!(draw(42, 50), draw(43, 50));
    // Through the trait: two runs with the same seed are identical, to the nanosecond.
    let run = |seed: u64| {
        let mut p = path(20.0, 30.0, 500, seed);
        p.run_until(3_000_000_000);
        p.rows.iter().map(|r| (r.t_ns, r.cwnd, r.pacing_rate, r.obs[1])).collect::<Vec<_>>()
    };
    assert_eq!(run(5), run(5));
}

/// A BBR in PROBE_BW (phase 2, gain 1) with bw = 10 packets/ms and min_rtt = 10 ms, i.e.
/// BDP = 100 packets; pacing at 1.0 × bw = 14 335 186 B/s → TSO goal 9 segments, so the
/// 2×BDP cwnd target is 200 + 3 × 9 = 227 → 228 (even).
fn steady() -> (Bbr, CcSock) {
    let mut sk = CcSock::new(1448, 10, 100_000);
    sk.now_ns = 1_000_000_000;
    sk.delivered = 10_000;
    sk.delivered_mstamp_ns = sk.now_ns;
    let mut b = bbr(1);
    b.init(&mut sk);
    b.min_rtt_us = 10_000;
    b.min_rtt_stamp = 1_000;
    b.bw.reset(0, BW_UNIT / 100);
    b.full_bw_reached = true;
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 2;
    b.cycle_mstamp = us(sk.now_ns);
    b.pacing_gain = BBR_UNIT;
    b.cwnd_gain = CWND_GAIN;
    b.next_rtt_delivered = sk.delivered;
    b.ack_epoch_mstamp = us(sk.now_ns);
    sk.pacing_rate = 14_335_186;
    sk.cwnd = 228;
    sk.in_flight = 200;
    (b, sk)
}

/// An ACK of `acked` packets `dt_us` after the previous one, within the current round
/// unless `round_end`. The sample says 100 packets in 10 ms (= the model's bw). Tests space
/// ACKs 101 µs apart, just below the model's rate, so every ACK starts a new aggregation
/// epoch and extra_acked stays at 1 packet (at exactly 100 µs the kernel's truncated bw,
/// 0.0099999 pkt/µs, makes it 2).
fn ack(b: &mut Bbr, sk: &mut CcSock, dt_us: u64, acked: u32, losses: u32, round_end: bool) {
    sk.now_ns += dt_us * 1000;
    sk.delivered += acked as u64;
    sk.delivered_mstamp_ns = sk.now_ns;
    sk.lost += losses as u64;
    let prior_delivered = if round_end { sk.delivered } else { sk.delivered - 100 };
    let rs = RateSample {
        prior_delivered: prior_delivered.min(if round_end { u64::MAX } else { b.next_rtt_delivered.saturating_sub(1) }),
        delivered: 100,
        interval_us: 10_000,
        rtt_us: 10_500,
        losses,
        acked_sacked: acked,
        prior_in_flight: sk.in_flight + acked,
        ..RateSample::default()
    };
    b.cong_control(sk, &rs);
}

#[test]
fn steady_state_cwnd_target_and_pacing() {
    let (mut b, mut sk) = steady();
    assert_eq!(Bbr::tso_segs_goal(&sk), 9);
    assert_eq!(b.bdp(b.bw(), BBR_UNIT), 100);
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.cwnd, 228, "2 × 100 + 3 × 9, rounded up to even");
    assert_eq!(sk.pacing_rate, 14_335_186, "1.0 × bw × 99 %");
    // In the 5/4 phase the budget gets +2 and the pacing rate is 1.25 × bw × 99 %.
    b.cycle_idx = 0;
    b.update_gains();
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.pacing_rate, 17_918_982);
    assert_eq!(sk.cwnd, 229, "cwnd grows by acked toward the target");
    assert_eq!(b.inflight(&sk, b.bw(), CWND_GAIN), 200 + 3 * 12 + 2, "TSO goal is 12 at 1.25×, +2 in phase 0");
}

#[test]
fn recovery_packet_conservation_then_restore() {
    let (mut b, mut sk) = steady();
    // Entering Recovery: ssthresh is left alone and the cwnd is saved.
    sk.ssthresh = 5000;
    assert_eq!(b.ssthresh(&sk), 5000);
    assert_eq!(b.prior_cwnd(), 228);
    sk.ca_state = CaState::Recovery;
    sk.in_flight = 190;
    ack(&mut b, &mut sk, 101, 1, 3, false);
    assert_eq!(sk.cwnd, 191, "first recovery ACK: cwnd = in_flight + acked");
    sk.in_flight = 185;
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.cwnd, 191, "conservation keeps cwnd >= in_flight + acked");
    sk.in_flight = 180;
    ack(&mut b, &mut sk, 101, 1, 5, false);
    assert_eq!(sk.cwnd, 186, "losses come off cwnd: 191 - 5");
    // A round later conservation ends: slow start toward the target (+acked).
    ack(&mut b, &mut sk, 101, 1, 0, true);
    assert_eq!(sk.cwnd, 187);
    // Recovery over: the saved 228 comes back.
    sk.ca_state = CaState::Open;
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.cwnd, 228);
}

#[test]
fn rto_loss_state_then_restore_and_undo() {
    let (mut b, mut sk) = steady();
    assert_eq!(b.ssthresh(&sk), INFINITE_SSTHRESH_FOR_TEST);
    b.full_bw = 777;
    b.set_state(&mut sk, CaState::Loss);
    assert_eq!(b.full_bw, 0);
    assert_eq!(b.prev_ca_state, CaState::Loss);
    sk.ca_state = CaState::Loss;
    sk.cwnd = 1;
    sk.in_flight = 0;
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.cwnd, 4, "slow start from 1, floored at the 4-packet minimum");
    sk.ca_state = CaState::Open;
    ack(&mut b, &mut sk, 101, 1, 0, false);
    assert_eq!(sk.cwnd, 228, "prior cwnd restored on leaving Loss");
    b.full_bw = 99;
    b.full_bw_cnt = 2;
    assert_eq!(b.undo_cwnd(&sk, 50), 228, "undo keeps the current cwnd");
    assert_eq!((b.full_bw, b.full_bw_cnt), (0, 0));
}

const INFINITE_SSTHRESH_FOR_TEST: u32 = crate::cc::INFINITE_SSTHRESH;

#[test]
fn init_pacing_and_idle_restart() {
    let mut sk = CcSock::new(1448, 10, 10_000);
    let mut b = bbr(9);
    b.init(&mut sk);
    assert!(sk.pacing_enabled);
    assert_eq!(sk.ssthresh, crate::cc::INFINITE_SSTHRESH);
    // 2.89 × 10 packets per 1 ms (no RTT sample yet) × 1448 × 99 %.
    assert_eq!(sk.pacing_rate, 41_381_651);
    assert_eq!(b.state_label(), "STARTUP");
    assert_eq!(b.min_rtt_estimate_us(), None);
    assert_eq!(b.bw_estimate_bps(), Some(0.0));
    // With an srtt of 20 ms the first ACK re-derives the initial rate from it.
    sk.srtt_us = 20_000;
    let rs = RateSample { delivered: -1, interval_us: -1, rtt_us: 20_000, ..Default::default() };
    sk.now_ns = 20_000_000;
    b.cong_control(&mut sk, &rs);
    assert!(b.has_seen_rtt);
    // 10 × 2^24 / 20 000 = 8388 (pkts/µs << 24) → 2 068 934 B/s in the kernel's integer units.
    assert_eq!(sk.pacing_rate, 2_068_934);
    assert_eq!(b.min_rtt_estimate_us(), Some(20_000));

    // Idle restart in PROBE_BW: pace at 1.0 × bw even in the 1.25 phase.
    let (mut b, mut sk) = steady();
    b.cycle_idx = 0;
    b.update_gains();
    sk.app_limited = 0;
    b.cwnd_event(&mut sk, CaEvent::TxStart);
    assert!(!b.idle_restart, "not app-limited: no idle restart");
    sk.app_limited = 10_050;
    sk.pacing_rate = 1;
    b.cwnd_event(&mut sk, CaEvent::TxStart);
    assert!(b.idle_restart);
    assert_eq!(sk.pacing_rate, 14_335_186);
    // No PROBE_RTT while restarting from idle, even with an expired filter.
    sk.now_ns += 20_000_000_000;
    let rs =
        RateSample { delivered: 0, interval_us: 10_000, rtt_us: 12_000, is_ack_delayed: true, ..Default::default() };
    b.cong_control(&mut sk, &rs);
    assert_eq!(b.mode, Mode::ProbeBw);
}

#[test]
fn app_limited_samples_only_raise_the_estimate() {
    let (mut b, mut sk) = steady();
    let before = b.max_bw();
    sk.now_ns += 1_000_000;
    let low = RateSample {
        delivered: 10,
        interval_us: 10_000,
        rtt_us: 10_000,
        is_app_limited: true,
        acked_sacked: 1,
        prior_delivered: 0,
        ..Default::default()
    };
    b.cong_control(&mut sk, &low);
    assert_eq!(b.max_bw(), before);
    let high = RateSample { delivered: 150, interval_us: 10_000, ..low };
    b.cong_control(&mut sk, &high);
    assert_eq!(b.max_bw(), 150 * BW_UNIT / 10_000);
    // A low non-app-limited sample does not lower a max set in this window either.
    let low2 = RateSample { is_app_limited: false, ..low };
    b.cong_control(&mut sk, &low2);
    assert_eq!(b.max_bw(), 150 * BW_UNIT / 10_000);
}

#[test]
fn ack_aggregation_allowance_adds_extra_acked() {
    let (mut b, mut sk) = steady();
    // ACKs just below the estimated rate: nothing beyond the ACK itself.
    for _ in 0..50 {
        ack(&mut b, &mut sk, 101, 1, 0, false);
    }
    assert_eq!(b.extra_acked_max(), 1);
    assert_eq!(sk.cwnd, 228);
    // 2 ms of silence, then one stretch ACK for 20 packets: 20 more than expected from a
    // fresh epoch, added to the target: 200 + 20 + 27 = 247 → 248.
    ack(&mut b, &mut sk, 2_000, 20, 0, false);
    assert_eq!(b.extra_acked_max(), 20);
    assert_eq!(b.ack_aggregation_cwnd(), 20);
    assert_eq!(sk.cwnd, 248);
}

#[test]
fn long_term_bw_detects_policer_and_expires() {
    let (mut b, mut sk) = steady();
    // A policer lets 5 packets/ms through (half the model's bw) and drops 1 in 4 sent.
    let policed = BW_UNIT / 200;
    let mut n = 0u64;
    let mut step = |b: &mut Bbr, sk: &mut CcSock, lossy: bool| {
        n += 1;
        let losses = if lossy && n.is_multiple_of(3) { 1 } else { 0 };
        let round_end = n.is_multiple_of(50);
        ack(b, sk, 200, 1, losses, round_end);
    };
    for _ in 0..50 * 12 {
        step(&mut b, &mut sk, true);
        if b.lt_use_bw() {
            break;
        }
    }
    assert!(b.lt_use_bw(), "policer not detected");
    let err = (b.lt_bw() as f64 / policed as f64 - 1.0).abs();
    assert!(err < 0.05, "lt_bw {} vs {}", b.lt_bw(), policed);
    assert_eq!(b.bw(), b.lt_bw());
    // In lt mode the pacing gain is 1 whatever the phase, at the policed rate.
    b.cycle_idx = 0;
    ack(&mut b, &mut sk, 200, 1, 0, false);
    assert_eq!(b.pacing_gain, BBR_UNIT);
    let expect = Bbr::rate_bytes_per_sec(&sk, b.lt_bw(), BBR_UNIT);
    assert_eq!(sk.pacing_rate, expect);
    assert!((sk.pacing_rate as f64 / (5_000.0 * 1448.0 * 0.99) - 1.0).abs() < 0.05);
    // Used for 48 rounds, then dropped and gain cycling restarts.
    for _ in 0..50 * 46 {
        step(&mut b, &mut sk, false);
    }
    assert!(b.lt_use_bw(), "still policed after 46 rounds");
    for _ in 0..50 * 3 {
        step(&mut b, &mut sk, false);
    }
    assert!(!b.lt_use_bw(), "lt_bw must expire after 48 rounds");
    assert_eq!(b.bw(), b.max_bw());
}

#[test]
fn low_loss_is_not_a_policer() {
    let (mut b, mut sk) = steady();
    for n in 1..=50 * 20u64 {
        let losses = if n % 10 == 0 { 1 } else { 0 }; // 10 % < 50/256
        ack(&mut b, &mut sk, 200, 1, losses, n % 50 == 0);
    }
    assert!(!b.lt_use_bw());
}

#[test]
fn probe_rtt_every_10s_with_handshake_min_rtt() {
    // As on Linux, the min RTT starts from the handshake sample (50 ms + a 60-byte SYN's
    // serialisation); full-size data packets, 0.24 ms at 50 Mbit/s, can never match it,
    // so the first PROBE_RTT comes exactly 10 s after init. PROBE_RTT then takes the data
    // RTT of an empty queue (50.24 ms) as the new minimum; on this jitter-free path
    // PROBE_BW's cruise phases (pacing at 0.99 × bw) drain the queue to exactly zero and
    // re-measure that minimum, so later episodes only come when 10 s pass without that.
    let mut p = path(50.0, 50.0, 420, 4).with_handshake();
    assert_eq!(p.sk.pacing_rate, Bbr::rate_bytes_per_sec(&p.sk, 10 * BW_UNIT / 50_009, HIGH_GAIN));
    p.run_until(31_000_000_000);
    let mut eps: Vec<(f64, f64, u32)> = Vec::new(); // (start s, duration s, max cwnd)
    let mut last = "";
    for r in &p.rows {
        if r.label == "PROBE_RTT" {
            if last != "PROBE_RTT" {
                eps.push((r.t_ns as f64 / 1e9, 0.0, 0));
            }
            let e = eps.last_mut().unwrap();
            e.1 = r.t_ns as f64 / 1e9 - e.0;
            e.2 = e.2.max(r.cwnd);
        }
        last = r.label;
    }
    println!("PROBE_RTT episodes (start, duration, max cwnd): {eps:?}");
    assert!(!eps.is_empty());
    assert!((eps[0].0 - 10.0).abs() < 0.01, "first at {}", eps[0].0);
    for w in eps.windows(2) {
        // Never sooner than 10 s after the previous one ended (min_rtt_stamp reset on exit).
        let gap = w[1].0 - (w[0].0 + w[0].1);
        assert!(gap >= 10.0, "gap {gap}");
    }
    assert_eq!(p.cc.min_rtt_us, 50_240, "data-packet RTT of an empty queue");
    for e in &eps {
        assert!(e.1 >= 0.2 && e.1 <= 0.2 + 2.0 * 0.0503, "duration {}", e.1);
        assert!(e.2 <= 4, "cwnd {} in PROBE_RTT", e.2);
    }
}
