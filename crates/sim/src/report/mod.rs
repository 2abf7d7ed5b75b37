//! What a run returns: per-flow summaries, the run summary, the sampled time series and the
//! packet-conservation counters. Serialised to JSON for Python; column names follow the
//! `flows` / `runs` / `series` / `link_series` tables of docs/results.md. A value the simulator
//! cannot measure is `null`, never invented.
use crate::tcp::mib::CounterRow;
use serde::Serialize;

mod assemble;

#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    pub flows: Vec<FlowSummary>,
    pub run: RunSummary,
    pub series: Series,
    pub link_series: LinkSeries,
    /// Packet counters of each link (conservation: arrived = departed + dropped + held).
    pub links: Vec<LinkCounters>,
    /// The `counters` table: TCP MIB counters per side, summed over flows (tcp/mib.rs).
    pub counters: Vec<CounterRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub flow_id: u32,
    pub group: u32,
    pub cc: String,
    /// Bytes delivered in order to the receiving application / (end - start), in bit/s.
    pub goodput_bps: f64,
    /// Bytes cumulatively acknowledged at the sender.
    pub bytes_acked: u64,
    /// Segments retransmitted (Linux `tcpi_total_retrans`).
    pub retransmits: u64,
    /// Congestion events: entries into Recovery or Loss (one per window, like a cwnd cut).
    pub loss_events: u64,
    pub rtt_min_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    /// Time-average of cwnd in packets over the flow's lifetime.
    pub cwnd_mean: f64,
    pub start_s: f64,
    pub end_s: f64,
    /// Flow completion time for fixed-size transfers (None for bulk or unfinished).
    pub fct_s: Option<f64>,
    pub completed: bool,
    /// Conservation counters for this flow's data segments.
    pub data_sent: u64,
    pub data_received: u64,
    pub data_dropped: u64,
    pub data_in_network: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// IP bytes sent on the bottleneck / (rate × duration).
    pub link_utilisation: f64,
    /// Packets dropped at the bottleneck queue (buffer overflow).
    pub drops: u64,
    /// ECN-capable packets an AQM marked CE instead of dropping (both directions).
    pub ce_marked: u64,
    /// Packets removed by the random loss model (both directions).
    pub random_losses: u64,
    pub aggregate_goodput_bps: f64,
    pub probe_rtt_p50_ms: Option<f64>,
    pub probe_rtt_p95_ms: Option<f64>,
    pub probe_rtt_p99_ms: Option<f64>,
    /// Time packets waited in the forward bottleneck's queue, from arrival to the start of
    /// their transmission (link/sojourn.rs): percentiles over every packet sent; null if none.
    pub sojourn_p50_ms: Option<f64>,
    pub sojourn_p95_ms: Option<f64>,
    pub sojourn_p99_ms: Option<f64>,
    /// The bottleneck's queue discipline and every parameter it ran with (defaults filled in;
    /// `ccbench_queue::aqm::resolved`). Drop-tail has none: its limit is the buffer.
    pub aqm: String,
    pub aqm_params: ccbench_queue::AqmParams,
    pub duration_s: f64,
    /// Simulator work done, for benchmarks.
    pub events: u64,
    pub data_packets: u64,
    /// The Wi-Fi hop's counters (`wifi_*` columns); absent on a wire, so wire reports are
    /// unchanged (Python fills the columns with null).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiSummary>,
}

/// What the Wi-Fi hop did over the run (docs/results.md, `runs`). `fwd` = the sender-side
/// station (forward data), `rev` = the receiver-side station (the forward flows' ACKs).
#[derive(Debug, Clone, Serialize)]
pub struct WifiSummary {
    /// MPDUs per transmission (A-MPDU size; 1 without aggregation): mean, median, 90th
    /// percentile; null when the station never transmitted.
    pub wifi_ampdu_mean_fwd: Option<f64>,
    pub wifi_ampdu_p50_fwd: Option<f64>,
    pub wifi_ampdu_p90_fwd: Option<f64>,
    pub wifi_ampdu_mean_rev: Option<f64>,
    pub wifi_ampdu_p50_rev: Option<f64>,
    pub wifi_ampdu_p90_rev: Option<f64>,
    /// Transmit opportunities won by each station.
    pub wifi_txops_fwd: u64,
    pub wifi_txops_rev: u64,
    /// Fraction of the run's duration the station's transmissions (PPDU + block-ack) took.
    pub wifi_airtime_fwd: f64,
    pub wifi_airtime_rev: f64,
    /// Transmit opportunities in which both stations transmitted at once.
    pub wifi_collisions: u64,
    /// MPDU retransmissions, both stations.
    pub wifi_mpdus_retried: u64,
    /// MPDUs dropped after the retry limit, both stations (the losses TCP sees from the hop).
    pub wifi_retry_drops: u64,
}

