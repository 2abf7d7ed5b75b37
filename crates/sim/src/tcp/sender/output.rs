//! Sending and pacing: the counterpart of Linux `net/ipv4/tcp_output.c` (`tcp_write_xmit`,
//! `tcp_xmit_retransmit_queue`, `tcp_transmit_skb`, `tcp_update_skb_after_send`,
//! `tcp_cwnd_validate`).
//!
//! Two functions here live elsewhere in Linux but belong to the transmit path of this model:
//! `check_app_limited` (`tcp_rate_check_app_limited`, tcp_rate.c) and `update_pacing_rate`
//! (`tcp_update_pacing_rate`, tcp_input.c).
use super::{Seg, Sender, TimerKind, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED, NIL};
use crate::cc::{CaEvent, CaState};
use crate::tcp::{ts_tick, Pkt, MSS};
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};

/// sysctl tcp_min_tso_segs.
const MIN_TSO_SEGS: u64 = 2;
/// sk_pacing_shift: a TSO skb carries about 2^-10 s of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// sysctl tcp_tso_rtt_log.
const TSO_RTT_LOG: u32 = 9;
/// sk_gso_max_size of a veth or Ethernet device without BIG TCP (GSO_LEGACY_MAX_SIZE).
const GSO_MAX_BYTES: u64 = 65536;
/// sysctl tcp_tso_win_divisor.
const TSO_WIN_DIVISOR: u64 = 3;

impl Sender {
    /// Start the connection (the handshake is not modelled: the first data segment leaves at
    /// the flow's start time with the initial window).
    pub fn start(&mut self, now: Nanos) -> &[Pkt] {
        self.started = true;
        if let Some(rtt) = self.handshake_rtt_us {
            self.rtt.sample(rtt, 0, 0);
            self.rtt.update_min(rtt);
        }
        self.refresh_sk(now);
        self.cc.init(&mut self.sk);
        self.wstamp = now;
        self.cwnd_avg.set(now, self.sk.cwnd as f64);
        self.transmit(now)
    }

    /// Send what cwnd, rwnd and pacing allow: retransmissions first, then new data.
    pub fn transmit(&mut self, now: Nanos) -> &[Pkt] {
        self.out.clear();
        self.transmit_more(now);
        &self.out
    }

    /// `tcp_xmit_retransmit_queue` + `tcp_write_xmit`, appending to `self.out`.
    pub(super) fn transmit_more(&mut self, now: Nanos) {
        if !self.started {
            return;
        }
        let sent_before = self.out.len();
        let mut sent_new = false;
        let had_out = self.packets_out() > 0;
        let mut cwnd_blocked = false;
        // Segments left in the TSO skb being sent (tcp_write_xmit sends whole skbs).
        let mut skb_left = 0u64;
        loop {
            // tcp_write_xmit and tcp_xmit_retransmit_queue check pacing once per skb: the
            // segments of a TSO skb leave back to back, and tcp_update_skb_after_send then
            // moves the next departure on by the whole skb's length at the pacing rate.
            // With fq's EDT pacing (SK_PACING_FQ) tcp_pacing_check does not apply: TSQ below
            // bounds what is released ahead of time instead.
            let paced = (self.sk.pacing_enabled || self.force_pacing) && !self.edt;
            if paced && skb_left == 0 && self.wstamp > now {
                break;
            }
            if self.in_flight() >= self.sk.cwnd {
                cwnd_blocked = true;
                break;
            }
            if let Some(seq) = self.next_retransmit() {
                // tcp_xmit_retransmit_queue: one pacing check per skb, and tcp_retransmit_skb
                // sends the whole lost skb (up to the cwnd room and tcp_tso_segs).
                if self.edt {
                    if self.host_queue.tsq_throttled(now, self.sk.pacing_rate, true) {
                        break;
                    }
                    self.skb_depart = self.wstamp.max(now);
                }
                for s in seq..seq + self.rtx_skb_segs(seq) {
                    self.retransmit(now, s);
                }
            } else if self.can_send_new() {
                // tcp_write_xmit → tcp_tso_should_defer: hold a small send back for the ACK
                // that is about to arrive, so that fewer, larger TSO bursts leave.
                // The decision is per skb: once one goes, all its segments go.
                if skb_left == 0 {
                    if let Some(cwnd_limited) = self.tso_should_defer(now) {
                        cwnd_blocked |= cwnd_limited;
                        break;
                    }
                    // tcp_write_xmit: tcp_small_queue_check after the TSO split.
                    if self.edt {
                        if self.host_queue.tsq_throttled(now, self.sk.pacing_rate, false) {
                            break;
                        }
                        self.skb_depart = self.wstamp.max(now);
                    }
                    skb_left = self.skb_segs_now();
                }
                self.send_new(now);
                skb_left -= 1;
                sent_new = true;
            } else {
                // tcp_rate_check_app_limited (from tcp_sendmsg_locked) requires less than one
                // segment unsent in the write queue: a sender held back by the receive window
                // still has data queued and is not application-limited.
                if !self.has_unsent_data() {
                    self.check_app_limited();
                }
                break;
            }
        }
        // tcp_write_xmit: `is_cwnd_limited |= in_flight >= cwnd` whatever ended the loop — a
        // paced flow stops on the pacing check and is still cwnd-limited if its window is full.
        cwnd_blocked |= self.in_flight() >= self.sk.cwnd;
        let sent_any = self.out.len() > sent_before;
        if sent_any || cwnd_blocked {
            self.cwnd_validate(cwnd_blocked);
        }
        if sent_new {
            // tcp_event_new_data_sent: arm the RTO if nothing was out before; then TLP.
            if !had_out || matches!(self.timer, Some((_, TimerKind::LossProbe)) | None) {
                self.rearm_rto(now);
            }
            self.schedule_loss_probe(now);
        } else if sent_any && self.timer.is_none() {
            self.rearm_rto(now);
        }
    }

