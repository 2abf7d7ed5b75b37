//! Sender unit tests: crafted ACK sequences against the Linux behaviour each one names.
use super::*;
use crate::cc;
use crate::tcp::{ts_tick, PktKind, INIT_CWND};
use crate::time::{NS_PER_MS, NS_PER_SEC};

/// The test sender's parameters: one bulk flow, 50 ms handshake RTT, timestamps on, no pacing,
/// no ECN (tests change a field with `SenderParams { pacing, ..test_params() }`).
pub(super) fn test_params() -> SenderParams {
    SenderParams {
        flow: 0,
        total_segs: None,
        rwnd_segs: 10_000,
        pacing: false,
        handshake_rtt_us: Some(50_000),
        timestamps: true,
        ecn: false,
    }
}

fn sender(cc_name: &str, pacing: bool) -> Sender {
    Sender::new(SenderParams { pacing, ..test_params() }, cc::make(cc_name, 1).expect("known algorithm"))
}

/// An ACK from the receiver at `now`: cumulative `cum`, SACK blocks, echoing `tsecr`.
pub(super) fn ack(now: Nanos, cum: u64, sacks: &[(u64, u64)], tsecr: u64) -> Pkt {
    let mut a = Pkt::data(0, cum, ts_tick(now));
    a.kind = PktKind::Ack;
    a.tsecr = tsecr;
    a.wnd = 1 << 30; // a window that never limits

    for (i, &b) in sacks.iter().enumerate() {
        a.sack[i] = b;
    }
    a.nsack = sacks.len() as u8;
    a
}

/// Linux `tcp_may_raise_cwnd`: SACK-only ACKs (no cumulative progress) do not grow cwnd
/// while tp->reordering is the default 3.
#[test]
fn sack_only_acks_do_not_raise_cwnd() {
    let mut s = sender("reno", false);
    let sent = s.start(0).len();
    assert_eq!(sent, INIT_CWND as usize);
    let t = 50 * NS_PER_MS;
    let ts0 = ts_tick(0);
    // Segment 0 is missing; 1 and 2 arrive: two duplicate ACKs with SACK.
    s.on_ack(t, &ack(t, 0, &[(1, 2)], ts0));
    s.on_ack(t, &ack(t, 0, &[(1, 3)], ts0));
    assert_eq!(s.sk.ca_state, CaState::Disorder);
    assert_eq!(s.sk.cwnd, INIT_CWND, "slow start must not count SACKed segments");
    // A cumulative ACK does grow it.
    s.on_ack(t, &ack(t, 3, &[], ts0));
    assert!(s.sk.cwnd > INIT_CWND);
}

/// Linux `tcp_try_undo_recovery` sets the state to Open, so the restored cwnd is not
/// overwritten by PRR on the same ACK; counted as TCPFullUndo.
#[test]
fn undo_at_end_of_recovery_keeps_restored_cwnd() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    let ts0 = ts_tick(0);
    // 0 is delayed, 1..4 arrive: three SACKed segments make RACK mark 0 lost (reo_wnd 0).
    s.on_ack(t, &ack(t, 0, &[(1, 2)], ts0));
    s.on_ack(t, &ack(t, 0, &[(1, 3)], ts0));
    s.on_ack(t, &ack(t, 0, &[(1, 4)], ts0));
    assert_eq!(s.sk.ca_state, CaState::Recovery);
    assert_eq!(s.retransmits, 1, "the fast retransmit of segment 0");
    assert!(s.sk.ssthresh < INIT_CWND, "Reno halved ssthresh");
    // The original 0 arrives (before the retransmission): the cumulative ACK covers everything
    // sent before Recovery and echoes the original's TSval, older than the retransmission.
    let t2 = 52 * NS_PER_MS;
    let all = s.snd_nxt;
    assert!(s.high_seq <= all);
    s.on_ack(t2, &ack(t2, all, &[], ts0));
    assert_eq!(s.mib.full_undo, 1, "Eifel: the original was only late");
    assert_ne!(s.sk.ca_state, CaState::Recovery, "Recovery ends with the undo");
    assert!(s.sk.cwnd >= INIT_CWND, "cwnd restored to at least the pre-Recovery {INIT_CWND}, got {}", s.sk.cwnd);
}

