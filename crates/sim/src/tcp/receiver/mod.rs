//! The receiving side of one connection: in-order delivery, out-of-order ranges, SACK and
//! D-SACK blocks, the timestamp echo and Linux's delayed-ACK policy.
//!
//! Delayed ACKs follow Linux `__tcp_ack_snd_check` / `tcp_event_data_recv`:
//! * the first `QUICKACKS` segments are acknowledged one by one (quick-ACK mode at start);
//! * otherwise an ACK goes out as soon as more than one full segment is unacknowledged
//!   ("ACK every second segment");
//! * a segment that fills the last hole and duplicates are ACKed at once; out-of-order data
//!   too, up to three duplicate ACKs per rcv_nxt, after which SACK compression (Linux ≥ 4.18,
//!   `__tcp_ack_snd_check`) sends at most one ACK per min(1 ms, RTT/20) or per 44 segments
//!   (sysctl tcp_comp_sack_delay_ns, tcp_comp_sack_nr), except that a change to a SACK block
//!   beyond the first two sends the held-back ACK at once (`tcp_sack_compress_send_ack`; that
//!   ACK clears the pending-ACK state, so the segment that caused it is not counted as held
//!   back). In-order data that leaves holes is ACKed at once too, but through the
//!   compression path (the window offered with data queued out of order is below rcv_wnd):
//!   its ACK is the first of the three for the new rcv_nxt;
//! * SACK blocks are Linux's list (`tcp_sack_new_ofo_skb`, `tcp_sack_maybe_coalesce`,
//!   `tcp_sack_remove`): at most four, the most recently changed first, three of them (after
//!   a D-SACK block) in each ACK; a range that falls off the list is not reported again until
//!   new data extends a listed block into it;
//! * every ACK sent uses up one quick-ACK (`tcp_dec_quickack_mode`);
//! * otherwise the delayed-ACK timer sends it, after `ato` (below);
//! * a duplicate below rcv_nxt puts the receiver back in quick-ACK mode (tcp_data_queue's
//!   "retransmit" case calls tcp_enter_quickack_mode);
//! * so does in-order data after a silence longer than the receiver's RTO
//!   (`tcp_event_data_recv`: "too long gap, apparently sender failed to restart window"), as
//!   after the sender's retransmission timeout. The receiver's RTO comes from its only RTT
//!   sample, the handshake's (`tcp_synack_rtt_meas`): srtt + max(2 srtt, tcp_rto_min).
//!
//! The delayed-ACK timeout adapts as Linux's `icsk_ack.ato` (in jiffies, HZ = 250): it starts at
//! TCP_ATO_MIN = 40 ms with the first data; each firing of the timer doubles it, up to the RTO
//! (`tcp_delack_timer_handler`, "delayed ACK missed: inflate ATO"); in-order data arriving within
//! 20 ms of the previous halves it towards 40 ms, a gap shorter than `ato` pulls it towards the gap
//! (`tcp_event_data_recv`); and when the timer is armed the timeout is capped at the receiver's
//! srtt (at least 40 ms), at HZ/2 and at TCP_DELACK_MAX = 200 ms (`tcp_send_delayed_ack`). So a
//! bulk receiver stays at 40 ms, but after repeated timer ACKs (a small window under heavy loss)
//! the timeout grows to about one RTT.
//!
//! Timestamps (RFC 7323, Linux 6.x `tcp_validate_incoming` / `tcp_replace_ts_recent`): TSvals
//! are millisecond ticks. A segment whose TSval is more than TCP_PAWS_WINDOW = 1 tick older than
//! `ts_recent` is discarded by PAWS (counted as PAWSEstab) and answered with a duplicate ACK
//! (`tcp_send_dupack`); `ts_recent` advances only from segments at or left of rcv_wup and never
//! backwards; a segment wholly below rcv_wup (a duplicate of delivered data) is dropped by
//! `tcp_sequence` before that and leaves ts_recent alone. Under reordering this matters: once a
//! retransmission fills the hole at rcv_nxt,
//! ts_recent jumps to its fresh TSval and originals still in flight that were sent more than a
//! millisecond earlier are thrown away — real losses the sender must repair.
//!
//! ECN (RFC 3168, Linux 6.x; tcp/ecn.rs): a CE-marked data segment starts the ECE echo and two
//! quick ACKs; every ACK carries ECE until a segment with CWR arrives, and a data segment with CWR
//! is ACKed at once. A DCTCP receiver echoes the CE state of each segment exactly instead, and
//! a change of state sends the delayed ACK first (with the old state) and then ACKs at once
//! (tcp_dctcp.h `dctcp_ece_ack_update`; the delayed one is handed out by `take_early_ack`).
//!
//! The window each ACK offers, and its autotuning from a 64 KB start, are in tcp/rcv_window.rs;
//! while that window grows, every segment is ACKed at once (`tcp_grow_window`'s quick ACK).
//! Simplifications: no pingpong (interactive) mode, since the receiver sends no data.
use super::ecn::{CeCheck, ReceiverEcn};
use super::mib::Mib;
use super::rcv_window::RcvWindow;
use super::{ts_tick, Pkt, PktKind, SackBlock, ACK_PKT_BYTES, MSS};
use crate::time::{jiffies, Nanos, HZ, NS_PER_JIFFY, NS_PER_MS};
use sack_list::SackList;