    /// `tcp_tso_segs` / `tcp_tso_autosize`: the segments Linux puts in one TSO skb — about
    /// 1 ms of the pacing rate (sk_pacing_shift 10), plus a bonus for tiny RTTs
    /// (sysctl tcp_tso_rtt_log 9), at most 64 KB, at least the algorithm's `min_tso_segs`
    /// (sysctl tcp_min_tso_segs = 2 unless the algorithm has the hook, as BBR does).
    pub(super) fn tso_segs(&self) -> u64 {
        let min_tso = self.cc.min_tso_segs(&self.sk).unwrap_or(MIN_TSO_SEGS);
        let mut bytes = self.sk.pacing_rate >> PACING_SHIFT;
        let r = self.rtt.min_rtt_us >> TSO_RTT_LOG;
        if r < 32 {
            bytes += GSO_MAX_BYTES >> r;
        }
        (bytes.min(GSO_MAX_BYTES) / MSS as u64).max(min_tso)
    }

    /// Segments in the next skb `tcp_write_xmit` sends: `tcp_mss_split_point` with
    /// min(`tcp_cwnd_test`, `tcp_tso_segs`) — the cwnd room, at most half of cwnd — and the
    /// receive window.
    fn skb_segs_now(&self) -> u64 {
        let cwnd = self.sk.cwnd as u64;
        let cwnd_quota = (cwnd - self.in_flight() as u64).min((cwnd / 2).max(1));
        let send_win = self.snd_una + self.rwnd_segs - self.snd_nxt;
        cwnd_quota.min(self.tso_segs()).min(send_win).max(1)
    }

