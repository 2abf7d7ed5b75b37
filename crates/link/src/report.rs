//! The JSON report printed on stdout at the end of a run: per direction the path's counters,
//! the queue discipline's statistics, how late packets left, the queue samples and the
//! thread's CPU use; with a Wi-Fi hop also the medium's statistics (`wifi`, wifi_loop.rs). The
//! kernel backend reads it (python/ccbench/kernel/).
use crate::config::DirConfig;
use crate::path::Counters;
use crate::port_losses::PortLosses;
use crate::stats::Lateness;
use ccbench_queue::QueueStats;
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
}

#[derive(Serialize)]
pub struct RunReport<'a> {
    pub clock_monotonic_start_ns: u64,
    pub duration_s: f64,
    pub sample_interval_ns: u64,
    pub spin_us: u64,
    pub directions: [DirJson<'a>; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wifi: Option<serde_json::Value>,
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;
    use serde_json::json;

    /// The report as main.rs wrote it by hand before the report types derived `Serialize`:
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
        let with_wifi = RunReport { wifi: Some(json!({"collisions": 3})), ..run };
        assert!(with_wifi.to_json_line().ends_with(r#""wifi":{"collisions":3}}"#));
    }
}
