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
//! is ACKed at once.
//!
//! The window each ACK offers, and its autotuning from a 64 KB start, are in tcp/rcv_window.rs;
//! while that window grows, every segment is ACKed at once (`tcp_grow_window`'s quick ACK).
//! Simplifications: no pingpong (interactive) mode, since the receiver sends no data.
use super::ecn::ReceiverEcn;
use super::mib::Mib;
use super::rcv_window::RcvWindow;
use super::{ts_tick, Pkt, PktKind, SackBlock, ACK_PKT_BYTES, MSS};
use crate::time::{jiffies, Nanos, HZ, NS_PER_JIFFY, NS_PER_MS};

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
/// TCP_NUM_SACKS: SACK blocks the receiver remembers.
const NUM_SACKS: usize = 4;
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
    sacks: [SackBlock; NUM_SACKS],
    num_sacks: usize,
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
    /// ECN state (off unless `with_ecn`).
    pub ecn: ReceiverEcn,
}

impl Receiver {
    pub fn new(flow: u32, total_segs: Option<u64>, timestamps: bool) -> Self {
        Receiver {
            flow,
            rcv_nxt: 0,
            rcv_wup: 0,
            ooo: Vec::new(),
            ooo_segs: 0,
            window: RcvWindow::new(super::rcv_window::RMEM_MAX_DEFAULT),
            sacks: [(0, 0); NUM_SACKS],
            num_sacks: 0,
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
            let quick = self.ecn.check_ce(pkt); // tcp_data_queue_ofo checks CE first
            self.enter_quickack(quick);
            self.mib.ofo_queue += 1;
            self.mib.dsack_ofo_sent += 1;
            // tcp_data_queue_ofo → add_sack: the block holding it moves to the front (the
            // compressed SACKs would be flushed first, but this D-SACK goes out at once anyway).
            let found = self.sack_extend(seq);
            self.sack_place(found, seq);
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
            self.sack_remove();
            self.check_complete(now);
            self.unacked += 1;
            // tcp_event_data_recv → tcp_ecn_check_ce, then tcp_grow_window, before the ACK
            // decision.
            let quick = self.ecn.check_ce(pkt);
            self.enter_quickack(quick);
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
            let ack = if two_segs || self.quick_left > 0 || ack_now || gap_filled {
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
        let quick = self.ecn.check_ce(pkt); // tcp_data_queue_ofo → tcp_ecn_check_ce
        self.enter_quickack(quick);
        self.mib.ofo_queue += 1;
        self.insert_ooo(seq);
        self.ooo_segs += 1;
        // tcp_sack_new_ofo_skb: the segment extends a listed block or starts a new one; when
        // the block concerned lies beyond the first two, the SACKs held back by compression go
        // out first (tcp_sack_compress_send_ack), with the list as it stands at that point.
        let found = self.sack_extend(seq);
        let flushed = (found.unwrap_or(self.num_sacks) >= SACK_BLOCKS_EXPECTED && self.compressed_ack > 0)
            .then(|| self.make_ack(now, None, false));
        self.sack_place(found, seq);
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
        self.ack_or_compress(now, ack_now)
    }

    /// The last step of `tcp_data_queue_ofo`: `tcp_rcvbuf_grow` with the out-of-order span.
    fn rcvbuf_grow_ofo(&mut self) {
        if let Some(&(_, end)) = self.ooo.last() {
            self.window.on_ofo(self.rcv_nxt, end);
        }
    }

    /// First half of `tcp_sack_new_ofo_skb`: the index of the listed block that `seq` touches
    /// or overlaps, grown to cover it in place (`tcp_sack_extend`); None if there is none.
    fn sack_extend(&mut self, seq: u64) -> Option<usize> {
        let i = (0..self.num_sacks).find(|&i| {
            let (s, e) = self.sacks[i];
            s <= seq + 1 && seq <= e
        })?;
        let b = &mut self.sacks[i];
        b.0 = b.0.min(seq);
        b.1 = b.1.max(seq + 1);
        Some(i)
    }

    /// Second half of `tcp_sack_new_ofo_skb`: an extended block moves to the front and absorbs
    /// the listed blocks it now touches (`tcp_sack_maybe_coalesce`); otherwise a new block
    /// [seq, seq+1) goes to the front and, in a full list, the last one is forgotten.
    fn sack_place(&mut self, found: Option<usize>, seq: u64) {
        match found {
            Some(i) => {
                self.sacks[..=i].rotate_right(1);
                let mut j = 1;
                while j < self.num_sacks {
                    let (s, e) = self.sacks[j];
                    let f = &mut self.sacks[0];
                    if f.0 <= e && s <= f.1 {
                        f.0 = f.0.min(s);
                        f.1 = f.1.max(e);
                        self.sacks.copy_within(j + 1..self.num_sacks, j);
                        self.num_sacks -= 1;
                    } else {
                        j += 1;
                    }
                }
            }
            None => {
                let keep = self.num_sacks.min(NUM_SACKS - 1);
                self.sacks.copy_within(0..keep, 1);
                self.sacks[0] = (seq, seq + 1);
                self.num_sacks = keep + 1;
            }
        }
    }

    /// `tcp_sack_remove`: after rcv_nxt advanced, drop the blocks it now covers (all of them
    /// once the out-of-order queue is empty).
    fn sack_remove(&mut self) {
        if self.ooo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let nxt = self.rcv_nxt;
        let mut j = 0;
        while j < self.num_sacks {
            if self.sacks[j].0 <= nxt {
                self.sacks.copy_within(j + 1..self.num_sacks, j);
                self.num_sacks -= 1;
            } else {
                j += 1;
            }
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
            // A pure ACK is Not-ECT (RFC 3168 §6.1.4); ECE while the echo lasts.
            ect: false,
            ce: false,
            ece: self.ecn.ece(),
            cwr: false,
        };
        let mut n = 0;
        if let Some(d) = dsack {
            pkt.sack[0] = d;
            n = 1;
        }
        // tcp_options_write: the D-SACK block first, then the list, as many as fit.
        for &b in &self.sacks[..self.num_sacks] {
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
mod tests {
    use super::*;

    fn seg(seq: u64) -> Pkt {
        Pkt::data(0, seq, seq * 10 + 1)
    }

    fn seg_ts(seq: u64, ts: u64) -> Pkt {
        Pkt::data(0, seq, ts)
    }

    /// A receiver whose window cannot grow past the initial clamp (rwnd = 81 920 bytes): it is
    /// fully open after the first six segments, so window growth asks for no quick ACKs and
    /// the delayed-ACK machinery is seen alone.
    fn open_window_receiver() -> Receiver {
        Receiver::new(0, None, true).with_rwnd(81_920)
    }

    #[test]
    fn quickack_then_every_second_segment() {
        let mut r = Receiver::new(0, None, true);
        let mut acks = 0;
        for s in 0..QUICKACKS as u64 {
            acks += r.on_data(0, &seg(s)).is_some() as u32;
        }
        assert_eq!(acks, QUICKACKS);
        // After quick-ACK mode: one ACK per two segments, the odd one waits on the timer.
        assert!(r.on_data(0, &seg(16)).is_none());
        assert_eq!(r.delack_deadline, Some(DELACK_NS));
        let a = r.on_data(0, &seg(17)).expect("second segment is ACKed");
        assert_eq!(a.seq, 18);
        assert!(r.on_data(5, &seg(18)).is_none());
        let a = r.on_delack_timer(5 + DELACK_NS).expect("timer ACK");
        assert!(a.delayed && a.seq == 19);
        assert_eq!(r.mib.delayed_acks, 1);
    }

    /// SACK compression: past quick-ACK mode, a hole gets three immediate duplicate ACKs, then
    /// one ACK per min(1 ms, RTT/20); filling the hole is ACKed at once.
    #[test]
    fn sack_compression_after_three_dupacks() {
        let mut r = Receiver::new(0, None, true);
        r.set_rtt(50 * NS_PER_MS);
        for s in 0..20 {
            r.on_data(0, &seg(s));
        }
        r.on_delack_timer(DELACK_NS);
        let t = 100 * NS_PER_MS;
        let acked: Vec<bool> = (21..31).map(|s| r.on_data(t, &seg(s)).is_some()).collect();
        assert_eq!(&acked[..4], &[true, true, true, false], "three dupacks, then compressed");
        assert!(acked[4..].iter().all(|a| !a));
        assert_eq!(r.timer_deadline(), Some(t + NS_PER_MS), "min(1 ms, 50 ms / 20)");
        let a = r.on_delack_timer(t + NS_PER_MS).expect("the compressed SACK");
        assert_eq!(a.seq, 20);
        assert_eq!(a.sacks()[0], (21, 31));
        assert_eq!(r.on_data(t + NS_PER_MS, &seg(20)).map(|a| a.seq), Some(31));
    }

    /// In-order data that leaves holes goes through __tcp_ack_snd_check's SACK-compression
    /// path (tcp_data_queue sets ICSK_ACK_NOW only once the out-of-order queue is empty, and
    /// with out-of-order data queued the window offer is below rcv_wnd): it is ACKed at once
    /// as the first duplicate ACK of the new rcv_nxt, so two more out-of-order segments are
    /// ACKed before compression. The kernel (Reno, 50 ms, ±4 ms uniform jitter with
    /// reordering, packet capture) ACKed the first two out-of-order segments after such an
    /// advance 99 % of the time and the third 10-18 %.
    #[test]
    fn in_order_data_leaving_holes_is_the_first_dupack() {
        let mut r = open_window_receiver();
        r.set_rtt(50 * NS_PER_MS);
        for s in 0..20 {
            r.on_data(0, &seg(s));
        }
        r.on_delack_timer(DELACK_NS);
        let t = 100 * NS_PER_MS;
        let acked: Vec<bool> = [22, 23, 24, 25].iter().map(|&s| r.on_data(t, &seg(s)).is_some()).collect();
        assert_eq!(acked, [true, true, true, false]);
        // 20 fills part of the gap (21 still missing): ACKed at once, as the first duplicate
        // ACK for rcv_nxt 21, carrying the compressed SACKs too.
        let a = r.on_data(t, &seg(20)).expect("in-order data is ACKed");
        assert_eq!((a.seq, a.sacks()), (21, &[(22, 26)][..]));
        let acked: Vec<bool> = [26, 27, 28, 29].iter().map(|&s| r.on_data(t, &seg(s)).is_some()).collect();
        assert_eq!(acked, [true, true, false, false], "two more duplicate ACKs, then compressed");
        // Filling the last hole empties the queue: ICSK_ACK_NOW.
        assert_eq!(r.on_data(t, &seg(21)).map(|a| a.seq), Some(30));
        // Back in order: every second segment.
        assert!(r.on_data(t, &seg(30)).is_none());
        assert!(r.on_data(t, &seg(31)).is_some());
        // In-order data that pulls in queued segments (more than one segment since the last
        // ACK) while holes remain: the window offered, with that data still unread and data
        // queued out of order, stays below rcv_wnd, so this too is the first duplicate ACK.
        let acked: Vec<bool> = [33, 34, 36, 38].iter().map(|&s| r.on_data(t, &seg(s)).is_some()).collect();
        assert_eq!(acked, [true, true, true, false]);
        let a = r.on_data(t, &seg(32)).expect("ACKed");
        assert_eq!((a.seq, a.sacks()), (35, &[(38, 39), (36, 37)][..]));
        let acked: Vec<bool> = [39, 40, 41].iter().map(|&s| r.on_data(t, &seg(s)).is_some()).collect();
        assert_eq!(acked, [true, true, false]);
    }

    /// Linux 6.18 tcp_event_data_recv: in-order data after a silence longer than the receiver's
    /// RTO (handshake RTT 50 ms: 50 + max(100, 200) = 250 ms) is ACKed one by one again;
    /// after a shorter silence the odd segment waits for the delayed-ACK timer.
    #[test]
    fn gap_longer_than_rto_restarts_quickack_mode() {
        let ms = NS_PER_MS;
        let mut r = open_window_receiver();
        r.set_rtt(50 * ms);
        for s in 0..QUICKACKS as u64 {
            r.on_data(0, &seg(s));
        }
        assert!(r.on_data(0, &seg(16)).is_none(), "past quick-ACK mode");
        r.on_delack_timer(DELACK_NS);
        // 200 ms of silence (< 250 ms): not a restart.
        let t1 = DELACK_NS + 200 * ms;
        assert!(r.on_data(t1, &seg(17)).is_none());
        r.on_delack_timer(t1 + DELACK_NS);
        // 260 ms of silence after the last in-order data: quick-ACK mode again.
        let t2 = t1 + 260 * ms;
        let acked = (18..18 + QUICKACKS as u64).filter(|&s| r.on_data(t2, &seg(s)).is_some()).count();
        assert_eq!(acked, QUICKACKS as usize);
        assert!(r.on_data(t2, &seg(18 + QUICKACKS as u64)).is_none(), "and it runs out");
    }

    /// Linux's `ato`: each firing of the delayed-ACK timer doubles it (up to the RTO: 50 ms
    /// handshake RTT → 250 ms = 63 jiffies), the armed timeout is capped at the srtt (50 ms →
    /// 13 jiffies = 52 ms), and in-order data 20 ms apart or closer brings it back to 40 ms.
    #[test]
    fn delayed_ack_timeout_adapts_as_linux_ato() {
        let ms = NS_PER_MS;
        let mut r = open_window_receiver();
        r.set_rtt(50 * ms);
        for s in 0..=QUICKACKS as u64 {
            r.on_data(0, &seg(s));
        }
        assert_eq!(r.ato_jiffies(), 10);
        assert_eq!(r.timer_deadline(), Some(40 * ms), "TCP_ATO_MIN at first");
        assert!(r.on_delack_timer(40 * ms).is_some());
        assert_eq!(r.ato_jiffies(), 20, "missed: inflated");
        // A gap (60 ms) at least as long as ato leaves it; the armed timeout is capped at srtt.
        assert!(r.on_data(100 * ms, &seg(17)).is_none());
        assert_eq!(r.ato_jiffies(), 20);
        assert_eq!(r.timer_deadline(), Some(100 * ms + 52 * ms), "min(ato, srtt rounded up)");
        r.on_delack_timer(152 * ms);
        assert_eq!(r.ato_jiffies(), 40);
        assert!(r.on_data(300 * ms, &seg(18)).is_none());
        r.on_delack_timer(352 * ms);
        assert_eq!(r.ato_jiffies(), 63, "capped at the RTO");
        // A gap shorter than ato pulls it towards the gap: 63 / 2 + 25 = 56 jiffies.
        assert!(r.on_data(400 * ms, &seg(19)).is_none());
        assert_eq!(r.ato_jiffies(), 56);
        // Data 4 ms apart: halfway to 20 ms each time, down to TCP_ATO_MIN.
        let mut t = 400 * ms;
        let mut seen = vec![];
        for s in 20..35 {
            t += 4 * ms;
            r.on_data(t, &seg(s));
            seen.push(r.ato_jiffies());
        }
        assert_eq!(&seen[..7], &[33, 21, 15, 12, 11, 10, 10]);
        // Back at the minimum, an odd segment waits 40 ms again.
        let t2 = t + 100 * ms;
        assert!(r.on_data(t2, &seg(35)).is_none());
        assert_eq!(r.timer_deadline(), Some(t2 + 40 * ms));
    }

    /// Without an RTT sample the RTO is TCP_TIMEOUT_INIT (1 s), so 500 ms of silence is no gap.
    #[test]
    fn gap_is_measured_against_the_initial_rto_without_a_sample() {
        let ms = NS_PER_MS;
        let mut r = Receiver::new(0, None, true);
        for s in 0..=QUICKACKS as u64 {
            r.on_data(0, &seg(s));
        }
        r.on_delack_timer(DELACK_NS);
        assert!(r.on_data(DELACK_NS + 500 * ms, &seg(17)).is_none());
    }

    #[test]
    fn duplicate_below_rcv_nxt_restarts_quickack_mode() {
        let mut r = Receiver::new(0, None, true);
        for s in 0..20 {
            r.on_data(0, &seg(s));
        }
        assert!(r.on_data(0, &seg(20)).is_none(), "past quick-ACK mode: the odd segment waits");
        let a = r.on_data(0, &seg(5)).expect("a duplicate is ACKed at once");
        assert!(a.dsack);
        // Back in quick-ACK mode: every segment is ACKed.
        assert!(r.on_data(0, &seg(21)).is_some());
        assert!(r.on_data(0, &seg(22)).is_some());
        assert_eq!(r.mib.dsack_old_sent, 1);
    }

    #[test]
    fn sack_blocks_and_dsack() {
        let mut r = Receiver::new(0, None, true);
        r.on_data(0, &seg(0));
        let a = r.on_data(0, &seg(2)).unwrap();
        assert_eq!((a.seq, a.sacks()), (1, &[(2, 3)][..]));
        let a = r.on_data(0, &seg(5)).unwrap();
        assert_eq!(a.sacks(), &[(5, 6), (2, 3)][..]);
        let a = r.on_data(0, &seg(3)).unwrap();
        assert_eq!(a.sacks(), &[(2, 4), (5, 6)][..]);
        // Filling the hole at 1 pulls in 2..4 and is ACKed at once.
        let a = r.on_data(0, &seg(1)).unwrap();
        assert_eq!((a.seq, a.sacks()), (4, &[(5, 6)][..]));
        // A duplicate is D-SACKed.
        let a = r.on_data(0, &seg(2)).unwrap();
        assert!(a.dsack);
        assert_eq!(a.sacks()[0], (2, 3));
        // A duplicate of out-of-order data too.
        let a = r.on_data(0, &seg(5)).unwrap();
        assert!(a.dsack && a.sacks()[0] == (5, 6));
        assert_eq!((r.mib.ofo_queue, r.mib.dsack_old_sent, r.mib.dsack_ofo_sent), (4, 1, 1));
    }

    #[test]
    fn timestamp_echo_follows_rfc7323() {
        let mut r = Receiver::new(0, None, true);
        r.on_data(0, &seg(0)); // ts 1, ACK sent, rcv_wup = 1
        let a = r.on_data(0, &seg(2)).unwrap(); // out of order: ts_recent unchanged
        assert_eq!(a.tsecr, 1);
        let a = r.on_data(0, &seg(1)).unwrap(); // at Last.ACK.sent: echoed
        assert_eq!(a.tsecr, 11);
        // The ACK carries the receiver's own clock as TSval.
        let a = r.on_data(7_000_000, &seg(4)).unwrap();
        assert_eq!(a.ts, ts_tick(7_000_000));
    }

    /// The reordering case of Linux's PAWS: a retransmission fills the hole, ts_recent jumps to
    /// its fresh TSval, and an original sent earlier but delayed longer is discarded.
    #[test]
    fn paws_discards_reordered_original_after_hole_fill() {
        for timestamps in [true, false] {
            let mut r = Receiver::new(0, None, timestamps);
            r.on_data(0, &seg_ts(0, 100));
            r.on_data(0, &seg_ts(2, 100)); // hole at 1
            r.on_data(0, &seg_ts(3, 100));
            let a = r.on_data(0, &seg_ts(1, 200)).unwrap(); // the retransmission, 100 ms later
            assert_eq!(a.seq, 4);
            // The original of 4, sent at tick 101 and delayed: older than ts_recent - 1.
            let a = r.on_data(0, &seg_ts(4, 101)).expect("PAWS answers with a duplicate ACK");
            if timestamps {
                assert_eq!(a.seq, 4, "discarded, not delivered");
                assert!(!a.dsack);
                assert_eq!((r.mib.paws_estab, r.paws_dropped), (1, 1));
                // Within TCP_PAWS_WINDOW (one tick) it is accepted.
                assert_eq!(r.on_data(0, &seg_ts(4, 199)).map(|a| a.seq), Some(5));
            } else {
                assert_eq!(a.seq, 5, "without timestamps nothing is discarded");
                assert_eq!(r.mib.paws_estab, 0);
            }
        }
    }

    /// An ECT segment of an ECN connection; `ce`: marked on the way; `cwr`: the CWR flag.
    fn ecn_seg(seq: u64, ce: bool, cwr: bool) -> Pkt {
        let mut p = seg(seq);
        p.ect = true;
        p.ce = ce;
        p.cwr = cwr;
        p
    }

    /// RFC 3168 §6.1.3 and Linux `__tcp_ecn_check_ce` / `tcp_ecn_accept_cwr`: a CE mark sets
    /// DEMAND_CWR and two quick ACKs; every ACK carries ECE until a segment with CWR arrives,
    /// which is ACKed at once; a further CE while the echo lasts asks for nothing more.
    #[test]
    fn ece_is_echoed_on_every_ack_from_ce_until_cwr() {
        let mut r = Receiver::new(0, None, true).with_ecn(true);
        for s in 0..20 {
            assert!(!r.on_data(0, &ecn_seg(s, false, false)).is_some_and(|a| a.ece), "no ECE before CE");
        }
        r.on_delack_timer(DELACK_NS);
        // Past quick-ACK mode: the CE segment is ACKed at once, and the next one too.
        let t = 100 * NS_PER_MS;
        let a = r.on_data(t, &ecn_seg(20, true, false)).expect("CE: quick ACK");
        assert!(a.ece);
        let a = r.on_data(t, &ecn_seg(21, false, false)).expect("second quick ACK");
        assert!(a.ece, "ECE on every ACK while DEMAND_CWR");
        // Quick ACKs used up: one ACK per two segments again, each with ECE.
        assert!(r.on_data(t, &ecn_seg(22, false, false)).is_none());
        assert!(r.on_data(t, &ecn_seg(23, false, false)).expect("second segment").ece);
        assert!(r.on_data(t, &ecn_seg(24, true, false)).is_none(), "CE while echoing: no quick ACK");
        assert!(r.on_delack_timer(t + DELACK_NS).expect("timer ACK").ece);
        let (mut r2, mut r3) = (r.clone(), r.clone());
        // A duplicate (D-SACK) ACK carries ECE too.
        assert!(r3.on_data(t, &ecn_seg(3, false, false)).expect("dup").ece);
        // The CWR segment ends the echo and is ACKed at once although it is the odd one.
        let a = r.on_data(t, &ecn_seg(25, false, true)).expect("CWR: ACK now");
        assert!(!a.ece, "CWR received: echo ends");
        for s in 26..30 {
            assert!(!r.on_data(t, &ecn_seg(s, false, false)).is_some_and(|a| a.ece));
        }
        assert_eq!(r.ecn.ce_received, 2);
        // A segment with both CWR and CE: the echo ends and starts again (accept_cwr first).
        let a = r2.on_data(t, &ecn_seg(25, true, true)).expect("ACK now");
        assert!(a.ece);
    }

    /// Without ECN negotiated the CE mark is not echoed and asks for no quick ACK.
    #[test]
    fn no_echo_without_ecn() {
        let mut r = Receiver::new(0, None, true);
        for s in 0..20 {
            r.on_data(0, &ecn_seg(s, false, false));
        }
        r.on_delack_timer(DELACK_NS);
        assert!(r.on_data(NS_PER_MS, &ecn_seg(20, true, false)).is_none(), "odd segment waits");
        assert!(!r.on_data(NS_PER_MS, &ecn_seg(21, false, false)).unwrap().ece);
    }

    /// `__tcp_ecn_check_ce`'s "funny extension": a Not-ECT segment after ECT ones (a
    /// retransmission) asks for quick ACKs.
    #[test]
    fn not_ect_after_ect_enters_quickack_mode() {
        let mut r = Receiver::new(0, None, true).with_ecn(true);
        for s in 0..20 {
            r.on_data(0, &ecn_seg(s, false, false));
        }
        r.on_delack_timer(DELACK_NS);
        assert!(r.on_data(0, &ecn_seg(20, false, false)).is_none());
        r.on_delack_timer(DELACK_NS);
        assert!(r.on_data(DELACK_NS, &seg(21)).is_some(), "Not-ECT after ECT: quick ACK");
    }

    /// Linux keeps at most TCP_NUM_SACKS = 4 blocks, most recently changed first
    /// (`tcp_sack_new_ofo_skb`), and with SACK compression under way it first sends the ACKs
    /// held back whenever a block beyond the first two changes (`tcp_sack_compress_send_ack`,
    /// TCP_SACK_BLOCKS_EXPECTED = 2), so that a block does not fall off the list unreported.
    #[test]
    fn sack_list_and_compressed_ack_flush() {
        let mut r = Receiver::new(0, None, true);
        for s in 0..20 {
            r.on_data(0, &seg(s));
        }
        r.on_delack_timer(DELACK_NS); // past quick-ACK mode, everything ACKed
        let t = DELACK_NS;
        // A hole at 20: three duplicate ACKs go out at once, then compression starts.
        for s in [22, 24, 26] {
            assert!(r.on_data(t, &seg(s)).is_some());
        }
        assert!(r.on_data(t, &seg(28)).is_none(), "compressed");
        // 30 starts a fifth block: the held-back ACK goes out first, with the list as it was
        // (the first three of [28, 26, 24, 22]). That ACK clears the pending-ACK state, so 30
        // itself is neither ACKed nor held back (tcp_ack_snd_check finds no ACK scheduled).
        let a = r.on_data(t, &seg(30)).expect("flush of the compressed ACK");
        assert_eq!((a.seq, a.sacks()), (20, &[(28, 29), (26, 27), (24, 25)][..]));
        assert_eq!(r.timer_deadline(), None, "nothing held back");
        // Extending the first block (31 joins 30) flushes nothing; 31 is held back.
        assert!(r.on_data(t, &seg(31)).is_none());
        // 25 extends the third block (26, found before 24), which is flushed as extended; it
        // then moves to the front and absorbs 24, which it now touches. 22 fell off the list:
        // it is not reported again (the queue still holds it).
        let a = r.on_data(t, &seg(25)).expect("flush");
        assert_eq!(a.sacks(), &[(30, 32), (28, 29), (25, 27)][..]);
        assert_eq!(r.timer_deadline(), None);
        // A new block with nothing held back is compressed; the timer sends it.
        assert!(r.on_data(t, &seg(34)).is_none());
        let a = r.on_delack_timer(t + COMP_SACK_DELAY_NS).expect("compressed-ACK timer");
        assert_eq!(a.sacks(), &[(34, 35), (24, 27), (30, 32)][..]);
        // 20 arrives (21 is still missing); the listed blocks all stay above.
        let a = r.on_data(t, &seg(20)).unwrap();
        assert_eq!((a.seq, a.sacks()), (21, &[(34, 35), (24, 27), (30, 32)][..]));
    }

    /// A spurious retransmission that arrives after its original (the usual case under
    /// reordering: RACK marked the original lost, it was only late) is a duplicate wholly below
    /// rcv_wup. Linux drops it in tcp_validate_incoming (tcp_sequence: end_seq before rcv_wup)
    /// with a D-SACK, before tcp_ack could update ts_recent; so originals still in flight that
    /// were sent before the retransmission are not PAWS victims.
    #[test]
    fn old_duplicate_does_not_move_ts_recent() {
        let mut r = Receiver::new(0, None, true);
        for s in 0..20 {
            r.on_data(0, &seg_ts(s, 100 + s));
        }
        // Everything ACKed (by the delayed-ACK timer or before): rcv_wup = 20.
        r.on_delack_timer(DELACK_NS);
        let echo = r.ts_recent;
        assert!((118..=119).contains(&echo));
        // The retransmission of 5, sent 30 ticks later: D-SACKed, ts_recent unchanged.
        let a = r.on_data(DELACK_NS, &seg_ts(5, 150)).unwrap();
        assert!(a.dsack);
        assert_eq!(a.tsecr, echo);
        // An original sent before the retransmission and delayed is accepted, not discarded.
        let a = r.on_data(DELACK_NS, &seg_ts(20, 120)).unwrap();
        assert_eq!(a.seq, 21);
        assert_eq!(r.mib.paws_estab, 0);
        // The segment just below rcv_wup (end_seq == rcv_wup) passes tcp_sequence and does
        // update ts_recent, as in Linux.
        let a = r.on_data(DELACK_NS, &seg_ts(20, 160)).unwrap();
        assert!(a.dsack);
        assert_eq!(a.tsecr, 160);
    }

    #[test]
    fn ts_recent_never_moves_backwards() {
        let mut r = Receiver::new(0, None, true);
        r.on_data(0, &seg_ts(0, 50));
        // In order, at rcv_wup, one tick older: passes PAWS but must not lower ts_recent.
        let a = r.on_data(0, &seg_ts(1, 49)).unwrap();
        assert_eq!(a.tsecr, 50);
        // A duplicate far in the past is a PAWS discard answered with a D-SACK.
        let a = r.on_data(0, &seg_ts(0, 10)).unwrap();
        assert!(a.dsack);
        assert_eq!(r.mib.paws_estab, 1);
    }
}