mod sack_list;

/// TCP_MAX_QUICKACKS.
pub const QUICKACKS: u32 = 16;
/// TCP_ATO_MIN / TCP_DELACK_MIN (HZ/25 = 40 ms).
pub const DELACK_NS: Nanos = 40 * NS_PER_MS;
/// The same in jiffies.
const ATO_MIN_J: u64 = HZ / 25;
/// TCP_DELACK_MAX (HZ/5 = 200 ms): `icsk_delack_max`, the cap on any delayed-ACK timeout.
const DELACK_MAX_J: u64 = HZ / 5;
/// sysctl tcp_comp_sack_nr: compressed SACKs before one must go out.
pub const COMP_SACK_NR: u32 = 44;
/// sysctl tcp_comp_sack_delay_ns: the longest a compressed SACK waits.
pub const COMP_SACK_DELAY_NS: Nanos = NS_PER_MS;
/// TCP_SACK_BLOCKS_EXPECTED (tcp_input.c): a change to a block beyond the first two sends the
/// compressed SACKs held back first.
const SACK_BLOCKS_EXPECTED: usize = 2;
/// TCP_FASTRETRANS_THRESH: duplicate ACKs per rcv_nxt sent before compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// TCP_PAWS_WINDOW: a data segment may be this many ticks older than ts_recent.
pub const PAWS_WINDOW: u64 = 1;
/// TCP_TIMEOUT_INIT: the RTO before any RTT sample.
const RTO_INIT_NS: Nanos = 1_000 * NS_PER_MS;
/// TCP_RTO_MIN (sysctl tcp_rto_min_us default).
const RTO_MIN_NS: Nanos = 200 * NS_PER_MS;