/// Without timestamps the echo cannot prove the retransmission spurious: no undo.
#[test]
fn no_eifel_undo_without_timestamps() {
    let p = SenderParams { timestamps: false, ..test_params() };
    let mut s = Sender::new(p, cc::make("reno", 1).unwrap());
    let sent: Vec<u64> = s.start(0).iter().map(|p| p.ts).collect();
    assert!(sent.iter().all(|&ts| ts == 0), "no TSval without timestamps");
    let t = 50 * NS_PER_MS;
    s.on_ack(t, &ack(t, 0, &[(1, 2)], 0));
    s.on_ack(t, &ack(t, 0, &[(1, 3)], 0));
    s.on_ack(t, &ack(t, 0, &[(1, 4)], 0));
    assert_eq!(s.sk.ca_state, CaState::Recovery);
    let t2 = 52 * NS_PER_MS;
    let all = s.snd_nxt;
    s.on_ack(t2, &ack(t2, all, &[], 0));
    assert_eq!(s.mib.full_undo, 0);
}

/// PAWS on the ACK path: an ACK whose TSval is older than ts_recent by more than a tick and
/// that advances snd_una is discarded (PAWSEstab), a duplicate at snd_una is not.
#[test]
fn paws_discards_old_ack_that_advances() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    s.on_ack(t, &ack(t, 2, &[], ts_tick(0)));
    assert_eq!(s.snd_una, 2);
    // An ACK generated 10 ms earlier at the receiver (reordered on the way back).
    let old = ack(t - 10 * NS_PER_MS, 4, &[], ts_tick(0));
    s.on_ack(t + NS_PER_MS, &old);
    assert_eq!((s.snd_una, s.mib.paws_estab), (2, 1), "discarded");
    let dup = ack(t - 10 * NS_PER_MS, 2, &[(3, 4)], ts_tick(0));
    s.on_ack(t + NS_PER_MS, &dup);
    assert_eq!(s.mib.paws_estab, 1, "a disordered duplicate ACK passes");
    assert_eq!(s.sacked_out, 1);
}

/// tcp_rate.c stamps the initial window with the send time, which Linux never reads as "no
/// sample": the first ACK of a flow starting at t = 0 gives a delivery-rate sample.
#[test]
fn initial_window_gives_rate_samples() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    s.on_ack(t, &ack(t, 2, &[], ts_tick(0)));
    let r = s.delivery_rate_bps().expect("a rate sample from the initial window");
    // 2 segments over the 50 ms ACK interval.
    let expect = 2.0 * 1448.0 * 8.0 / 0.05;
    assert!((r - expect).abs() / expect < 0.01, "{r} vs {expect}");
}

/// Linux `tcp_timeout_mark_lost`: on an RTO the head is lost, segments sent less than
/// RACK.rtt ago are not (they may still arrive).
#[test]
fn rto_does_not_mark_recently_sent_segments_lost() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    // 1..10 SACKed except 9: RACK.rtt = 50 ms; new data goes out at t.
    s.on_ack(t, &ack(t, 0, &[(1, 9)], ts_tick(0)));
    let sent_at_t = s.snd_nxt - 10;
    assert!(sent_at_t > 0, "new segments were sent at t");
    // Fire the RTO 10 ms after the new data left (as if the RTO were that short).
    let now = t + 10 * NS_PER_MS;
    s.timer = Some((now, TimerKind::Rto));
    s.on_timer(now);
    assert_eq!(s.mib.timeouts, 1);
    let recent_lost = (10..s.snd_nxt).filter(|&q| s.seg(q).flags & F_LOST != 0).count();
    assert_eq!(recent_lost, 0, "segments sent 10 ms ago (RACK.rtt 50 ms) marked lost");
    assert!(s.seg(9).flags & F_LOST != 0, "segment 9, sent 60 ms ago, is lost");
    assert!(s.seg(0).flags & F_LOST != 0, "the head is always lost");
}

/// Linux 6.x `tcp_rack_mark_lost`: the reorder timer fires usecs_to_jiffies(remaining +
/// TCP_REO_TIMEOUT_MIN) after the ACK (older kernels: + 2 jiffies, here 8 ms later).
#[test]
fn rack_reorder_timer_uses_reo_timeout_min() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    // One SACKed segment: no dupthresh shortcut, reo_wnd = min_rtt/4 (handshake RTT 50 ms).
    s.on_ack(t, &ack(t, 0, &[(1, 2)], ts_tick(0)));
    let (deadline, kind) = s.timer.expect("a timer");
    assert_eq!(kind, TimerKind::ReorderTimeout);
    // remaining = RACK.rtt 50 ms + reo_wnd 12.5 ms - 50 ms elapsed = 12.5 ms; + 2 ms, rounded up
    // to 4 ms jiffies (HZ = 250): 16 ms.
    assert_eq!(deadline - t, 16 * NS_PER_MS);
}

