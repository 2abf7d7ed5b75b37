//! The sending side of one connection, modelled on Linux 6.x `tcp_ack()`,
//! `tcp_fastretrans_alert()`, `tcp_write_xmit()` and friends:
//!
//! * a SACK scoreboard over the segments in flight (`sacked_out`, `lost_out`, `retrans_out`,
//!   in-flight = packets_out − sacked − lost + retrans, exactly as `tcp_packets_in_flight`);
//! * RACK-TLP loss detection (tcp_recovery.c, Linux ≥ 4.18): a segment is lost once a segment
//!   sent after it has been delivered and RACK.rtt + reo_wnd has elapsed since it was sent.
//!   Before any reordering is seen, reo_wnd is 0 in Recovery or with ≥ 3 SACKed segments
//!   (dupthresh-like); otherwise min(min_rtt/4 × steps, srtt), where `steps` grows by one per
//!   round in which D-SACKs arrive and falls back to 1 after 16 recoveries without them
//!   (tcp_rack_update_reo_wnd). A reorder timer re-checks pending segments; a tail loss probe
//!   fires after 2·srtt (+2 ms, or +200 ms with a single segment out) in Open state; a probe
//!   that retransmitted and was needed (the ACK goes past it without a D-SACK for it) ends in a
//!   cwnd reduction (`tcp_process_tlp_ack`);
//! * Recovery with Proportional Rate Reduction (RFC 6937, `tcp_cwnd_reduction`), cwnd set to
//!   ssthresh when recovery ends;
//! * RTO (rtt.rs) with exponential backoff, entering Loss state (cwnd 1, all un-SACKed
//!   segments marked lost);
//! * undo of spurious reductions: D-SACKs for every retransmission, or a timestamp echo older
//!   than the first retransmission (Eifel detection, `tcp_packet_delayed`);
//! * ECN (RFC 3168, tcp/ecn.rs): ECT(0) on new data, CWR state with PRR on an ECN-Echo, the
//!   CWR flag on the next new segment;
//! * delivery-rate sampling exactly as tcp_rate.c;
//! * internal pacing (`tcp_wstamp_ns`) when the algorithm asks for it or the scenario paces;
//! * `tcp_is_cwnd_limited` bookkeeping so that cwnd grows only when it was the limit.
//!
//! Simplifications against Linux (each one changes timing by less than a packet time or only
//! in situations our scenarios do not create): TSO skbs shape when unpaced data leaves
//! (`tcp_tso_autosize`, `tcp_tso_should_defer`: a skb's segments go together), but a paced flow
//! sends single packets at the pacing rate instead of ~1 ms chunks; no F-RTO
//! (sysctl tcp_frto); no SACK reneging; no congestion-window restart after idle (bulk senders
//! never idle);
//! min RTT is the minimum over the run (Linux: 5-minute window).
//!
//! # Layout
//!
//! The code is split the way Linux splits TCP, so that each file can be read beside its
//! kernel counterpart (net/ipv4/ in Linux 6.x):
//!
//! * `mod.rs` — include/linux/tcp.h, include/net/tcp.h: `struct Sender` (the `tcp_sock`),
//!   `Seg` (an skb and its `tcp_skb_cb`), small views such as `tcp_packets_in_flight`;
//! * `output.rs` — tcp_output.c: the transmit path, pacing, `tcp_cwnd_validate`, the
//!   retransmission of lost segments;
//! * `input.rs` — the ACK half of tcp_input.c: `tcp_ack` and its steps (`tcp_check_dsack`,
//!   `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`, `tcp_ack_update_rtt`,
//!   `tcp_cong_control`, `tcp_set_xmit_timer`) and the time-sorted list of segments in flight;
//! * `recovery.rs` — tcp_recovery.c (RACK) and the recovery half of tcp_input.c:
//!   `tcp_fastretrans_alert`, Recovery and Loss entry, PRR, undo;
//! * `rate.rs` — tcp_rate.c: delivery-rate sampling;
//! * `timer.rs` — tcp_timer.c: the RTO, tail-loss-probe and RACK reorder timers.
//!
//! Each submodule holds one `impl Sender` block; the fields stay private to this module and
//! its children.
use super::ecn::SenderEcn;
use super::mib::Mib;
use super::rtt::RttEstimator;
use super::{Pkt, SackBlock, MSS};
use crate::cc::{CaState, CcSock, CongestionControl};
use crate::metrics::{Histogram, TimeAverage};
use crate::time::Nanos;
use host_queue::HostQueue;
use std::collections::VecDeque;

