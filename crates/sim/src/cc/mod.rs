//! Congestion control: one trait shaped after Linux `struct tcp_congestion_ops`
//! (include/net/tcp.h), one file per algorithm.
//!
//! The sender owns a [`CcSock`] — the subset of `struct tcp_sock` that congestion controls read
//! and write (cwnd, ssthresh, pacing rate, delivery counters, …) — and calls the hooks at the
//! points where Linux calls them (tcp_input.c / tcp_output.c):
//!
//! * `pkts_acked` for every ACK that acknowledges data, with the RTT sample (tcp_clean_rtx_queue)
//! * `cong_control` once per ACK, with the delivery-rate sample, *if* the algorithm has one
//!   (BBR); otherwise the sender runs PRR in recovery and `cong_avoid` otherwise
//!   (tcp_cong_control)
//! * `ssthresh` on entering Recovery / Loss, `undo_cwnd` when a reduction proves spurious,
//!   `set_state` on every `ca_state` change, `cwnd_event` for TX start after idle and RTO loss.
//!
//! Time is always passed in (`CcSock::now_ns`) and randomness comes from the RNG handed to the
//! constructor, so every algorithm is deterministic for a given scenario seed.
use crate::rng::Rng;

pub mod bbr;
pub mod bbr3;
pub mod cubic;
pub mod dctcp;
pub mod minmax;
pub mod prague;
pub mod reno;
pub mod vegas;

/// Linux TCP_INFINITE_SSTHRESH.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `enum tcp_ca_state` (include/uapi/linux/tcp.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// `enum tcp_ca_event`: the events the simulator generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing was in flight (restart after idle).
    TxStart,
    /// Retransmission timeout fired (Linux calls set_state(Loss) and then this).
    Loss,
    /// End of a CWR / Recovery episode.
    CompleteCwr,
}

/// Per-ACK RTT/acked sample, Linux `struct ack_sample` (given to `pkts_acked`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AckSample {
    /// Segments newly acknowledged (cumulatively or by SACK) by this ACK.
    pub pkts_acked: u32,
    /// RTT sample in µs from the newest never-retransmitted segment this ACK covers; -1 if none.
    pub rtt_us: i64,
    /// Packets in flight before this ACK was processed.
    pub in_flight: u32,
}

/// Delivery-rate sample, Linux `struct rate_sample` (net/ipv4/tcp_rate.c).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSample {
    /// Sender time (ns) at which the sampled interval started (`prior_mstamp`).
    pub prior_mstamp_ns: u64,
    /// `tp->delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over the interval; -1 when there is no valid sample.
    pub delivered: i64,
    /// Interval over which `delivered` was measured, µs; -1 when invalid.
    pub interval_us: i64,
    pub snd_interval_us: u64,
    pub rcv_interval_us: u64,
    /// RTT of the most recently sent packet this ACK (S)ACKed, µs; -1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost upon this ACK.
    pub losses: u32,
    /// Packets newly (S)ACKed upon this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sample came from a packet sent while the application (or rwnd) limited the sender.
    pub is_app_limited: bool,
    pub is_retrans: bool,
    /// This ACK was (likely) delayed by the receiver.
    pub is_ack_delayed: bool,
    /// BBRv3 additions (google/bbr v3 tcp_rate.c / tcp_input.c); no other algorithm reads them.
    /// Packets in flight just after the sampled packet was sent, itself included
    /// (`tx_in_flight`, from `tcp_set_tx_in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when the sampled packet was sent (`prior_lost`).
    pub prior_lost: u64,
    /// `tp->delivered_ce` when the sampled packet was sent (`prior_delivered_ce`).
    pub prior_delivered_ce: u64,
    /// Packets marked lost since the sampled packet was sent (`lost`); 0 without a sample.
    pub lost: u32,
    /// Packets delivered by ECE ACKs over the sampled interval (`delivered_ce`).
    pub delivered_ce: i64,
    /// This ACK carried ECN-Echo (`is_ece`, FLAG_ECE).
    pub is_ece: bool,
    /// Accurate ECN: delivered packets this ACK reports newly CE-marked (`rs->ece_delta` of
    /// the L4S tree); 0 without AccECN.
    pub ece_delta: u32,
}

