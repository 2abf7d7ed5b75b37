//! TCP over the Wi-Fi hop: the simulator with `bottleneck.wifi`, on the default 802.11n link (MCS 15, 20 MHz, 130 Mbit/s PHY). Each test
//! prints what it measured (`--nocapture`).
use ccbench_queue::{DropTail, Limit, Qdisc};
use ccbench_sim::config::{BottleneckConfig, BufferConfig, FlowConfig};
use ccbench_sim::{SimConfig, SimReport};
use ccbench_wifi::{Dir, Medium, WifiConfig};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
/// IP bytes per full-size segment / payload bytes (MSS 1448 with timestamps).
const IP_PER_PAYLOAD: f64 = 1500.0 / 1448.0;

/// The seed-000 path on the default Wi-Fi link: 2 ms wired RTT, a 1000-packet drop-tail qdisc
/// in front of each station's driver queue, `n` flows of `cc`, ping every 100 ms.
fn wifi_cfg(cc: &str, n: u32, secs: u64) -> SimConfig {
    let w = WifiConfig::default();
    let mut b = BottleneckConfig::droptail(ccbench_wifi::phy_rate_bps(&w), 2 * MS, 1.0);
    b.buffer = BufferConfig::Packets(1000);
    b.wifi = Some(w);
    let flows = (0..n).map(|i| FlowConfig::bulk(i, cc, 6 << 20)).collect();
    let mut c = SimConfig::new("wifi", secs * S, b, flows);
    c.probe.ping_interval_ns = 100 * MS;
    c
}