/// Linux 6.x `tcp_rack_advance`: an unambiguous (S)ACK of a segment sent before RACK's
/// reference still updates RACK.rtt (older kernels ignored it).
#[test]
fn rack_rtt_follows_every_unambiguous_sack() {
    let mut s = sender("reno", false);
    s.start(0);
    let t1 = 50 * NS_PER_MS;
    s.on_ack(t1, &ack(t1, 2, &[], ts_tick(0))); // new segments leave at 50 ms
    assert!(s.snd_nxt > 10);
    let t2 = 100 * NS_PER_MS;
    s.on_ack(t2, &ack(t2, 2, &[(11, 12)], ts_tick(t1))); // sent at 50 ms: RACK.rtt 50 ms
    assert_eq!(s.rack_rtt_us, 50_000);
    let t3 = 130 * NS_PER_MS;
    s.on_ack(t3, &ack(t3, 2, &[(3, 4), (11, 12)], ts_tick(0))); // sent at 0: 130 ms
    assert_eq!(s.rack_rtt_us, 130_000);
    assert_eq!(s.rack_mstamp, t1, "the reference stays the most recently sent segment");
}

/// Linux `tcp_check_sack_reordering`: a never-retransmitted segment SACKed below the highest
/// SACKed one raises tp->reordering to the distance (TCPSACKReorder); from then on
/// `tcp_may_raise_cwnd` lets SACK-only ACKs grow cwnd (FLAG_FORWARD_PROGRESS).
#[test]
fn sack_reordering_raises_tp_reordering() {
    let mut s = sender("reno", false);
    s.start(0);
    let t = 50 * NS_PER_MS;
    s.on_ack(t, &ack(t, 0, &[(8, 9)], ts_tick(0)));
    assert_eq!(s.reordering, 3);
    s.on_ack(t, &ack(t, 0, &[(1, 2), (8, 9)], ts_tick(0)));
    // tcp_highest_sack_seq is the start of the segment after the highest SACKed one (9):
    // the distance is 8.
    assert_eq!(s.reordering, 8, "segment 1 delivered 8 below the end of the highest SACKed (8)");
    assert_eq!(s.mib.sack_reorder, 1);
    let cwnd = s.sk.cwnd;
    s.on_ack(t, &ack(t, 0, &[(2, 3), (1, 2), (8, 9)], ts_tick(0)));
    assert!(s.sk.cwnd > cwnd, "a SACK-only ACK raises cwnd once reordering > 3");
}

/// Reno in congestion avoidance with a full window of 10 sent at t = 0, then two segments
/// acknowledged at 50 ms (room for 2 = tcp_min_tso_segs: sent at once).
fn ca_sender_after_first_ack() -> (Sender, u64) {
    let mut s = sender("reno", false);
    s.sk.ssthresh = INIT_CWND;
    assert_eq!(s.start(0).len(), INIT_CWND as usize);
    let t = 50 * NS_PER_MS;
    let sent = s.on_ack(t, &ack(t, 2, &[], ts_tick(0))).len();
    assert_eq!(sent, 2, "room for a minimum TSO skb is used at once");
    (s, t)
}

/// `tcp_tso_should_defer` (Linux 6.18): room for a single segment, the last write 0.2 ms ago
/// and the head's ACK already due: the segment waits for that ACK, and the sender counts as
/// cwnd-limited. The next ACK then sends two segments together.
#[test]
fn tso_defers_a_single_segment_until_the_due_ack() {
    let (mut s, t) = ca_sender_after_first_ack();
    let t1 = t + NS_PER_MS / 5;
    let sent = s.on_ack(t1, &ack(t1, 3, &[], ts_tick(0))).len();
    assert_eq!(sent, 0, "one segment of room is held back");
    assert!(s.in_flight() < s.sk.cwnd);
    assert!(s.is_cwnd_limited, "a deferral for lack of cwnd keeps the flow cwnd-limited");
    let t2 = t1 + NS_PER_MS / 5;
    let sent = s.on_ack(t2, &ack(t2, 4, &[], ts_tick(0))).len();
    assert_eq!(sent, 2, "the held segment leaves with the next one");
}