#[derive(Clone)]
pub struct Receiver {
    pub flow: u32,
    /// Next segment expected in order.
    pub rcv_nxt: u64,
    /// `rcv_wup`: rcv_nxt when the last ACK was sent (Last.ACK.sent of RFC 7323).
    rcv_wup: u64,
    /// Received ranges above rcv_nxt, sorted, disjoint, non-adjacent.
    ooo: Vec<SackBlock>,
    /// Segments in `ooo`.
    ooo_segs: u64,
    /// The advertised window and its autotuning.
    window: RcvWindow,
    /// `tp->selective_acks`: the SACK blocks, most recently changed first (RFC 2018 §4), at
    /// most TCP_NUM_SACKS; the first three go into an ACK (the timestamp option leaves room
    /// for three). Older out-of-order ranges that fell off the end are not reported again
    /// until new data extends a listed block into them.
    sacks: SackList,
    /// Timestamps negotiated on this connection (sysctl tcp_timestamps on both ends).
    timestamps: bool,
    /// RFC 7323 TS.Recent, in ticks; 0 = none yet.
    ts_recent: u64,
    quick_left: u32,
    /// `icsk_ack.lrcvtime`: when in-order data last arrived (None before the first).
    lrcvtime: Option<Nanos>,
    /// The receiver's `icsk_rto` (Linux 6.18 `tcp_event_data_recv` compares the gap with it).
    rto: Nanos,
    /// The receiver's srtt (the handshake's; None = no sample), which bounds the delayed-ACK
    /// timeout in `tcp_send_delayed_ack`.
    srtt: Option<Nanos>,
    /// `icsk_ack.ato` in jiffies: the delayed-ACK timeout; 0 before the first data.
    ato: u64,
    /// Segments received and not yet acknowledged (delayed-ACK accounting).
    unacked: u32,
    /// Deadline of the pending delayed ACK.
    pub delack_deadline: Option<Nanos>,
    /// SACK compression: ACKs held back, the rcv_nxt they refer to, duplicate ACKs already
    /// sent for it, the compressed-ACK timer and its delay (min(1 ms, RTT/20)).
    compressed_ack: u32,
    comp_rcv_nxt: u64,
    dup_ack_counter: u32,
    comp_deadline: Option<Nanos>,
    comp_delay: Nanos,
    /// Segment count of a fixed-size transfer, for the completion time.
    pub total_segs: Option<u64>,
    pub completed_at: Option<Nanos>,
    /// Conservation and goodput counters.
    pub data_received: u64,
    pub dup_received: u64,
    /// Data segments discarded by PAWS (they arrived but were not accepted).
    pub paws_dropped: u64,
    /// MIB counters of this endpoint.
    pub mib: Mib,
    /// ECN state (off unless `with_ecn` or `with_dctcp_ecn`).
    pub ecn: ReceiverEcn,
    /// DCTCP's ACK of the data before a change of CE state, to go out before the ACK that
    /// `on_data` returns.
    early_ack: Option<Pkt>,
}

impl Receiver {
    pub fn new(flow: u32, total_segs: Option<u64>, timestamps: bool) -> Self {
        Receiver {
            flow,
            rcv_nxt: 0,
            rcv_wup: 0,
            ooo: Vec::new(),
            ooo_segs: 0,
            window: RcvWindow::new(super::rcv_window::DEFAULT_WINDOW_CAP),
            sacks: SackList::default(),
            timestamps,
            ts_recent: 0,
            quick_left: QUICKACKS,
            lrcvtime: None,
            rto: RTO_INIT_NS,
            srtt: None,
            ato: 0,
            unacked: 0,
            delack_deadline: None,
            compressed_ack: 0,
            comp_rcv_nxt: 0,
            dup_ack_counter: 0,
            comp_deadline: None,
            comp_delay: COMP_SACK_DELAY_NS,
            total_segs,
            completed_at: None,
            data_received: 0,
            dup_received: 0,
            paws_dropped: 0,
            mib: Mib::default(),
            ecn: ReceiverEcn::default(),
            early_ack: None,
        }
    }

    /// The receive window may grow to `bytes` (the scenario's rwnd; Linux's tcp_rmem max).
    pub fn with_rwnd(mut self, bytes: u64) -> Self {
        self.window = RcvWindow::new(bytes);
        self
    }

    /// The window the SYN-ACK offered, in bytes: the sender's first send window.
    pub fn initial_window_bytes(&self) -> u64 {
        self.window.initial_bytes()
    }

    /// ECN (RFC 3168) negotiated on this connection.
    pub fn with_ecn(mut self, on: bool) -> Self {
        self.ecn = ReceiverEcn::new(on);
        self
    }

    /// ECN with DCTCP's exact CE echo: the receiving host runs DCTCP too (an algorithm with
    /// TCP_CONG_NEEDS_ECN, whose CE events drive the echo).
    pub fn with_dctcp_ecn(mut self) -> Self {
        self.ecn = ReceiverEcn::dctcp();
        self
    }

