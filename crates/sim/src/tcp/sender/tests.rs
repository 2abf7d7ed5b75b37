//! Sender unit tests: crafted ACK sequences against the Linux behaviour each one names.
use super::*;
use crate::cc;
use crate::tcp::{ts_tick, PktKind, INIT_CWND};
use crate::time::NS_PER_MS;

fn sender(cc_name: &str, pacing: bool) -> Sender {
    let p = SenderParams {
        flow: 0,
        total_segs: None,
        rwnd_segs: 10_000,
        pacing,
        handshake_rtt_us: Some(50_000),
        timestamps: true,
    };
    Sender::new(p, cc::make(cc_name, 1).expect("known algorithm"))
}

/// An ACK from the receiver at `now`: cumulative `cum`, SACK blocks, echoing `tsecr`.
fn ack(now: Nanos, cum: u64, sacks: &[(u64, u64)], tsecr: u64) -> Pkt {
    let mut a = Pkt::data(0, cum, ts_tick(now));
    a.kind = PktKind::Ack;
    a.tsecr = tsecr;
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
    let p = SenderParams {
        flow: 0,
        total_segs: None,
        rwnd_segs: 10_000,
        pacing: false,
        handshake_rtt_us: Some(50_000),
        timestamps: false,
    };
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
    assert_eq!(s.reordering, 7, "segment 1 delivered 7 below the highest SACKed (8)");
    assert_eq!(s.mib.sack_reorder, 1);
    let cwnd = s.sk.cwnd;
    s.on_ack(t, &ack(t, 0, &[(2, 3), (1, 2), (8, 9)], ts_tick(0)));
    assert!(s.sk.cwnd > cwnd, "a SACK-only ACK raises cwnd once reordering > 3");
}