/// What `skb_marked_lost` learns about a segment just marked lost: its transmit-time snapshot
/// (google/bbr v3 `TCP_SKB_CB(skb)->tx`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LostSkb {
    /// `tx.in_flight`: packets in flight just after it was sent, itself included.
    pub tx_in_flight: u32,
    /// `tx.lost`: `tp->lost` when it was sent.
    pub tx_lost: u64,
    /// `tx.is_app_limited`.
    pub tx_app_limited: bool,
    /// `tx.delivered_mstamp != 0`: its delivery has not been sampled yet.
    pub has_tx_stamp: bool,
}

/// The part of the TCP socket a congestion control sees. Fields the algorithm may write are
/// `cwnd`, `ssthresh`, `cwnd_cnt`, `cwnd_clamp`, `pacing_rate` and `pacing_enabled`; the sender
/// refreshes the rest before every hook.
#[derive(Debug, Clone)]
pub struct CcSock {
    pub now_ns: u64,
    /// `tp->snd_cwnd`, packets.
    pub cwnd: u32,
    /// `tp->snd_ssthresh`, packets.
    pub ssthresh: u32,
    /// `tp->snd_cwnd_cnt`: linear-increase counter used by `cong_avoid_ai`.
    pub cwnd_cnt: u32,
    /// `tp->snd_cwnd_clamp`: cwnd never grows above this (set from the receive window cap).
    pub cwnd_clamp: u32,
    pub mss: u32,
    /// Smoothed RTT in µs (0 before the first sample). Linux keeps it << 3; this is plain µs.
    pub srtt_us: u64,
    /// Windowed min RTT (`tcp_min_rtt`), µs; u32::MAX before the first sample.
    pub min_rtt_us: u32,
    /// `tcp_packets_in_flight()`: packets_out - (sacked_out + lost_out) + retrans_out.
    pub in_flight: u32,
    /// `tp->delivered`: packets delivered (cumulatively or SACKed) so far.
    pub delivered: u64,
    /// `tp->delivered_ce`: packets delivered by ACKs that carried ECN-Echo.
    pub delivered_ce: u64,
    /// ECN negotiated on this connection (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// `tp->delivered_mstamp`, ns.
    pub delivered_mstamp_ns: u64,
    /// `tp->lost`: packets marked lost so far.
    pub lost: u64,
    /// `tp->app_limited`: 0, or the `delivered` mark until which samples are app-limited.
    pub app_limited: u64,
    /// `tcp_is_cwnd_limited()`.
    pub is_cwnd_limited: bool,
    /// Next segment number to send / oldest unacknowledged segment number (packet sequence).
    pub snd_nxt: u64,
    pub snd_una: u64,
    pub ca_state: CaState,
    /// `sk->sk_pacing_rate` in bytes per second (of payload+headers, as Linux counts it).
    pub pacing_rate: u64,
    /// `sk->sk_max_pacing_rate` (bytes/s).
    pub max_pacing_rate: u64,
    /// Whether the sender paces at `pacing_rate` (Linux `sk_pacing_status != SK_PACING_NONE`
    /// with internal TCP pacing). BBR sets it in `init`.
    pub pacing_enabled: bool,
    /// `tp->tcp_wstamp_ns`: earliest departure time (ns) the pacer has scheduled for the next
    /// packet (EDT). 0 = now / unknown. Read by BBR's in-network-at-EDT estimate.
    pub wstamp_ns: u64,
    /// `tp->lsndtime`: when data was last sent (ns). CUBIC shifts its epoch by the idle time
    /// since then on CA_EVENT_TX_START.
    pub lsndtime_ns: u64,
    /// HyStart exits (CUBIC): TCPHystartTrainDetect / TCPHystartDelayDetect and the cwnd at
    /// each (…TrainCwnd / …DelayCwnd, summed as Linux does).
    pub hystart_train_detect: u64,
    pub hystart_train_cwnd: u64,
    pub hystart_delay_detect: u64,
    pub hystart_delay_cwnd: u64,
}