/// No deferral when the last write is more than 1 ms old ("avoid bursty behavior").
#[test]
fn tso_does_not_defer_after_a_quiet_millisecond() {
    let (mut s, t) = ca_sender_after_first_ack();
    let t1 = t + 2 * NS_PER_MS;
    assert_eq!(s.on_ack(t1, &ack(t1, 3, &[], ts_tick(0))).len(), 1);
}

/// No deferral when the head's ACK is not due within min(srtt/2, 1 ms): the head here was sent
/// at 50 ms, so its ACK is ~50 ms away.
#[test]
fn tso_does_not_defer_when_the_head_ack_is_far() {
    let mut s = sender("reno", false);
    s.sk.ssthresh = INIT_CWND;
    s.start(0);
    let t = 50 * NS_PER_MS;
    // Everything but the last segment is acknowledged: the head is now segment 9 (sent at 0),
    // then its ACK arrives too, leaving only the segments sent at 50 ms.
    s.on_ack(t, &ack(t, 9, &[], ts_tick(0)));
    let out_before = s.packets_out();
    let t1 = t + NS_PER_MS / 5;
    s.on_ack(t1, &ack(t1, 10, &[], ts_tick(0)));
    assert_eq!(s.seg(s.snd_una).xmit, t, "head sent at 50 ms");
    assert!(s.packets_out() >= out_before, "the room opened by the last ACK was used");
    assert_eq!(s.in_flight(), s.sk.cwnd, "nothing held back");
}

/// `tcp_tso_autosize`: about 1 ms of the pacing rate per skb, at least 2 segments, at most
/// 64 KB.
#[test]
fn tso_autosize_follows_the_pacing_rate() {
    let mut s = sender("reno", false);
    s.rtt.min_rtt_us = 50_000;
    s.sk.pacing_rate = 0;
    assert_eq!(s.tso_segs(), 2);
    s.sk.pacing_rate = 100_000_000 / 8; // 100 Mbit/s: 12 207 bytes per 1/1024 s
    assert_eq!(s.tso_segs(), 12_207 / MSS as u64);
    s.sk.pacing_rate = 10_000_000_000 / 8;
    assert_eq!(s.tso_segs(), 65_536 / MSS as u64);
    // A 1 ms path adds half of 64 KB (tcp_tso_rtt_log 9: 1000 µs >> 9 = 1).
    s.rtt.min_rtt_us = 1_000;
    s.sk.pacing_rate = 0;
    assert_eq!(s.tso_segs(), 32_768 / MSS as u64);
}

/// `tcp_write_xmit` checks pacing once per skb: a paced sender puts a whole TSO skb
/// (`tcp_tso_autosize` segments) on the wire at once, and `tcp_update_skb_after_send` moves the
/// next departure on by the skb's length at the pacing rate. Sending one segment per pacing
/// slot instead made BBR far smoother than Linux: beside CUBIC on a 200-packet FIFO at
/// 200 Mbit/s (1 ms) its skbs of 20-30 segments meet the full queue together, and on the kernel
/// BBR retransmits 15-25 times as much as CUBIC where one-per-slot pacing gave 1.4 times
/// (tests/kernel/test_kernel_bbr_state.py).
#[test]
fn a_paced_sender_sends_one_tso_skb_per_pacing_slot() {
    let mut s = sender("reno", true);
    s.start(0); // the first 10 segments are not paced (sch_fq's rule, kept by Linux)
    s.rtt.min_rtt_us = 50_000;
    s.sk.cwnd = 100;
    s.sk.pacing_rate = 100_000_000 / 8; // 100 Mbit/s
    let segs = s.tso_segs();
    assert_eq!(segs, 8, "12 207 bytes per 1/1024 s");
    let per_seg = MSS as u64 * NS_PER_SEC / s.sk.pacing_rate;
    let t = 5 * NS_PER_MS;
    assert_eq!(s.transmit(t).len() as u64, segs, "one skb leaves at once");
    assert_eq!(s.wstamp, t + segs * per_seg, "the next skb waits for this one's length at the pacing rate");
    assert_eq!(s.transmit(t + segs * per_seg / 2).len(), 0, "nothing before its departure time");
    assert_eq!(s.transmit(s.wstamp).len() as u64, segs, "then the next whole skb");
}