    /// `tcp_tso_should_defer` (Linux 6.18, including the October 2025 fix "tcp: fix
    /// tcp_tso_should_defer() vs large RTT"): whether to hold back new data that cwnd or rwnd
    /// would allow, because only a small part of a TSO skb fits and the ACK of the oldest
    /// segment in flight is due within min(srtt/2, 1 ms) — that ACK will open more room.
    /// Returns None to send now, Some(cwnd_limited) to defer.
    ///
    /// A bulk sender's write queue holds skbs of up to 64 KB (`tcp_xmit_size_goal`), so the
    /// skb at the send head always has more than one segment, which is when Linux asks.
    fn tso_should_defer(&self, now: Nanos) -> Option<bool> {
        if matches!(self.sk.ca_state, CaState::Recovery | CaState::Loss) {
            return None;
        }
        let remaining = self.total_segs.map_or(u64::MAX, |t| t - self.snd_nxt);
        let skb_segs = remaining.min(GSO_MAX_BYTES / MSS as u64);
        if skb_segs <= 1 {
            // tso_segs == 1: the Nagle test instead, which a full-sized segment passes.
            return None;
        }
        // Defer only if the last write was recent (1 ms); tcp_wstamp_ns may be in the future
        // for a paced flow.
        if now > self.wstamp + NS_PER_MS {
            return None;
        }
        let send_win = self.snd_una + self.rwnd_segs - self.snd_nxt;
        let cong_win = (self.sk.cwnd - self.in_flight()) as u64;
        let limit = send_win.min(cong_win);
        if limit >= self.tso_segs() {
            return None; // a full-sized TSO skb can go
        }
        // sysctl tcp_tso_win_divisor = 3: a third of the window is worth sending at once.
        let chunk_bytes = self.rwnd_segs.min(self.sk.cwnd as u64) * MSS as u64 / TSO_WIN_DIVISOR;
        if limit * MSS as u64 >= chunk_bytes {
            return None;
        }
        if self.packets_out() == 0 {
            return None; // no head, no ACK to wait for
        }
        let srtt_ns = self.rtt.srtt_us() * 1_000;
        if srtt_ns == 0 {
            return None;
        }
        // If the head's ACK is due in more than min(srtt/2, 1 ms), do not wait for it (an
        // overdue ACK counts as due now).
        let expected_ack = self.seg(self.snd_una).xmit + srtt_ns;
        let threshold = (srtt_ns / 2).min(NS_PER_MS);
        if expected_ack > now + threshold {
            return None;
        }
        if cong_win < send_win {
            if cong_win <= skb_segs {
                return Some(true);
            }
        } else if send_win <= skb_segs {
            return Some(false);
        }
        // The last skb of a finite transfer gets no more data (FIN): no reason to wait.
        if remaining <= skb_segs {
            return None;
        }
        Some(false)
    }