#[cfg(test)]
mod ecn_tests;
#[cfg(test)]
mod edt_tests;
mod host_queue;
mod input;
mod output;
mod rate;
mod recovery;
#[cfg(test)]
mod tests;
mod timer;

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is in flight (Linux TCPCB_SACKED_RETRANS).
const F_RETRANS: u8 = 4;
/// This segment was retransmitted at some point (Linux TCPCB_EVER_RETRANS / TCPCB_RETRANS).
const F_EVER_RETRANS: u8 = 8;

const NIL: u64 = u64::MAX;
/// `tx.delivered_mstamp` of a segment whose delivery was already sampled (Linux clears it to 0;
/// the simulator's clock starts at 0, so 0 is a valid time here — the whole initial window of
/// a flow starting at t = 0 was stamped 0 and gave no rate samples).
const NO_STAMP: Nanos = u64::MAX;

/// `tp->reordering` default (sysctl tcp_reordering, TCP_REORDERING): RACK's dupthresh before
/// reordering is seen.
const DUPTHRESH: u32 = 3;
/// sysctl tcp_max_reordering: the cap on `tp->reordering`.
const MAX_REORDERING: u32 = 300;
/// TCP_RACK_RECOVERY_THRESH: recoveries a widened reorder window persists without D-SACKs.
const RACK_RECOVERY_THRESH: u32 = 16;

/// TCP_REO_TIMEOUT_MIN (Linux 6.x include/net/tcp.h): added to the RACK reorder timeout.
const REO_TIMEOUT_MIN_US: u64 = 2_000;
/// TCP_TIMEOUT_MIN_US, added to the TLP timeout.
const TLP_SLACK_US: u64 = 2_000;

/// Per-segment state: the scoreboard flags, the last transmit time, the tcp_rate.c snapshot,
/// and the links of the time-sorted list of segments in flight (`tsorted_sent_queue`).
#[derive(Debug, Clone, Copy)]
struct Seg {
    xmit: Nanos,
    flags: u8,
    tx_first_tx: Nanos,
    /// NO_STAMP once the segment's delivery was counted in a rate sample (Linux clears
    /// `tx.delivered_mstamp` for SACKed skbs).
    tx_delivered_mstamp: Nanos,
    tx_delivered: u64,
    tx_app_limited: bool,
    /// google/bbr v3 `tx.in_flight`, `tx.lost`, `tx.delivered_ce` (read by BBRv3 only).
    tx_in_flight: u32,
    tx_lost: u64,
    tx_delivered_ce: u64,
    tprev: u64,
    tnext: u64,
    in_tsorted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    LossProbe,
    ReorderTimeout,
}

/// What the world needs to know to drive this sender.
pub struct SenderParams {
    pub flow: u32,
    /// Segments to send; None = unlimited (bulk).
    pub total_segs: Option<u64>,
    /// The receive window the SYN-ACK offered, in segments; ACKs update it.
    pub rwnd_segs: u64,
    /// Pace even if the algorithm does not (model a host with the fq qdisc).
    pub pacing: bool,
    /// RTT of the SYN / SYN-ACK exchange (µs), which Linux feeds to the RTT estimator and the
    /// min-RTT filter before data flows (tcp_synack_rtt_meas / tcp_ack_update_rtt). The
    /// handshake itself is not simulated; its packets are small, so this is the base RTT plus
    /// the serialisation of two 60-byte packets — lower than any data packet can measure.
    pub handshake_rtt_us: Option<u64>,
    /// TCP timestamps negotiated (RFC 7323): TSvals on data, PAWS on ACKs, Eifel undo and RTT
    /// samples from the echo. Off: none of these.
    pub timestamps: bool,
    /// ECN (RFC 3168) negotiated: ECT on new data, CWR on ECN-Echo.
    pub ecn: bool,
}