impl CcSock {
    pub fn new(mss: u32, init_cwnd: u32, cwnd_clamp: u32) -> Self {
        CcSock {
            now_ns: 0,
            cwnd: init_cwnd,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp,
            mss,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            in_flight: 0,
            delivered: 0,
            delivered_ce: 0,
            ecn_ok: false,
            delivered_mstamp_ns: 0,
            lost: 0,
            app_limited: 0,
            is_cwnd_limited: false,
            snd_nxt: 0,
            snd_una: 0,
            ca_state: CaState::Open,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            pacing_enabled: false,
            wstamp_ns: 0,
            lsndtime_ns: 0,
            hystart_train_detect: 0,
            hystart_train_cwnd: 0,
            hystart_delay_detect: 0,
            hystart_delay_cwnd: 0,
        }
    }

    /// `tcp_in_slow_start()`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start()` (tcp_cong.c): grow by one per acked packet up to ssthresh; return
    /// the acked count left over once ssthresh is reached.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai()` (tcp_cong.c): additive increase of 1 packet per `w` acked.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// A congestion-control algorithm. Defaults mirror what Linux does when an op is NULL.
pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// `init`: called once before the first packet is sent.
    fn init(&mut self, _sk: &mut CcSock) {}

    /// `ssthresh`: the slow-start threshold to use after a loss (required in Linux).
    fn ssthresh(&mut self, sk: &CcSock) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK in Open/Disorder state (not called if `cong_control`
    /// is implemented). `ack` is the new snd_una (segment number), `acked` the packets acked.
    fn cong_avoid(&mut self, _sk: &mut CcSock, _ack: u64, _acked: u32) {}

    /// `set_state`: ca_state is about to change to `new_state`.
    fn set_state(&mut self, _sk: &mut CcSock, _new_state: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _sk: &mut CcSock, _ev: CaEvent) {}

    /// `in_ack_event`: an ACK was processed (after the scoreboard and the delivery counters,
    /// before loss recovery). `ece`: it carried ECN-Echo (FLAG_ECE).
    fn in_ack_event(&mut self, _sk: &mut CcSock, _ece: bool) {}

    /// TCP_CONG_NEEDS_ECN: the connection negotiates ECN whatever the scenario says, and the
    /// receiver hands CE / no-CE arrivals to the algorithm (CA_EVENT_ECN_IS_CE / _NO_CE).
    fn needs_ecn(&self) -> bool {
        false
    }

    /// TCP_CONG_WANTS_CE_EVENTS with a precise echo (BBRv3's `bbr_precise_ece_ack`): on a
    /// connection that negotiated ECN the receiving host, running the same algorithm, echoes
    /// the CE state of each segment exactly, as DCTCP's receiver does.
    fn wants_precise_ce_echo(&self) -> bool {
        false
    }

    /// `skb_marked_lost` (google/bbr v3): called from `tcp_mark_skb_lost` each time a segment
    /// is newly counted in `tp->lost` (which already includes it).
    fn skb_marked_lost(&mut self, _sk: &mut CcSock, _skb: &LostSkb) {}

    /// TCP_CONG_NEEDS_ACCECN: the connection uses Accurate ECN feedback (RFC 9768): the
    /// receiver counts CE-marked packets and every ACK carries the count.
    fn needs_accecn(&self) -> bool {
        false
    }

    /// TCP_CONG_WANTS_ECT_1: packets leave ECT(1), the L4S identifier (RFC 9331), instead of
    /// ECT(0).
    fn wants_ect_1(&self) -> bool {
        false
    }

    /// The algorithm needs the fq qdisc's Earliest Departure Time pacing (tcp_prague.c does):
    /// TCP releases a packet ahead of its pacing time, bounded only by TCP Small Queues, and
    /// fq holds it until its departure time (tcp/sender/host_queue.rs).
    fn wants_edt_fq(&self) -> bool {
        false
    }

    /// `pkts_acked`: per-ACK RTT sample.
    fn pkts_acked(&mut self, _sk: &mut CcSock, _sample: &AckSample) {}

    /// `undo_cwnd`: the cwnd to restore when a reduction was spurious. Linux's fallback
    /// (tcp_reno_undo_cwnd) is max(cwnd, prior_cwnd); the sender passes prior_cwnd.
    fn undo_cwnd(&mut self, sk: &CcSock, prior_cwnd: u32) -> u32 {
        sk.cwnd.max(prior_cwnd)
    }

    /// Whether this algorithm implements `cong_control` (then the sender skips PRR and
    /// `cong_avoid`, exactly as tcp_cong_control() does).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: the full per-ACK control path with the delivery-rate sample.
    fn cong_control(&mut self, _sk: &mut CcSock, _rs: &RateSample) {}

    /// `min_tso_segs`: the smallest TSO burst the algorithm wants (None: sysctl
    /// tcp_min_tso_segs).
    fn min_tso_segs(&self, _sk: &CcSock) -> Option<u64> {
        None
    }

    /// Short state label for the time series (e.g. BBR's mode); "" when the algorithm has none.
    fn state_label(&self) -> &'static str {
        ""
    }

