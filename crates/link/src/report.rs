//! The JSON report printed on stdout at the end of a run: per direction the path's counters,
//! the queue discipline's statistics, how late packets left, the queue samples and the
//! thread's CPU use; with a Wi-Fi hop also the medium's statistics (`wifi`). The kernel backend
//! reads it (python/ccbench/backends/kernel/). Every type here derives `Serialize`; the tests check the
//! JSON against the same report written out key by key with `json!`.
use crate::access::AccessJson;
use crate::config::DirConfig;
use crate::path::Counters;
use crate::port_losses::PortLosses;
use crate::stats::Lateness;
use crate::wifi::WifiPath;
use ccbench_queue::QueueStats;
use ccbench_wifi::{Dir, MediumStats};
use serde::Serialize;

/// What one direction's forwarding thread hands back.
pub struct DirReport {
    pub cfg: DirConfig,
    /// What the path model counted (the model itself stays in its thread: a queue discipline
    /// is a `Box<dyn Qdisc>`, not `Send`).
    pub counters: Counters,
    pub queue: QueueStats,
    pub bytes_served: u64,
    pub late: Lateness,
    /// (t since the start, backlog bytes, departed bytes) at each sample instant.
    pub samples: Vec<(u64, u64, u64)>,
    /// Packets still in the queue or the delay line at the end.
    pub held: usize,
    pub read_errors: u64,
    pub oversize: u64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub rt: bool,
    pub forced_rests: u64,
    pub spin_s: f64,
    pub gso_super: u64,
    pub gso_errors: u64,
    pub per_port: PortLosses,
    /// The hosts' access links around this direction (None: no access rate).
    pub access: Option<AccessJson>,
}

#[derive(Serialize)]
pub struct RunReport<'a> {
    pub clock_monotonic_start_ns: u64,
    pub duration_s: f64,
    pub sample_interval_ns: u64,
    pub spin_us: u64,
    pub directions: [DirJson<'a>; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiJson>,
}

impl RunReport<'_> {
    /// One line of JSON. Through `serde_json::Value`, whose maps keep their keys sorted (no
    /// `preserve_order`), so the keys come out in the same order whatever the field order.
    pub fn to_json_line(&self) -> String {
        serde_json::to_value(self).expect("the report serialises").to_string()
    }
}

#[derive(Serialize)]
pub struct DirJson<'a> {
    name: &'static str,
    aqm: &'a str,
    rate_bps: u64,
    delay_ns: u64,
    jitter_ns: u64,
    packets_in: u64,
    bytes_in: u64,
    packets_out: u64,
    bytes_out: u64,
    /// Every queue drop: over a limit, and the discipline's own (CoDel, PIE, RED; FQ-CoDel's
    /// drops from the fattest flow count as over the limit, as Linux counts them).
    dropped: u64,
    dropped_overlimit: u64,
    dropped_aqm: u64,
    ce_marked: u64,
    bytes_served: u64,
    lost: u64,
    held_at_end: usize,
    write_errors: u64,
    read_errors: u64,
    oversize: u64,
    max_backlog_bytes: u64,
    max_backlog_packets: u64,
    lateness_us: LatenessJson,
    queue_samples: QueueSamples,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    realtime: bool,
    forced_rests: u64,
    spin_s: f64,
    gso_super_packets: u64,
    gso_errors: u64,
    /// Source port → [dropped, lost].
    tcp_sport_dropped_lost: &'a PortLosses,
    /// The access links' packets, drops and largest backlog (null without an access rate).
    access: Option<&'a AccessJson>,
}

/// How late packets left their delay line, in µs.
#[derive(Serialize)]
struct LatenessJson {
    count: u64,
    mean: Option<f64>,
    p50: Option<f64>,
    p99: Option<f64>,
    p999: Option<f64>,
    max: Option<f64>,
    frac_over_1ms: Option<f64>,
}

#[derive(Serialize)]
struct QueueSamples {
    t_ns: Vec<u64>,
    bytes: Vec<u64>,
    departed_bytes: Vec<u64>,
}