/// Linux retransmits a lost skb whole: `tcp_xmit_retransmit_queue` checks pacing once per skb
/// and `tcp_retransmit_skb` sends up to min(cwnd room, tcp_tso_segs) segments of it. So the
/// lost part of one paced burst leaves again in one pacing slot, the next retransmission (of
/// another burst) waits for the whole run's length at the pacing rate, and a run never
/// reaches into a segment sent in another burst. At a full drop-tail queue such a burst
/// loses its tail as the original did (on the kernel at 1 Gbit/s, 12 % of BBR's
/// retransmissions were lost again; one segment per slot: 0.6 %).
#[test]
fn a_paced_sender_retransmits_a_lost_skb_in_one_pacing_slot() {
    let mut s = sender("reno", true);
    s.start(0);
    s.rtt.min_rtt_us = 50_000;
    s.sk.cwnd = 100;
    s.sk.pacing_rate = 100_000_000 / 8; // 100 Mbit/s: 8-segment skbs
    let per_seg = MSS as u64 * NS_PER_SEC / s.sk.pacing_rate;
    let seqs = |out: &[Pkt]| out.iter().map(|p| p.seq).collect::<Vec<u64>>();
    let t = 5 * NS_PER_MS;
    assert_eq!(seqs(s.transmit(t)), (10..18).collect::<Vec<u64>>());
    let t2 = s.wstamp;
    assert_eq!(seqs(s.transmit(t2)), (18..26).collect::<Vec<u64>>());
    for q in [12, 13, 14, 15, 17, 18, 19] {
        s.mark_lost(q);
    }
    let t3 = s.wstamp;
    assert_eq!(seqs(s.transmit(t3)), vec![12, 13, 14, 15], "the first lost run of the first skb, whole");
    assert_eq!(s.wstamp, t3 + 4 * per_seg, "the next skb waits for the run's length");
    let t4 = s.wstamp;
    assert_eq!(seqs(s.transmit(t4)), vec![17], "17 was sent in the first burst, 18 in the second");
    assert_eq!(seqs(s.transmit(s.wstamp)), vec![18, 19]);
    assert_eq!(s.retrans_out, 7);
}

/// A receive-window-limited sender whose whole first flight got no ACK: the tail loss probe
/// fires and, with no new data allowed, retransmits the last segment (9). Returns the sender,
/// the probe's time and the TSval of the original flight.
fn tlp_retransmitted_probe() -> (Sender, Nanos, u64) {
    let mut s =
        Sender::new(SenderParams { rwnd_segs: INIT_CWND as u64, ..test_params() }, cc::make("reno", 1).unwrap());
    assert_eq!(s.start(0).len(), INIT_CWND as usize);
    let (deadline, kind) = s.timer.expect("a timer is armed");
    assert_eq!(kind, TimerKind::LossProbe);
    let out: Vec<u64> = s.on_timer(deadline).iter().map(|p| p.seq).collect();
    assert_eq!(out, vec![INIT_CWND as u64 - 1], "the probe retransmits the last segment");
    assert!(s.tlp_retrans);
    (s, deadline, ts_tick(0))
}

/// Linux `tcp_process_tlp_ack`: the original of segment 9 was lost and the probe repaired it.
/// The ACK that reaches exactly tlp_high_seq leaves the episode open; the next ACK beyond it
/// reduces cwnd once (ssthresh = Reno's half, cwnd = ssthresh, via CWR) and counts
/// TCPLossProbeRecovery. (The kernel does this when a probe repairs the loss of iperf3's
/// 37-byte cookie before any data: cwnd 10 -> 5 on the first data ACK.)
#[test]
fn tlp_that_repairs_a_loss_reduces_cwnd() {
    let (mut s, t_probe, _) = tlp_retransmitted_probe();
    let t1 = t_probe + 50 * NS_PER_MS;
    // 0..9 delivered (9 by the probe): the ACK echoes the probe's TSval.
    s.on_ack(t1, &ack(t1, 10, &[], ts_tick(t_probe)));
    assert_eq!(s.tlp_high_seq, Some(10), "an ACK of exactly tlp_high_seq does not end the episode");
    assert_eq!(s.mib.loss_probe_recovery, 0);
    let sent_after = s.snd_nxt;
    assert!(sent_after > 10, "the window opened for new data");
    let cwnd_before = s.sk.cwnd;
    let t2 = t1 + 50 * NS_PER_MS;
    s.on_ack(t2, &ack(t2, 11, &[], ts_tick(t1)));
    assert_eq!(s.mib.loss_probe_recovery, 1);
    assert_eq!(s.tlp_high_seq, None);
    assert_eq!(s.sk.ssthresh, cwnd_before / 2, "Reno's ssthresh from the cwnd at the reduction");
    assert_eq!(s.sk.cwnd, s.sk.ssthresh, "cwnd set to ssthresh at once (tcp_end_cwnd_reduction)");
    assert_eq!(s.sk.ca_state, CaState::Open);
}