pub struct Sender {
    pub flow: u32,
    pub cc: Box<dyn CongestionControl>,
    pub sk: CcSock,
    pub rtt: RttEstimator,
    segs: VecDeque<Seg>,
    snd_una: u64,
    snd_nxt: u64,
    total_segs: Option<u64>,
    /// `snd_wnd`: the receive window of the last window update, in bytes from snd_una, and
    /// the same in whole segments (what `tcp_snd_wnd_test` lets out).
    snd_wnd: u64,
    rwnd_segs: u64,
    force_pacing: bool,
    handshake_rtt_us: Option<u64>,
    timestamps: bool,
    /// TS.Recent of the ACK direction (the receiver's TSvals), for PAWS on ACKs; 0 = none.
    ts_recent: u64,
    /// ECN flags (TCP_ECN_OK, TCP_ECN_QUEUE_CWR).
    ecn: SenderEcn,
    /// `tp->reordering`: the reordering degree seen, in segments (tcp_check_sack_reordering).
    reordering: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Segments marked lost, awaiting retransmission (roughly in sequence order).
    lost_queue: VecDeque<u64>,
    tsorted_head: u64,
    tsorted_tail: u64,
    /// Blocks processed from the previous ACK: their content is known SACKed.
    prev_sacks: [SackBlock; 3],
    n_prev_sacks: usize,
    /// One past the highest SACKed segment (Linux "fack").
    fack: u64,
    // RACK
    rack_mstamp: Nanos,
    rack_end_seq: u64,
    rack_rtt_us: u64,
    rack_advanced: bool,
    /// Reordering was observed (Linux `tp->reord_seen`).
    reord_seen: bool,
    /// A D-SACK arrived since the last reo_wnd adjustment.
    dsack_seen: bool,
    reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    /// `tp->delivered` at the last reo_wnd adjustment.
    rack_last_delivered: u64,
    // tcp_rate.c
    first_tx_mstamp: Nanos,
    /// The sample behind tcpi_delivery_rate (`tp->rate_delivered` / `tp->rate_interval_us`).
    rate_delivered: u64,
    rate_interval_us: u64,
    // Recovery / undo
    high_seq: u64,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    undo_marker: Option<u64>,
    undo_retrans: i64,
    retrans_stamp: Nanos,
    // Timers
    pub timer: Option<(Nanos, TimerKind)>,
    backoff: u32,
    tlp_high_seq: Option<u64>,
    /// The outstanding probe retransmitted the last segment (Linux `tp->tlp_retrans`); false
    /// when it sent new data.
    tlp_retrans: bool,
    /// `tp->dsack_dups`: segments reported by D-SACKs (tcp_dsack_seen).
    dsack_dups: u64,
    /// Earliest departure time of the next packet (Linux tcp_wstamp_ns).
    wstamp: Nanos,
    /// The algorithm wants the fq qdisc's EDT pacing (`wants_edt_fq`): packets are released
    /// ahead of their departure time, up to the TSQ limit, into `host_queue`.
    edt: bool,
    host_queue: HostQueue,
    /// EDT: the departure time of the skb being sent (`skb->tstamp`; all its segments share it).
    skb_depart: Nanos,
    // tcp_cwnd_validate
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    is_cwnd_limited: bool,
    started: bool,
    // Statistics
    pub retransmits: u64,
    pub loss_events: u64,
    pub data_sent: u64,
    /// `tp->delivered_ce`: segments delivered by ACKs that carried ECE (what Linux adds to
    /// TCPDeliveredCE).
    pub delivered_ce: u64,
    /// MIB counters of this endpoint (tcp/mib.rs).
    pub mib: Mib,
    pub rtt_hist: Histogram,
    pub cwnd_avg: TimeAverage,
    out: Vec<Pkt>,
}