impl DirReport {
    pub fn json(&self) -> DirJson<'_> {
        let c = &self.counters;
        let q = &self.queue;
        let late = &self.late;
        DirJson {
            name: self.cfg.name,
            aqm: &self.cfg.aqm,
            rate_bps: self.cfg.rate_bps,
            delay_ns: self.cfg.delay_ns,
            jitter_ns: self.cfg.jitter_ns,
            packets_in: c.packets_in,
            bytes_in: c.bytes_in,
            packets_out: c.packets_out,
            bytes_out: c.bytes_out,
            dropped: q.drops(),
            dropped_overlimit: q.drops_overlimit,
            dropped_aqm: q.drops_aqm,
            ce_marked: c.ce_marked,
            bytes_served: self.bytes_served,
            lost: c.lost,
            held_at_end: self.held,
            write_errors: c.write_errors,
            read_errors: self.read_errors,
            oversize: self.oversize,
            max_backlog_bytes: q.max_backlog_bytes,
            max_backlog_packets: q.max_backlog_packets,
            lateness_us: LatenessJson {
                count: late.count,
                mean: late.mean_us(),
                p50: late.percentile_us(50.0),
                p99: late.percentile_us(99.0),
                p999: late.percentile_us(99.9),
                max: (late.count > 0).then(|| late.max_ns as f64 / 1000.0),
                frac_over_1ms: late.frac_over_us(1000),
            },
            queue_samples: QueueSamples {
                t_ns: self.samples.iter().map(|s| s.0).collect(),
                bytes: self.samples.iter().map(|s| s.1).collect(),
                departed_bytes: self.samples.iter().map(|s| s.2).collect(),
            },
            cpu_user_s: self.cpu_user_s,
            cpu_sys_s: self.cpu_sys_s,
            realtime: self.rt,
            forced_rests: self.forced_rests,
            spin_s: self.spin_s,
            gso_super_packets: self.gso_super,
            gso_errors: self.gso_errors,
            tcp_sport_dropped_lost: &self.per_port,
            access: self.access.as_ref(),
        }
    }
}

/// The medium's statistics (the `wifi` object): per direction (data = the sender-side station,
/// ack = the receiver-side one) transmit opportunities, MPDUs sent / retried / dropped after
/// the retry limit / delivered, airtime, the A-MPDU size histogram and its mean, median and
/// 90th percentile; collisions; the PHY rate at the end. `samples`: the cumulative counters at
/// each sample instant (`t_ns` since the start), per direction and for collisions.
#[derive(Serialize)]
pub struct WifiJson {
    phy_rate_bps: u64,
    collisions: u64,
    directions: Vec<WifiDirJson>,
    samples: WifiSamples,
}

#[derive(Serialize)]
struct WifiDirJson {
    name: &'static str,
    txops: u64,
    mpdus_sent: u64,
    mpdus_retried: u64,
    mpdus_dropped: u64,
    mpdus_delivered: u64,
    bytes_delivered: u64,
    airtime_ns: u64,
    ampdu_hist: Vec<u64>,
    ampdu_mean: f64,
    ampdu_p50: u32,
    ampdu_p90: u32,
    retry_dropped: u64,
    samples: WifiDirSamples,
}

#[derive(Serialize)]
struct WifiDirSamples {
    txops: Vec<u64>,
    airtime_ns: Vec<u64>,
    mpdus_retried: Vec<u64>,
    mpdus_dropped: Vec<u64>,
    ampdu_hist: Vec<Vec<u64>>,
}

#[derive(Serialize)]
struct WifiSamples {
    t_ns: Vec<u64>,
    collisions: Vec<u64>,
}

