//! The sender's ECN reaction (RFC 3168 §6.1.2; Linux `tcp_try_to_open` → `tcp_enter_cwr`,
//! `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`, `tcp_ecn_send`) on crafted ACK sequences.
use super::tests::{self, test_params};
use super::*;
use crate::cc;
use crate::tcp::{ts_tick, INIT_CWND};
use crate::time::NS_PER_MS;

fn sender(cc_name: &str, ecn: bool) -> Sender {
    Sender::new(SenderParams { ecn, ..test_params() }, cc::make(cc_name, 1).expect("known algorithm"))
}

/// An ACK at `now`: cumulative `cum`, SACK blocks, echoing the first TSval, ECN-Echo `ece`.
fn ack(now: Nanos, cum: u64, sacks: &[(u64, u64)], ece: bool) -> Pkt {
    let mut a = tests::ack(now, cum, sacks, ts_tick(0));
    a.ece = ece;
    a
}

/// ACK k of a sequence: 2 ms apart (past the TSO-deferral millisecond, so PRR's quota leaves
/// at once), from one RTT after the start.
fn t(k: u64) -> Nanos {
    (50 + 2 * k) * NS_PER_MS
}

/// One ECE starts one reduction per window: ssthresh = Reno's cwnd/2 once, PRR brings cwnd
/// down to it while sending about ssthresh/prior_cwnd of what is delivered, the first new
/// segment carries CWR (only that one), further ECEs in the same window change nothing, and
/// the state ends — cwnd = ssthresh — only once snd_una passes the high_seq of the entry.
#[test]
fn ece_enters_cwr_once_per_window_and_prr_reduces_cwnd_to_ssthresh() {
    let mut s = sender("reno", true);
    let first = s.start(0).to_vec();
    assert_eq!(first.len(), INIT_CWND as usize);
    assert!(first.iter().all(|p| p.ect && !p.cwr && !p.ce), "new data of an ECN flow is ECT(0)");
    let high_seq = s.snd_nxt; // the entry's snd_nxt
    let mut cwr_marked = Vec::new();
    let mut sent_in_cwr = 0u32;
    // The receiver echoes ECE on every ACK until the CWR segment reaches it.
    for k in 1..=high_seq {
        let out = s.on_ack(t(k), &ack(t(k), k, &[], true)).to_vec();
        assert_eq!(s.sk.ca_state, CaState::Cwr, "ACK {k}");
        assert_eq!(s.sk.ssthresh, INIT_CWND / 2, "one reduction for the whole window (ACK {k})");
        sent_in_cwr += out.len() as u32;
        cwr_marked.extend(out.iter().filter(|p| p.cwr).map(|p| p.seq));
        assert!(out.iter().all(|p| p.ect));
        // PRR (RFC 6937): sent ≤ ceil(ssthresh × delivered / prior_cwnd).
        let allowed = (INIT_CWND / 2 * k as u32).div_ceil(INIT_CWND);
        assert!(sent_in_cwr <= allowed, "ACK {k}: sent {sent_in_cwr} > PRR's {allowed}");
    }
    assert_eq!(cwr_marked, vec![high_seq], "CWR on the first new segment after entering CWR only");
    assert_eq!(s.mib_counters().sack_recovery, 0, "no loss, no Recovery");
    assert_eq!(s.delivered_ce, high_seq, "every segment was delivered by an ECE ACK");
    // snd_una == high_seq: CWR holds (the CWR segment's ACK has not come back yet).
    assert_eq!(s.sk.ca_state, CaState::Cwr);
    // The ACK of the CWR segment (no ECE: the receiver has stopped echoing) ends CWR.
    let k = high_seq + 1;
    s.on_ack(t(k), &ack(t(k), k, &[], false));
    assert_eq!(s.sk.ca_state, CaState::Open);
    assert_eq!(s.sk.cwnd, INIT_CWND / 2, "tcp_end_cwnd_reduction: cwnd = ssthresh");
    // A new window, a new ECE: a new reduction (Reno halves again, at least 2).
    let k = k + 1;
    s.on_ack(t(k), &ack(t(k), k, &[], true));
    assert_eq!(s.sk.ca_state, CaState::Cwr);
    assert_eq!(s.sk.ssthresh, (INIT_CWND / 2 / 2).max(2));
}

/// Without ECN the same ECE bits are ignored (tcp_ecn_rcv_ecn_echo needs TCP_ECN_OK) and no
/// segment is ECT: the reduction above comes from ECN alone.
#[test]
fn ece_is_ignored_and_nothing_is_ect_without_ecn() {
    let mut s = sender("reno", false);
    assert!(s.start(0).iter().all(|p| !p.ect));
    for k in 1..=5 {
        let out = s.on_ack(t(k), &ack(t(k), k, &[], true)).to_vec();
        assert!(out.iter().all(|p| !p.ect && !p.cwr));
    }
    assert_eq!(s.sk.ca_state, CaState::Open);
    assert!(s.sk.cwnd > INIT_CWND, "slow start goes on");
    assert_eq!(s.delivered_ce, 0);
}