impl WifiSummary {
    pub fn from_stats(st: &ccbench_wifi::MediumStats, duration_ns: u64) -> Self {
        let [f, r] = &st.dir;
        let sent = |d: &ccbench_wifi::DirStats| d.ampdu_hist.iter().sum::<u64>() > 0;
        let mean = |d: &ccbench_wifi::DirStats| sent(d).then(|| d.mean_ampdu());
        let q = |d: &ccbench_wifi::DirStats, p: f64| sent(d).then(|| d.ampdu_quantile(p) as f64);
        let share = |d: &ccbench_wifi::DirStats| d.airtime_ns as f64 / duration_ns.max(1) as f64;
        WifiSummary {
            wifi_ampdu_mean_fwd: mean(f),
            wifi_ampdu_p50_fwd: q(f, 0.5),
            wifi_ampdu_p90_fwd: q(f, 0.9),
            wifi_ampdu_mean_rev: mean(r),
            wifi_ampdu_p50_rev: q(r, 0.5),
            wifi_ampdu_p90_rev: q(r, 0.9),
            wifi_txops_fwd: f.txops,
            wifi_txops_rev: r.txops,
            wifi_airtime_fwd: share(f),
            wifi_airtime_rev: share(r),
            wifi_collisions: st.collisions,
            wifi_mpdus_retried: f.mpdus_retried + r.mpdus_retried,
            wifi_retry_drops: f.mpdus_dropped + r.mpdus_dropped,
        }
    }
}

/// Columnar time series, one row per flow per sample instant.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Series {
    pub flow_id: Vec<u32>,
    /// Sample instant, seconds from the start of the run.
    pub t_s: Vec<f64>,
    /// Payload bits delivered in order to the receiver during the interval ending at `t_s`.
    pub goodput_bps: Vec<f64>,
    pub cwnd_pkts: Vec<u32>,
    pub rtt_ms: Vec<Option<f64>>,
    pub pacing_bps: Vec<Option<f64>>,
    pub inflight_pkts: Vec<u32>,
    pub cc_state: Vec<String>,
    /// The algorithm's bandwidth estimate (BBR), null for others.
    pub bw_est_bps: Vec<Option<f64>>,
    /// The algorithm's min-RTT estimate where it keeps one.
    pub min_rtt_ms: Vec<Option<f64>>,
    /// Delivery rate as Linux reports it in tcpi_delivery_rate: the last rate sample that was
    /// not application-limited (or a higher app-limited one), payload bits per second.
    pub delivery_rate_bps: Vec<Option<f64>>,
    /// Segments retransmitted so far (cumulative, tcpi_total_retrans).
    pub retransmits: Vec<u64>,
}

/// Columnar time series of the bottleneck, one row per sample instant (the same instants as
/// `Series`, also before any flow has started).
#[derive(Debug, Clone, Default, Serialize)]
pub struct LinkSeries {
    pub t_s: Vec<f64>,
    /// Bytes queued at the forward bottleneck (waiting or being serialised).
    pub queue_bytes: Vec<u64>,
    /// RTT of the latest latency-probe reply received during the interval ending at `t_s`;
    /// null when no reply arrived in it (or no probe runs).
    pub probe_rtt_ms: Vec<Option<f64>>,
    /// Mean sojourn time of the packets that started transmission at the forward bottleneck
    /// during the interval ending at `t_s`; null when none did.
    pub sojourn_ms: Vec<Option<f64>>,
    /// Median and 95th percentile (nearest rank) of the RTTs of every probe reply received
    /// during the interval ending at `t_s`; null when none arrived.
    pub probe_rtt_p50_ms: Vec<Option<f64>>,
    pub probe_rtt_p95_ms: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkCounters {
    pub name: String,
    pub arrived: u64,
    pub departed: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    /// Packets in the queue or being serialised / propagated at the end of the run.
    pub held: u64,
    /// Packets the link's queue discipline marked CE instead of dropping.
    pub ce_marked: u64,
}