    /// The algorithm's bottleneck-bandwidth estimate in bit/s, where it keeps one.
    fn bw_estimate_bps(&self) -> Option<f64> {
        None
    }

    /// The algorithm's own min-RTT estimate in µs, where it keeps one.
    fn min_rtt_estimate_us(&self) -> Option<u64> {
        None
    }
}

/// Algorithms the simulator runs, with the Linux source each follows.
pub const NAMES: &[&str] = &["reno", "cubic", "bbr", "bbr3", "vegas", "dctcp", "prague"];

/// (name, Linux version followed, notes) for `ccbench algorithms`.
pub fn describe() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("reno", "Linux 6.x tcp_cong.c (tcp_reno_*)", "NewReno AIMD, beta 1/2"),
        (
            "cubic",
            "Linux 6.x net/ipv4/tcp_cubic.c",
            "beta 717/1024, C 0.4, fast convergence, TCP friendliness, HyStart (ACK train + delay)",
        ),
        (
            "bbr",
            "Linux 6.6 net/ipv4/tcp_bbr.c (BBR v1)",
            "STARTUP 2/ln2, DRAIN, PROBE_BW 8-phase gain cycle, PROBE_RTT 200 ms / 10 s, \
             10-round max-bw filter, ACK-aggregation allowance, long-term (policer) bw; paced",
        ),
        (
            "bbr3",
            "google/bbr v3 net/ipv4/tcp_bbr.c (BBR_VERSION 3, commit 001a430b)",
            "STARTUP 2.77 (cwnd 2), exits on bw plateau, loss > 2 % or ECN; DRAIN; PROBE_BW \
             DOWN/CRUISE/REFILL/UP, probes every 2-3 s or min(63, BDP) rounds; PROBE_RTT every 5 s \
             at 0.5 BDP; bw_lo/inflight_lo cut by beta 0.3, inflight_hi from loss/ECN; ECN alpha \
             1/16 when ECN is negotiated and min RTT <= 5 ms; paced",
        ),
        (
            "vegas",
            "Linux 6.6 net/ipv4/tcp_vegas.c",
            "alpha 2, beta 4, gamma 1 packets; once-per-RTT diff from min RTT; Reno fallback",
        ),
        (
            "dctcp",
            "Linux 6.18 net/ipv4/tcp_dctcp.c, tcp_dctcp.h",
            "alpha with g 1/16 once per window from delivered_ce / delivered, cut by alpha/2 on \
             ECE, halving on loss, Reno growth; always ECN; receiver echoes CE exactly",
        ),
        (
            "prague",
            "L4STeam/linux net/ipv4/tcp_prague.c @ 893e1479 (v0.7, fractional window)",
            "ECT(1) + Accurate ECN; alpha with g 1/16 once per round (25 ms when RTT-independent), \
             cut by alpha/2 once per round on CE, halving on loss; additive increase scaled to a \
             25 ms reference RTT after 4 rounds; paced at cwnd/srtt; simulator only",
        ),
    ]
}

/// Build an algorithm by name. `seed` feeds the algorithm's own RNG stream.
pub fn make(name: &str, seed: u64) -> Option<Box<dyn CongestionControl>> {
    let rng = Rng::new(seed);
    match name {
        "reno" => Some(Box::new(reno::Reno)),
        "cubic" => Some(Box::new(cubic::Cubic::new())),
        "bbr" => Some(Box::new(bbr::Bbr::new(rng))),
        "bbr3" => Some(Box::new(bbr3::Bbr3::new(rng))),
        "vegas" => Some(Box::new(vegas::Vegas::new())),
        "dctcp" => Some(Box::new(dctcp::Dctcp::new())),
        "prague" => Some(Box::new(prague::Prague::new())),
        _ => None,
    }
}