/// Retransmissions leave Not-ECT (RFC 3168 §6.1.5, tcp_ecn_send); a loss during CWR enters
/// Recovery without a second reduction (tcp_enter_recovery: already tcp_in_cwnd_reduction).
#[test]
fn loss_in_cwr_keeps_the_reduction_and_retransmissions_are_not_ect() {
    let mut s = sender("reno", true);
    s.start(0);
    // Segment 0 is missing; 1 arrives CE-marked: a duplicate ACK with ECE.
    s.on_ack(t(0), &ack(t(0), 0, &[(1, 2)], true));
    assert_eq!(s.sk.ca_state, CaState::Cwr);
    let ssthresh = s.sk.ssthresh;
    assert_eq!(ssthresh, INIT_CWND / 2);
    // 2 and 3 arrive too: three SACKed segments above 0 make RACK mark it lost.
    s.on_ack(t(0), &ack(t(0), 0, &[(1, 3)], true));
    let out = s.on_ack(t(0), &ack(t(0), 0, &[(1, 4)], true)).to_vec();
    assert_eq!(s.sk.ca_state, CaState::Recovery);
    assert_eq!(s.sk.ssthresh, ssthresh, "no second reduction for the same window");
    let rexmit: Vec<&Pkt> = out.iter().filter(|p| p.seq == 0).collect();
    assert_eq!(rexmit.len(), 1, "the fast retransmit of 0: {out:?}");
    assert!(!rexmit[0].ect && !rexmit[0].cwr, "a retransmission is Not-ECT");
}

/// BBR has its own cong_control: Linux's tcp_cong_control returns before PRR and
/// tcp_end_cwnd_reduction does nothing for it, and BBR v1 reacts to Recovery and Loss only.
/// So ECE puts it in CWR (and sends CWR) without changing its cwnd.
#[test]
fn bbr_enters_cwr_without_a_cwnd_reduction() {
    let mut with = sender("bbr", true);
    let mut without = sender("bbr", false);
    with.start(0);
    without.start(0);
    let mut cwr_sent = 0;
    for k in 1..=8 {
        cwr_sent += with.on_ack(t(k), &ack(t(k), k, &[], true)).iter().filter(|p| p.cwr).count();
        without.on_ack(t(k), &ack(t(k), k, &[], true));
        assert_eq!(with.sk.cwnd, without.sk.cwnd, "ACK {k}: ECE changed BBR's cwnd");
    }
    assert_eq!(with.sk.ca_state, CaState::Cwr);
    assert_eq!(without.sk.ca_state, CaState::Open);
    assert_eq!(cwr_sent, 1);
}

/// DCTCP (cc/dctcp.rs) on the sender: `in_ack_event` sees this ACK's `delivered` and
/// `delivered_ce` (Linux ≥ 6.14 calls it after tcp_clean_rtx_queue), alpha moves once per
/// window of data, and an ECE enters CWR with ssthresh = cwnd − cwnd·alpha/2048 rather than
/// Reno's half. The expected alpha is recomputed here from the sender's counters with the same
/// rule, window by window.
#[test]
fn dctcp_cuts_by_half_alpha_from_the_counters_of_each_window() {
    use crate::cc::dctcp::{Dctcp, MAX_ALPHA};
    let mut s = sender("dctcp", true);
    assert!(s.start(0).iter().all(|p| p.ect));
    let (mut alpha, mut next_seq, mut old_del, mut old_ce) = (MAX_ALPHA, 0u64, 0u64, 0u64);
    let mut windows = 0;
    let mut last = 0;
    for k in 1..=40u64 {
        let ece = k == 40;
        let snd_nxt_before = s.snd_nxt;
        let cwnd_before = s.sk.cwnd;
        s.on_ack(t(k), &ack(t(k), k, &[], ece));
        assert_eq!(s.sk.delivered, k);
        assert_eq!(s.sk.delivered_ce, ece as u64);
        if k >= next_seq {
            alpha = Dctcp::next_alpha(alpha, s.sk.delivered - old_del, s.sk.delivered_ce - old_ce);
            (next_seq, old_del, old_ce) = (snd_nxt_before, s.sk.delivered, s.sk.delivered_ce);
            windows += 1;
        }
        if ece {
            assert_eq!(s.sk.ca_state, CaState::Cwr);
            let want = (cwnd_before - ((cwnd_before as u64 * alpha as u64) >> 11) as u32).max(2);
            assert_eq!(s.sk.ssthresh, want, "alpha {alpha} after {windows} windows, cwnd {cwnd_before}");
            assert!(s.sk.ssthresh > cwnd_before / 2, "DCTCP cuts less than Reno once alpha < 1");
        } else {
            assert_eq!(s.sk.ca_state, CaState::Open);
        }
        last = cwnd_before;
    }
    assert!(windows >= 3 && alpha < 900, "{windows} windows, alpha {alpha}, cwnd {last}");
}

/// TCP_CONG_NEEDS_ECN (DCTCP): the sender is ECN-capable even when the scenario's flow did not
/// ask for ECN, and its retransmissions stay ECT(0) (`tcp_ecn_send` clears ECT only for
/// algorithms without the flag).
#[test]
fn dctcp_is_ecn_capable_and_retransmits_ect() {
    let mut s = sender("dctcp", false);
    assert!(s.start(0).iter().all(|p| p.ect), "DCTCP negotiates ECN whatever the flow says");
    s.on_ack(t(0), &ack(t(0), 0, &[(1, 2)], false));
    s.on_ack(t(0), &ack(t(0), 0, &[(1, 3)], false));
    let out = s.on_ack(t(0), &ack(t(0), 0, &[(1, 4)], false)).to_vec();
    assert_eq!(s.sk.ca_state, CaState::Recovery);
    // dctcp_state on entering Recovery: ssthresh = cwnd / 2 whatever alpha is.
    assert_eq!(s.sk.ssthresh, INIT_CWND / 2);
    let rexmit: Vec<&Pkt> = out.iter().filter(|p| p.seq == 0).collect();
    assert_eq!(rexmit.len(), 1, "the fast retransmit of 0: {out:?}");
    assert!(rexmit[0].ect, "a DCTCP retransmission is ECT(0)");
}