fn run(c: &SimConfig) -> SimReport {
    ccbench_sim::run(c).unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn total_goodput(r: &SimReport) -> f64 {
    r.flows.iter().map(|f| f.goodput_bps).sum()
}

/// IP bytes/s the medium delivers one way with the sender-side station always backlogged
/// with 1500-byte packets and nothing sent the other way: the "one-way value".
fn one_way_ip_rate(cfg: &WifiConfig, secs: u64) -> f64 {
    let q = |n| Box::new(DropTail::new(Limit::Packets(n))) as Box<dyn Qdisc>;
    let mut m = Medium::new(cfg, [q(10_000), q(10)], 1);
    let mut out = Vec::new();
    let (mut id, mut now) = (0u64, 0u64);
    let end = secs * S;
    // Warm-up of 0.5 s excluded: count what is released after it.
    let (warm, mut bytes) = (S / 2, 0u64);
    while now < end {
        while m.backlog(Dir::Fwd).packets < 2_000 {
            m.enqueue(now, Dir::Fwd, ccbench_queue::Pkt::new(id, 1500, 1));
            id += 1;
        }
        now = m.next_event().expect("backlogged medium has an event").max(now);
        m.advance(now, &mut out);
        bytes += out.drain(..).filter(|d| d.at >= warm).map(|d| d.pkt.len as u64).sum::<u64>();
    }
    bytes as f64 * 8.0 / ((end - warm) as f64 / 1e9)
}

/// The reverse station's ACKs cost the data their airtime: one CUBIC flow's goodput (as IP
/// bytes) falls short of the one-way value by the share of the run the ACK station's
/// transmissions took, plus the data airtime the ACK station's transmissions destroyed by
/// colliding with data aggregates (a collision is the two stations' backoff ending in the
/// same slot; without the ACKs there would be none: the one-way run has no collisions).
/// Bound: within 3 percentage points (what is left: the ACK station's AIFS and backoff the
/// data station waits out, CUBIC's loss recoveries at the 1000-packet qdisc; the link is
/// never idle because the qdisc holds hundreds of packets).
#[test]
fn ack_airtime_lowers_cubic_goodput_below_the_one_way_value() {
    let w = WifiConfig::default();
    let one_way = one_way_ip_rate(&w, 6);
    let r = run(&wifi_cfg("cubic", 1, 20));
    let ws = r.run.wifi.as_ref().expect("wifi columns");
    let tcp_ip = r.flows[0].goodput_bps * IP_PER_PAYLOAD;
    let shortfall = 1.0 - tcp_ip / one_way;
    // A collided data transmission takes, on average, the data station's mean airtime per TXOP.
    let collided = ws.wifi_collisions as f64 * ws.wifi_airtime_fwd / ws.wifi_txops_fwd as f64;
    let ack_cost = ws.wifi_airtime_rev + collided;
    println!(
        "one-way {:.1} Mbit/s, CUBIC {:.1} Mbit/s IP, shortfall {:.3}; ACK airtime {:.3} + collided data \
         airtime {:.3} = {:.3} ({} collisions in {} data TXOPs); data airtime {:.3}",
        one_way / 1e6,
        tcp_ip / 1e6,
        shortfall,
        ws.wifi_airtime_rev,
        collided,
        ack_cost,
        ws.wifi_collisions,
        ws.wifi_txops_fwd,
        ws.wifi_airtime_fwd,
    );
    assert!(ws.wifi_airtime_rev > 0.01, "the ACKs take airtime: {}", ws.wifi_airtime_rev);
    assert!(tcp_ip < one_way, "TCP with ACKs ({tcp_ip}) must fall below the one-way value ({one_way})");
    assert!((shortfall - ack_cost).abs() <= 0.03, "shortfall {shortfall:.3} vs the ACKs' cost {ack_cost:.3}");
}

/// Seed 000 on the default link: one Vegas flow keeps a few packets queued, so its aggregates
/// are small and the per-transmission overhead eats its airtime; CUBIC fills the queue and
/// sends full aggregates. One Vegas flow gets markedly less (at most 75 % of CUBIC), ten Vegas
/// flows more than one (more packets queued, larger aggregates), and CUBIC's ping p50 is
/// several (≥ 3) times Vegas's.
#[test]
fn vegas_small_aggregates_lose_to_cubic_ten_vegas_beat_one() {
    let cubic = run(&wifi_cfg("cubic", 1, 20));
    let vegas = run(&wifi_cfg("vegas", 1, 20));
    let vegas10 = run(&wifi_cfg("vegas", 10, 20));
    let line = |name: &str, r: &SimReport| {
        let w = r.run.wifi.as_ref().unwrap();
        println!(
            "{name}: {:.1} Mbit/s, ping p50 {:.1} ms, A-MPDU fwd mean {:.1} p50 {:?} p90 {:?}, rev mean {:.1}, airtime fwd {:.2} rev {:.2}",
            total_goodput(r) / 1e6,
            r.run.probe_rtt_p50_ms.unwrap(),
            w.wifi_ampdu_mean_fwd.unwrap(),
            w.wifi_ampdu_p50_fwd,
            w.wifi_ampdu_p90_fwd,
            w.wifi_ampdu_mean_rev.unwrap_or(0.0),
            w.wifi_airtime_fwd,
            w.wifi_airtime_rev
        );
    };
    line("1 cubic", &cubic);
    line("1 vegas", &vegas);
    line("10 vegas", &vegas10);
    let (gc, gv, gv10) = (total_goodput(&cubic), total_goodput(&vegas), total_goodput(&vegas10));
    let agg = |r: &SimReport| r.run.wifi.as_ref().unwrap().wifi_ampdu_mean_fwd.unwrap();
    assert!(agg(&vegas) < 0.5 * agg(&cubic), "Vegas's aggregates are smaller: {} vs {}", agg(&vegas), agg(&cubic));
    assert!(gv <= 0.75 * gc, "one Vegas {gv} vs one CUBIC {gc}");
    assert!(gv10 > 1.1 * gv, "ten Vegas {gv10} vs one {gv}");
    assert!(agg(&vegas10) > agg(&vegas), "ten Vegas flows queue more: {} vs {}", agg(&vegas10), agg(&vegas));
    let (pc, pv) = (cubic.run.probe_rtt_p50_ms.unwrap(), vegas.run.probe_rtt_p50_ms.unwrap());
    assert!(pc >= 3.0 * pv, "CUBIC ping p50 {pc} ms vs Vegas {pv} ms");
}

/// Every packet is accounted for: per link, arrived = departed + dropped + held (the hop's
/// packets count as held by the link they will leave on), and per flow, sent = received +
/// dropped + in the network, with frame errors that exhaust the retry limit (losses of the
/// link) and a deep qdisc.
#[test]
fn wifi_hop_conserves_packets_with_retry_drops() {
    let mut c = wifi_cfg("cubic", 2, 5);
    let w = c.bottleneck.wifi.as_mut().unwrap();
    w.mpdu_error = 0.5;
    w.retry_limit = 2;
    let r = run(&c);
    let ws = r.run.wifi.as_ref().unwrap();
    println!("retry drops {}, retried {}", ws.wifi_retry_drops, ws.wifi_mpdus_retried);
    assert!(ws.wifi_retry_drops > 0, "0.5^3 of the MPDUs exhaust 2 retries");
    let link_losses: u64 = r.links.iter().map(|l| l.dropped_loss).sum();
    assert_eq!(link_losses, ws.wifi_retry_drops + r.run.random_losses);
    assert_eq!(r.run.random_losses, 0, "no loss model configured");
    for l in &r.links {
        assert_eq!(l.arrived, l.departed + l.dropped_queue + l.dropped_loss + l.held, "link {}", l.name);
    }
    for f in &r.flows {
        assert!(f.retransmits > 0, "flow {} saw the hop's losses", f.flow_id);
        assert_eq!(f.data_sent, f.data_received + f.data_dropped + f.data_in_network, "flow {}", f.flow_id);
    }
}

/// The same Wi-Fi scenario twice gives the same report; another seed a different one.
#[test]
fn wifi_runs_are_deterministic() {
    let c = wifi_cfg("cubic", 2, 3);
    let a = serde_json::to_string(&run(&c)).unwrap();
    let b = serde_json::to_string(&run(&c)).unwrap();
    assert_eq!(a, b);
    let mut c2 = c.clone();
    c2.seed = 2;
    assert_ne!(a, serde_json::to_string(&run(&c2)).unwrap());
}