impl Sender {
    pub fn new(p: SenderParams, cc: Box<dyn CongestionControl>) -> Self {
        let mut sk = CcSock::new(MSS, super::INIT_CWND, u32::MAX / 2);
        sk.pacing_enabled = p.pacing;
        // TCP_CONG_NEEDS_ECN: ECN whatever the scenario says, ECT on every segment.
        let ecn = if cc.needs_accecn() {
            SenderEcn::l4s()
        } else if cc.needs_ecn() {
            SenderEcn::needs_ecn()
        } else {
            SenderEcn::new(p.ecn)
        };
        sk.ecn_ok = ecn.on();
        let edt = cc.wants_edt_fq();
        Sender {
            flow: p.flow,
            cc,
            sk,
            rtt: RttEstimator::default(),
            segs: VecDeque::new(),
            snd_una: 0,
            snd_nxt: 0,
            total_segs: p.total_segs,
            snd_wnd: p.rwnd_segs.max(2) * MSS as u64,
            rwnd_segs: p.rwnd_segs.max(2),
            force_pacing: p.pacing,
            edt,
            host_queue: HostQueue::default(),
            skb_depart: 0,
            handshake_rtt_us: p.handshake_rtt_us,
            timestamps: p.timestamps,
            ts_recent: 0,
            ecn,
            reordering: DUPTHRESH,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_queue: VecDeque::new(),
            tsorted_head: NIL,
            tsorted_tail: NIL,
            prev_sacks: [(0, 0); 3],
            n_prev_sacks: 0,
            fack: 0,
            rack_mstamp: 0,
            rack_end_seq: 0,
            rack_rtt_us: 0,
            rack_advanced: false,
            reord_seen: false,
            dsack_seen: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            rack_last_delivered: 0,
            first_tx_mstamp: 0,
            rate_delivered: 0,
            rate_interval_us: 0,
            high_seq: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: 0,
            timer: None,
            backoff: 0,
            tlp_high_seq: None,
            tlp_retrans: false,
            dsack_dups: 0,
            wstamp: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            is_cwnd_limited: false,
            started: false,
            retransmits: 0,
            loss_events: 0,
            data_sent: 0,
            delivered_ce: 0,
            mib: Mib::default(),
            rtt_hist: Histogram::default(),
            cwnd_avg: TimeAverage::default(),
            out: Vec::new(),
        }
    }

    // ----- small views ---------------------------------------------------------------

    #[inline]
    fn packets_out(&self) -> u32 {
        (self.snd_nxt - self.snd_una) as u32
    }

    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    /// The handshake's RTT sample, when it is known only at the flow's start (the sender takes
    /// it in `start`).
    pub fn set_handshake_rtt_us(&mut self, rtt_us: u64) {
        self.handshake_rtt_us = Some(rtt_us);
    }

    #[inline]
    fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }

    #[inline]
    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    /// Payload bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una * MSS as u64
    }

    fn refresh_sk(&mut self, now: Nanos) {
        self.sk.now_ns = now;
        self.sk.srtt_us = self.rtt.srtt_us();
        self.sk.min_rtt_us = self.rtt.min_rtt_us;
        self.sk.in_flight = self.in_flight();
        self.sk.snd_nxt = self.snd_nxt;
        self.sk.snd_una = self.snd_una;
        self.sk.is_cwnd_limited = self.cwnd_limited();
        self.sk.wstamp_ns = self.wstamp;
    }

    /// `tcp_is_cwnd_limited()`.
    fn cwnd_limited(&self) -> bool {
        if self.sk.in_slow_start() {
            (self.sk.cwnd as u64) < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        }
    }

    /// `tcp_set_ca_state`: the algorithm hears every call, also Loss → Loss on a repeated RTO
    /// (BBR treats each as the end of a round).
    fn set_state(&mut self, st: CaState) {
        self.cc.set_state(&mut self.sk, st);
        self.sk.ca_state = st;
    }

    /// The MIB counters of this endpoint, with those the congestion control keeps (HyStart).
    pub fn mib_counters(&self) -> Mib {
        let mut m = self.mib;
        m.hystart_train_detect = self.sk.hystart_train_detect;
        m.hystart_train_cwnd = self.sk.hystart_train_cwnd;
        m.hystart_delay_detect = self.sk.hystart_delay_detect;
        m.hystart_delay_cwnd = self.sk.hystart_delay_cwnd;
        m.delivered_ce = self.delivered_ce;
        m
    }

    /// Current RTT for the time series: the latest smoothed RTT, ms.
    pub fn srtt_ms(&self) -> Option<f64> {
        self.rtt.has_sample().then(|| self.rtt.srtt_us() as f64 / 1000.0)
    }

    pub fn pacing_bps(&self) -> Option<f64> {
        (self.sk.pacing_enabled || self.force_pacing).then_some(self.sk.pacing_rate as f64 * 8.0)
    }
}