impl WifiJson {
    /// From the medium at the end (`now`) and its counters at each sample instant.
    pub fn new(path: &WifiPath, now: u64, samples: &[(u64, MediumStats)]) -> Self {
        let st = path.stats();
        let directions = Dir::BOTH
            .iter()
            .zip(["data", "ack"])
            .map(|(&dir, name)| {
                let d = dir as usize;
                let s = &st.dir[d];
                let each = |f: fn(&MediumStats, usize) -> u64| samples.iter().map(|(_, m)| f(m, d)).collect();
                WifiDirJson {
                    name,
                    txops: s.txops,
                    mpdus_sent: s.mpdus_sent,
                    mpdus_retried: s.mpdus_retried,
                    mpdus_dropped: s.mpdus_dropped,
                    mpdus_delivered: s.mpdus_delivered,
                    bytes_delivered: s.bytes_delivered,
                    airtime_ns: s.airtime_ns,
                    ampdu_hist: s.ampdu_hist.to_vec(),
                    ampdu_mean: s.mean_ampdu(),
                    ampdu_p50: s.ampdu_quantile(0.5),
                    ampdu_p90: s.ampdu_quantile(0.9),
                    retry_dropped: path.retry_dropped[d],
                    samples: WifiDirSamples {
                        txops: each(|m, d| m.dir[d].txops),
                        airtime_ns: each(|m, d| m.dir[d].airtime_ns),
                        mpdus_retried: each(|m, d| m.dir[d].mpdus_retried),
                        mpdus_dropped: each(|m, d| m.dir[d].mpdus_dropped),
                        ampdu_hist: samples.iter().map(|(_, m)| m.dir[d].ampdu_hist.to_vec()).collect(),
                    },
                }
            })
            .collect();
        WifiJson {
            phy_rate_bps: path.phy_rate_bps(now),
            collisions: st.collisions,
            directions,
            samples: WifiSamples {
                t_ns: samples.iter().map(|s| s.0).collect(),
                collisions: samples.iter().map(|(_, m)| m.collisions).collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;
    use serde_json::json;

    /// The report written out key by key with `json!`:
    /// the reference the derived JSON must equal, key for key and value for value.
    fn dir_json_by_hand(r: &DirReport) -> serde_json::Value {
        let c = &r.counters;
        let q = &r.queue;
        json!({
            "name": r.cfg.name, "aqm": r.cfg.aqm, "rate_bps": r.cfg.rate_bps,
            "delay_ns": r.cfg.delay_ns, "jitter_ns": r.cfg.jitter_ns,
            "packets_in": c.packets_in, "bytes_in": c.bytes_in,
            "packets_out": c.packets_out, "bytes_out": c.bytes_out,
            "dropped": q.drops(), "dropped_overlimit": q.drops_overlimit, "dropped_aqm": q.drops_aqm,
            "ce_marked": c.ce_marked, "bytes_served": r.bytes_served, "lost": c.lost,
            "held_at_end": r.held, "write_errors": c.write_errors, "read_errors": r.read_errors,
            "oversize": r.oversize, "max_backlog_bytes": q.max_backlog_bytes,
            "max_backlog_packets": q.max_backlog_packets,
            "lateness_us": {
                "count": r.late.count, "mean": r.late.mean_us(),
                "p50": r.late.percentile_us(50.0), "p99": r.late.percentile_us(99.0),
                "p999": r.late.percentile_us(99.9),
                "max": if r.late.count > 0 { Some(r.late.max_ns as f64 / 1000.0) } else { None },
                "frac_over_1ms": r.late.frac_over_us(1000),
            },
            "queue_samples": {
                "t_ns": r.samples.iter().map(|s| s.0).collect::<Vec<_>>(),
                "bytes": r.samples.iter().map(|s| s.1).collect::<Vec<_>>(),
                "departed_bytes": r.samples.iter().map(|s| s.2).collect::<Vec<_>>(),
            },
            "cpu_user_s": r.cpu_user_s, "cpu_sys_s": r.cpu_sys_s, "realtime": r.rt,
            "forced_rests": r.forced_rests, "spin_s": r.spin_s,
            "gso_super_packets": r.gso_super, "gso_errors": r.gso_errors,
            "tcp_sport_dropped_lost": r.per_port.iter().map(|(k, v)| (k.to_string(), json!([v.0, v.1])))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
            "access": r.access.as_ref().map(|a| serde_json::to_value(a).unwrap()),
        })
    }

    fn report(late_ns: &[u64]) -> DirReport {
        let cfg =
            LinkConfig::from_json(r#"{"rate_bps":20000000,"rtt_ns":40000000,"buffer":{"packets":10},"aqm":"codel"}"#)
                .unwrap();
        let [d, _] = cfg.directions();
        let mut late = Lateness::new();
        for &ns in late_ns {
            late.add(ns);
        }
        let counters = Counters {
            packets_in: 9,
            bytes_in: 13_500,
            packets_out: 7,
            bytes_out: 10_500,
            lost: 1,
            ce_marked: 2,
            write_errors: 3,
        };
        let queue = QueueStats {
            drops_overlimit: 4,
            drops_aqm: 5,
            max_backlog_bytes: 6000,
            max_backlog_packets: 4,
            ..QueueStats::default()
        };
        DirReport {
            cfg: d,
            counters,
            queue,
            bytes_served: 12_000,
            late,
            samples: vec![(0, 0, 0), (100, 3000, 1500)],
            held: 2,
            read_errors: 1,
            oversize: 0,
            cpu_user_s: 0.25,
            cpu_sys_s: 0.5,
            rt: true,
            forced_rests: 3,
            spin_s: 0.125,
            gso_super: 0,
            gso_errors: 0,
            per_port: [(5201, (1, 2)), (443, (0, 1))].into_iter().collect(),
            access: None,
        }
    }

    #[test]
    fn derived_json_equals_the_hand_written_report() {
        for late in [&[][..], &[1_500, 20_000, 999_999, 2_000_000][..]] {
            let r = report(late);
            assert_eq!(serde_json::to_value(r.json()).unwrap(), dir_json_by_hand(&r));
        }
        let (a, b) = (report(&[]), report(&[7_000]));
        let run = RunReport {
            clock_monotonic_start_ns: 5,
            duration_s: 1.5,
            sample_interval_ns: 100,
            spin_us: 40,
            directions: [a.json(), b.json()],
            wifi: None,
        };
        let by_hand = json!({
            "clock_monotonic_start_ns": 5, "duration_s": 1.5, "sample_interval_ns": 100, "spin_us": 40,
            "directions": [dir_json_by_hand(&a), dir_json_by_hand(&b)],
        });
        assert_eq!(run.to_json_line(), by_hand.to_string());
    }

    /// The `wifi` object written out key by key with `json!`: the reference `WifiJson` must equal.
    fn medium_json_by_hand(path: &WifiPath, now: u64, samples: &[(u64, MediumStats)]) -> serde_json::Value {
        let st = path.stats();
        let dirs: Vec<serde_json::Value> = Dir::BOTH
            .iter()
            .zip(["data", "ack"])
            .map(|(&dir, name)| {
                let s = &st.dir[dir as usize];
                json!({
                    "name": name,
                    "txops": s.txops,
                    "mpdus_sent": s.mpdus_sent,
                    "mpdus_retried": s.mpdus_retried,
                    "mpdus_dropped": s.mpdus_dropped,
                    "mpdus_delivered": s.mpdus_delivered,
                    "bytes_delivered": s.bytes_delivered,
                    "airtime_ns": s.airtime_ns,
                    "ampdu_hist": s.ampdu_hist.to_vec(),
                    "ampdu_mean": s.mean_ampdu(),
                    "ampdu_p50": s.ampdu_quantile(0.5),
                    "ampdu_p90": s.ampdu_quantile(0.9),
                    "retry_dropped": path.retry_dropped[dir as usize],
                    "samples": {
                        "txops": samples.iter().map(|(_, m)| m.dir[dir as usize].txops).collect::<Vec<_>>(),
                        "airtime_ns": samples.iter().map(|(_, m)| m.dir[dir as usize].airtime_ns).collect::<Vec<_>>(),
                        "mpdus_retried": samples.iter().map(|(_, m)| m.dir[dir as usize].mpdus_retried).collect::<Vec<_>>(),
                        "mpdus_dropped": samples.iter().map(|(_, m)| m.dir[dir as usize].mpdus_dropped).collect::<Vec<_>>(),
                        "ampdu_hist": samples.iter().map(|(_, m)| m.dir[dir as usize].ampdu_hist.to_vec()).collect::<Vec<_>>(),
                    },
                })
            })
            .collect();
        json!({
            "phy_rate_bps": path.phy_rate_bps(now),
            "collisions": st.collisions,
            "directions": dirs,
            "samples": {
                "t_ns": samples.iter().map(|s| s.0).collect::<Vec<_>>(),
                "collisions": samples.iter().map(|(_, m)| m.collisions).collect::<Vec<_>>(),
            },
        })
    }

    #[test]
    fn derived_wifi_json_equals_the_hand_written_one() {
        let cfg = LinkConfig::from_json(
            r#"{"rate_bps":20000000,"rtt_ns":40000000,"buffer":{"packets":10},"aqm":"droptail","wifi":{}}"#,
        )
        .unwrap();
        let path = WifiPath::new(cfg.wifi().unwrap(), &cfg.directions(), 0);
        let mut m = MediumStats { collisions: 2, ..MediumStats::default() };
        m.dir[0].txops = 5;
        m.dir[0].airtime_ns = 123_456;
        m.dir[1].mpdus_retried = 3;
        m.dir[1].mpdus_dropped = 1;
        m.dir[0].ampdu_hist[4] = 2;
        let samples = [(0, MediumStats::default()), (100_000_000, m)];
        let derived = serde_json::to_value(WifiJson::new(&path, 50, &samples)).unwrap();
        assert_eq!(derived, medium_json_by_hand(&path, 50, &samples));
        let r = report(&[]);
        let run = RunReport {
            clock_monotonic_start_ns: 0,
            duration_s: 0.5,
            sample_interval_ns: 100_000_000,
            spin_us: 40,
            directions: [r.json(), r.json()],
            wifi: Some(WifiJson::new(&path, 50, &samples)),
        };
        let line: serde_json::Value = serde_json::from_str(&run.to_json_line()).unwrap();
        assert_eq!(line["wifi"], medium_json_by_hand(&path, 50, &samples));
    }
}