    /// ECN with Accurate ECN feedback (RFC 9768) and ECT(1) ACKs: the receiving host runs an
    /// L4S algorithm (Prague).
    pub fn with_accecn(mut self) -> Self {
        self.ecn = ReceiverEcn::accecn();
        self
    }

    /// The ACK DCTCP sent ahead of the one the last `on_data` returned (it goes out first).
    pub fn take_early_ack(&mut self) -> Option<Pkt> {
        self.early_ack.take()
    }

    /// `tcp_ecn_check_ce` for one data segment, `rcv_nxt` being Linux's rcv_nxt at that point:
    /// enter the quick-ACK mode it asks for and prepare DCTCP's early ACK. Returns whether
    /// the segment must be ACKed at once (ICSK_ACK_NOW).
    fn ecn_check_ce(&mut self, now: Nanos, pkt: &Pkt, rcv_nxt: u64) -> bool {
        let CeCheck { quickacks, ack_now, early_ack } = self.ecn.check_ce(pkt, rcv_nxt, self.delack_deadline.is_some());
        self.enter_quickack(quickacks);
        if let Some((ack_seq, ece)) = early_ack {
            let ack = self.make_early_ack(now, ack_seq, ece);
            self.early_ack = Some(ack);
        }
        ack_now
    }

    /// `tcp_enter_quickack_mode(sk, n)`: at least `n` quick ACKs from now (0: no change).
    fn enter_quickack(&mut self, n: u32) {
        self.quick_left = self.quick_left.max(n);
    }

    /// The receiver's RTT estimate (Linux: the srtt of the handshake, or rcv_rtt_est if lower),
    /// which bounds the SACK-compression delay to RTT/20.
    /// Also its RTO: the first RTT sample m gives srtt = m, rttvar = max(2m, tcp_rto_min)
    /// (`tcp_rtt_estimator`), RTO = srtt + rttvar (`__tcp_set_rto`).
    pub fn set_rtt(&mut self, rtt: Nanos) {
        self.comp_delay = COMP_SACK_DELAY_NS.min(rtt / 20);
        self.rto = rtt + (2 * rtt).max(RTO_MIN_NS);
        self.srtt = Some(rtt);
        self.window.handshake_rtt(rtt);
    }

    /// The RTO in jiffies (`__tcp_set_rto` converts with usecs_to_jiffies, rounding up).
    fn rto_jiffies(&self) -> u64 {
        self.rto.div_ceil(NS_PER_JIFFY)
    }

    /// The current delayed-ACK timeout `ato` (jiffies), for tests and diagnostics.
    pub fn ato_jiffies(&self) -> u64 {
        self.ato
    }

    /// `tcp_event_data_recv`'s adaptation of `ato` to the gap since the last in-order data.
    fn adapt_ato(&mut self, now: Nanos) {
        let Some(last) = self.lrcvtime else {
            // The first data segment: start the delayed-ACK engine (the quick-ACKs of the
            // first segments are set up in `new`).
            self.ato = ATO_MIN_J;
            return;
        };
        let m = jiffies(now) - jiffies(last);
        if m <= ATO_MIN_J / 2 {
            self.ato = (self.ato >> 1) + ATO_MIN_J / 2;
        } else if m < self.ato {
            self.ato = ((self.ato >> 1) + m).min(self.rto_jiffies());
        } else if m > self.rto_jiffies() {
            // "Too long gap. Apparently sender failed to restart window": tcp_incr_quickack
            // only ever raises the count.
            self.quick_left = self.quick_left.max(QUICKACKS);
        }
    }