    /// Earliest time pacing allows the next packet, when a packet is waiting for it. With
    /// fq's EDT pacing: when the next packet leaves the host's fq while TSQ holds the sender.
    pub fn pacing_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.edt {
            let waiting = self.in_flight() < self.sk.cwnd && (self.lost_out > self.retrans_out || self.can_send_new());
            if waiting && self.host_queue.tsq_throttled(now, self.sk.pacing_rate, false) {
                return self.host_queue.next_departure(now);
            }
            return None;
        }
        let paced = self.sk.pacing_enabled || self.force_pacing;
        if paced
            && self.wstamp > now
            && self.in_flight() < self.sk.cwnd
            && (self.lost_out > self.retrans_out || self.can_send_new())
        {
            Some(self.wstamp)
        } else {
            None
        }
    }

    pub(super) fn can_send_new(&self) -> bool {
        self.has_unsent_data() && self.snd_nxt < self.snd_una + self.rwnd_segs
    }

    /// The application has written data not sent yet (write_seq - snd_nxt >= one MSS in
    /// Linux): a bulk flow always, a sized flow until its last segment is out.
    fn has_unsent_data(&self) -> bool {
        self.total_segs.is_none_or(|t| self.snd_nxt < t)
    }

    /// Segments in the retransmission that starts at lost segment `seq`. Linux retransmits a
    /// lost skb whole: `tcp_xmit_retransmit_queue` passes segs = min(cwnd - in flight,
    /// `tcp_tso_segs`) and `tcp_retransmit_skb` fragments the skb only beyond that. A lost skb
    /// is what is left unSACKed of one transmitted skb (SACK processing splits skbs at the
    /// SACKed edges), so here it is the run of consecutive segments from `seq` that are lost,
    /// neither retransmitted nor SACKed, and left in the same burst (same departure time).
    fn rtx_skb_segs(&self, seq: u64) -> u64 {
        let room = (self.sk.cwnd.saturating_sub(self.in_flight())) as u64;
        let max = room.min(self.tso_segs()).max(1);
        let xmit = self.seg(seq).xmit;
        let mut n = 1;
        while n < max && seq + n < self.snd_nxt {
            let s = self.seg(seq + n);
            if s.xmit != xmit || s.flags & F_LOST == 0 || s.flags & (F_RETRANS | F_SACKED) != 0 {
                break;
            }
            n += 1;
        }
        n
    }

    fn next_retransmit(&mut self) -> Option<u64> {
        while let Some(&seq) = self.lost_queue.front() {
            if seq >= self.snd_una && seq < self.snd_nxt {
                let f = self.seg(seq).flags;
                if f & F_LOST != 0 && f & (F_RETRANS | F_SACKED) == 0 {
                    return Some(seq);
                }
            }
            self.lost_queue.pop_front();
        }
        None
    }

    /// `tcp_rate_check_app_limited`: nothing left to send although cwnd would allow it (the
    /// caller checks that the application has nothing unsent).
    fn check_app_limited(&mut self) {
        if self.in_flight() < self.sk.cwnd && self.lost_out <= self.retrans_out {
            let mark = self.sk.delivered + self.in_flight() as u64;
            self.sk.app_limited = mark.max(1);
        }
    }

    /// `tcp_cwnd_validate`.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let pout = self.packets_out() as u64;
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.is_cwnd_limited && pout > self.max_packets_out)
        {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = pout;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// `tcp_rate_skb_sent` + pacing + bookkeeping common to new data and retransmissions.
    /// `new_data`: first transmission (ECT and a queued CWR go on it, `tcp_ecn_send`).
    fn on_xmit(&mut self, now: Nanos, seq: u64, new_data: bool) {
        let (ft, dm, d, al) =
            (self.first_tx_mstamp, self.sk.delivered_mstamp_ns, self.sk.delivered, self.sk.app_limited != 0);
        // v3 `tcp_set_tx_in_flight`: in flight before this send plus the segment itself; the
        // segment is already counted here (packets_out for new data, retrans_out for a
        // retransmission), as Linux's `tcp_packets_in_flight() + pcount` counts it.
        let (inf, lost, dce) = (self.in_flight(), self.sk.lost, self.delivered_ce);
        // skb_mstamp_ns: with EDT the skb's departure time, which RTT and rate samples use.
        let sent_at = self.sent_at(now);
        {
            let s = self.seg_mut(seq);
            s.xmit = sent_at;
            s.tx_first_tx = ft;
            s.tx_delivered_mstamp = dm;
            s.tx_delivered = d;
            s.tx_app_limited = al;
            s.tx_in_flight = inf;
            s.tx_lost = lost;
            s.tx_delivered_ce = dce;
        }
        self.ts_append(seq);
        self.data_sent += 1;
        // TCP_MIB_OUTSEGS leaves retransmissions out (__tcp_transmit_skb counts a segment only
        // if it ends after snd_nxt, RFC 1213's tcpOutSegs).
        if new_data {
            self.mib.out_segs += 1;
        }
        // tcp_write_xmit / tcp_xmit_retransmit_queue: prr_out counts while tcp_in_cwnd_reduction.
        if matches!(self.sk.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        // tcp_update_skb_after_send: internal pacing, from the 11th segment on.
        // tcp_transmit_skb: tcp_wstamp_ns = max(tcp_wstamp_ns, now) for every flow (the "last
        // write" tcp_tso_should_defer looks at).
        self.wstamp = self.wstamp.max(now);
        if (self.sk.pacing_enabled || self.force_pacing) && self.data_sent > 10 && self.sk.pacing_rate > 0 {
            let len_ns = (MSS as u128 * NS_PER_SEC as u128 / self.sk.pacing_rate as u128) as u64;
            self.wstamp += len_ns;
        }
        // The TSval is taken from skb_mstamp_ns too (tcp_skb_timestamp_ts).
        let tsval = if self.timestamps { ts_tick(sent_at) } else { 0 };
        let mut pkt = Pkt::data(self.flow, seq, tsval);
        if self.edt {
            self.host_queue.release(now, sent_at);
            pkt.depart_ns = sent_at;
        }
        // The TSecr: the receiver's latest TSval (its receive-window autotuning samples RTT
        // from it).
        pkt.tsecr = if self.timestamps { self.ts_recent } else { 0 };
        self.ecn.stamp(&mut pkt, new_data);
        self.out.push(pkt);
    }

    /// When the segment being sent leaves the host: its skb's departure time with fq's EDT
    /// pacing (`__tcp_transmit_skb`: skb->tstamp = tcp_wstamp_ns), otherwise now.
    fn sent_at(&self, now: Nanos) -> Nanos {
        if self.edt {
            self.skb_depart
        } else {
            now
        }
    }

    pub(super) fn send_new(&mut self, now: Nanos) {
        self.data_sent_event(now);
        if self.packets_out() == 0 {
            // tcp_rate_skb_sent: a new flight starts the delivery clock (at tcp_wstamp_ns).
            let sent_at = self.sent_at(now);
            self.first_tx_mstamp = sent_at;
            self.sk.delivered_mstamp_ns = sent_at;
        }
        let seq = self.snd_nxt;
        self.segs.push_back(Seg {
            xmit: 0,
            flags: 0,
            tx_first_tx: 0,
            tx_delivered_mstamp: 0,
            tx_delivered: 0,
            tx_app_limited: false,
            tx_in_flight: 0,
            tx_lost: 0,
            tx_delivered_ce: 0,
            tprev: NIL,
            tnext: NIL,
            in_tsorted: false,
        });
        self.snd_nxt += 1;
        self.on_xmit(now, seq, true);
    }

    /// Retransmit a lost segment (counts toward undo); the head of the lost queue, or a later
    /// segment of the same skb, whose queue entry `next_retransmit` then skips.
    fn retransmit(&mut self, now: Nanos, seq: u64) {
        if self.lost_queue.front() == Some(&seq) {
            self.lost_queue.pop_front();
        }
        // tcp_xmit_retransmit_queue: retransmitting the head restarts the RTO (unless the
        // RACK reorder timer is pending).
        if seq == self.snd_una && !matches!(self.timer, Some((_, TimerKind::ReorderTimeout))) {
            self.timer = Some((now + self.rto_ns(), TimerKind::Rto));
        }
        // tcp_xmit_retransmit_queue: TCPFastRetrans outside Loss (TCPSlowStartRetrans in it).
        if self.sk.ca_state != CaState::Loss {
            self.mib.fast_retrans += 1;
        }
        if self.undo_marker.is_some() {
            if self.undo_retrans < 0 {
                self.undo_retrans = 0;
            }
            self.undo_retrans += 1;
        }
        self.send_again(now, seq);
    }

    /// `tcp_event_data_sent`, before the segment counts as in flight: CA_EVENT_TX_START when
    /// nothing is in flight (a restart after idle, or the first retransmission after an RTO
    /// marked everything lost), and `lsndtime`.
    fn data_sent_event(&mut self, now: Nanos) {
        if self.in_flight() == 0 {
            self.refresh_sk(now);
            self.cc.cwnd_event(&mut self.sk, CaEvent::TxStart);
        }
        self.sk.lsndtime_ns = now;
    }

    /// Put `seq` on the wire again: scoreboard flags, retransmission counters, transmit.
    pub(super) fn send_again(&mut self, now: Nanos, seq: u64) {
        self.data_sent_event(now);
        let f = self.seg(seq).flags;
        if f & F_RETRANS == 0 {
            self.retrans_out += 1;
        }
        self.seg_mut(seq).flags = f | F_RETRANS | F_EVER_RETRANS;
        self.retransmits += 1;
        self.mib.retrans_segs += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = now;
        }
        self.on_xmit(now, seq, false);
    }

    /// `tcp_update_pacing_rate` for algorithms without `cong_control` (200 % of cwnd/srtt in
    /// slow start, 120 % after). Linux computes it on every ACK whether or not it paces.
    pub(super) fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_us();
        if srtt == 0 {
            return;
        }
        let ratio = if self.sk.cwnd < self.sk.ssthresh / 2 { 200 } else { 120 };
        let pkts = self.sk.cwnd.max(self.packets_out()) as u64;
        let rate = MSS as u64 * pkts * 1_000_000 / srtt * ratio / 100;
        self.sk.pacing_rate = rate.min(self.sk.max_pacing_rate);
    }
}