/// Linux `tcp_process_tlp_ack` with FLAG_DSACK_TLP: the original and the probe both arrived,
/// the receiver D-SACKs the probe; no loss, no reduction.
#[test]
fn tlp_dsacked_probe_does_not_reduce_cwnd() {
    let (mut s, t_probe, ts0) = tlp_retransmitted_probe();
    let t1 = t_probe + 50 * NS_PER_MS;
    let mut a = ack(t1, 10, &[(9, 10)], ts0);
    a.dsack = true;
    s.on_ack(t1, &a);
    assert_eq!(s.tlp_high_seq, None, "the D-SACK of the probe ends the episode");
    let cwnd_before = s.sk.cwnd;
    let t2 = t1 + 50 * NS_PER_MS;
    s.on_ack(t2, &ack(t2, 11, &[], ts_tick(t1)));
    assert_eq!(s.mib.loss_probe_recovery, 0);
    assert!(s.sk.cwnd >= cwnd_before, "no reduction: cwnd {} -> {}", cwnd_before, s.sk.cwnd);
}

/// Linux `tcp_rate_check_app_limited` (called from `tcp_sendmsg_locked`) marks the flow
/// application-limited only when less than one segment is waiting unsent in the write queue:
/// a bulk sender held back by the receive window is not application-limited (its rate samples
/// stay valid for BBR's bandwidth filter and full-pipe check); a sized flow whose data has all
/// been sent is.
#[test]
fn rwnd_limited_bulk_sender_is_not_app_limited() {
    let p = SenderParams { rwnd_segs: 5, ..test_params() };
    let mut s = Sender::new(p, cc::make("bbr", 1).unwrap());
    assert_eq!(s.start(0).len(), 5, "the receive window allows 5 of the initial 10 segments");
    assert!(s.in_flight() < s.sk.cwnd);
    assert_eq!(s.sk.app_limited, 0, "unsent data waits for the window: not application-limited");

    let p = SenderParams { total_segs: Some(3), ..test_params() };
    let mut s = Sender::new(p, cc::make("bbr", 1).unwrap());
    assert_eq!(s.start(0).len(), 3);
    assert_ne!(s.sk.app_limited, 0, "everything written has been sent: application-limited");
}

/// Linux 6.x `tcp_mark_skb_lost`: TCPLostRetransmit counts a retransmission of a segment
/// already marked lost. A tail loss probe retransmits a segment that was never marked lost;
/// when RACK then finds it lost, the segment is marked lost with its probe still counted in
/// flight — no TCPLostRetransmit, retrans_out unchanged, nothing retransmitted again.
#[test]
fn rack_marking_a_tlp_retransmission_lost_is_not_a_lost_retransmit() {
    let (mut s, t_probe, ts0) = tlp_retransmitted_probe();
    let last = INIT_CWND as u64 - 1;
    // 0..8 arrive (9's original was lost): the window opens and new data leaves.
    let t1 = t_probe + 30 * NS_PER_MS;
    s.on_ack(t1, &ack(t1, last, &[], ts0));
    assert!(s.snd_nxt > last + 1, "new data sent");
    assert_eq!(s.retrans_out, 1, "the probe is in flight");
    // The first new segment is SACKed 60 ms later; the probe, sent 30 ms before it, has not
    // been acknowledged within RACK.rtt (60 ms) + reo_wnd (min_rtt / 4): RACK marks 9 lost.
    let t2 = t1 + 60 * NS_PER_MS;
    let out: Vec<u64> =
        s.on_ack(t2, &ack(t2, last, &[(last + 1, last + 2)], ts_tick(t1))).iter().map(|p| p.seq).collect();
    assert_ne!(s.seg(last).flags & F_LOST, 0, "RACK marked the probed segment lost");
    assert_eq!(s.lost_out, 1);
    assert_eq!(s.mib.lost_retransmit, 0, "the probe was not a retransmission of a lost segment");
    assert_eq!(s.retrans_out, 1, "the probe stays counted in flight");
    assert!(!out.contains(&last), "not retransmitted again");
}
