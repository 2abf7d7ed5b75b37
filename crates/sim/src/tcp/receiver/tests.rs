//! Receiver unit tests: crafted segment sequences against the Linux receive-side behaviour each one names.
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
    assert!(a.ece && !a.ect, "a pure ACK is Not-ECT");
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

/// DCTCP's receiver (tcp_dctcp.h `dctcp_ece_ack_update`): ECE follows the CE state of each
/// segment exactly, with no echo held until CWR; a change of state with a delayed ACK pending
/// first sends that ACK (for the data before the change, with the old state), then ACKs the
/// new segment at once; without a change, delayed ACKs work as usual.
#[test]
fn dctcp_echoes_ce_exactly_and_acks_on_every_change() {
    let mut r = Receiver::new(0, None, true).with_dctcp_ecn();
    for s in 0..20 {
        let a = r.on_data(0, &ecn_seg(s, false, false));
        assert!(!a.is_some_and(|a| a.ece));
        assert!(r.take_early_ack().is_none());
    }
    r.on_delack_timer(DELACK_NS); // past quick-ACK mode, everything ACKed
    let t = 100 * NS_PER_MS;
    // An unmarked segment waits for the delayed ACK (state 0 → 0).
    assert!(r.on_data(t, &ecn_seg(20, false, false)).is_none());
    assert!(r.delack_deadline.is_some());
    // CE (0 → 1): the delayed ACK goes out first for segment 20, without ECE, then segment 21
    // is ACKed at once with ECE.
    let a = r.on_data(t, &ecn_seg(21, true, false)).expect("state change: ACK now");
    let e = r.take_early_ack().expect("the delayed ACK first");
    assert_eq!((e.seq, e.ece), (21, false));
    assert_eq!((a.seq, a.ece), (22, true));
    // A DCTCP host sends its pure ACKs ECT(0) too (tcp_init_congestion_control).
    assert!(a.ect && e.ect);
    assert!(r.delack_deadline.is_none());
    // CE again (1 → 1): an ordinary delayed ACK, and no quick ACK for the CE mark.
    assert!(r.on_data(t, &ecn_seg(22, true, false)).is_none());
    assert!(r.take_early_ack().is_none());
    // Unmarked (1 → 0): the delayed ACK for 22 with ECE, then 23 at once without.
    let a = r.on_data(t, &ecn_seg(23, false, false)).expect("state change: ACK now");
    let e = r.take_early_ack().expect("the delayed ACK first");
    assert_eq!((e.seq, e.ece), (23, true));
    assert_eq!((a.seq, a.ece), (24, false));
    // No sticky echo: the next delayed ACK carries no ECE.
    assert!(r.on_data(t, &ecn_seg(24, false, false)).is_none());
    let a = r.on_delack_timer(t + DELACK_NS).expect("timer ACK");
    assert!(!a.ece && a.seq == 25);
    // A change with nothing delayed: only the immediate ACK.
    let t = t + 2 * DELACK_NS;
    let a = r.on_data(t, &ecn_seg(25, true, false)).expect("ACK now");
    assert!(a.ece && r.take_early_ack().is_none());
    // CWR clears the echo (tcp_ecn_accept_cwr) but a CE segment sets it again at once.
    assert!(r.on_data(t, &ecn_seg(26, true, true)).expect("CWR: ACK now").ece);
    assert_eq!(r.ecn.ce_received, 4);
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