    /// `tcp_send_delayed_ack`: arm the delayed-ACK timer (if not armed) `ato` jiffies ahead,
    /// `ato` capped at max(srtt, 40 ms), HZ/2 and TCP_DELACK_MAX.
    fn arm_delack(&mut self, now: Nanos) {
        if self.delack_deadline.is_some() {
            return;
        }
        let mut ato = self.ato;
        if ato > ATO_MIN_J {
            let mut max_ato = HZ / 2;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.div_ceil(NS_PER_JIFFY).max(ATO_MIN_J));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX_J);
        // Linux's timer expires on a jiffy boundary; here it runs `ato` from the arrival. Both
        // receivers of a deterministic two-flow run would otherwise share every boundary, and
        // that phase lock alone moved Jain's index of two CUBIC flows (tests/theory.rs) from
        // 0.99 to 0.93 at one start offset.
        self.delack_deadline = Some(now + ato * NS_PER_JIFFY);
    }

    /// When the receiver's next timer (delayed ACK or compressed SACK) is due.
    pub fn timer_deadline(&self) -> Option<Nanos> {
        match (self.delack_deadline, self.comp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Payload bytes delivered in order to the application.
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv_nxt * MSS as u64
    }

    /// Process one data segment; returns the ACK to send now, if any. A delayed ACK is
    /// signalled through `delack_deadline` instead.
    pub fn on_data(&mut self, now: Nanos, pkt: &Pkt) -> Option<Pkt> {
        self.data_received += 1;
        self.mib.in_segs += 1;
        self.mib.in_ce_pkts += pkt.ce as u64;
        let seq = pkt.seq;
        if self.timestamps {
            // PAWS (tcp_paws_discard): ts_recent - TSval > TCP_PAWS_WINDOW. Data segments are
            // never "disordered ACKs", so nothing rescues them.
            if self.ts_recent != 0 && self.ts_recent > pkt.ts + PAWS_WINDOW {
                self.mib.paws_estab += 1;
                self.paws_dropped += 1;
                return Some(self.send_dupack(now, seq));
            }
            // tcp_validate_incoming → tcp_sequence: a segment wholly left of rcv_wup (end_seq
            // before rcv_wup) is dropped as old with a duplicate ACK (D-SACK) before tcp_ack, so
            // it never reaches tcp_replace_ts_recent — a spurious retransmission of delivered
            // data must not move ts_recent. tcp_replace_ts_recent (in tcp_ack): only from a
            // segment at or left of rcv_wup, only forwards.
            let old_seq = seq + 1 < self.rcv_wup;
            if !old_seq && seq <= self.rcv_wup && pkt.ts >= self.ts_recent {
                self.ts_recent = pkt.ts;
            }
            // tcp_rcv_established → tcp_rcv_rtt_measure_ts, for every accepted full segment.
            self.window.on_tsecr(now, pkt.tsecr);
        }
        // A CWR ends the ECE echo (tcp_ecn_accept_cwr); ACK such a data segment at once.
        let ack_now = self.ecn.accept_cwr(pkt);
        if seq < self.rcv_nxt {
            // A retransmission of delivered data: D-SACK it at once (RFC 2883) and go back to
            // quick-ACK mode (tcp_data_queue → tcp_enter_quickack_mode), as send_dupack does.
            self.dup_received += 1;
            return Some(self.send_dupack(now, seq));
        }
        if self.ooo_contains(seq) {
            // Duplicate of out-of-order data (tcp_data_queue_ofo: fully covered → D-SACK).
            self.dup_received += 1;
            self.ecn_check_ce(now, pkt, self.rcv_nxt); // tcp_data_queue_ofo checks CE first
            self.mib.ofo_queue += 1;
            self.mib.dsack_ofo_sent += 1;
            // tcp_data_queue_ofo → add_sack: the block holding it moves to the front (the
            // compressed SACKs would be flushed first, but this D-SACK goes out at once anyway).
            let found = self.sacks.extend(seq);
            self.sacks.place(found, seq);
            self.rcvbuf_grow_ofo();
            return Some(self.make_ack(now, Some((seq, seq + 1)), false));
        }
        if seq == self.rcv_nxt {
            // tcp_event_data_recv: ato follows the gap since the last in-order data, and a gap
            // longer than the RTO restarts quick-ACK mode.
            self.adapt_ato(now);
            self.lrcvtime = Some(now);
            let old_nxt = self.rcv_nxt;
            self.rcv_nxt += 1;
            let had_holes = !self.ooo.is_empty();
            // Pull in a range that is now contiguous.
            if let Some(&(s, e)) = self.ooo.first() {
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo_segs -= e - s;
                    self.ooo.remove(0);
                }
            }
            // tcp_sack_remove: the blocks rcv_nxt now covers go (all once nothing is queued).
            if self.ooo.is_empty() {
                self.sacks.clear();
            } else {
                self.sacks.remove_covered(self.rcv_nxt);
            }
            self.check_complete(now);
            self.unacked += 1;
            // tcp_event_data_recv → tcp_ecn_check_ce, then tcp_grow_window, before the ACK
            // decision.
            let ce_ack_now = self.ecn_check_ce(now, pkt, old_nxt + 1);
            if self.window.grow(self.ooo_segs) {
                self.enter_quickack(1);
            }
            // __tcp_ack_snd_check. tcp_data_queue asks for an immediate ACK (ICSK_ACK_NOW) only
            // when the out-of-order queue becomes empty. Otherwise more than one segment since
            // the last ACK is ACKed at once only if the window offered now (`__tcp_select_window`,
            // whose free space still holds the data just delivered: the application has not
            // read it yet) reaches rcv_wnd; with the window at the clamp and data queued out of
            // order it does not. Then, with holes left, the ACK goes through the
            // SACK-compression path: the new rcv_nxt restarts the duplicate-ACK count and this
            // ACK is its first, so only two more out-of-order segments are ACKed at once before
            // compression starts.
            let gap_filled = had_holes && self.ooo.is_empty();
            let unread = self.rcv_nxt - old_nxt;
            let two_segs = self.rcv_nxt - self.rcv_wup > 1 && {
                let (advances, end_quick) = self.window.advances(self.ooo_segs + unread);
                if end_quick {
                    self.quick_left = 0;
                }
                advances
            };
            let ack = if two_segs || self.quick_left > 0 || ack_now || ce_ack_now || gap_filled {
                Some(self.make_ack(now, None, false))
            } else if !self.ooo.is_empty() {
                self.ack_or_compress(now, false)
            } else if self.rcv_nxt - self.rcv_wup > 1 {
                // tcp_cleanup_rbuf after the application's read: "Once-per-two-segments ACK
                // was not sent by tcp_input.c".
                Some(self.make_ack(now, None, false))
            } else {
                self.arm_delack(now);
                None
            };
            // The application reads what arrived in order (tcp_recvmsg → tcp_rcv_space_adjust).
            let ooo_end = self.ooo.last().map(|&(_, e)| e);
            self.window.on_read(now, old_nxt + 1, self.rcv_nxt, ooo_end);
            return ack;
        }
        // Out of order: insert into the ranges and SACK it, now or compressed.
        let ce_ack_now = self.ecn_check_ce(now, pkt, self.rcv_nxt); // tcp_data_queue_ofo → tcp_ecn_check_ce
        self.mib.ofo_queue += 1;
        self.insert_ooo(seq);
        self.ooo_segs += 1;
        // tcp_sack_new_ofo_skb: the segment extends a listed block or starts a new one; when
        // the block concerned lies beyond the first two, the SACKs held back by compression go
        // out first (tcp_sack_compress_send_ack), with the list as it stands at that point.
        let found = self.sacks.extend(seq);
        let flushed = (found.unwrap_or(self.sacks.len()) >= SACK_BLOCKS_EXPECTED && self.compressed_ack > 0)
            .then(|| self.make_ack(now, None, false));
        self.sacks.place(found, seq);
        // tcp_data_queue_ofo ends with tcp_grow_window for a queued segment (SACK flows).
        if self.window.grow(self.ooo_segs) {
            self.enter_quickack(1);
        }
        self.rcvbuf_grow_ofo();
        // The flushed ACK clears the pending-ACK state (tcp_event_ack_sent →
        // inet_csk_clear_xmit_timer(ICSK_TIME_DACK)), so tcp_ack_snd_check does nothing more
        // for this segment: it is neither ACKed nor counted as compressed; the next ACK reports
        // it.
        if flushed.is_some() {
            return flushed;
        }
        self.ack_or_compress(now, ack_now || ce_ack_now)
    }

    /// The last step of `tcp_data_queue_ofo`: `tcp_rcvbuf_grow` with the out-of-order span.
    fn rcvbuf_grow_ofo(&mut self) {
        if let Some(&(_, end)) = self.ooo.last() {
            self.window.on_ofo(self.rcv_nxt, end);
        }
    }

    /// `__tcp_ack_snd_check` with out-of-order data queued: quick-ACK mode or a pending
    /// ICSK_ACK_NOW (`ack_now`) sends at once; otherwise three duplicate ACKs per rcv_nxt go out
    /// at once, the rest are compressed.
    fn ack_or_compress(&mut self, now: Nanos, ack_now: bool) -> Option<Pkt> {
        if self.quick_left > 0 || ack_now || self.compressed_ack >= COMP_SACK_NR {
            return Some(self.make_ack(now, None, false));
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return Some(self.make_ack(now, None, false));
        }
        self.compressed_ack += 1;
        if self.comp_deadline.is_none() {
            self.comp_deadline = Some(now + self.comp_delay);
        }
        None
    }

    /// The delayed-ACK or compressed-SACK timer fired.
    pub fn on_delack_timer(&mut self, now: Nanos) -> Option<Pkt> {
        if self.comp_deadline.is_some_and(|d| d <= now) {
            // tcp_compressed_ack_kick: one ACK for everything held back.
            self.comp_deadline = None;
            if self.compressed_ack > 0 {
                return Some(self.make_ack(now, None, false));
            }
        }
        match self.delack_deadline {
            Some(d) if d <= now => {
                self.delack_deadline = None;
                if self.unacked > 0 {
                    // "Delayed ACK missed: inflate ATO" (not in pingpong mode: this receiver
                    // sends no data).
                    self.ato = (self.ato << 1).min(self.rto_jiffies());
                    self.mib.delayed_acks += 1;
                    Some(self.make_ack(now, None, true))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// `tcp_send_dupack` for a segment PAWS discarded: below rcv_nxt it is a spurious
    /// retransmission (D-SACK, quick-ACK mode); otherwise a plain immediate ACK.
    fn send_dupack(&mut self, now: Nanos, seq: u64) -> Pkt {
        if seq < self.rcv_nxt {
            self.mib.dsack_old_sent += 1;
            self.quick_left = QUICKACKS;
            self.make_ack(now, Some((seq, seq + 1)), false)
        } else {
            self.make_ack(now, None, false)
        }
    }

    fn check_complete(&mut self, now: Nanos) {
        if let (Some(total), None) = (self.total_segs, self.completed_at) {
            if self.rcv_nxt >= total {
                self.completed_at = Some(now);
            }
        }
    }

    /// Index of the out-of-order range holding `seq`, if any (binary search).
    fn ooo_index(&self, seq: u64) -> Option<usize> {
        let i = self.ooo.partition_point(|&(s, _)| s <= seq);
        (i > 0 && seq < self.ooo[i - 1].1).then(|| i - 1)
    }

    fn ooo_contains(&self, seq: u64) -> bool {
        self.ooo_index(seq).is_some()
    }

    fn insert_ooo(&mut self, seq: u64) {
        let i = self.ooo.partition_point(|&(s, _)| s <= seq);
        // Merge with the block on the left (ends at seq) and/or on the right (starts at seq+1).
        let left = i > 0 && self.ooo[i - 1].1 == seq;
        let right = i < self.ooo.len() && self.ooo[i].0 == seq + 1;
        match (left, right) {
            (true, true) => {
                self.ooo[i - 1].1 = self.ooo[i].1;
                self.ooo.remove(i);
            }
            (true, false) => self.ooo[i - 1].1 = seq + 1,
            (false, true) => self.ooo[i].0 = seq,
            (false, false) => self.ooo.insert(i, (seq, seq + 1)),
        }
    }

    /// DCTCP's ACK of the data before a change of CE state (`__tcp_send_ack(sk, prior_rcv_nxt)`
    /// from `dctcp_ece_ack_update`): it acknowledges `ack_seq` with ECE `ece`; the window and
    /// rcv_wup are refreshed as for any segment sent (`tcp_select_window`), and the SACKs held
    /// back go with it, but since it does not acknowledge rcv_nxt, `tcp_event_ack_sent` leaves
    /// the delayed-ACK timer and the quick-ACK count alone.
    fn make_early_ack(&mut self, now: Nanos, ack_seq: u64, ece: bool) -> Pkt {
        self.mib.out_segs += 1;
        let (wnd, end_quick) = self.window.select(self.rcv_nxt, self.rcv_wup, self.ooo_segs);
        if end_quick {
            self.quick_left = 0;
        }
        self.rcv_wup = self.rcv_nxt;
        self.compressed_ack = 0;
        self.comp_deadline = None;
        let mut pkt = Pkt {
            flow: self.flow,
            kind: PktKind::Ack,
            bytes: ACK_PKT_BYTES,
            seq: ack_seq,
            ts: if self.timestamps { ts_tick(now) } else { 0 },
            tsecr: if self.timestamps { self.ts_recent } else { 0 },
            wnd,
            sack: [(0, 0); 3],
            nsack: 0,
            dsack: false,
            delayed: false,
            ect: self.ecn.ack_ect(),
            ce: false,
            ece,
            cwr: false,
            ect1: self.ecn.ack_ect1(),
            ace: self.ecn.ace(),
            depart_ns: 0,
        };
        let blocks = self.sacks.blocks();
        let n = blocks.len().min(3);
        pkt.sack[..n].copy_from_slice(&blocks[..n]);
        pkt.nsack = n as u8;
        pkt
    }

    fn make_ack(&mut self, now: Nanos, dsack: Option<SackBlock>, delayed: bool) -> Pkt {
        self.mib.out_segs += 1;
        // tcp_select_window (from tcp_transmit_skb): the window, from the old rcv_wup.
        let (wnd, end_quick) = self.window.select(self.rcv_nxt, self.rcv_wup, self.ooo_segs);
        if end_quick {
            self.quick_left = 0;
        }
        self.rcv_wup = self.rcv_nxt;
        self.unacked = 0;
        self.delack_deadline = None;
        // tcp_event_ack_sent: the held-back SACKs go with this ACK; one quick-ACK used up.
        self.compressed_ack = 0;
        self.comp_deadline = None;
        self.quick_left = self.quick_left.saturating_sub(1);
        let mut pkt = Pkt {
            flow: self.flow,
            kind: PktKind::Ack,
            bytes: ACK_PKT_BYTES,
            seq: self.rcv_nxt,
            ts: if self.timestamps { ts_tick(now) } else { 0 },
            tsecr: if self.timestamps { self.ts_recent } else { 0 },
            wnd,
            sack: [(0, 0); 3],
            nsack: 0,
            dsack: dsack.is_some(),
            delayed,
            // A pure ACK is Not-ECT (RFC 3168 §6.1.4) except from a DCTCP host; ECE while the
            // echo lasts.
            ect: self.ecn.ack_ect(),
            ce: false,
            ece: self.ecn.ece(),
            cwr: false,
            ect1: self.ecn.ack_ect1(),
            ace: self.ecn.ace(),
            depart_ns: 0,
        };
        let mut n = 0;
        if let Some(d) = dsack {
            pkt.sack[0] = d;
            n = 1;
        }
        // tcp_options_write: the D-SACK block first, then the list, as many as fit.
        for &b in self.sacks.blocks() {
            if n == 3 {
                break;
            }
            pkt.sack[n] = b;
            n += 1;
        }
        pkt.nsack = n as u8;
        pkt
    }
}

#[cfg(test)]
mod tests;
